"""J-T2's and J-T3's tables and figures (Balogh & Jelasity, Tables 2-3, after Ding et al.): the
sensitivity and specificity tests of every measure."""

from __future__ import annotations

import pandas as pd

from .common import ARCH_NAMES, NAMES, IdentConfig, stacked, title
from .ding import DING_MEASURES, leave_one_out, sensitivity_leave_one_out


def table2(results: dict[str, dict]) -> pd.DataFrame:
    """J-T2's mean rank correlations for every architecture, ours beside the paper's."""
    parts = {ARCH_NAMES[a]: r["correlations"].drop(columns="key").round(4) for a, r in results.items()}
    return pd.concat(parts, names=["architecture"])


SENSITIVITY_PT = 9  # the smallest text of J-T2's figure (its legend)
SENSITIVITY_PANEL = (4.2, 3.0)  # inches: one panel, as asked


def sensitivity_grid() -> tuple[int, int, float]:
    """(rows, columns, panel width in inches) of J-T2's probe accuracy and five measures: as many
    columns as keep its legend legible in the book (issue 64; :func:`stitchkit.pagekit.plotting.panel_grid`)."""
    from ...pagekit.plotting import panel_grid

    return panel_grid(1 + len(DING_MEASURES), SENSITIVITY_PANEL[0], SENSITIVITY_PT)


def plot_sensitivity(result: dict, *, title: str = "", fig=None):
    """Per tested layer and network: probe accuracy against rank, and each dissimilarity (to the
    reference A) against rank; solid: A's network, dashed: the other networks."""
    import matplotlib.pyplot as plt

    t = result["table"]
    groups = list(t.groupby(["network", "layer"], sort=False))
    rows, cols, width = sensitivity_grid()
    fig = fig or plt.figure(figsize=(width * cols, SENSITIVITY_PANEL[1] * rows), layout="constrained")
    axes = list(fig.subplots(rows, cols).flat)  # the probe accuracy and five measures: readable at the page's width
    for (net, layer), g in groups:
        g = g.sort_values("rank")
        label = layer if len({n for (n, _), _ in groups}) == 1 else f"{net} {layer}"
        style = "-" if g["same network"].all() else "--"  # dashed: B from another network than A's
        axes[0].plot(g["rank"], g["F (%)"], style, marker="o", ms=3, label=label)
        for ax, m in zip(axes[1:], DING_MEASURES):
            ax.plot(g["rank"], g[m], style, marker="o", ms=3)
    axes[0].set_ylabel("probe accuracy F (%)", fontsize=10)
    axes[0].set_title("probe accuracy", fontsize=11)
    axes[0].legend(fontsize=9)
    for ax, m in zip(axes[1:], DING_MEASURES):
        ax.set_title({"lcka": "1 − LCKA", "dm_func": "1 − relative acc. (DM)"}.get(m, NAMES[m]), fontsize=11)
    for ax in axes:
        ax.set_xscale("log")
        ax.set_xlabel("rank of the approximation", fontsize=10)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_sensitivity_all(results: dict[str, dict], cfg: IdentConfig):
    """J-T2's figure for every architecture, titled by its networks' recipe in ``cfg``."""
    rows, cols, width = sensitivity_grid()
    return stacked([(plot_sensitivity, dict(result=r, title=title(cfg.net_recipe(a)))) for a, r in results.items()],
                   width * cols, SENSITIVITY_PANEL[1] * rows + 0.2)


def correlation_table(result: dict) -> pd.DataFrame:
    c = result["correlations"].drop(columns="key")
    return c[["tau", "paper tau", "rho", "paper rho", "tau p", "rho p"]]


def table3(results: dict[str, dict]) -> pd.DataFrame:
    """J-T3's rank correlations for every architecture, ours beside the paper's."""
    parts = {ARCH_NAMES[a]: correlation_table(r).round(4) for a, r in results.items()}
    return pd.concat(parts, names=["architecture"])


def jackknife_table(results: dict[str, dict]) -> pd.DataFrame:
    """The networks' jackknife for every architecture: J-T3's (:func:`.ding.leave_one_out`) or,
    for J-T2's results (per tested layer), the mean taus' (:func:`.ding.sensitivity_leave_one_out`)."""
    parts = {ARCH_NAMES[a]: (sensitivity_leave_one_out(r) if "per_layer" in r else leave_one_out(r))
             .set_index("network left out").round(4) for a, r in results.items()}
    return pd.concat(parts, names=["architecture"])


def plot_specificity(result: dict, *, title: str = "", fig=None):
    """|ΔF| against each dissimilarity, one panel per measure, points coloured by layer depth."""
    import matplotlib.pyplot as plt

    t = result["table"]
    depth = t.layer.str.replace("block", "").astype(int)
    fig = fig or plt.figure(figsize=(10.5, 6.4), layout="constrained")
    grid = fig.subplots(2, 3)  # five measures and the colour bar: readable at the page's width
    axes = list(grid.flat[:len(DING_MEASURES)])
    c = result["correlations"]
    for ax, m in zip(axes, DING_MEASURES):
        sc = ax.scatter(t[m], t["|ΔF| (points)"], c=depth, cmap="viridis", s=24)
        ax.set_xlabel({"lcka": "1 − LCKA", "dm_func": "1 − relative accuracy (DM)"}.get(m, NAMES[m] + " distance"),
                      fontsize=10)
        ax.set_title(f"{NAMES[m]}: τ = {c.loc[NAMES[m], 'tau']:.2f}", fontsize=11)
    for ax in grid[:, 0]:
        ax.set_ylabel("|F(A) − F(B)| (probe acc., points)", fontsize=10)
    grid.flat[-1].axis("off")
    fig.colorbar(sc, ax=grid.flat[-1], label="block of B", fraction=0.25, location="left")
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_specificity_all(results: dict[str, dict], cfg: IdentConfig):
    """J-T3's figure for every architecture, titled by its networks' recipe in ``cfg``."""
    return stacked([(plot_specificity, dict(result=r, title=f"reference A = {r['reference'][0]}, {r['reference'][1]} · "
                                            + title(cfg.net_recipe(a)))) for a, r in results.items()], 10.5, 6.6)
