"""J-T1's tables and figures (Balogh & Jelasity, Table 1): the identification rates beside the paper's,
the similarity matrices of every measure, and the rival stitches that beat a self-match."""

from __future__ import annotations

import pandas as pd

from ...stitching.grid_spec import LONGER
from .common import ARCH_NAMES, NAMES, IdentConfig, net_index, stacked, title
from .identification import HIGHER_IS_SIMILAR, MEASURES, IdentResult, identification_table


def table1(results: dict[str, IdentResult]) -> pd.DataFrame:
    """J-T1's table for every architecture, ours beside the paper's: the paper's strict rule, and
    the intra-network % by the tie rule the claims use (a rival ahead of the self-match by no more
    than noise is a tie, identified: :mod:`.identification_verdicts`)."""
    from .identification_verdicts import intra_with_ties

    parts = {}
    for a, r in results.items():
        t = identification_table(r)
        ties = intra_with_ties(r)
        t.insert(t.columns.get_loc("intra cases"), "intra, ties (%)", [ties[k] for k in t.key])
        parts[ARCH_NAMES[a]] = t.drop(columns="key").round(2)
    return pd.concat(parts, names=["architecture"])


MATRIX_PT = 11  # the smallest text of the matrices (the colour bars' ticks); the rest is 12 points
MATRIX_SIDE = 4.2  # inches: one measure's heatmap with its colour bar, as asked
MATRIX_SLACK = 0.3  # inches the constrained layout's tight box may add to the figure's width


def matrix_grid(n: int) -> tuple[int, int, float]:
    """(rows, columns, panel width in inches) of ``n`` measures' heatmaps: as many columns as
    keep the figure within :func:`stitchkit.pagekit.plotting.max_width` of its 11-point text
    (:func:`stitchkit.pagekit.plotting.panel_grid`)."""
    from ...pagekit.plotting import panel_grid

    return panel_grid(n, MATRIX_SIDE, MATRIX_PT, extra=MATRIX_SLACK)


def plot_matrices(result: IdentResult, pair: tuple[str, str], measures=MEASURES, *, title: str = "", fig=None):
    """One heatmap per measure for one ordered pair (rows: source layer, columns: target layer);
    the cell each column's identification picks is outlined."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    mats = result.matrices[pair]
    measures = [m for m in measures if m in mats]
    n = len(result.layers)
    labels = [c.replace("block", "") for c in result.layers]
    rows, cols, side = matrix_grid(len(measures))  # its 11-point text at least 9 px in the book (issue 64)
    fig = fig or plt.figure(figsize=(side * cols, MATRIX_SIDE * rows), layout="constrained")
    axes = fig.subplots(rows, cols, squeeze=False)
    for ax, m in zip(axes.flat, measures):
        mat = mats[m]
        cmap = "viridis" if HIGHER_IS_SIMILAR[m] else "viridis_r"
        im = ax.imshow(mat, cmap=cmap, origin="upper")
        best = mat.argmax(0) if HIGHER_IS_SIMILAR[m] else mat.argmin(0)
        for j, i in enumerate(best):
            ax.add_patch(Rectangle((j - 0.5, i - 0.5), 1, 1, fill=False, edgecolor="red", lw=1.5))
        step = 1 if n <= 10 else 2  # every label where they fit at 12 pt, else every second
        ax.set_xticks(range(0, n, step), labels[::step], fontsize=12)
        ax.set_yticks(range(0, n, step), labels[::step], fontsize=12)
        ax.set_xlabel("target block j", fontsize=12)
        ax.set_ylabel("source block i", fontsize=12)
        unit = {"tlm": "relative accuracy", "dm_func": "relative accuracy", "lcka": "similarity",
                "pwcca": "distance", "opd": "distance", "dm_struct": "relative residual"}[m]
        ax.set_title(f"{NAMES[m]}\n({unit})", fontsize=12)
        cbar = fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03)
        cbar.ax.tick_params(labelsize=11)
    for ax in list(axes.flat)[len(measures):]:
        ax.axis("off")
    if title:
        fig.suptitle(title, fontsize=13)
    return fig


def _pair(result: IdentResult, kind: str) -> tuple[str, str]:
    names = sorted({a for a, _ in result.matrices})
    return (names[0], names[0]) if kind == "intra" else (names[0], names[1])


def plot_matrices_all(results: dict[str, IdentResult], kind: str, cfg: IdentConfig):
    """J-T1's matrices for every architecture: one network into itself (``kind="intra"``) or
    network #0 against #1 (``"inter"``), titled by its networks' recipe in ``cfg``."""
    draws = []
    for arch, res in results.items():
        a, b = _pair(res, kind)
        what = f"within {a}" if kind == "intra" else f"{a} → {b}"
        draws.append((plot_matrices, dict(result=res, pair=(a, b), title=f"{what} · {title(cfg.net_recipe(arch))}")))
    rows, cols, side = matrix_grid(len(MEASURES))
    return stacked(draws, side * cols, MATRIX_SIDE * rows + 0.4)


def rivals_table(rivals: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """:func:`identification_longer`'s tables (architecture -> table) for a page: one row per
    checked case, the pair as "#a → #b", the relative accuracies (to the receiver's) of the target
    layer's own stitch and of its strongest rival in the grid and with :data:`LONGER` times the
    epochs, and whether the layer is still identified. Empty (with the columns) when nothing was
    checked."""
    cols = {"j": "layer j", "rival i": "strongest rival i", "own": "own (grid)", "rival": "rival (grid)",
            "own longer": f"own ({LONGER}×)", "rival longer": f"rival ({LONGER}×)",
            "identified_longer": "still identified"}
    parts = []
    for arch, t in rivals.items():
        if len(t):
            pair = ["#" + str(net_index(x)) + " → #" + str(net_index(y)) for x, y in zip(t.sender, t.receiver)]
            parts.append(t.assign(architecture=ARCH_NAMES.get(arch, arch), pair=pair))
    if not parts:
        return pd.DataFrame(columns=["architecture", "pair", *cols.values()]).set_index(["architecture", "pair"])
    out = pd.concat(parts, ignore_index=True).rename(columns=cols)
    return out.set_index(["architecture", "pair"])[list(cols.values())].round(3)
