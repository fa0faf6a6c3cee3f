"""J-F1's and J-F2's figures and tables (Balogh & Jelasity, Figures 1-2): the relative accuracy and
OOD AUROC of every stitch, the energy histograms, and the detectors' own controls."""

from __future__ import annotations

import numpy as np
import pandas as pd

from .common import ARCH_NAMES, IdentConfig, stacked, title
from .detectors import NEAR_KINDS, OODResult


def _matrix_of(t: pd.DataFrame, value: str, n: int) -> np.ndarray:
    m = np.full((n, n), np.nan)
    for r in t.itertuples():
        m[r.i - 1, r.j - 1] = getattr(r, value)
    return m


OOD_PT = 7  # the grids' tick labels, their smallest text


def ood_panel() -> float:
    """The width (inches) of each of a (method, pairing)'s two matrices, side by side: as wide as
    keeps the figure's 7-point ticks legible in the book (issue 64;
    :func:`stitchkit.pagekit.plotting.panel_grid`, the colour bars' slack counted)."""
    from ...pagekit.plotting import panel_grid

    return panel_grid(2, 4.2, OOD_PT, extra=0.3)[2]


def plot_ood_grid(result: OODResult, *, methods=("TLM", "DM"), kinds=("intra", "inter"), title: str = "", fig=None):
    """Per (method, pairing): the relative-accuracy matrix and the AUROC matrix side by side
    (rows: source block i, columns: target block j), the paper's Figure 2 layout."""
    import matplotlib.pyplot as plt

    t = result.table
    n = len(result.layers)
    combos = [(m, k) for m in methods for k in kinds]
    fig = fig or plt.figure(figsize=(2 * ood_panel(), 3.6 * len(combos)), layout="constrained")
    axes = fig.subplots(len(combos), 2, squeeze=False)
    a, b = result.names
    for row, (method, kind) in zip(axes, combos):
        sub = t[(t.method == method) & (t.kind == kind)]
        who = f"{a} → itself" if kind == "intra" else f"{b} → {a}"
        for ax, value, cmap, label, vmin, vmax in ((row[0], "relative", "viridis", "relative accuracy", 0, None),
                                                   (row[1], "auroc", "magma", "AUROC (0.5: in distribution)", 0.5, 1)):
            im = ax.imshow(_matrix_of(sub, value, n), cmap=cmap, vmin=vmin, vmax=vmax)
            ax.set_xticks(range(n), range(1, n + 1), fontsize=OOD_PT)
            ax.set_yticks(range(n), range(1, n + 1), fontsize=OOD_PT)
            ax.set_xlabel("target block j", fontsize=8)
            ax.set_ylabel("source block i", fontsize=8)
            ax.set_title(f"{method}, {who}: {label.split(' (')[0]}", fontsize=9)
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03, label=label)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_energies(result: OODResult, *, method: str = "TLM", title: str = ""):
    """The paper's Figure 1c: energies of the first target layer's detector. Top: the layer's own
    test activations vs the near and the far outliers; bottom: the stitches from every source block."""
    import matplotlib.pyplot as plt

    e = result.energies
    j = result.layers[0]
    fig, (top, bottom) = plt.subplots(2, 1, figsize=(6.5, 5.6), sharex=True, constrained_layout=True)
    bins = np.linspace(float(min(v.min() for v in e.values())), float(max(v.max() for v in e.values())), 60)
    top.hist(e[("in", j)].numpy(), bins=bins, alpha=0.6, label="in distribution (test images)")
    if ("near", j) in e:
        kinds = " or ".join(k.replace("_", " ") for k in NEAR_KINDS)
        top.hist(e[("near", j)].numpy(), bins=bins, alpha=0.6, label=f"near outliers (the same images, {kinds})")
    top.hist(e[("aux", j)].numpy(), bins=bins, alpha=0.6, label="far outliers (MNIST)")
    top.legend(fontsize=8)
    top.set_ylabel("images", fontsize=8)
    cmap = plt.get_cmap("viridis")
    layers = result.layers
    for k, i in enumerate(layers):
        if (method, i) in e:
            bottom.hist(e[(method, i)].numpy(), bins=bins, histtype="step", lw=1.4, color=cmap(k / max(1, len(layers) - 1)),
                        label=f"from block {k + 1}")
    bottom.legend(fontsize=7, ncol=2)
    bottom.set_xlabel(f"energy at {j} (higher: more out of distribution)", fontsize=8)
    bottom.set_ylabel("images", fontsize=8)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def detector_table(results: dict[str, OODResult]) -> pd.DataFrame:
    """Every detector's control AUROCs (near outliers, in all and per kind; MNIST; its own training
    images against the test images), per architecture and layer."""
    parts = {ARCH_NAMES[a]: r.detectors.set_index("layer").round(3) for a, r in results.items()}
    return pd.concat(parts, names=["architecture"])


def plot_ood_grid_all(results: dict[str, OODResult], cfg: IdentConfig):
    """J-F2's grids for every architecture, titled by its networks' recipe in ``cfg``."""
    return stacked([(plot_ood_grid, dict(result=r, title=title(cfg.net_recipe(a)))) for a, r in results.items()],
                   2 * ood_panel(), 14.8)
