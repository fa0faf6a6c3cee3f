"""Balogh & Jelasity: the pages' tables and figures, in catalogue order (J-T1, J-F1/J-F2,
J-T2, J-T3): one result's plot, and the ``*_all`` figure that stacks it for every architecture
of a run (:func:`stacked`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ... import zoo
from ...grid_spec import LONGER
from .common import ARCH_NAMES, HIGHER_IS_SIMILAR, MEASURES, NAMES, net_index
from .ding import DING_MEASURES
from .identification import identification_table
from .ood import NEAR_KINDS


def title(scale: str, arch: str) -> str:
    cfg = (zoo.BALOGH_RESNET18 if arch == "resnet18" else zoo.BALOGH_VIT)[scale]
    what = f"width {cfg['width']}" if arch == "resnet18" else f"dim {cfg['width']}, depth {cfg['depth']}"
    return f"{ARCH_NAMES[arch]} ({what}) on CIFAR-10, scale '{scale}'"


def accuracy_table(results: dict[str, dict]) -> pd.DataFrame:
    """Test accuracy (%) of every network of every architecture in ``results``."""
    acc = {net: round(100 * a, 2) for res in results.values() for net, a in res["accuracy"].items()}
    return pd.DataFrame({"test accuracy (%)": acc})


def stacked(draws: list, width: float, height: float):
    """One figure with a row (a sub-figure) per ``(function, keywords)`` in ``draws``, each drawn
    by ``function(**keywords, fig=sub_figure)`` in a row of ``height`` inches: one figure per page
    whatever the number of architectures a run was given."""
    import matplotlib.pyplot as plt

    fig = plt.figure(figsize=(width, height * len(draws)), layout="constrained")
    subs = fig.subfigures(len(draws), 1) if len(draws) > 1 else [fig]
    for sub, (fn, kw) in zip(subs, draws):
        fn(**kw, fig=sub)
    return fig


# --------------------------------------------------------------------------------------------
# J-T1


def table1(results: dict[str, dict]) -> pd.DataFrame:
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


def plot_matrices(result: dict, pair: tuple[str, str], measures=MEASURES, *, title: str = "", fig=None):
    """One heatmap per measure for one ordered pair (rows: source layer, columns: target layer);
    the cell each column's identification picks is outlined."""
    import matplotlib.pyplot as plt
    from matplotlib.patches import Rectangle

    mats = result["matrices"][pair]
    measures = [m for m in measures if m in mats]
    n = len(result["layers"])
    labels = [c.replace("block", "") for c in result["layers"]]
    cols = 3
    rows = -(-len(measures) // cols)
    # the page shows the figure at about 53 px per inch: 12 pt is about 9 px, the least that reads
    fig = fig or plt.figure(figsize=(4.2 * cols, 4.2 * rows), layout="constrained")
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


def _pair(result: dict, kind: str) -> tuple[str, str]:
    names = sorted({a for a, _ in result["matrices"]})
    return (names[0], names[0]) if kind == "intra" else (names[0], names[1])


def plot_matrices_all(results: dict[str, dict], kind: str, scale: str):
    """J-T1's matrices for every architecture: one network into itself (``kind="intra"``) or
    network #0 against #1 (``"inter"``)."""
    draws = []
    for arch, res in results.items():
        a, b = _pair(res, kind)
        what = f"within {a}" if kind == "intra" else f"{a} → {b}"
        draws.append((plot_matrices, dict(result=res, pair=(a, b), title=f"{what} · {title(scale, arch)}")))
    return stacked(draws, 12.6, 8.8)


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


# --------------------------------------------------------------------------------------------
# J-F1 / J-F2


def _matrix_of(t: pd.DataFrame, value: str, n: int) -> np.ndarray:
    m = np.full((n, n), np.nan)
    for r in t.itertuples():
        m[r.i - 1, r.j - 1] = getattr(r, value)
    return m


def plot_ood_grid(result: dict, *, methods=("TLM", "DM"), kinds=("intra", "inter"), title: str = "", fig=None):
    """Per (method, pairing): the relative-accuracy matrix and the AUROC matrix side by side
    (rows: source block i, columns: target block j), the paper's Figure 2 layout."""
    import matplotlib.pyplot as plt

    t = result["table"]
    n = len(result["layers"])
    combos = [(m, k) for m in methods for k in kinds]
    fig = fig or plt.figure(figsize=(8.4, 3.6 * len(combos)), layout="constrained")
    axes = fig.subplots(len(combos), 2, squeeze=False)
    a, b = result["names"]
    for row, (method, kind) in zip(axes, combos):
        sub = t[(t.method == method) & (t.kind == kind)]
        who = f"{a} → itself" if kind == "intra" else f"{b} → {a}"
        for ax, value, cmap, label, vmin, vmax in ((row[0], "relative", "viridis", "relative accuracy", 0, None),
                                                   (row[1], "auroc", "magma", "AUROC (0.5: in distribution)", 0.5, 1)):
            im = ax.imshow(_matrix_of(sub, value, n), cmap=cmap, vmin=vmin, vmax=vmax)
            ax.set_xticks(range(n), range(1, n + 1), fontsize=7)
            ax.set_yticks(range(n), range(1, n + 1), fontsize=7)
            ax.set_xlabel("target block j", fontsize=8)
            ax.set_ylabel("source block i", fontsize=8)
            ax.set_title(f"{method}, {who}: {label.split(' (')[0]}", fontsize=9)
            fig.colorbar(im, ax=ax, fraction=0.046, pad=0.03, label=label)
    if title:
        fig.suptitle(title, fontsize=10)
    return fig


def plot_energies(result: dict, *, method: str = "TLM", title: str = ""):
    """The paper's Figure 1c: energies of the first target layer's detector. Top: the layer's own
    test activations vs the near and the far outliers; bottom: the stitches from every source block."""
    import matplotlib.pyplot as plt

    e = result["energies"]
    j = result["layers"][0]
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
    layers = result["layers"]
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


def detector_table(results: dict[str, dict]) -> pd.DataFrame:
    """Every detector's control AUROCs (near outliers, in all and per kind; MNIST; its own training
    images against the test images), per architecture and layer."""
    parts = {ARCH_NAMES[a]: r["detectors"].set_index("layer").round(3) for a, r in results.items()}
    return pd.concat(parts, names=["architecture"])


def plot_ood_grid_all(results: dict[str, dict], scale: str):
    return stacked([(plot_ood_grid, dict(result=r, title=title(scale, a))) for a, r in results.items()], 8.4, 14.8)


# --------------------------------------------------------------------------------------------
# J-T2


def table2(results: dict[str, dict]) -> pd.DataFrame:
    """J-T2's mean rank correlations for every architecture, ours beside the paper's."""
    parts = {ARCH_NAMES[a]: r["correlations"].drop(columns="key").round(4) for a, r in results.items()}
    return pd.concat(parts, names=["architecture"])


def plot_sensitivity(result: dict, *, title: str = "", fig=None):
    """Per tested layer and network: probe accuracy against rank, and each dissimilarity (to the
    reference A) against rank; solid: A's network, dashed: the other network."""
    import matplotlib.pyplot as plt

    t = result["table"]
    groups = list(t.groupby(["network", "layer"], sort=False))
    fig = fig or plt.figure(figsize=(10.5, 6.4), layout="constrained")
    axes = list(fig.subplots(2, 3).flat)  # the probe accuracy and five measures: readable at the page's width
    for (net, layer), g in groups:
        g = g.sort_values("rank")
        label = layer if len({n for (n, _), _ in groups}) == 1 else f"{net} {layer}"
        style = "-" if g["same network"].all() else "--"  # dashed: B from the other network than A's
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


def plot_sensitivity_all(results: dict[str, dict], scale: str):
    return stacked([(plot_sensitivity, dict(result=r, title=title(scale, a))) for a, r in results.items()], 10.5, 6.6)


# --------------------------------------------------------------------------------------------
# J-T3


def correlation_table(result: dict) -> pd.DataFrame:
    c = result["correlations"].drop(columns="key")
    return c[["tau", "paper tau", "rho", "paper rho", "tau p", "rho p"]]


def table3(results: dict[str, dict]) -> pd.DataFrame:
    """J-T3's rank correlations for every architecture, ours beside the paper's."""
    parts = {ARCH_NAMES[a]: correlation_table(r).round(4) for a, r in results.items()}
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


def plot_specificity_all(results: dict[str, dict], scale: str):
    return stacked([(plot_specificity, dict(result=r, title=f"reference A = {r['reference'][0]}, {r['reference'][1]} · "
                                            + title(scale, a))) for a, r in results.items()], 10.5, 6.6)
