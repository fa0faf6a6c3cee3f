"""Figure text legible in the book (issue 64: at least 9 px at 1366 px).

Each figure helper of :mod:`stitchkit.pagekit.plotting` is drawn with made-up data, at every
number of panels the pages use and a few more. The figure's width is what the page's PNG will be:
its tight bounding box (IPython saves a glued figure with ``bbox_inches="tight"``, 0.1 inch of
padding each side) at the page's DPI; the book shows it at that width, or scaled down to its
column (``plotting.COLUMN_PX`` at 1366 px, which tests/test_browser.py checks against the built
book). The smallest text on the figure (tick labels, legends, titles, cell values) must then be
at least 9 px. So must that of every figure an experiment draws itself (``EXPERIMENT_FIGURES``),
each fed made-up inputs of the shape its page gives it.

On a phone (390 px: a column of ``one_column.PHONE_COLUMN_PX``) the book shows a figure of several
panels laid out again, one panel per row (the rendering a page's run glues beside the wide one:
``results.one_column_figure``); its smallest text must be at least 9 px in that column too, and a
figure of one panel has no such rendering.
"""

from __future__ import annotations

import matplotlib

matplotlib.use("Agg")

import matplotlib.pyplot as plt  # noqa: E402
import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402
import pytest  # noqa: E402
from matplotlib.text import Text  # noqa: E402

from stitchkit.base import one_column  # noqa: E402
from stitchkit.pagekit import plotting  # noqa: E402
from stitchkit.verdicts.results import FIGURE_DPI, one_column_figure  # noqa: E402

MIN_PX = 9.0
CUTS = ["stem", *(f"block{i}" for i in range(1, 9)), "pool"]
SENDERS = ["receiver into itself (control)", "trained (seed 1)", "random bottom"]


def shown_text_px(fig, column: int = plotting.COLUMN_PX) -> tuple[float, float, float]:
    """(the smallest text's height in px as the book shows the figure in a ``column`` px wide,
    its size in points, the PNG's width in inches)."""
    fig.set_dpi(FIGURE_DPI)
    fig.canvas.draw()
    width = fig.get_tightbbox(fig.canvas.get_renderer()).width + 2 * 0.1
    shown = min(width * FIGURE_DPI, column)
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


# --------------------------------------------------------------------------------------------
# The figures an experiment draws itself, each fed made-up inputs of the shape its page gives it
# (the paper's layer counts where they are larger than smoke's: the most panels, ticks and cells)


def _rng(seed=3):
    return np.random.default_rng(seed)


def _ident_results():
    from stitchkit.experiments.balogh.identification import MEASURES, IdentResult

    out = {}
    for arch, n in (("resnet18", 8), ("vit", 12)):
        layers = [f"block{i}" for i in range(1, n + 1)]
        nets = [f"{arch} #0", f"{arch} #1"]
        mats = {p: {m: _rng().random((n, n)) for m in MEASURES} for p in ((a, b) for a in nets for b in nets)}
        out[arch] = IdentResult(arch, layers, mats, pd.DataFrame(), pd.DataFrame(), {})
    return out


def j_t1(kind):
    from stitchkit.experiments.balogh import identification_display
    from stitchkit.experiments.balogh.identification import PRESETS_T1

    return identification_display.plot_matrices_all(_ident_results(), kind, PRESETS_T1["paper"])


def _ding_result(arch, layers=("block2", "block4", "block6", "block8")):
    from stitchkit.experiments.balogh.common import NAMES
    from stitchkit.experiments.balogh.ding import DING_MEASURES

    g = _rng()
    rows = [{"network": net, "layer": layer, "rank": rank, "F (%)": 50 + 40 * g.random(), "same network": net == "#0",
             "|ΔF| (points)": 10 * g.random(), **{m: g.random() for m in DING_MEASURES}}
            for net in ("#0", "#1", "#2") for layer in layers for rank in (1, 4, 16, 64, 256)]
    corr = pd.DataFrame({"tau": g.random(len(DING_MEASURES))}, index=[NAMES[m] for m in DING_MEASURES])
    return {"table": pd.DataFrame(rows), "correlations": corr, "reference": ("#0", "block4")}


def j_t2():
    from stitchkit.experiments.balogh import ding_display
    from stitchkit.experiments.balogh.ding import PRESETS_T2

    return ding_display.plot_sensitivity_all({a: _ding_result(a) for a in ("resnet18", "vit")}, PRESETS_T2["paper"])


def j_t3():
    from stitchkit.experiments.balogh import ding_display
    from stitchkit.experiments.balogh.ding import PRESETS_T3

    return ding_display.plot_specificity_all({a: _ding_result(a) for a in ("resnet18", "vit")}, PRESETS_T3["paper"])


def _ood_result(arch, n=8):
    import torch

    from stitchkit.experiments.balogh.detectors import OODResult

    g = _rng()
    layers = [f"block{i}" for i in range(1, n + 1)]
    rows = [{"method": m, "kind": k, "i": i, "j": j, "relative": g.random(), "auroc": 0.5 + g.random() / 2}
            for m in ("TLM", "DM") for k in ("intra", "inter") for i in range(1, n + 1) for j in range(1, n + 1)]
    energies = {(w, layers[0]): torch.randn(200) for w in ("in", "near", "aux")}
    energies.update({("TLM", layer): torch.randn(200) for layer in layers})
    return OODResult(arch, layers, ("#0", "#1"), pd.DataFrame(rows), np.zeros((1, len(rows))), pd.DataFrame(), {},
                     2000, energies, pd.DataFrame())


def j_f1_matrices():
    from stitchkit.experiments.balogh import ood_display

    return ood_display.plot_ood_grid(_ood_result("resnet18"), methods=("TLM",), kinds=("intra",), title="a title")


def j_f1_energies():
    from stitchkit.experiments.balogh import ood_display

    return ood_display.plot_energies(_ood_result("resnet18"), title="a title")


def j_f2():
    from stitchkit.experiments.balogh import ood_display
    from stitchkit.experiments.balogh.detectors import PRESETS_OOD

    return ood_display.plot_ood_grid_all({"resnet18": _ood_result("resnet18"), "vit": _ood_result("vit", 12)},
                                         PRESETS_OOD["paper"])


def _hernandez_table(kinds=("trained",), nets=("R1111", "R2222"), n=8):
    g = _rng()
    pairs = {"trained": [(s, r) for s in nets for r in nets], "random sender": [("untrained", r) for r in nets],
             "random receiver": [(s, "untrained") for s in nets]}
    rows = [{"sender": s, "receiver": r, "kind": k, "i": i, "j": j, "accuracy": g.random(),
             "sim_accuracy": g.random()}
            for k in kinds for s, r in pairs[k] for i in range(n + 1) for j in range(1, n + 1)]
    return pd.DataFrame(rows)


def h_grids(**kw):
    from stitchkit.experiments.hernandez import all_layers

    kinds = kw.pop("kinds", ("trained",))
    nets = kw.pop("nets", ("R2222",) if kinds != ("trained",) else ("R1111", "R2222"))  # controls: a pair each kind
    return all_layers.plot_grids(_hernandez_table(kinds, nets, n=kw.pop("n", 4)), kinds=kinds, title="a title",
                                 counts="block", **kw)


def h_f6():
    import torch

    from stitchkit.experiments.hernandez import images

    layers = range(1, 9)
    table = pd.DataFrame({"i": list(layers), "accuracy": np.linspace(0.9, 0.2, 8)})
    return images.plot_images({k: torch.rand(8, 3, 32, 32) for k in layers}, torch.rand(8, 3, 32, 32), table,
                              title="a title")


def b_f8():
    from stitchkit.experiments.bansal import f8

    g = _rng()
    cuts = ["stage1", "stage2", "stage3", "pool"]
    rows = [{"bottom": b, "cut": c, "fine-tuned": g.random(), "stitched": g.random(), "top accuracy": 0.9}
            for b in (f8.TRAINED, f8.RANDOM) for c in cuts]
    return f8.plot_finetune(pd.DataFrame(rows), "Pre-activation bottleneck ResNet-164 (width 16) on CIFAR-10")


def b_f9():
    from stitchkit.experiments.bansal import f9

    g = _rng()
    cuts = ["stem", *(f"stage{i}.block{k}" for i in (1, 2, 3) for k in (1, 9, 18)), "pool"]
    table = pd.DataFrame([{"sender": s, "cut": c, "penalty": g.random() / 10, "accuracy": 0.8 + g.random() / 10,
                           "receiver_accuracy": 0.9} for s in (f9.A, f9.B, f9.SELF) for c in cuts])
    history = [{"epoch": e, "train_accuracy": 0.5 + e / 40} for e in range(1, 11)]
    metrics = {name: {"test": {"accuracy": 0.85}, "history": history} for name in ("full network", "freeze-trained")}
    return f9.plot_freeze(table, tuple(cuts[:3]), metrics, f9.PRESETS_F9["paper"], title="a title")


def _across_result(title, measures=("cka", "pwcca", "procrustes", "dm", "dm_accuracy")):
    g = _rng()
    pairs = [(a, b) for a in range(len(measures)) for b in range(a + 1, len(measures))]
    tau = {(measures[a], measures[b]): np.clip(0.3 + g.normal(0, 0.1, 51), -1, 1) for a, b in pairs}
    ident = {m: g.random((51, 8)) < 0.6 for m in measures}
    return {"title": title, "measures": list(measures), "n_test": 2000,
            "within": {"tau": tau}, "between": {"tau": tau}, "identified": {"within": ident, "between": ident}}


def x_1():
    from stitchkit.experiments import across

    return across.plot_agreement({z: _across_result(f"zoo {z}") for z in ("a", "b", "c")})


def x_2():
    from stitchkit.experiments import across_identify

    return across_identify.plot_identification({z: _across_result(f"zoo {z}") for z in ("a", "b", "c")})


def x_3():
    from stitchkit.experiments import across_conclusions as x3

    g = _rng()
    cuts = ["stem", "stage1", "stage2", "stage3", "stage4"]
    connect = pd.DataFrame([{"sender": s, "cut": c, "penalty": g.random() / 20}
                            for s in (x3.SELF, "R2222 seed 1", x3.RANDOM) for c in cuts])
    n = len(x3.STAGES)
    triangle = pd.DataFrame([{"sender": s, "i": i, "j": j, "accuracy": g.random(), "receiver_accuracy": 0.9}
                             for s in ("ResNet-18 #1", x3.SELF) for i in range(n) for j in range(n)])
    return x3.plot_conclusions(connect, triangle)


def x_4():
    from stitchkit.experiments import across_own

    g = _rng()
    layers = ["block1", "block2", "block3"]
    table = pd.DataFrame([{"measure": m, "layer_a": a, "layer_b": b, "value": g.random()}
                          for m in ("cka", "dm_accuracy", "tlm_accuracy") for a in layers for b in layers])
    return across_own.plot_pairs(table)


def s_f1a():
    from stitchkit.experiments.smith import examples

    img = (_rng().random((28, 28, 3)) * 255).astype(np.uint8)
    names = ["Correlated", "Digit", "Colour", "Colour-only", "Digit (grey)"]
    return examples.plot_examples({name: [(k // 3, img) for k in range(6)] for name in names})


EXPERIMENT_FIGURES = {
    "J-T1 intra": lambda: j_t1("intra"),
    "J-T1 inter": lambda: j_t1("inter"),
    "J-T2": j_t2,
    "J-T3": j_t3,
    "J-F1 matrices": j_f1_matrices,
    "J-F1 energies": j_f1_energies,
    "J-F2": j_f2,
    "H-F2/H-F4 grids": h_grids,
    "H-F2 controls": lambda: h_grids(kinds=("random sender", "random receiver")),
    "H-F2 controls, three networks": lambda: h_grids(kinds=("random sender", "random receiver"),
                                                     nets=("R1111", "R2222", "R3333")),
    "H-F4 grids, three networks": lambda: h_grids(nets=("R2222", "ResNet-34", "R1111")),
    "H-F2 spot (8 layers)": lambda: h_grids(n=8),
    "H-F5": lambda: h_grids(value="sim_accuracy", label="similarity"),
    "H-F6": h_f6,
    "B-F8": b_f8,
    "B-F9": b_f9,
    "X-1": x_1,
    "X-2": x_2,
    "X-3": x_3,
    "X-4": x_4,
    "S-F1A": s_f1a,
}


@pytest.mark.parametrize("name", EXPERIMENT_FIGURES)
def test_the_smallest_text_of_each_experiment_figure_is_legible_in_the_book(name):
    fig = EXPERIMENT_FIGURES[name]()
    try:
        px, pt, width = shown_text_px(fig)
    finally:
        plt.close(fig)
    assert px >= MIN_PX, f"{name}: {pt:g} pt text in a {width:.1f} in figure shows at {px:.1f} px (< {MIN_PX:g})"


# --------------------------------------------------------------------------------------------
# On a phone: a figure of several panels, one panel per row


@pytest.mark.parametrize("name", [*HELPERS, *EXPERIMENT_FIGURES])
def test_a_figure_of_several_panels_is_legible_on_a_phone_one_panel_per_row(name):
    fig = {**HELPERS, **EXPERIMENT_FIGURES}[name]()
    try:
        several = one_column.count_panels(fig) > 1
        stacked = one_column_figure(name, fig)
        if not several:
            assert stacked is None, f"{name}: a figure of one panel needs no phone rendering"
            return
        assert stacked is not None, f"{name}: a figure of several panels has no phone rendering"
        px, pt, width = shown_text_px(stacked, one_column.PHONE_COLUMN_PX)
        grids = {ax.get_subplotspec().get_gridspec() for ax in stacked.axes if ax.get_visible()
                 and not (one_column.is_colour_bar(ax) or one_column.is_picture(ax) or one_column.is_blank(ax))}
    finally:
        plt.close(fig)
    assert px >= MIN_PX, (f"{name} on a phone: {pt:g} pt text in a {width:.1f} in figure shows at {px:.1f} px "
                          f"(< {MIN_PX:g}) in a {one_column.PHONE_COLUMN_PX} px column")
    assert all(g.ncols == 1 for g in grids), f"{name} on a phone: panels side by side"
