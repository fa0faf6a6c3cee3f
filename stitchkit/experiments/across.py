"""Across the papers (beyond the four papers), X-1: do the book's similarity notions rank layer
pairs alike?

For each zoo (a pair of networks that a paper's pages already trained: the same specs, so the same
cache entries), every notion of :func:`stitchkit.compare` is computed between every layer pair
*within* the first network (the network against itself at two different layers; the same layer,
where every notion is at its extreme by construction, is left out of the ranking) and *between*
the two networks (the first's layer as A, the second's as B). Kendall's tau-b between two notions
over those layer pairs says how alike they rank them. The layers are every cut whose output is a
map (the stem and each block or stage; not the pooled vector).

The notions (:data:`NOTIONS`): linear CKA, PWCCA and orthogonal Procrustes (structural), direct
matching's relative residual (DM struct.) and B's accuracy with A's layer stitched in by direct
matching, relative to B's own (DM func.). Distances are negated before ranking, so tau > 0 is
agreement. The DM maps are fitted on ``dm_images`` training images; every notion is measured on
``test_images`` test images.

Noise. Every notion is recomputed on the *same* bootstrap resamples of the test images
(:func:`stitchkit.comparing.notions.notion_replicates`: weighted per-image quantities, no image drawn
anew), so each tau and each difference of taus has a paired interval; on all images each notion
is :func:`stitchkit.compare`'s number. The two networks are fixed: seeds are not resampled.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass
from itertools import combinations

import matplotlib.pyplot as plt
import numpy as np
import pandas as pd
import torch

from ..base.hardware import as_device
from ..base.store import Store
from ..comparing.notions import NOTIONS, identity_failures, kendall_tau, notion_replicates
from ..data import batches as data_mod
from ..data import splits
from ..data.datasets import DataSpec, test_split, train_split
from ..networks import network, zoo
from ..registry.papers import ZOOS  # one zoo per paper, named by its part
from ..registry.scales import ParameterValueError, param
from ..verdicts import controls, noise
from ..verdicts.claims import ClaimSpec
from ..verdicts.results import Control, at_least, more_than

NAMES = {"cka": "linear CKA", "pwcca": "PWCCA", "procrustes": "Procrustes", "dm": "DM (struct.)",
         "dm_accuracy": "DM (func.)"}
SHORT = {"cka": "CKA", "pwcca": "PWCCA", "procrustes": "Procrustes", "dm": "DM struct.", "dm_accuracy": "DM func."}
SIGN = {"cka": 1.0, "pwcca": -1.0, "procrustes": -1.0, "dm": -1.0, "dm_accuracy": 1.0}  # +1: a similarity
STRUCTURAL = ("cka", "pwcca", "procrustes")
SETS = ("within", "between")
SAMPLE = "X-1 test images"  # the resampler's name: one draw for every notion
METHOD = "paired bootstrap over the test images (every notion on the same resamples; the two networks fixed)"

# Criteria, fixed before any run (this book's hypotheses, drawn from the papers; see agreement_claims).
TAU_ALIKE = 0.5  # "rank alike": Kendall tau at least this (J-T3's bar for a high rank correlation)
MIN_PAIRS = 10  # control: at least this many layer pairs behind each tau
STABLE_TAU_MIN = 0.8  # control: a notion's ranking on a resample agrees with its ranking on all images


@dataclass(frozen=True)
class ZooPair:
    key: str
    title: str
    page: str  # the page whose (cached) networks these are
    names: tuple[str, str]
    specs: tuple[network.ModelSpec, network.ModelSpec]
    dataset: str


@dataclass(frozen=True)
class ZooRecipes:
    """The recipes of the four zoos' networks, as the pages that train them hold them at the
    preset's scale (:data:`ZOO_TABLES`): a base of the configs of the part beyond the papers."""

    bansal: zoo.Recipe = zoo.recipe_field("Bansal et al.'s ResNet-18s (zoo.BANSAL_RESNET18, B-F2A's)")
    hernandez: zoo.Recipe = zoo.recipe_field("Hernandez et al.'s ResNets (zoo.HERNANDEZ_RESNET, H-F2's)")
    smith: zoo.Recipe = zoo.recipe_field("Smith & Marcu's ResNet-18s (zoo.SMITH_RESNET18, S-F1B's)")
    balogh: zoo.Recipe = zoo.recipe_field("Balogh & Jelasity's ResNet-18s (zoo.BALOGH_RESNET18, J-T1's)")


ZOO_TABLES = {"bansal": zoo.BANSAL_RESNET18, "hernandez": zoo.HERNANDEZ_RESNET, "smith": zoo.SMITH_RESNET18,
              "balogh": zoo.BALOGH_RESNET18}


def zoo_pair(name: str, recipes: ZooRecipes) -> ZooPair:
    """The two networks of zoo ``name`` by its recipe in ``recipes``: the specs (so the cache
    entries) of the page named in ``page``."""
    if name == "bansal":  # B-F2A's receiver and trained sender
        return ZooPair(name, "Bansal et al.: ResNet-18 seeds 0, 1", "B-F2A", ("ResNet-18 #0", "ResNet-18 #1"),
                       tuple(zoo.bansal_resnet18(recipes.bansal, s) for s in (0, 1)), "cifar10")
    if name == "hernandez":  # H-F2's two architectures (seed 0 each)
        return ZooPair(name, "Hernandez et al.: R2222 and R1111", "H-F2", ("R2222", "R1111"),
                       tuple(zoo.hernandez_resnet(recipes.hernandez, a) for a in ("r2222", "r1111")), "cifar10")
    if name == "smith":  # S-F1B's Digit receivers of initialisations 0 and 1
        return ZooPair(name, "Smith & Marcu: Digit ResNet-18 seeds 0, 1", "S-F1B", ("Digit #0", "Digit #1"),
                       tuple(zoo.smith_resnet18(recipes.smith, "cmnist_digit", s) for s in (0, 1)), "cmnist_digit")
    if name == "balogh":  # J-T1's ResNet-18 networks 0 and 1
        return ZooPair(name, "Balogh & Jelasity: ResNet-18 seeds 0, 1", "J-T1", ("ResNet-18 #0", "ResNet-18 #1"),
                       tuple(zoo.balogh_model(recipes.balogh, s) for s in (0, 1)), "cifar10")
    raise ValueError(f"unknown zoo {name!r}; valid: {', '.join(ZOOS)}")


@dataclass(frozen=True)
class AgreementConfig(ZooRecipes):
    """X-1: every notion on every layer pair of a zoo's two networks; Kendall's tau between notions."""

    zoo: str = param("all", "the zoo: bansal (B-F2A's ResNet-18 seeds 0, 1), hernandez (H-F2's R2222 and R1111), "
                     "smith (S-F1B's Digit ResNet-18 seeds 0, 1), balogh (J-T1's ResNet-18 seeds 0, 1), or all four",
                     choices=("all", *ZOOS))
    measures: tuple[str, ...] = param(NOTIONS, "notions compared, at least 2 (stitchkit.compare's: cka, pwcca, "
                                      "procrustes, dm, dm_accuracy)", items={"choices": NOTIONS}, unique=True)
    test_images: int = param(1000, "test images every notion is measured on and resampled over (Balogh & "
                             "Jelasity's structural measures: 1,000)", ge=20, le=10_000)
    dm_images: int = param(100, "training images each direct-matching map is fitted on (K in Balogh & Jelasity: "
                           "100)", ge=1, le=50_000)

    SWEEP_EXAMPLE = ("zoo", ZOOS)  # the rerun box's sweep: one run per zoo (a class attribute, not a field)

    def zoos(self) -> tuple[str, ...]:
        return ZOOS if self.zoo == "all" else (self.zoo,)

    def check(self) -> None:
        if len(self.measures) < 2:
            raise ParameterValueError(f"parameter 'measures' = {list(self.measures)!r} is invalid: a rank agreement "
                                      f"needs at least 2 notions; valid: {', '.join(NOTIONS)}")


PRESETS_X1 = zoo.at_scale({
    # CI: seconds. The zoos' smoke networks, 200 test images, DM fitted on 50 training images.
    "smoke": AgreementConfig(test_images=200, dm_images=50),
    # 2 CPU cores: the networks the four parts' demo pages trained (read from the cache), 1,000 test images.
    "demo": AgreementConfig(),
    # One GPU: the zoos' gpu networks (the papers' widths, as B-F2A, H-F2, S-F1B and J-T1 train them at gpu)
    # with demo's 1,000 test images and K = 100 (Balogh & Jelasity's), so read these notions. The
    # notions' bootstrap runs on the host CPU in float64 (stitchkit.comparing.notions: 1,001 SVDs of up to 512 x 512 per
    # layer pair): at width 64 that, not the GPU, sets the page's time (~4,400 s estimated; see its deviations).
    "gpu": AgreementConfig(),
    "paper": AgreementConfig(),
}, **ZOO_TABLES)


# --------------------------------------------------------------------------------------------
# One zoo: the networks, the two sets of layer pairs, the taus


def map_cuts(model) -> list[str]:
    """The cuts of a CutModel whose output is a map (every cut but the pooled vector)."""
    return [c for c in model.cuts if c != "pool"]


def notions_of(pair: ZooPair, cfg, *, device=None, store=None, progress: bool = True) -> dict:
    """Every notion of ``cfg.measures`` on every layer pair of ``pair``'s two networks (from the
    cache when their pages have run), *within* the first (every two of its map cuts, the same
    layer included) and *between* the two: per set, the pairs, measure -> (R+1, pairs)
    replicates (:func:`notion_replicates`) and B's accuracy. ``cfg``: any config with
    ``measures``, ``test_images`` and ``dm_images`` (X-1's, X-2's). Each set's replicates are
    kept in the store, so X-1 and X-2 share them."""
    device = as_device(device)
    store = store or Store()
    models = [network.load_or_train(s, device=device, store=store, progress=progress)[0] for s in pair.specs]
    norm = pair.specs[0].normalisation
    test = test_split(DataSpec(pair.dataset), cfg.test_images, 0)
    train = train_split(DataSpec(pair.dataset))
    fit = train.subset(splits.stratified_subset(train.labels, min(cfg.dm_images, len(train)), 0))
    x, xf = data_mod.normalise(test.images, norm), data_mod.normalise(fit.images, norm)
    cuts = [map_cuts(m) for m in models]
    raw = {"zoo": pair.key, "title": pair.title, "page": pair.page, "names": pair.names, "cuts": cuts,
           "measures": list(cfg.measures), "n_test": len(x)}
    for name, (a, b) in {"within": (0, 0), "between": (0, 1)}.items():
        key = {"what": "notion replicates", "a": pair.specs[a], "b": pair.specs[b], "cuts_a": cuts[a],
               "cuts_b": cuts[b], "measures": list(cfg.measures), "dataset": pair.dataset, "test_images": len(x),
               "dm_images": len(xf), "sample": SAMPLE, "resamples": noise.RESAMPLES,
               "device": device.type}

        def compute(a=a, b=b):
            mods = [[f"pieces.{c}" for c in cuts[i]] for i in (a, b)]
            pairs, reps, own = notion_replicates(models[a], models[b], *mods, x, test.labels, xf, cfg.measures,
                                                 sample=SAMPLE, device=device, progress=progress)
            tensors = {f"reps.{m}": torch.from_numpy(v) for m, v in reps.items()}
            if own is not None:
                tensors["own"] = torch.from_numpy(own)
            return {"pairs": [[p.removeprefix("pieces.") for p in ab] for ab in pairs]}, tensors

        e = store.get_or_compute(key, compute)
        own = e.tensors.get("own")
        raw[name] = {"pairs": [tuple(p) for p in e.metrics["pairs"]],
                     "reps": {m: e.tensors[f"reps.{m}"].numpy() for m in cfg.measures},
                     "accuracy_b": None if own is None else float(own.double().mean())}
    return raw


def agreement(cfg: AgreementConfig, zoo_name: str, *, device=None, store=None,
              progress: bool = True) -> dict:
    """Zoo ``zoo_name``'s two networks, every notion within the first and between the two
    (:func:`notions_of`), and the taus (:func:`rank_agreement`)."""
    return rank_agreement(notions_of(zoo_pair(zoo_name, cfg), cfg, device=device, store=store, progress=progress))


def rank_agreement(raw: dict) -> dict:
    """``raw`` (:func:`agreement`'s) with, per set, the layer pairs ranked (within: the same
    layer left out), and per two notions the (R+1,) Kendall taus of their similarities over them
    (``tau``), per notion the tau of each resample's ranking with all images' (``stable``, (R,)),
    and the identity control's failures per notion (layers whose own pair is beaten)."""
    out = dict(raw)
    for name in SETS:
        s = dict(raw[name])
        keep = np.array([name == "between" or a != b for a, b in s["pairs"]])
        vals = {m: SIGN[m] * v[:, keep] for m, v in s["reps"].items()}
        s["ranked"] = [p for p, k in zip(s["pairs"], keep) if k]
        s["tau"], s["n_pairs"] = {}, {}
        for m1, m2 in combinations(raw["measures"], 2):
            ok = np.isfinite(vals[m1][0]) & np.isfinite(vals[m2][0])
            s["tau"][(m1, m2)] = kendall_tau(vals[m1][:, ok], vals[m2][:, ok])
            s["n_pairs"][(m1, m2)] = int(ok.sum())
        s["stable"] = {m: kendall_tau(v[1:][:, np.isfinite(v[0])], v[0][None, np.isfinite(v[0])])
                       for m, v in vals.items()}
        out[name] = s
    out["identity_failures"] = identity_failures_of(raw)
    return out


def identity_failures_of(raw: dict) -> dict[str, int]:
    """Per notion, the identity control's failures within the first network on all images
    (:func:`identity_failures`: layers whose own pair another pair beats)."""
    return {m: identity_failures(raw["within"]["pairs"], v[0], SIGN[m]) for m, v in raw["within"]["reps"].items()}


# --------------------------------------------------------------------------------------------
# Claims (this book's hypotheses, each drawn from a paper), tables and the heat map


def _estimate(reps: np.ndarray, n_test: int, bounds: tuple[float, float] | None = (-1.0, 1.0)) -> noise.Estimate | None:
    """An Estimate of a tau-like statistic from its (R+1,) replicates; None where it is undefined
    on all images or on most resamples (a notion constant over the layer pairs). Its interval is
    the percentile one, or the basic one where that excludes the estimate
    (:func:`stitchkit.verdicts.noise.from_replicates`), cut to the statistic's range ``bounds`` (a tau lies
    in [-1, 1], a difference of two in [-2, 2]; None: unbounded) where the basic interval leaves it."""
    try:
        e = noise.from_defined_replicates(np.asarray(reps, dtype=float), n_test=n_test, method=METHOD)
    except ValueError:  # undefined on all images, or on most resamples
        return None
    if bounds is not None and (e.low < bounds[0] or e.high > bounds[1]):
        e = dataclasses.replace(e, low=max(e.low, bounds[0]), high=min(e.high, bounds[1]),
                                method=e.method + f" (cut to the range [{bounds[0]:g}, {bounds[1]:g}])")
    return e


def _spread(taus: np.ndarray, n_test: int) -> noise.Estimate | None:
    """The stability control's number: the taus of each resample's ranking with all images' (R,)
    as their median and the interval that holds 95% of them (percentile: the value on all images
    is 1 by construction, not an estimate the resamples scatter around, so no basic interval)."""
    taus = np.asarray(taus, dtype=float)
    ok = np.isfinite(taus)
    if not ok.any() or ok.mean() < 0.5:
        return None
    a = (1 - noise.LEVEL) / 2
    low, high = np.quantile(taus[ok], [a, 1 - a])
    return noise.Estimate(float(np.median(taus[ok])), float(low), float(high), n_test, 1,
                          "percentile of the resamples' Kendall τ with the ranking on all test images")


def _tau(r: dict, s: str, m1: str, m2: str) -> np.ndarray:
    t = r[s]["tau"]
    return t[(m1, m2)] if (m1, m2) in t else t[(m2, m1)]


def _n_pairs(r: dict, s: str, ms) -> int:
    return min(v for k, v in r[s]["n_pairs"].items() if set(k) <= set(ms))


def agreement_claims(results: dict[str, dict]) -> tuple[dict, list[ClaimSpec]]:
    """Per zoo (``results``: zoo -> :func:`agreement`'s result), the numbers and four claims,
    each made where its notions were measured. They are *this book's* hypotheses, derived from
    the papers (``paper`` names which): the papers compare notions on their own networks only.
    Controls: the identity control per notion (:func:`identity_failures`), each notion's ranking
    stable under the image resampling (:data:`STABLE_TAU_MIN`), enough layer pairs (:data:`MIN_PAIRS`)."""
    numbers: dict[str, float] = {"test_images_used": next(iter(results.values()))["n_test"], "zoos_run": len(results)}
    claims: list[ClaimSpec] = []
    for z, r in results.items():
        n, ms, title = r["n_test"], r["measures"], r["title"]
        numbers.update({f"{z}_layers_a": len(r["cuts"][0]), f"{z}_layers_b": len(r["cuts"][1]),
                        **{f"{z}_pairs_{s}": len(r[s]["ranked"]) for s in SETS}})
        for s in SETS:
            for (m1, m2), reps in r[s]["tau"].items():
                e = _estimate(reps, n)
                if e is not None:
                    numbers.update({f"{z}_{s}_tau_{m1}_{m2}": e.value, f"{z}_{s}_tau_{m1}_{m2}_low": e.low,
                                    f"{z}_{s}_tau_{m1}_{m2}_high": e.high})
        identity = {m: controls.premise(noise.exact(k), 0, f"identity: {NAMES[m]} ranks each layer of {r['names'][0]} "
                                        "most similar to itself, against every other layer both ways",
                                        direction="<=", what=f"layers {NAMES[m]} ranks below another layer",
                                        unit="layers", digits=0)
                    for m, k in r["identity_failures"].items()}

        def stable(s: str, m: str) -> Control:
            e = _spread(r[s]["stable"][m], n)
            text = f"noise: {NAMES[m]} ranks the layer pairs ({s}) alike on every resample of the test images"
            what = f"Kendall τ of {NAMES[m]} on a resample with all images"
            if e is None:  # a notion constant over the layer pairs ranks nothing
                return Control(text, f"{what} ≥ {STABLE_TAU_MIN:.2f}", "undefined (constant over the pairs)", False)
            return controls.premise(e, STABLE_TAU_MIN, text, what=what, unit="", digits=2)

        def ctl(s: str, *notions: str, pairs: int | None = None) -> list:
            pairs = _n_pairs(r, s, notions) if pairs is None else pairs
            return ([identity[m] for m in notions] + [stable(s, m) for m in notions]
                    + [controls.premise(noise.exact(pairs), MIN_PAIRS, f"enough layer pairs ({s}) to judge on",
                                        what="layer pairs judged", unit="pairs", digits=0)])

        def tau_claim(key, text, m1, m2, paper):
            e = _estimate(_tau(r, "between", m1, m2), n)
            within = _estimate(_tau(r, "within", m1, m2), n)
            if e is None:
                return
            claims.append(ClaimSpec(
                key=f"{key}_{z}", text=f"{title}: {text}", paper=paper, controls=ctl("between", m1, m2),
                criterion=at_least(e, TAU_ALIKE, f"Kendall τ of {NAMES[m1]} with {NAMES[m2]} over the layer pairs "
                                   "between the networks", unit="", digits=2),
                ours=f"τ {e.text(2)} between networks ({_n_pairs(r, 'between', (m1, m2))} layer pairs)"
                     + (f"; {within.text(2)} within one" if within else ""), kind="no_stitch"))

        if {"cka", "dm_accuracy"} <= set(ms):
            tau_claim("cka_dm_func", "linear CKA and functional DM rank layer pairs alike", "cka", "dm_accuracy",
                      "this book's hypothesis, from Balogh & Jelasity 2025: DM ranks with the best structural "
                      "measures (LCKA among them) in Ding et al.'s tests (their Tables 2-3)")
        if {"dm", "dm_accuracy"} <= set(ms):
            tau_claim("dm_faces", "DM's structural residual and its functional accuracy rank layer pairs alike",
                      "dm", "dm_accuracy", "this book's hypothesis, from Balogh & Jelasity 2025: DM (struct.) and "
                      "DM (func.) are two readings of one stitch, both among the best measures (Tables 2-3)")
        if set(STRUCTURAL) | {"dm_accuracy"} <= set(ms):
            inner = np.mean([_tau(r, "between", a, b) for a, b in combinations(STRUCTURAL, 2)], axis=0)
            cross = np.mean([_tau(r, "between", a, "dm_accuracy") for a in STRUCTURAL], axis=0)
            e = _estimate(inner - cross, n, bounds=(-2.0, 2.0))
            if e is not None:
                numbers[f"{z}_structural_minus_func"] = e.value
                claims.append(ClaimSpec(
                    key=f"structural_cohere_{z}", text=f"{title}: the structural measures (CKA, PWCCA, Procrustes) "
                    "agree with one another more than with functional DM",
                    criterion=more_than(e, 0.0, "mean τ among CKA, PWCCA, Procrustes − mean τ of each with DM "
                                        "(func.), between networks (bootstrapped jointly)", unit="", digits=3),
                    paper="this book's hypothesis, from Balogh & Jelasity 2025 (LCKA, PWCCA and OPD rank alike in "
                          "Ding et al.'s tests, Tables 2-3) and Bansal et al. 2021 (stitching sees what CKA does "
                          "not, Fig. 7)",
                    ours=f"difference {e.text(3)}", controls=ctl("between", *STRUCTURAL, "dm_accuracy"),
                    kind="no_stitch"))
        if "dm_accuracy" in ms:
            order = {c: i for i, c in enumerate(r["cuts"][0])}
            col = {p: i for i, p in enumerate(r["within"]["pairs"])}
            later = [(col[(a, b)], col[(b, a)]) for a, b in r["within"]["pairs"] if order[a] > order[b]]
            v = r["within"]["reps"]["dm_accuracy"]
            gap = 100 * np.nanmean([v[:, i] - v[:, j] for i, j in later], axis=0) if later else np.array([np.nan])
            e = _estimate(gap, n, bounds=None)
            if e is not None:
                numbers[f"{z}_triangle_gap"] = e.value
                claims.append(ClaimSpec(
                    key=f"triangle_{z}", text=f"{title}: within a network, functional DM is asymmetric where the "
                    "structural measures are not: a later layer stitched into an earlier one scores higher than "
                    "the reverse", paper="this book's hypothesis, from Hernandez et al. 2022: the triangle (a "
                    "sender layer at or after the receiver's stitches well), which no symmetric measure can show",
                    criterion=more_than(e, 0.0, "mean over layer pairs of DM (func.) of the later layer into the "
                                        "earlier − the reverse, within a network", unit="points", digits=2),
                    ours=f"{e.text(2, 'points')} over {len(later)} layer pairs",
                    controls=ctl("within", "dm_accuracy", pairs=len(later)), kind="no_stitch"))
    return numbers, claims


def _pair_label(m1: str, m2: str) -> str:
    return f"{SHORT[m1]} – {SHORT[m2]}"


def networks_table(results: dict[str, dict]) -> pd.DataFrame:
    """Per zoo: the page its networks come from, their layers, accuracies and layer pairs."""
    rows = []
    for r in results.values():
        acc = [r[s]["accuracy_b"] for s in SETS]
        rows.append({"zoo": r["title"], "networks of": r["page"], "A": r["names"][0], "B": r["names"][1],
                     "layers A, B": f"{len(r['cuts'][0])}, {len(r['cuts'][1])}",
                     "accuracy A, B (%)": "" if None in acc else f"{100 * acc[0]:.1f}, {100 * acc[1]:.1f}",
                     "pairs within, between": f"{len(r['within']['ranked'])}, {len(r['between']['ranked'])}",
                     "test images": r["n_test"]})
    return pd.DataFrame(rows).set_index("zoo")


def summary_table(results: dict[str, dict]) -> pd.DataFrame:
    """Kendall's tau [95% interval] of every two notions, per zoo, within and between networks."""
    cols = {}
    for r in results.values():
        for s in SETS:
            cols[(r["title"], s)] = {_pair_label(*k): (e.text(2) if (e := _estimate(v, r["n_test"])) else "undefined")
                                     for k, v in r[s]["tau"].items()}
    return pd.DataFrame(cols)


def partings(results: dict[str, dict]) -> pd.DataFrame:
    """Where the notions part: per zoo and set, the two notions of lowest tau and the layer pair
    they rank furthest apart (rank 1: the most similar pair)."""
    from scipy.stats import rankdata

    rows = []
    for r in results.values():
        for s in SETS:
            taus = {k: v[0] for k, v in r[s]["tau"].items() if np.isfinite(v[0])}
            if not taus:
                continue
            m1, m2 = min(taus, key=taus.get)
            keep = np.array([s == "between" or a != b for a, b in r[s]["pairs"]])
            v1, v2 = (SIGN[m] * r[s]["reps"][m][0][keep] for m in (m1, m2))
            ok = np.isfinite(v1) & np.isfinite(v2)
            r1, r2 = rankdata(-v1[ok]), rankdata(-v2[ok])
            i = int(np.argmax(np.abs(r1 - r2)))
            a, b = [p for p, k in zip(r[s]["ranked"], ok) if k][i]
            rows.append({"zoo": r["title"], "layer pairs": s, "notions": _pair_label(m1, m2),
                         "τ": round(taus[(m1, m2)], 2), "furthest apart": f"{a} → {b}",
                         "its ranks (first, second notion)": f"{r1[i]:.0f}, {r2[i]:.0f} of {ok.sum()}"})
    return pd.DataFrame(rows).set_index(["zoo", "layer pairs"])


def plot_agreement(results: dict[str, dict]):
    """One heat map per zoo (two per row): Kendall's tau of every two notions, within a network
    below the diagonal and between networks above it, each cell annotated with tau and its interval."""
    from ..pagekit.plotting import max_width

    zs = list(results)
    ms = results[zs[0]]["measures"]
    k, cell_pt = len(ms), 6 if len(ms) <= 5 else 5
    size = 0.62 * k + 0.9
    # two per row where that keeps the cells' text legible in the book (issue 64), else one
    ncols = max(1, min(2, len(zs), int((max_width(cell_pt) - 1.0) // size)))
    nrows = -(-len(zs) // ncols)
    fig, axes = plt.subplots(nrows, ncols, figsize=(size * ncols + 1.0, size * nrows + 0.5), squeeze=False,
                             layout="constrained")
    for ax in axes.flat[len(zs):]:
        ax.set_visible(False)
    im = None
    for ax, z in zip(axes.flat, zs):
        r = results[z]
        mat, text = np.full((k, k), np.nan), {}
        for s in SETS:
            for (m1, m2), reps in r[s]["tau"].items():
                i, j = sorted((ms.index(m1), ms.index(m2)), reverse=s == "within")
                e = _estimate(reps, r["n_test"])
                mat[i, j] = np.nan if e is None else e.value
                text[(i, j)] = "undef." if e is None else f"{e.value:.2f}\n[{e.low:.2f}, {e.high:.2f}]"
        im = ax.imshow(mat, vmin=-1, vmax=1, cmap="RdBu_r")
        for (i, j), t in text.items():
            ax.text(j, i, t, ha="center", va="center", fontsize=cell_pt,
                    color="white" if abs(mat[i, j]) > 0.6 else "black")
        for i in range(k):
            ax.text(i, i, "—", ha="center", va="center", color="0.5")
        ax.set_xticks(range(k), [SHORT[m] for m in ms], rotation=45, ha="right", fontsize=8)
        ax.set_yticks(range(k), [SHORT[m] for m in ms], fontsize=8)
        ax.set_title(r["title"], fontsize=9)
    fig.colorbar(im, ax=axes, label="Kendall τ", shrink=0.6)
    fig.supxlabel("Below the diagonal: layer pairs within a network. Above it: between the two networks.",
                  fontsize=8, color="0.3")
    return fig
