"""Across the papers (beyond the four papers), X-2: Balogh & Jelasity's layer-identification
test on every zoo of the book.

Balogh & Jelasity (2025, Table 1; this book's :doc:`J-T1`) ask of a similarity notion whether it
*identifies* layers: within a network, is every layer most similar to itself; between two
networks of the same architecture trained from different seeds, is each layer of the second most
similar to the *corresponding* layer of the first? On their ResNet-18s, linear CKA and DM
(struct.) identify most corresponding layers between networks (96.11% and 92.50%), PWCCA and
orthogonal Procrustes few (12.50% and 19.17%), and every notion but task-loss matching identifies
every layer within its network. This page runs the same test, with the notions of
:func:`stitchkit.compare`, on a pair of networks of one architecture from each zoo: does their
conclusion hold on Bansal et al.'s, Hernandez et al.'s and Smith & Marcu's networks?

The rule is J-T1's (:func:`stitchkit.experiments.balogh.identification.identified`): a target
layer j (of the second network; of the network itself within one) is identified when no source
layer is more similar to it than the source's layer j (ties count as identified). Within a
network J-T1's tie rule for bounded maxima applies (:mod:`stitchkit.experiments.balogh.
identification_verdicts`, issue 46): a rival beats a layer's own pair only by more than noise,
the 95% percentile interval of their paired difference over the resamples above 0; a rival
whose interval contains 0 is a tie, and a tie is identified. Every notion's values come from
X-1's computation (:func:`stitchkit.experiments.across.notions_of`, shared through the store).

Noise. A percentage counts layers, so its interval resamples what varies here: the test images
(every notion on the same resamples) and the target layers, the cases it counts (drawn with
replacement, the same draw for every notion and set, so a difference of two is paired). The two
networks are fixed (one pair per zoo, where J-T1 has several): network-to-network variance is not
in the intervals, and the page says so. Where no resample moves a percentage (every layer
identified, or none, on every resample), it carries the exact binomial (Clopper-Pearson) bound of
its count (:func:`stitchkit.verdicts.noise.with_count_bound`; J-T1's amendment of 2026-12-02, applied here
the same day): 8 of 8 layers is compatible with a rate of 63%. So the within-network claim is held
to J-T1's 90% bar, and on fewer than 36 layers a perfect notion is within noise of it, which the
claim says.
"""

from __future__ import annotations

from dataclasses import dataclass

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd

from ..comparing.notions import NOTIONS
from ..networks import zoo
from ..registry.papers import ZOOS
from ..registry.scales import param
from ..verdicts import controls, noise
from ..verdicts.claims import ClaimSpec
from ..verdicts.results import Control, at_least
from . import across
from .across import NAMES, SIGN, ZooPair

# Criteria, fixed before any run (Balogh & Jelasity's ResNet-18 claims of J-T1, on each zoo).
# "identify every layer within its network": the lowest notion's intra-network %. Was 100 until the
# amendment of 2026-12-02 (before any run on the new networks), J-T1's: a percentage at its limit
# carries the exact binomial bound of its count (:func:`percent`), so n of n layers is never shown
# to be 100% and a bar of 100 could not pass however well a notion did; at J-T1's 90 a perfect
# notion is told from the bar from noise.cases_to_decide(0.90) = 36 layers on.
INTRA_MIN = 90.0
STRUCT_INTER_MIN = 75.0  # "LCKA and DM (struct.) perform very well": both at least this inter-network %
CCA_MARGIN = 30.0  # "PWCCA and OPD struggle while LCKA performs very well": LCKA ahead of both by this (points)
MIN_LAYERS = 5  # control: at least this many layers behind each percentage
METHOD = ("paired bootstrap over the test images and the target layers (every notion on the same resamples; the "
          "two networks fixed: network-to-network variance is not in it)")
PAPER = {"cka": 96.11, "pwcca": 12.50, "procrustes": 19.17, "dm": 92.50, "dm_accuracy": 66.39}  # J-T1, RN-18 inter
ORDER = ("pwcca", "procrustes", "cka", "dm", "dm_accuracy")  # J-T1's row order


def one_architecture_pair(name: str, recipes: across.ZooRecipes) -> ZooPair:
    """Zoo ``name``'s two networks of one architecture: X-1's pair, except Hernandez et al.'s,
    whose X-1 pair has two depths: here R2222 at seeds 0 and 1 (H-F2 trained seed 0; seed 1 is
    trained by the same recipe)."""
    if name == "hernandez":
        return ZooPair(name, "Hernandez et al.: R2222 seeds 0, 1", "H-F2", ("R2222 #0", "R2222 #1"),
                       tuple(zoo.hernandez_resnet(recipes.hernandez, "r2222", s) for s in (0, 1)), "cifar10")
    return across.zoo_pair(name, recipes)


@dataclass(frozen=True)
class IdentificationConfig(across.ZooRecipes):
    """X-2: J-T1's layer-identification test, by every notion, on a pair of networks of each zoo."""

    zoo: str = param("all", "the zoo: bansal (B-F2A's ResNet-18 seeds 0, 1), hernandez (H-F2's R2222, seeds 0 and "
                     "1), smith (S-F1B's Digit ResNet-18 seeds 0, 1), balogh (J-T1's ResNet-18 seeds 0, 1), or all "
                     "four", choices=("all", *ZOOS))
    measures: tuple[str, ...] = param(NOTIONS, "notions tested (stitchkit.compare's: cka, pwcca, procrustes, dm, "
                                      "dm_accuracy)", items={"choices": NOTIONS}, unique=True)
    test_images: int = param(1000, "test images every notion is measured on and resampled over (Balogh & "
                             "Jelasity's structural measures: 1,000)", ge=20, le=10_000)
    dm_images: int = param(100, "training images each direct-matching map is fitted on (K in Balogh & Jelasity: "
                           "100)", ge=1, le=50_000)

    SWEEP_EXAMPLE = ("zoo", ZOOS)  # the rerun box's sweep: one run per zoo (a class attribute, not a field)

    def zoos(self) -> tuple[str, ...]:
        return ZOOS if self.zoo == "all" else (self.zoo,)


PRESETS_X2 = zoo.at_scale({
    # CI: seconds. The zoos' smoke networks, 200 test images, DM fitted on 50 training images (X-1's).
    "smoke": IdentificationConfig(test_images=200, dm_images=50),
    # 2 CPU cores: X-1's settings, so its cached notions are read, not recomputed.
    "demo": IdentificationConfig(),
    # One GPU: X-1's gpu settings (the zoos' gpu networks), so its cached notions are read, not recomputed.
    "gpu": IdentificationConfig(),
    "paper": IdentificationConfig(),
}, **across.ZOO_TABLES)


# --------------------------------------------------------------------------------------------
# One zoo: the notions (X-1's) and, per set and notion, which layers are identified


def identified_reps(pairs: list[tuple[str, str]], reps: np.ndarray, sign: float, ties: bool = False) -> np.ndarray:
    """(R+1, L): per replicate, whether each target layer j is identified: its similarity with
    the source's layer j at least every other source layer's (J-T1's rule, ties identified). A
    value undefined for a rival counts as no rival; undefined for the own pair, as not identified.
    ``ties`` (within a network): J-T1's tie rule, a rival counts only where the 95% percentile
    interval of its paired difference with the own pair over the resamples lies above 0 (then in
    each replicate where it is ahead). ``pairs``: (source, target) for every source and target
    layer, the same L layer names on both sides."""
    layers = list(dict.fromkeys(a for a, _ in pairs))
    if sorted(dict.fromkeys(b for _, b in pairs)) != sorted(layers):
        raise ValueError("layer identification needs the same layers on both sides (one architecture); got "
                         f"{layers} and {list(dict.fromkeys(b for _, b in pairs))}")
    pos = {c: k for k, c in enumerate(layers)}
    m = np.full((reps.shape[0], len(layers), len(layers)), -np.inf)
    for p, (a, b) in enumerate(pairs):
        m[:, pos[a], pos[b]] = sign * reps[:, p]
    own = np.diagonal(m, axis1=1, axis2=2)  # (R+1, L): source j into target j
    m = np.where(np.isnan(m), -np.inf, m)
    if ties and len(m) > 1:
        with np.errstate(invalid="ignore"):
            diff = m - own[:, None, :]  # (R+1, i, j): rival minus own pair
            low = np.quantile(diff[1:], (1 - noise.LEVEL) / 2, axis=0)
            shown = np.isfinite(low) & (low > 0)
            return np.isfinite(own) & ~(shown[None] & (diff > 0)).any(axis=1)
    return np.isfinite(own) & (own >= m.max(axis=1))


def identification(cfg: IdentificationConfig, zoo_name: str, *, device=None, store=None,
                   progress: bool = True) -> dict:
    """Zoo ``zoo_name``'s notions (:func:`stitchkit.experiments.across.notions_of`) and, per set
    (within, between) and notion, the identification replicates (:func:`identified_reps`)."""
    raw = across.notions_of(one_architecture_pair(zoo_name, cfg), cfg, device=device, store=store, progress=progress)
    out = dict(raw)
    out["identified"] = {s: {m: identified_reps(raw[s]["pairs"], v, SIGN[m], ties=s == "within")
                             for m, v in raw[s]["reps"].items()} for s in across.SETS}
    out["identity_failures"] = across.identity_failures_of(raw)
    return out


def _layer_draws(n_layers: int, rows: int) -> np.ndarray:
    """(rows, L) target layers drawn with replacement per replicate, row 0 every layer once: one
    draw for every notion and set (a difference of two percentages is paired over the layers)."""
    return noise.case_draws(n_layers, rows, "X-2 layers")


def pct_reps(ident: np.ndarray) -> np.ndarray:
    """(R+1,) % of the layers identified, ``ident`` (R+1, L), replicate r on its resample of the
    test images and its draw of the target layers (:func:`_layer_draws`)."""
    return 100 * np.take_along_axis(ident, _layer_draws(ident.shape[1], ident.shape[0]), axis=1).mean(axis=1)


def estimate(reps: np.ndarray, n_test: int, cases: int | None = None) -> noise.Estimate:
    """The Estimate of a statistic of percentages from its (R+1,) replicates (:func:`pct_reps`):
    their percentile interval, or, where no resample moves it, exact with that reason. With
    ``cases`` (a % of that many layers, or the lowest of several over the same layers), a value at
    0 or 100 carries the exact binomial bound of its count (amendment of 2026-12-02,
    :func:`stitchkit.verdicts.noise.with_count_bound`): no resample moves it there, but which layers an
    architecture offers can."""
    reps = np.asarray(reps, dtype=np.float64)
    if cases is not None:
        return noise.with_count_bound(estimate(reps, n_test), cases)
    if np.all(reps == reps[0]):
        return noise.exact(reps[0], n_test=n_test, why=(
            f"{reps[0]:.1f} on all test images and on every one of the {len(reps) - 1} resamples of the test images "
            "and of the target layers: no layer's identification turns on the images, and every layer gives the "
            "same (within a network, ties by the tie rule); the two networks are fixed: network-to-network "
            "variance is not in it"))
    return noise.from_replicates(reps, n_test=n_test, method=METHOD)


def percent(result: dict, s: str, m: str) -> noise.Estimate:
    """The % of layers notion ``m`` identifies in set ``s``, with its interval (:func:`estimate`;
    at 0 or 100, the exact binomial bound of its count of layers)."""
    ident = result["identified"][s][m]
    return estimate(pct_reps(ident), result["n_test"], cases=np.shape(ident)[1])


# --------------------------------------------------------------------------------------------
# Claims (Balogh & Jelasity's, on each zoo), the table and the figure


def identification_claims(results: dict[str, dict]) -> tuple[dict, list[ClaimSpec]]:
    """Per zoo, the numbers and up to three claims, each made where its notions were measured:
    every notion identifies every layer within its network; LCKA and DM (struct.) identify most
    corresponding layers between networks; PWCCA and Procrustes struggle between networks while
    LCKA does well. Controls: enough layers (:data:`MIN_LAYERS`) and, for the claims between
    networks, each notion's identity control within a network on all test images (X-1's: no
    other layer more similar than a layer's own, both ways), the positive control that the
    notion is computed as it should be."""
    numbers: dict[str, float] = {"test_images_used": next(iter(results.values()))["n_test"], "zoos_run": len(results)}
    claims: list[ClaimSpec] = []
    for z, r in results.items():
        n, ms, title = r["n_test"], r["measures"], r["title"]
        layers = len(r["cuts"][0])
        numbers[f"{z}_layers"] = layers
        pct = {(s, m): percent(r, s, m) for s in across.SETS for m in ms}
        for (s, m), e in pct.items():
            numbers.update({f"{z}_{s}_{m}": e.value, f"{z}_{s}_{m}_low": e.low, f"{z}_{s}_{m}_high": e.high})
        enough = controls.premise(noise.exact(layers), MIN_LAYERS, "enough layers to judge on",
                                  what="layers per network", unit="layers", digits=0)
        identity = {m: controls.premise(noise.exact(k), 0, f"identity: {NAMES[m]} ranks each layer of {r['names'][0]} "
                                        "most similar to itself, against every other layer both ways (all test "
                                        "images)", direction="<=", what=f"layers {NAMES[m]} ranks below another layer",
                                        unit="layers", digits=0)
                    for m, k in r["identity_failures"].items()}

        def ctl(*notions: str) -> list[Control]:
            return [identity[m] for m in notions] + [enough]

        def ours(s: str, notions) -> str:
            return ", ".join(f"{across.SHORT[m]} {pct[(s, m)].text(1, '%')}" for m in notions)

        def joint(s: str, stat, notions, count: bool = True) -> noise.Estimate:
            # count: the statistic is a % of the layers (the lowest of several over the same ones)
            return estimate(stat(*(pct_reps(r["identified"][s][m]) for m in notions)), n,
                            cases=layers if count else None)

        need = noise.cases_to_decide(INTRA_MIN / 100)
        numbers[f"{z}_cases_to_decide"] = need
        decide_note = ("" if layers >= need else f" of {layers} layers (fewer than the {need} that an exact bound "
                       f"needs to tell every layer from {INTRA_MIN:.0f}%)")

        intra = [m for m in ORDER if m in ms]
        if intra:
            low = joint("within", lambda *v: np.min(np.stack(v), axis=0), intra)
            claims.append(ClaimSpec(
                key=f"intra_{z}", text=f"{title}: every notion identifies every layer within its network",
                criterion=at_least(low, INTRA_MIN, "lowest intra-network % of the notions (the lowest taken in each "
                                   "bootstrap replicate)", unit="%"),
                paper="Balogh & Jelasity (J-T1): PWCCA, OPD, LCKA and both DM indices 100% each",
                ours=ours("within", intra) + decide_note, controls=[enough], kind="no_stitch"))
        if {"cka", "dm"} <= set(ms):
            low = joint("between", np.minimum, ("cka", "dm"))
            claims.append(ClaimSpec(
                key=f"struct_inter_{z}", text=f"{title}: between networks, linear CKA and DM (struct.) identify "
                "most corresponding layers",
                criterion=at_least(low, STRUCT_INTER_MIN, "min(LCKA, DM struct.) inter-network % (per replicate)",
                                   unit="%"),
                paper=f"Balogh & Jelasity (J-T1, ResNet-18): LCKA {PAPER['cka']:.2f}%, DM struct. {PAPER['dm']:.2f}%",
                ours=ours("between", ("cka", "dm")), controls=ctl("cka", "dm"), kind="no_stitch"))
        if {"cka", "pwcca", "procrustes"} <= set(ms):
            lead = joint("between", lambda c, p, o: c - np.maximum(p, o), ("cka", "pwcca", "procrustes"), count=False)
            numbers[f"{z}_cca_lead"] = lead.value
            claims.append(ClaimSpec(
                key=f"cca_inter_{z}", text=f"{title}: between networks, PWCCA and Procrustes struggle to identify "
                "corresponding layers while linear CKA performs very well",
                criterion=at_least(lead, CCA_MARGIN, "LCKA − max(PWCCA, Procrustes), inter-network % (per "
                                   "replicate)", unit="points"),
                paper=f"Balogh & Jelasity (J-T1, ResNet-18): LCKA {PAPER['cka']:.2f}%, PWCCA {PAPER['pwcca']:.2f}%, "
                      f"OPD {PAPER['procrustes']:.2f}%",
                ours=ours("between", ("cka", "pwcca", "procrustes")) + f"; lead {lead.text(1, 'points')}",
                controls=ctl("cka", "pwcca", "procrustes"), kind="no_stitch"))
    return numbers, claims


def identification_table(results: dict[str, dict]) -> pd.DataFrame:
    """Per notion (rows, J-T1's order) and zoo: the % of layers identified within a network and
    between the two, with intervals; J-T1's ResNet-18 inter-network % beside them."""
    ms = [m for m in ORDER if m in next(iter(results.values()))["measures"]]
    cols: dict = {}
    for r in results.values():
        for s in across.SETS:
            cols[(r["title"], s)] = {NAMES[m]: percent(r, s, m).text(0) for m in ms}
    table = pd.DataFrame(cols)
    table[("Balogh & Jelasity, ResNet-18", "between")] = [f"{PAPER[m]:.2f}" for m in ms]
    return table


def plot_identification(results: dict[str, dict]):
    """Bars per zoo: each notion's inter-network identification % (all test images) with its 95%
    interval as a line; J-T1's ResNet-18 values as marks."""
    from ..pagekit.plotting import max_width

    zs = list(results)
    ms = [m for m in ORDER if m in results[zs[0]]["measures"]]
    # the legend beside the bars: the whole within max_width of its 7 points (issue 64)
    fig, ax = plt.subplots(figsize=(min(8.5, max_width(7) - 0.2), 3.6), layout="constrained")
    width = 0.8 / len(zs)
    x = np.arange(len(ms))
    for k, z in enumerate(zs):
        est = [percent(results[z], "between", m) for m in ms]
        at = x + (k - (len(zs) - 1) / 2) * width
        ax.bar(at, [e.value for e in est], width, label=results[z]["title"])
        # the interval as a line: the value on all images can lie outside its resamples' interval
        ax.vlines(at, [e.low for e in est], [e.high for e in est], color="0.2", linewidth=1)
    ax.scatter(x, [PAPER[m] for m in ms], marker="_", s=600, color="black", zorder=3,
               label="Balogh & Jelasity, ResNet-18 (J-T1)")
    ax.set_xticks(x, [NAMES[m] for m in ms])
    ax.set_ylabel("corresponding layers identified (%)")
    ax.set_ylim(0, 105)
    ax.legend(fontsize=7, loc="upper left", bbox_to_anchor=(1.01, 1.0))
    return fig
