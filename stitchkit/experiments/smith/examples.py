"""S-F1A: example images of every colour-MNIST data set."""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from ...data.datasets import DataSpec, test_split
from ...registry.scales import param
from .config import SETS


@dataclass(frozen=True)
class ExamplesConfig:
    """S-F1A: example images of every data set."""

    per_class: int = param(3, "examples shown of each of classes 0 and 1 per data set", ge=1, le=8)


# gpu: the same images: the data sets do not depend on the scale (the gpu networks train on all of them).
PRESETS_F1A = {"smoke": ExamplesConfig(), "demo": ExamplesConfig(), "gpu": ExamplesConfig(), "paper": ExamplesConfig()}


def example_images(cfg: ExamplesConfig) -> dict[str, list[tuple[int, np.ndarray]]]:
    """For each data set, ``per_class`` test images of classes 0 and 1: (label, HxWx3 uint8)."""
    out = {}
    for name, dataset in SETS.items():
        split = test_split(DataSpec(dataset))
        picks = []
        for label in (0, 1):
            idx = torch.nonzero(split.labels == label).flatten()[:cfg.per_class]
            picks += [(label, split.images[i].permute(1, 2, 0).numpy()) for i in idx.tolist()]
        out[name] = picks
    return out


def plot_examples(examples: dict[str, list[tuple[int, np.ndarray]]]):
    import matplotlib.pyplot as plt

    n_cols = max(len(v) for v in examples.values())
    fig, axes = plt.subplots(len(examples), n_cols, figsize=(1.1 * n_cols + 1.2, 1.2 * len(examples)),
                             squeeze=False)
    for r, (name, picks) in enumerate(examples.items()):
        for c in range(n_cols):
            ax = axes[r, c]
            ax.set_xticks([]), ax.set_yticks([])
            if c < len(picks):
                label, img = picks[c]
                ax.imshow(img, interpolation="nearest")
                ax.set_title(f"class {label}", fontsize=8)
            else:
                ax.axis("off")
        axes[r, 0].set_ylabel(name, rotation=0, ha="right", va="center", fontsize=10)
    fig.tight_layout()
    return fig
