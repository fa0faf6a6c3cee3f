"""Figures shared by the notebooks: per-layer stitching curves and layer-by-layer heatmaps, each
laid out so that its smallest text stays legible where the book shows it (:func:`panel_grid`)."""

from __future__ import annotations

from typing import Mapping, Sequence

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..base.one_column import MIN_TEXT_PX, PNG_PAD

PALETTE = ("#1f77b4", "#d62728", "#2ca02c", "#9467bd", "#ff7f0e", "#8c564b")

# The font sizes (points) of the helpers' smaller text; the rest is matplotlib's 10 points.
LEGEND_PT = 9
SMALL_LEGEND_PT = 8  # the legends of panels that share a row
ANNOTATION_PT = 7  # the values written in a heatmap's cells

# Figure text legible in the book (issue 64: at least 9 px in a 1366 px window). The book scales a
# figure to its column, COLUMN_PX wide at 1366 px (measured in Chromium; tests/test_browser.py
# checks it), so text of s points in a figure W inches wide is s / 72 * COLUMN_PX / W px there. A
# figure's width is capped accordingly (:func:`max_width`): panels that would make it wider go on
# to another row (:func:`panel_grid`), rather than every font being made larger. (MIN_TEXT_PX, 9 px, and
# PNG_PAD, the inches a page's PNG adds to the figure's tight box, are the phone rendering's too:
# stitchkit.base.one_column.)
COLUMN_PX = 741
MIN_PANEL = 3.6  # inches: the narrowest panel a helper draws; below it, panels go on to another row


def max_width(smallest_pt: float) -> float:
    """The widest figure (inches) whose smallest text, ``smallest_pt`` points, is still
    ``MIN_TEXT_PX`` (9 px, :mod:`stitchkit.base.one_column`) in the book's column (:data:`COLUMN_PX`),
    its PNG's padding counted."""
    return smallest_pt / 72 * COLUMN_PX / MIN_TEXT_PX - PNG_PAD


def panel_grid(n: int, panel_width: float, smallest_pt: float, *, extra: float = 0.0) -> tuple[int, int, float]:
    """(rows, columns, panel width in inches) for ``n`` panels asked ``panel_width`` wide, plus
    ``extra`` inches beside them (a shared label), within :func:`max_width` of the figure's
    smallest text: as many columns as panels of at least :data:`MIN_PANEL` fit, each as wide as
    asked or as the room allows."""
    room = max_width(smallest_pt) - extra
    cols = max(1, min(n, int(room // MIN_PANEL)))
    return -(-n // cols), cols, min(panel_width, room / cols)


def panel_figure(n: int, panel_width: float, height: float, smallest_pt: float, *, extra: float = 0.0, **subplots):
    """A figure of ``n`` panels, each ``height`` inches tall, laid out by :func:`panel_grid`
    (``subplots``: e.g. ``sharey``): (the figure, its ``n`` axes in reading order, the number of
    columns). The grid's spare cells are removed."""
    rows, cols, width = panel_grid(n, panel_width, smallest_pt, extra=extra)
    fig, grid = plt.subplots(rows, cols, figsize=(width * cols + extra, height * rows), squeeze=False, **subplots)
    axes = list(grid.flat)
    for ax in axes[n:]:
        fig.delaxes(ax)
    return fig, axes[:n], cols


PAPER_COLOUR = "#7f7f7f"


def paper_reference(ax, low: float, high: float | None = None, label: str = "paper", *, colour: str = PAPER_COLOUR):
    """The paper's value on a plot: a shaded band from ``low`` to ``high`` (a range the paper
    states), or a dashed line at ``low``; ``label`` names it in the legend ("paper: ...")."""
    if high is None:
        return ax.axhline(low, color=colour, ls="--", lw=1.2, label=label, zorder=0)
    return ax.axhspan(low, high, color=colour, alpha=0.15, lw=0, label=label, zorder=0)


def finish_panels(fig, axes, cuts: Sequence[str], xlabel: str, title: str):
    """Shared styling of per-layer panels: cut names as ticks, an x label, a light grid, the title."""
    for ax in axes:
        ax.set_xticks(np.arange(len(cuts)), cuts, rotation=45, ha="right")
        ax.set_xlabel(xlabel)
        ax.grid(alpha=0.3)
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def judged_per_layer(cuts: Sequence[str], lines: dict[str, tuple[np.ndarray, np.ndarray, np.ndarray]], *,
                     bounds: Sequence[tuple[str, float, str, Sequence[int] | None]] = (), ylabel: str, title: str = "",
                     xlabel: str = "stitch point (sender layer = receiver layer)", width: float = 8.0):
    """The quantity a page's claims judge, per cut: one line per series with its 95% band
    (``lines``: label -> (value, low, high) arrays over ``cuts``), and each criterion drawn as it
    reads (``bounds``: (label, threshold, "<=" or ">=", the cut positions it applies to or None
    for every cut)): a one-sided bound is a line with the side that fails it shaded, never a
    two-sided band."""
    x = np.arange(len(cuts))
    fig, ax = plt.subplots(figsize=(width, 4.2))
    for (label, (value, low, high)), colour in zip(lines.items(), PALETTE):
        ax.fill_between(x, low, high, color=colour, alpha=0.2, lw=0)
        ax.plot(x, value, "o-", color=colour, label=f"{label} (95% band)")
    top = max([float(np.nanmax(h)) for _, (_, _, h) in lines.items()] + [b[1] for b in bounds] + [1.0])
    bottom = min([float(np.nanmin(lo)) for _, (_, lo, _) in lines.items()] + [0.0])
    span = top - bottom
    ylim = (bottom - 0.05 * span, top + 0.1 * span)
    for label, threshold, direction, where in bounds:
        at = np.asarray(list(range(len(cuts))) if where is None else list(where), dtype=float)
        left, right = at.min() - 0.4, at.max() + 0.4
        ax.plot([left, right], [threshold, threshold], color=PAPER_COLOUR, ls="--", lw=1.4,
                label=f"{label} ({direction} {threshold:g})")
        fails = (threshold, ylim[1]) if direction == "<=" else (ylim[0], threshold)
        ax.fill_between([left, right], *fails, color=PAPER_COLOUR, alpha=0.08, lw=0)
    ax.axhline(0, color="black", lw=0.8)
    ax.set_ylim(*ylim)
    ax.set_ylabel(ylabel)
    ax.legend(frameon=False, fontsize=LEGEND_PT, loc="upper left")
    return finish_panels(fig, [ax], cuts, xlabel, title)


def penalty_per_layer(table: pd.DataFrame, *, title: str = "", ax_width: float = 5.5,
                      paper: tuple[float, float, str] | None = None):
    """Stitching penalty (percentage points of test accuracy) at every cut, one line per sender,
    as in Bansal et al. Fig. 2A, from a stitch-grid table (columns ``cut``, ``sender``,
    ``penalty``, ``accuracy``, ``receiver_accuracy`` and, when DM-initialised, ``dm_penalty``).
    Solid lines: after fine-tuning; dotted: after direct matching only. The second panel shows
    the stitched model's test error against the receiver's own (dashed): error, the paper's
    measure (its Fig. 2A), so that the page reads one measure (the penalty is their difference)."""
    cuts = list(dict.fromkeys(table["cut"]))
    x = np.arange(len(cuts))
    fig, axes, _ = panel_figure(2, ax_width, 4.0, LEGEND_PT)
    groups = list(table.groupby("sender", sort=False))
    for (label, g), colour in zip(groups, PALETTE):
        g = g.set_index("cut").reindex(cuts)  # a sender stitched at some cuts only (the untrained one): gaps
        axes[0].plot(x, 100 * g.penalty.to_numpy(float), "o-", color=colour, label=f"{label}")
        if "dm_penalty" in g and g.dm_penalty.notna().all():
            axes[0].plot(x, 100 * g.dm_penalty.to_numpy(float), ":", color=colour, alpha=0.8)
        axes[1].plot(x, 100 - 100 * g.accuracy.to_numpy(float), "o-", color=colour, label=label)
    axes[0].axhline(0, color="black", lw=0.8)
    if paper is not None:  # the paper's range of the penalty, (low, high, label)
        paper_reference(axes[0], paper[0], paper[1], paper[2])
        axes[0].legend(frameon=False, fontsize=LEGEND_PT, loc="upper left")
    axes[0].set_ylabel("stitching penalty (points of test accuracy)")
    axes[0].set_title("penalty = receiver acc. − stitched acc.\n(dotted: direct matching only)")
    axes[1].axhline(100 - 100 * table.receiver_accuracy.iloc[0], color="black", ls="--", lw=1, label="receiver alone")
    axes[1].set_ylabel("stitched test error (%)")
    axes[1].set_ylim(0, 100)
    axes[1].set_title("stitched model error")
    axes[1].legend(frameon=False, fontsize=LEGEND_PT, loc="upper left")
    return finish_panels(fig, axes, cuts, "stitch point (sender layer = receiver layer)", title)


def connectivity_panels(panels: dict[str, pd.DataFrame], *, title: str = "", ncols: int = 3,
                        paper: tuple[float, str] | None = None):
    """Bansal et al. Fig. 2A's layout: one panel per architecture, the stitched model's test
    error (%) at each stitch point, one line per sender (as in :func:`penalty_per_layer`), and
    the receiver's own error as a dashed line. ``panels`` maps a panel title to a stitch-grid
    table (columns ``cut``, ``sender``, ``accuracy``, ``receiver_accuracy``)."""
    n = len(panels)
    ncols = min(ncols, n, panel_grid(n, 4.2, LEGEND_PT)[1])
    nrows = -(-n // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(4.2 * ncols, 3.6 * nrows), squeeze=False)
    for ax, (name, table) in zip(axes.flat, panels.items()):
        cuts = list(dict.fromkeys(table["cut"]))
        x = np.arange(len(cuts))
        for (label, g), colour in zip(table.groupby("sender", sort=False), PALETTE):
            g = g.set_index("cut").reindex(cuts)  # a sender stitched at some cuts only (the untrained one): gaps
            ax.plot(x, 100 - 100 * g.accuracy.to_numpy(float), "o-", color=colour, label=label)
        own = 100 - 100 * table.receiver_accuracy.iloc[0]
        ax.axhline(own, color="black", ls="--", lw=1, label="receiver alone")
        if paper is not None:  # (points above the receiver's error the paper allows, label)
            paper_reference(ax, own, own + paper[0], paper[1])
        ax.set_xticks(x, cuts, rotation=45, ha="right")
        ax.set_title(name)
        ax.set_ylabel("stitched test error (%)")
        ax.grid(alpha=0.3)
    for i, ax in enumerate(list(axes.flat)[:n]):
        if i + ncols >= n:  # nothing below it: the bottom panel of its column
            ax.set_xlabel("stitch point (sender layer = receiver layer)")
    for ax in list(axes.flat)[n:]:
        ax.set_visible(False)
    handles = {}
    for ax in list(axes.flat)[:n]:
        for h, lab in zip(*ax.get_legend_handles_labels()):
            handles.setdefault(lab, h)
    ncol = min(len(handles), max(2, 2 * ncols - 3)) if len(handles) > 3 else len(handles)
    lines = -(-len(handles) // max(ncol, 1))
    fig.legend(list(handles.values()), list(handles), loc="lower center", ncol=ncol, frameon=False, fontsize=LEGEND_PT)
    if title:
        fig.suptitle(title)
    fig.tight_layout(rect=(0, min(0.4, 0.3 * lines / (3.6 * nrows)), 1, 1))  # 0.3 in per legend line
    return fig


def penalty_and_cka(table: pd.DataFrame, senders: Sequence[str], *, title: str = "", ax_width: float = 5.5):
    """Bansal et al. Fig. 5: stitching penalty (left) and linear CKA with the receiver (right) at
    every cut, one line per sender, from a table with columns ``cut``, ``sender``, ``penalty``, ``cka``."""
    cuts = list(dict.fromkeys(table["cut"]))
    x = np.arange(len(cuts))
    fig, axes, _ = panel_figure(2, ax_width, 4.0, LEGEND_PT)
    for label, colour in zip(senders, PALETTE[1:]):
        g = table[table.sender == label].set_index("cut").loc[cuts]
        axes[0].plot(x, 100 * g.penalty.to_numpy(float), "o-", color=colour, label=label)
        axes[1].plot(x, g.cka.to_numpy(float), "o-", color=colour, label=label)
    axes[0].axhline(0, color="black", lw=0.8)
    axes[0].set_ylabel("stitching penalty (points of test accuracy)")
    axes[0].set_title("model stitching")
    axes[1].set_ylabel("linear CKA with the receiver (0-1)")
    axes[1].set_ylim(0, 1.02)
    axes[1].set_title("CKA at the same layer")
    for ax in axes:
        ax.legend(frameon=False, fontsize=LEGEND_PT)
    return finish_panels(fig, axes, cuts, "layer (cut)", title)


def layer_heatmap(matrix: np.ndarray, row_labels: Sequence[str], col_labels: Sequence[str], *,
                  ax=None, title: str = "", xlabel: str = "", ylabel: str = "", cbar_label: str = "",
                  vmin: float | None = 0.0, vmax: float | None = 1.0, cmap: str = "viridis", annotate: bool = True):
    """A layer-by-layer matrix (rows x columns) as a heatmap with a labelled colour bar."""
    matrix = np.asarray(matrix, dtype=float)
    if matrix.shape != (len(row_labels), len(col_labels)):
        raise ValueError(f"matrix shape {matrix.shape} does not match labels ({len(row_labels)}, {len(col_labels)})")
    if ax is None:  # at most as wide as its cells' values stay legible in the book (max_width)
        size = min(max(3.5, 0.45 * max(matrix.shape) + 1.5), max_width(ANNOTATION_PT) - 1)
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
            ax.text(j, i, f"{v:.2f}", ha="center", va="center", fontsize=ANNOTATION_PT,
                    color="white" if v < mid else "black")
    ax.figure.colorbar(im, ax=ax, label=cbar_label, fraction=0.046, pad=0.04)
    return ax


def spread_per_layer(panels: Sequence[dict], *, title: str = "", ax_width: float = 5.0):
    """Smith & Marcu's Figures 1b/c, C5: one panel per entry of ``panels``, each a dict with
    ``stats`` (a table with columns ``sender``, ``layer``, ``mean``, ``min``, ``max``, ``sd``:
    the spread over initialisations), ``band`` ("range": min to max, or "sd": mean ± sd),
    ``ylabel``, ``panel`` (its title), ``scale`` (multiply values, e.g. 100 for percent) and
    optionally ``baseline`` (a number or a per-layer sequence, drawn dashed, labelled
    ``baseline_label``) and ``paper`` (the paper's values, ``(low, high or None, label)`` each:
    :func:`paper_reference`). One line per sender, the band shaded."""
    fig, axes, _ = panel_figure(len(panels), ax_width, 4.2, SMALL_LEGEND_PT)
    layers = list(dict.fromkeys(panels[0]["stats"]["layer"]))
    x = np.arange(len(layers))
    for ax, p in zip(axes, panels):
        k = p.get("scale", 1.0)
        for (label, g), colour in zip(p["stats"].groupby("sender", sort=False), PALETTE):
            g = g.set_index("layer").loc[layers]
            mean = k * g["mean"].to_numpy(float)
            lo, hi = ((k * g["min"], k * g["max"]) if p["band"] == "range"
                      else (mean - k * g["sd"].to_numpy(float), mean + k * g["sd"].to_numpy(float)))
            ax.plot(x, mean, "o-", color=colour, label=label, ms=4)
            ax.fill_between(x, np.asarray(lo, float), np.asarray(hi, float), color=colour, alpha=0.15, lw=0)
        if p.get("baseline") is not None:
            base = np.broadcast_to(k * np.asarray(p["baseline"], float), (len(layers),))
            ax.plot(x, base, "k--", lw=1.2, label=p.get("baseline_label", "baseline"))
        for low, high, label in p.get("paper", ()):  # the paper's values: (low, high or None, label)
            paper_reference(ax, k * low, None if high is None else k * high, label)
        ax.set_ylabel(p["ylabel"])
        ax.set_title(p.get("panel", ""))
        if p.get("ylim"):
            ax.set_ylim(*p["ylim"])
        ax.legend(frameon=False, fontsize=SMALL_LEGEND_PT, loc=p.get("legend", "best"))
    return finish_panels(fig, axes, layers, "stitch point (Layer k: before ResNet layer k)", title)


def ours_vs_paper_bars(ours: pd.DataFrame, spread: pd.DataFrame, paper: pd.DataFrame, *, columns: dict[str, str],
                       ylabel: str, title: str = "", scale: float = 100.0, sharey: bool = True):
    """A table's numbers beside the paper's: one panel per column (``columns`` maps a column to
    its panel title), one bar per row of ``ours`` (mean) with ``spread`` (sd) as error bars, and
    the paper's value as a black diamond; ``sharey``: one y axis for every panel."""
    rows = list(ours.index)
    x = np.arange(len(rows))
    fig, axes, ncols = panel_figure(len(columns), 3.6, 3.8, SMALL_LEGEND_PT, extra=0.6, sharey=sharey)
    for ax, (col, label) in zip(axes, columns.items()):
        err = scale * np.nan_to_num(spread[col].to_numpy(float))
        ax.bar(x, scale * ours[col].to_numpy(float), yerr=err, color=PALETTE[0], alpha=0.8, capsize=3, label="ours")
        ax.plot(x, scale * paper.loc[rows, col].to_numpy(float), "kD", ms=6, label="paper")
        ax.set_title(label)
        ax.set_xticks(x, rows, rotation=30, ha="right")
        ax.grid(axis="y", alpha=0.3)
    for ax in axes[::ncols]:  # the first panel of each row
        ax.set_ylabel(ylabel)
    axes[0].legend(frameon=False, fontsize=SMALL_LEGEND_PT, loc="lower left")
    if title:
        fig.suptitle(title)
    fig.tight_layout()
    return fig


def penalty_panels(table: pd.DataFrame, *, control: str | None = None, title: str = "", ax_width: float = 4.6):
    """One panel per receiver (column ``receiver``): stitching penalty (points) per cut, one line
    per sender; solid after fine-tuning, dotted after direct matching only; the ``control``
    sender (the receiver into itself) in black (Bansal et al. Fig. 2C and 3 layout)."""
    receivers = list(dict.fromkeys(table["receiver"]))
    cuts = list(dict.fromkeys(table["cut"]))
    senders = list(dict.fromkeys(table["sender"]))
    x = np.arange(len(cuts))
    fig, axes, ncols = panel_figure(len(receivers), ax_width, 4.4, SMALL_LEGEND_PT, extra=1.5, sharey=True)
    others = iter(PALETTE * 2)
    colours = {s: ("black" if s == control else next(others)) for s in senders}
    for ax, rx in zip(axes, receivers):
        for s in senders:
            g = table[(table["receiver"] == rx) & (table["sender"] == s)]
            if g.empty:
                continue
            g = g.set_index("cut").reindex(cuts)  # a sender stitched at some cuts only (the untrained one): gaps
            ax.plot(x, 100 * g.penalty.to_numpy(float), "o-", color=colours[s], label=s, ms=4,
                    lw=1.0 if s == control else 1.6)
            if "dm_penalty" in g and g.dm_penalty.notna().all():
                ax.plot(x, 100 * g.dm_penalty.to_numpy(float), ":", color=colours[s], alpha=0.6)
        ax.axhline(0, color="grey", lw=0.8)
        ax.set_title(f"into {rx}", fontsize=10)
        ax.legend(frameon=False, fontsize=SMALL_LEGEND_PT, loc="upper left")
    for ax in axes[::ncols]:  # the first panel of each row
        ax.set_ylabel("stitching penalty (points of test accuracy)\nbelow 0: the bottom improves the top")
    return finish_panels(fig, axes, cuts, "stitch point (bottom layer = top layer)", title)


def cka_panels(table: pd.DataFrame, *, control: str | None = None, title: str = "", ax_width: float = 4.6,
               paper: tuple[float, float | None, str] | None = None,
               paper_pairs: Mapping[frozenset, tuple[float, float | None, str]] | None = None):
    """Linear CKA between each sender and its receiver per cut (column ``cka``), one panel per
    receiver, the ``control`` sender left out (its CKA is 1 by definition); ``paper``: the paper's
    range (low, high or None for a line, label), drawn on every panel; ``paper_pairs``: the paper's
    range for one pair of networks (``frozenset({a, b})``: CKA is symmetric), drawn in the colour
    of that pair's line on each panel where it appears."""
    t = table[table["sender"] != control] if control else table
    # a sender without a CKA (the negative control's untrained network, stitched for its penalty) is left out
    t = t[t.groupby("sender")["cka"].transform(lambda c: c.notna().any())]
    receivers = list(dict.fromkeys(t["receiver"]))
    cuts = list(dict.fromkeys(t["cut"]))
    x = np.arange(len(cuts))
    fig, axes, ncols = panel_figure(len(receivers), ax_width, 4.0, SMALL_LEGEND_PT, extra=1.5, sharey=True)
    for ax, rx in zip(axes, receivers):
        for (s, g), colour in zip(t[t["receiver"] == rx].groupby("sender", sort=False), PALETTE * 2):
            g = g.set_index("cut").reindex(cuts)  # a sender stitched at some cuts only (the untrained one): gaps
            ax.plot(x, g.cka.to_numpy(float), "o-", color=colour, label=s, ms=4)
            if paper_pairs and frozenset((s, rx)) in paper_pairs:
                paper_reference(ax, *paper_pairs[frozenset((s, rx))], colour=colour)
        if paper:
            paper_reference(ax, *paper)
        ax.set_ylim(0, 1.02)
        ax.set_title(f"with {rx}", fontsize=10)
        ax.legend(frameon=False, fontsize=SMALL_LEGEND_PT)
    for ax in axes[::ncols]:  # the first panel of each row
        ax.set_ylabel("linear CKA with the top (0-1)")
    return finish_panels(fig, axes, cuts, "layer (cut)", title)


def cka_lines(table: pd.DataFrame, *, by: str = "pair", title: str = "", ax_width: float = 7.0,
              paper: dict[str, tuple[float, float | None, str]] | None = None):
    """Linear CKA (0-1) per cut, one line per value of column ``by`` (Bansal et al. App. B.2);
    ``paper``: per value, the paper's range (low, high or None for a line, label), drawn in that
    line's colour."""
    cuts = list(dict.fromkeys(table["cut"]))
    x = np.arange(len(cuts))
    fig, ax = plt.subplots(figsize=(ax_width, 4.2))
    for (name, g), colour in zip(table.groupby(by, sort=False), PALETTE):
        ax.plot(x, g.set_index("cut").loc[cuts].cka.to_numpy(float), "o-", color=colour, label=name, ms=4)
        if paper and name in paper:
            low, high, label = paper[name]
            paper_reference(ax, low, high, label, colour=colour)
    ax.set_ylim(0, 1.02)
    ax.set_ylabel("linear CKA between the two networks (0-1)")
    ax.legend(frameon=False, fontsize=LEGEND_PT)
    return finish_panels(fig, [ax], cuts, "layer (cut)", title)
