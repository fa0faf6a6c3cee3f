"""Figures shared by the notebooks: per-layer stitching curves and layer-by-layer heatmaps."""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")


def penalty_per_layer(cuts: Sequence[str], penalties: Mapping[str, Sequence[float]],
                      accuracies: Mapping[str, Sequence[float]] | None = None, *,
                      receiver_accuracy: float | None = None, title: str = "", ax_width: float = 5.5):
    """Stitching penalty (percentage points of test error) at every cut, one line per series,
    as in Bansal et al. Fig. 2A; with ``accuracies`` a second panel shows stitched test accuracy
    against the receiver's own accuracy (dashed)."""
    ncols = 2 if accuracies is not None else 1
    fig, axes = plt.subplots(1, ncols, figsize=(ax_width * ncols, 3.8), squeeze=False)
    x = np.arange(len(cuts))
    ax = axes[0, 0]
    for (label, values), colour in zip(penalties.items(), PALETTE):
        ax.plot(x, 100 * np.asarray(values), "o-", color=colour, label=label)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_xticks(x, cuts, rotation=45, ha="right")
    ax.set_xlabel("stitch point (sender layer = receiver layer)")
    ax.set_ylabel("stitching penalty (% test error)")
    ax.set_title("penalty = stitched error - receiver error")
    ax.legend(frameon=False)
    ax.grid(alpha=0.3)
    if accuracies is not None:
        ax = axes[0, 1]
        for (label, values), colour in zip(accuracies.items(), PALETTE):
            ax.plot(x, 100 * np.asarray(values), "o-", color=colour, label=label)
        if receiver_accuracy is not None:
            ax.axhline(100 * receiver_accuracy, color="black", ls="--", lw=1, label="receiver alone")
        ax.set_xticks(x, cuts, rotation=45, ha="right")
        ax.set_xlabel("stitch point")
        ax.set_ylabel("stitched test accuracy (%)")
        ax.set_ylim(0, 100)
        ax.set_title("stitched model accuracy")
        ax.legend(frameon=False)
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def layer_heatmap(matrix: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *,
                  ax=None, title: str = "", xlabel: str = "", ylabel: str = "", cbar_label: str = "",
                  vmin: float | None = 0.0, vmax: float | None = 1.0, cmap: str = "viridis", annotate: bool = True):
    """A layer-by-layer matrix (rows x columns) as a heatmap with a labelled colour bar."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.shape != (len(row_labels), len(col_labels)):
        raise ValueError(f"matrix shape {matrix.shape} does not match labels ({len(row_labels)}, {len(col_labels)})")
    if ax is None:
        size = max(3.5, 0.45 * max(matrix.shape) + 1.5)
        _, ax = plt.subplots(figsize=(size + 1, size))
    im = ax.imshow(matrix, vmin=vmin, vmax=vmax, cmap=cmap, origin="upper")
    ax.set_xticks(range(len(col_labels)), col_labels, rotation=45, ha="right")
    ax.set_yticks(range(len(row_labels)), row_labels)
    ax.set_xlabel(xlabel)
    ax.set_ylabel(ylabel)
    ax.set_title(title)
    if annotate and matrix.size <= 400:
        lo, hi = np.nanmin(matrix), np.nanmax(matrix)
        mid = (lo + hi) / 2
        for (i, j), v in np.ndenumerate(matrix):
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=7, color="white" if v < mid else "black")
    ax.figure.colorbar(im, ax=ax, label=cbar_label, fraction=0.046, pad=0.04)
    return ax
