"""X-4: ``stitchkit.compare`` on two of the book's networks loaded as a user loads their own.

B-F2A's two ResNet-18s (seeds 0 and 1) are saved as plain state dicts, rebuilt from the
architecture's factory and loaded back, then compared through the generic adapter
(:mod:`stitchkit.comparing.adapter`: module paths, forward hooks) by every measure, the task-loss stitch and
its two controls included. The same comparison on the networks as the zoo returns them must give
the same numbers (the adapter adds nothing), and direct matching must agree with the book's own
computation of it (:func:`stitchkit.comparing.notions.notion_replicates`, on the whole sample); both
agreements are recorded as numbers and checked.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd
import torch

from ..comparing.adapter import compare_recipe
from ..comparing.compare import MEASURES, compare
from ..data.batches import normalise
from ..data.datasets import DataSpec, test_split, train_split
from ..data.splits import stratified_subset
from ..networks import network, zoo
from ..networks.models import build_model
from ..registry.scales import MAX_TRAIN_IMAGES, MIN_TEST_IMAGES, param

CUTS = ("stem", "block1", "block2", "block3", "block4", "block5", "block6", "block7", "block8")
AGREEMENT_TOL = 1e-6  # the adapter's numbers against the zoo path's, and DM against the book's own
# the rows with a trained stitch in them: SGD turns last-bit differences in the frozen networks'
# activations (the zoo's networks keep the weight layout their compiled training left, channels_last
# in places, and oneDNN rounds such convolutions otherwise) into another stitch, so these are compared
# by how many images differ, not to 1e-6
TRAINED = ("tlm_accuracy", "tlm_self_penalty", "tlm_untrained_sender")


@dataclass(frozen=True)
class OwnConfig:
    """X-4: stitchkit.compare on B-F2A's two ResNet-18s, loaded from state dicts."""

    test_images: int = param(2000, "test images compared on (a class-balanced subset of the test split)",
                             ge=MIN_TEST_IMAGES, le=10_000)
    fit_images: int = param(2000, "training images the DM maps and the task-loss stitches are fitted on",
                            ge=100, le=MAX_TRAIN_IMAGES)
    cuts: tuple[str, ...] = param(("block3", "block7"), "B-F2A's cuts compared, each of A's against each of B's",
                                  items={"choices": CUTS}, unique=True, nonempty=True)
    stitch_epochs: float = param(1.0, "epochs of each task-loss stitch (SGD 1e-2 from a DM start)", gt=0, le=20)
    net: zoo.Recipe = zoo.recipe_field("B-F2A's ResNet-18s' recipe (zoo.BANSAL_RESNET18 at the preset's scale)")


PRESETS_X4 = zoo.at_scale({
    # CI: seconds. One cut, a few hundred images, half an epoch per stitch.
    "smoke": OwnConfig(test_images=200, fit_images=200, cuts=("block3",), stitch_epochs=0.5),
    # 2 CPU cores: two cuts, 2,000 images each way, one epoch per stitch.
    "demo": OwnConfig(),
    # One GPU: demo's comparison of B-F2A's gpu pair (the zoo's width-64 ResNet-18s), both paths on the GPU
    # in exact fp32 (stitchkit.compare): ~400 s, most of it the host's float64 bootstrap and the stitches.
    "gpu": OwnConfig(),
    "paper": OwnConfig(test_images=10_000, fit_images=10_000, cuts=CUTS, stitch_epochs=2.0),
}, net=zoo.BANSAL_RESNET18)


def _data(cfg: OwnConfig, normalisation: str):
    test = test_split(DataSpec("cifar10"), cfg.test_images, 0)
    train = train_split(DataSpec("cifar10"))
    fit = train.subset(stratified_subset(train.labels, min(cfg.fit_images, len(train)), 0))
    return normalise(test.images, normalisation), test.labels, normalise(fit.images, normalisation), fit.labels


def worked_example(cfg: OwnConfig, folder: Path, *, progress: bool = True) -> dict:
    """Save, reload and compare (see the module docstring). Returns the comparison (``table``), the
    networks' test accuracies, and the two agreements (largest absolute difference)."""
    from ..comparing.notions import notion_replicates

    specs = [zoo.bansal_resnet18(cfg.net, seed) for seed in (0, 1)]
    zoo_models = [network.load_or_train(s, progress=progress)[0] for s in specs]
    folder.mkdir(parents=True, exist_ok=True)
    users = []
    for spec, net in zip(specs, zoo_models):  # as a user would: a checkpoint, then the architecture and its weights
        path = folder / f"resnet18-seed{spec.seed}.pt"
        torch.save(net.state_dict(), path)
        model = build_model(spec.model, width=spec.width, num_classes=10, in_channels=3, **dict(spec.options))
        model.load_state_dict(torch.load(path, weights_only=True))
        users.append(model.to(next(net.parameters()).device).eval())  # where the zoo's copy is: one device, one numerics
    x, y, xf, yf = _data(cfg, specs[0].normalisation)
    cuts = [f"pieces.{c}" for c in cfg.cuts]
    recipe = compare_recipe(epochs=cfg.stitch_epochs)
    kw = dict(measures=MEASURES, fit_images=xf, fit_labels=yf, recipe=recipe)
    table = compare(users[0], users[1], cuts, cuts, x, y, **kw)
    via_zoo = compare(zoo_models[0], zoo_models[1], cuts, cuts, x, y, **kw)
    cols = ["value", "low", "high"]
    fixed = ~table.measure.isin(TRAINED).to_numpy()  # the measures with no training in them
    gap = np.abs(table[cols].to_numpy() - via_zoo[cols].to_numpy())
    zoo_gap = float(np.nanmax(gap[fixed], initial=0.0))
    trained_gap = float(np.nanmax(gap[~fixed][:, 0], initial=0.0))  # the trained stitches' values
    same_nan = bool((table[cols].isna().to_numpy() == via_zoo[cols].isna().to_numpy()).all())
    pairs, reps, _ = notion_replicates(zoo_models[0], zoo_models[1], cuts, cuts, x, y, xf, ("dm", "dm_accuracy"))
    book = pd.DataFrame([{"layer_a": a, "layer_b": b, "measure": m, "book": reps[m][0, i]}
                         for m in ("dm", "dm_accuracy") for i, (a, b) in enumerate(pairs)])
    both = table.merge(book, on=["layer_a", "layer_b", "measure"])
    book_gap = float(np.nanmax(np.abs(both.value - both.book), initial=0.0))
    table = table.assign(layer_a=table.layer_a.str.removeprefix("pieces."),
                         layer_b=table.layer_b.str.removeprefix("pieces."))
    with torch.no_grad():
        acc = [float((m(x[:500]).argmax(1) == y[:500]).double().mean()) for m in users]
    return {"table": table, "zoo_gap": zoo_gap if same_nan else float("inf"), "trained_gap": trained_gap,
            "book_gap": book_gap,
            "book_rows": len(both), "accuracy_500": acc, "files": [p.name for p in sorted(folder.glob("*.pt"))]}


def plot_pairs(table: pd.DataFrame, measures=("cka", "dm_accuracy", "tlm_accuracy")):
    """One heat map per measure: its value at every (layer of A, layer of B), annotated."""
    from ..pagekit.plotting import panel_figure

    shown = [m for m in measures if (table.measure == m).any()]
    # as many per row as keep the 9-point cell values legible in the book (issue 64)
    fig, axes, _ = panel_figure(len(shown), 3.4, 3.0, 9, extra=0.4, layout="constrained")
    for ax, m in zip(axes, shown):
        grid = table[table.measure == m].pivot(index="layer_a", columns="layer_b", values="value")
        im = ax.imshow(grid.to_numpy(dtype=float), cmap="viridis", vmin=0, vmax=1)
        ax.set_xticks(range(grid.shape[1]), grid.columns)
        ax.set_yticks(range(grid.shape[0]), grid.index)
        ax.set_xlabel("layer of B (receiver)")
        ax.set_ylabel("layer of A (sender)")
        ax.set_title(m)
        for (i, j), v in np.ndenumerate(grid.to_numpy(dtype=float)):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", color="white" if v < 0.6 else "black", fontsize=9)
        fig.colorbar(im, ax=ax, shrink=0.8, label="CKA" if m == "cka" else "accuracy relative to B's own")
    return fig


__all__ = ["AGREEMENT_TOL", "CUTS", "TRAINED", "plot_pairs", "OwnConfig", "PRESETS_X4", "worked_example"]
