"""Figure text legible in the book (issue 64: at least 9 px at 1366 px).

Each figure helper of :mod:`stitchkit.pagekit.plotting` is drawn with made-up data, at every
number of panels the pages use and a few more. The figure's width is what the page's PNG will be:
its tight bounding box (IPython saves a glued figure with ``bbox_inches="tight"``, 0.1 inch of
padding each side) at the page's DPI; the book shows it at that width, or scaled down to its
column (``plotting.COLUMN_PX`` at 1366 px, which tests/test_browser.py checks against the built
book). The smallest text on the figure (tick labels, legends, titles, cell values) must then be
at least 9 px. Only the helpers are checked: figures an experiment draws itself are not.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from stitchkit.pagekit import plotting  # noqa: E402
from stitchkit.verdicts.results import FIGURE_DPI  # noqa: E402

MIN_PX = 9.0
CUTS = ["stem", *(f"block{i}" for i in range(1, 9)), "pool"]
SENDERS = ["receiver into itself (control)", "trained (seed 1)", "random bottom"]


def shown_text_px(fig) -> tuple[float, float, float]:
    """(the smallest text's height in px as the book shows the figure, its size in points, the
    PNG's width in inches)."""
    fig.set_dpi(FIGURE_DPI)
    fig.canvas.draw()
    width = fig.get_tightbbox(fig.canvas.get_renderer()).width + 2 * 0.1
    shown = min(width * FIGURE_DPI, plotting.COLUMN_PX)
    sizes = [t.get_fontsize() for t in fig.findobj(Text)
             if t.get_visible() and t.get_text().strip() and (t.axes is None or t.axes.get_visible())]
    return min(sizes) / 72 * shown / width, min(sizes), width


def grid_table(receivers=("r",), cka=False) -> pd.DataFrame:
    g = np.random.default_rng(0)
    rows = [dict(cut=c, sender=s, receiver=r, penalty=g.random() / 10, dm_penalty=g.random() / 10,
                 accuracy=0.6 + g.random() / 10, receiver_accuracy=0.65, cka=g.random(), pair=s)
            for r in receivers for s in SENDERS for c in CUTS]
    return pd.DataFrame(rows)


def spread_panel(n_senders=3) -> dict:
    g = np.random.default_rng(1)
    rows = [dict(sender=f"model {k}", layer=f"Layer {i}", mean=0.8, min=0.7, max=0.9, sd=0.05 + g.random() / 50)
            for k in range(n_senders) for i in range(1, 6)]
    return {"stats": pd.DataFrame(rows), "band": "range", "ylabel": "accuracy (%)", "panel": "a panel", "scale": 100,
            "baseline": 0.85, "baseline_label": "baseline", "paper": [(0.9, None, "paper: a value")]}


def bars(n_columns: int):
    rows = ["Correlated", "Digit", "Colour", "Colour-only"]
    cols = {f"c{i}": f"column {i}" for i in range(n_columns)}
    table = pd.DataFrame(0.8, index=rows, columns=list(cols))
    return plotting.ours_vs_paper_bars(table, table * 0.05, table * 1.05, columns=cols, ylabel="accuracy (%)",
                                       title="a title")


def judged():
    value = np.linspace(0, 30, len(CUTS))
    lines = {"trained sender (seed 1)": (value, value - 1, value + 1),
             "untrained bottom": (value / 2, value / 2 - 1, value / 2 + 1)}
    bounds = [("connected (paper: Table 1)", 3.0, "<=", None), ("low at the first cut", 5.0, "<=", [0]),
              ("high at the last two", 20.0, ">=", [len(CUTS) - 2, len(CUTS) - 1])]
    return plotting.judged_per_layer(CUTS, lines, bounds=bounds, ylabel="penalty beyond the self-stitch (points)",
                                     title="What the claims judge")


def connectivity(n: int):
    return plotting.connectivity_panels({f"architecture {i}": grid_table() for i in range(n)},
                                        title="Stitching connectivity", paper=(3.0, "paper: within 3 points"))


HELPERS = {
    "judged_per_layer": judged,
    "penalty_per_layer": lambda: plotting.penalty_per_layer(grid_table(), title="a title",
                                                            paper=(0, 3, "paper: within 3 points")),
    **{f"connectivity_panels x{n}": (lambda n=n: connectivity(n)) for n in (1, 2, 3, 4, 6, 8)},
    "penalty_and_cka": lambda: plotting.penalty_and_cka(grid_table(), SENDERS[1:], title="a title"),
    **{f"layer_heatmap {n}x{n}": (lambda n=n: plotting.layer_heatmap(
        np.random.default_rng(2).random((n, n)), [f"L{i}" for i in range(n)], [f"L{i}" for i in range(n)],
        title="a heatmap", cbar_label="CKA").figure) for n in (4, 8, 12, 20)},
    **{f"spread_per_layer x{n}": (lambda n=n: plotting.spread_per_layer([spread_panel() for _ in range(n)],
                                                                         title="a title")) for n in (1, 2, 3, 4)},
    **{f"ours_vs_paper_bars x{n}": (lambda n=n: bars(n)) for n in (1, 2, 3, 4)},
    **{f"penalty_panels x{n}": (lambda n=n: plotting.penalty_panels(
        grid_table([f"net {i}" for i in range(n)]), control=SENDERS[0], title="a title")) for n in (1, 2, 3, 4)},
    **{f"cka_panels x{n}": (lambda n=n: plotting.cka_panels(
        grid_table([f"net {i}" for i in range(n)]), control=SENDERS[0], title="a title",
        paper=(0.7, 0.9, "paper: 0.7-0.9"))) for n in (1, 2, 3, 4)},
    "cka_lines": lambda: plotting.cka_lines(grid_table(), title="a title", paper={SENDERS[1]: (0.7, 0.9, "paper")}),
}


@pytest.mark.parametrize("name", HELPERS)
def test_the_smallest_text_of_each_figure_helper_is_legible_in_the_book(name):
    fig = HELPERS[name]()
    try:
        px, pt, width = shown_text_px(fig)
    finally:
        plt.close(fig)
    assert px >= MIN_PX, f"{name}: {pt:g} pt text in a {width:.1f} in figure shows at {px:.1f} px (< {MIN_PX:g})"


def test_panels_go_on_to_another_row_rather_than_shrink_below_the_narrowest_panel():
    assert plotting.panel_grid(1, 4.6, 8, extra=1.5) == (1, 1, 4.6)
    rows, cols, width = plotting.panel_grid(3, 4.6, 8, extra=1.5)
    assert (rows, cols) == (2, 2) and plotting.MIN_PANEL <= width < 4.6
    assert cols * width + 1.5 <= plotting.max_width(8) + 1e-9
