"""Bansal et al. 2021, Sections 5-6: bottoms trained on other data or for another length,
stitched into one top, in catalogue order:

- B-F2C, number of samples: bottoms trained on 5k, 25k and 50k images into a 10k top;
- B-F3A, label distribution: objects-vs-animals labels, 10/50/100% random labels into a normal top;
- B-F3B, training time: snapshots of one run at a quarter, half and all of its schedule (the
  paper's epochs 40, 80 and 160 of 160), the earlier and later ones into the midpoint;

and the cells that decide their claims for the training-length control (:func:`_deciding`). The
grid, claim helpers and recipe are the sweeps' (:mod:`.bottoms`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...networks import network, zoo
from ...registry.scales import param
from ...verdicts import controls, noise
from ...verdicts.claims import ClaimSpec
from ...verdicts.gating import GUARANTEE
from ...verdicts.results import Control, at_least, at_most
from .bottoms import (CONVERGE_MIN, DEGRADE_MIN, IMPROVE_MIN, SIMILAR_MAX, BeyondSelf, BottomsConfig, bottoms_into_top,
                      claim_rejudger, cut_thirds, gain_estimate, grid_bootstrap, judged_beyond_self, largest_gain,
                      penalty_beyond_self, premise_stronger, short_numbers, sweep_presets, top_self_stitch_control,
                      untrained_bottom_control)
from .common import CONNECTED_MAX_PENALTY, SELF, estimate_numbers
from .length import LengthCheck, LengthPart

# --------------------------------------------------------------------------------------------
# B-F2C: number of samples


@dataclass(frozen=True)
class SamplesConfig(BottomsConfig):
    """B-F2C: bottoms trained on more or fewer images stitched into a top trained on 10k."""

    MIN_CUTS = 3  # early, middle and late layers

    top_samples: int = param(10_000, "training images of the top (paper 10k)", ge=1, le=50_000)
    bottom_samples: tuple[int, ...] = param((5_000, 25_000, 50_000), "training images of each bottom (paper "
                                            "5k, 10k, 25k; the top into itself stands for 10k; 50k added)",
                                            items={"ge": 128, "le": 50_000})

    def models(self) -> tuple[network.ModelSpec, dict[str, network.ModelSpec]]:
        return _samples_models(self)

    def later(self) -> list[str]:
        """The bottoms with more than the top ("more is better" is judged on them)."""
        return [f"{thousands_label(k)} samples" for k in _more_samples(self)]

    def summary(self, table: pd.DataFrame, accuracy: dict) -> tuple[dict, list[ClaimSpec]]:
        return samples_summary(table, accuracy, self)

    def length_checks(self, table: pd.DataFrame, claims: list[ClaimSpec]) -> list[LengthCheck]:
        return _one_top_checks(self, table, claims)


PRESETS_F2C = sweep_presets(SamplesConfig, smoke={"top_samples": 1024, "bottom_samples": (512, 2048)})
# B-F2C's claims judged with the seed-variance component (.seeds.with_seeds): claim key -> (how many
# independently trained networks its number is a difference of, its statistic over the cuts)
SEED_CLAIMS_F2C: dict[str, tuple[int, str]] = {"compatible": (1, "max"), "improves": (1, "gain"),
                                               "early_similar": (1, "abs"), "mid_degrades": (2, "cut")}


def thousands_label(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def _samples_models(cfg: SamplesConfig) -> tuple[network.ModelSpec, dict[str, network.ModelSpec]]:
    top = cfg.variant(cfg.seeds[0], train_size=cfg.top_samples)
    return top, {f"{thousands_label(n)} samples": cfg.variant(cfg.seeds[1], train_size=n) for n in cfg.bottom_samples}


def _more_samples(cfg: SamplesConfig) -> list[int]:
    """The bottoms' sample sizes above the top's (the first is the paper's 25k: "improves")."""
    return sorted(n for n in cfg.bottom_samples if n > cfg.top_samples)


def samples(cfg: SamplesConfig, **kw) -> tuple[pd.DataFrame, dict]:
    """The top (seed 0, ``top_samples`` images) and bottoms (seed 1, each sample size)."""
    top, bottoms = _samples_models(cfg)
    return bottoms_into_top(cfg, top, bottoms, receiver_name=f"top ({thousands_label(cfg.top_samples)} samples)", **kw)


def samples_summary(table: pd.DataFrame, accuracy: dict, cfg: SamplesConfig) -> tuple[dict, list[ClaimSpec]]:
    t = table.reset_index(drop=True)
    cuts = list(dict.fromkeys(t.cut))
    early, mid, _ = cut_thirds(cuts)
    names = {n: f"{thousands_label(n)} samples" for n in cfg.bottom_samples}
    keys = {SELF: "self", **{v: f"n{thousands_label(n)}" for n, v in names.items()}, t.receiver.iloc[0]: "top"}
    numbers = short_numbers(t, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = top_self_stitch_control(t)
    negative, neg = untrained_bottom_control(t)
    if neg is not None:
        numbers.update(estimate_numbers("random_late_penalty_beyond", neg))
    more = _more_samples(cfg)
    fewest, most = min(cfg.bottom_samples), max(cfg.bottom_samples)
    claims = []
    if more:
        bs = [BeyondSelf(t, names[n], cuts) for n in more]
        worst = grid_bootstrap(t, lambda x: float(max(b.of(x).max() for b in bs)))
        best_n = min(more)  # the paper's 25k: the smallest bottom with more samples than the top
        gain, where = gain_estimate(t, names[best_n])
        premise, gap = premise_stronger(t, names[best_n], top_name=f"the {thousands_label(cfg.top_samples)}-sample top")
        numbers.update(estimate_numbers("more_max_penalty", worst))
        numbers.update(estimate_numbers("improvement", gain))
        numbers.update(estimate_numbers("improves_premise_gap", gap))
        claims += [
            ClaimSpec(key="compatible", text="Bottoms trained on more samples are stitching compatible with the top",
                      criterion=at_most(worst, 100 * CONNECTED_MAX_PENALTY, "max penalty over cuts of the bottoms "
                                        f"with more samples than the top ({', '.join(names[n] for n in more)})"),
                      paper="all stitching compatible (Fig. 2C)", ours=f"max {worst.text(2, 'points')}",
                      controls=[control, negative], kind="compatible"),
            ClaimSpec(key="improves", text=f"A bottom trained on more samples ({names[best_n]}) improves on the "
                                           f"{thousands_label(cfg.top_samples)}-sample top",
                      criterion=at_least(gain, IMPROVE_MIN, "gain over the top at the best block cut (minus the "
                                         "penalty; 'pool' left out)"),
                      paper="negative penalty: the 25k bottom improves on the 10k top (Fig. 2C)",
                      ours=f"gain {gain.text(2, 'points')} (at {where}); the bottom's own accuracy minus the top's "
                           f"{gap.text(2, 'points')}",
                      controls=[control, negative, premise], kind="improves"),
        ]
    bottoms = [BeyondSelf(t, name, early) for name in names.values()]
    early_max = grid_bootstrap(t, lambda x: float(max(np.abs(b.of(x)).max() for b in bottoms)))
    b_few, b_most = BeyondSelf(t, names[fewest], mid), BeyondSelf(t, names[most], mid)
    degrade = grid_bootstrap(t, lambda x: float(b_few.of(x).mean() - b_most.of(x).mean()))
    mid_premise, mid_gap = premise_stronger(t, names[most], names[fewest])
    numbers.update(estimate_numbers("early_max_abs_penalty", early_max))
    numbers.update(estimate_numbers("mid_degradation", degrade))
    numbers.update(estimate_numbers("mid_premise_gap", mid_gap))
    claims += [
        ClaimSpec(key="early_similar", text="Stitched at the first layers, all bottoms perform like the top",
                  criterion=at_most(early_max, SIMILAR_MAX, f"max |penalty| over every bottom at {', '.join(early)}"),
                  paper="similar performance at the first few layers (Sec. 6)",
                  ours=f"max |penalty| {early_max.text(2, 'points')}", controls=[control, negative],
                  kind="compatible"),
        ClaimSpec(key="mid_degrades", text="In the middle layers, the penalty grows as the bottom's samples shrink",
                  criterion=at_least(degrade, DEGRADE_MIN, f"mean penalty at {', '.join(mid)}: {names[fewest]} minus "
                                     f"{names[most]}"),
                  paper="performance degrades rapidly with fewer samples in the mid layers (Sec. 6)",
                  ours=f"{degrade.text(2, 'points')}; the {names[most]} network's own accuracy minus the "
                       f"{names[fewest]} network's {mid_gap.text(2, 'points')}",
                  controls=[control, mid_premise], kind="stitch_other"),
    ]
    return numbers, judged_beyond_self(claims, ('compatible', 'improves', 'early_similar', 'mid_degrades'))


# --------------------------------------------------------------------------------------------
# B-F3A: label distribution


LABEL_VARIANTS = {"objects vs animals": dict(labels="objects_vs_animals"),
                  "10% random labels": dict(labels="random", label_noise=0.1),
                  "50% random labels": dict(labels="random", label_noise=0.5),
                  "100% random labels": dict(labels="random", label_noise=1.0)}
VARIANT_KEYS = {"objects vs animals": "objects", "10% random labels": "noise10", "50% random labels": "noise50",
                "100% random labels": "noise100"}
NORMAL = "normal labels (seed 1)"


@dataclass(frozen=True)
class LabelsConfig(BottomsConfig):
    """B-F3A: bottoms trained with less informative labels stitched into a normal top."""

    MIN_CUTS = 3  # early, middle and late layers

    variants: tuple[str, ...] = param(tuple(LABEL_VARIANTS), "label distributions of the bottoms: "
                                      + ", ".join(LABEL_VARIANTS), items={"choices": tuple(LABEL_VARIANTS)},
                                      unique=True)
    plateau_longer: float = param(2.0, "the plateau premise: each weak bottom trained again for this many times "
                                  "its epochs (the same seed and schedule, stretched)", gt=1.0, le=8.0)

    def models(self) -> tuple[network.ModelSpec, dict[str, network.ModelSpec]]:
        return _labels_models(self)

    def networks(self) -> list[network.ModelSpec]:
        """:meth:`BottomsConfig.networks` and the plateau premise's longer weak bottoms."""
        return [*super().networks(), *(longer for _, longer in _plateau_specs(self).values())]

    def later(self) -> list[str]:
        return []

    def summary(self, table: pd.DataFrame, accuracy: dict) -> tuple[dict, list[ClaimSpec]]:
        return labels_summary(table, accuracy, self)

    def length_checks(self, table: pd.DataFrame, claims: list[ClaimSpec]) -> list[LengthCheck]:
        return _one_top_checks(self, table, claims)


PRESETS_F3A = sweep_presets(LabelsConfig, smoke={"variants": ("objects vs animals", "100% random labels")})
# gpu: two of the four label distributions, the coarsest and the most random (each bottom is a width-64
# network, ~53 s, and 6 stitches): all four would need ~570 s of one GPU, more than a loan's budget.
PRESETS_F3A["gpu"] = sweep_presets(LabelsConfig, gpu={"variants": ("objects vs animals",
                                                                    "100% random labels")})["gpu"]
# B-F3A's claims judged with the seed-variance component, as B-F2C's
SEED_CLAIMS_F3A: dict[str, tuple[int, str]] = {"first_half": (1, "max"), "except_noise": (1, "max")}


def labels(cfg: LabelsConfig, **kw) -> tuple[pd.DataFrame, dict]:
    """The normal top (seed 0), a normal bottom (seed 1, the reference) and one bottom per label
    distribution (seed 1)."""
    top, bottoms = _labels_models(cfg)
    return bottoms_into_top(cfg, top, bottoms, receiver_name="top (normal labels, seed 0)", **kw)


def _labels_models(cfg: LabelsConfig) -> tuple[network.ModelSpec, dict[str, network.ModelSpec]]:
    bottoms = {NORMAL: cfg.variant(cfg.seeds[1])}
    bottoms.update({v: cfg.variant(cfg.seeds[1], **LABEL_VARIANTS[v]) for v in cfg.variants})
    return cfg.variant(cfg.seeds[0]), bottoms


# The plateau premise of first_half (amendment of 2026-12-02, before any run on the new networks): a weak
# bottom still far from its plateau has early layers near their initialisation, which stitch well whatever
# the labels (B-F5), so the claim could hold because the weak networks had not finished training. Each weak
# bottom is trained again for plateau_longer x its epochs; the largest test-accuracy gain of the longer one
# (on its own task's test images, paired) must be at most the claim's own 3 points on its interval. It gates
# only a claim found to hold: the only outcome an unfinished network can bias.
PLATEAU_GAIN_MAX = 100 * CONNECTED_MAX_PENALTY
WEAK_EXCLUDED = "100% random labels"  # except_noise's bottom, not first_half's


def _plateau_specs(cfg: LabelsConfig) -> dict[str, tuple[network.ModelSpec, network.ModelSpec]]:
    """Per weak label distribution (first_half's), its bottom and the same bottom trained
    ``cfg.plateau_longer`` times the epochs."""
    _, bottoms = _labels_models(cfg)
    return {v: (spec, replace(spec, train=replace(spec.train, epochs=spec.train.epochs * cfg.plateau_longer)))
            for v, spec in bottoms.items() if v in cfg.variants and v != WEAK_EXCLUDED}


def weak_plateau(cfg: LabelsConfig, *, device=None, store=None, progress: bool = True) -> pd.DataFrame:
    """The plateau premise's networks: per weak bottom, its own per-image results on its task's test
    images (the grid's subset; coarse labels for objects vs animals) as trained and trained
    ``cfg.plateau_longer`` times longer (a row each: ``variant``, ``run``, ``epochs``, ``accuracy``,
    ``correct``)."""
    from ...data.datasets import test_split
    from .bottoms import task_correct

    recipe, rows = cfg.recipe(), []
    for v, specs in _plateau_specs(cfg).items():
        for run, spec in zip(("as trained", "longer"), specs):
            model, _ = network.load_or_train(spec, device=device, store=store, progress=progress)
            correct = task_correct(model, spec, test_split(spec.data, recipe.test_size, recipe.subset_seed), device)
            rows.append({"variant": v, "run": run, "epochs": spec.train.epochs, "accuracy": 100 * float(correct.mean()),
                         "correct": correct})
    return pd.DataFrame(rows)


def plateau_premise(plateau: pd.DataFrame | None) -> tuple[Control, dict[str, float]]:
    """first_half's plateau premise on :func:`weak_plateau`'s table: the largest gain (points) of a
    weak bottom trained longer over the one stitched, bootstrapped over the test images (paired:
    every bottom on the same images; the networks fixed), at most :data:`PLATEAU_GAIN_MAX` on its
    interval. Without the table: a failed control, not run."""
    if plateau is None or plateau.empty:
        return Control("the weak bottoms reached their plateau (the premise): not run", "the plateau premise is "
                       "required for first_half", "not run", False, None, GUARANTEE), {}
    by = {(r.variant, r.run): np.asarray(r.correct, dtype=np.float64) for r in plateau.itertuples()}
    weak = list(dict.fromkeys(plateau.variant))
    n = len(by[(weak[0], "as trained")])

    def gain(idx: np.ndarray) -> float:
        return 100 * max(float(by[(v, "longer")][idx].mean() - by[(v, "as trained")][idx].mean()) for v in weak)

    est = noise.bootstrap(gain, n, name="B-F3A plateau")
    factor = float(plateau[plateau.run == "longer"].epochs.iloc[0] / plateau[plateau.run == "as trained"].epochs.iloc[0])
    ctl = controls.premise(est, PLATEAU_GAIN_MAX, f"the weak bottoms reached their plateau: trained {factor:g}x "
                           "longer, none gains more than 3 points on its own task (the premise)", direction="<=",
                           what="largest test-accuracy gain of a weak bottom trained longer (same images)",
                           guarantee=True)
    return ctl, estimate_numbers("plateau_gain", est)


def plateau_table(plateau: pd.DataFrame) -> pd.DataFrame:
    """:func:`weak_plateau`'s accuracies (%) as stitched and trained longer, per weak bottom, and the gain."""
    t = plateau.pivot(index="variant", columns="run", values="accuracy")
    return t.assign(**{"gain (points)": t["longer"] - t["as trained"]}).round(2)


def labels_summary(table: pd.DataFrame, accuracy: dict, cfg: LabelsConfig,
                   plateau: pd.DataFrame | None = None) -> tuple[dict, list[ClaimSpec]]:
    t = table.reset_index(drop=True)
    cuts = list(dict.fromkeys(t.cut))
    half = cuts[:(len(cuts) + 1) // 2]
    keys = {SELF: "self", NORMAL: "normal", t.receiver.iloc[0]: "top",
            **{v: VARIANT_KEYS[v] for v in cfg.variants}}
    numbers = short_numbers(t, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = top_self_stitch_control(t)
    negative, neg = untrained_bottom_control(t)
    if neg is not None:
        numbers.update(estimate_numbers("random_late_penalty_beyond", neg))
    weak = [v for v in cfg.variants if v != WEAK_EXCLUDED]
    numbers["plateau_factor"] = cfg.plateau_longer
    claims = []
    if weak:
        finished, plateau_numbers = plateau_premise(plateau)
        numbers.update(plateau_numbers)
        worst = {v: penalty_beyond_self(t, v)[half].max() for v in weak}
        w = max(worst, key=worst.get)
        bs = [BeyondSelf(t, v, half) for v in weak]
        est = grid_bootstrap(t, lambda x: float(max(b.of(x).max() for b in bs)))
        numbers.update(estimate_numbers("weak_first_half_max_penalty", est))
        claims.append(ClaimSpec(
            key="first_half", text="The first half of the layers of networks trained with less informative labels "
                                   "are as good as a normal network's",
            criterion=at_most(est, 100 * CONNECTED_MAX_PENALTY,
                              f"max penalty at {', '.join(half)} over {', '.join(weak)}"),
            paper="first half of layers 'as good as' normal (Fig. 3A)",
            ours=f"max {est.text(2, 'points')} ({w}); the normal bottom's max there "
                 f"{penalty_beyond_self(t, NORMAL)[half].max():.2f}", controls=[control, negative, finished],
            kind="compatible"))
    if "100% random labels" in cfg.variants:
        b = BeyondSelf(t, "100% random labels", half)
        est = grid_bootstrap(t, lambda x: float(b.of(x).max()))
        numbers.update(estimate_numbers("noise100_first_half_max_penalty", est))
        claims.append(ClaimSpec(
            key="except_noise", text="... except the network trained on 100% random labels",
            criterion=at_least(est, 100 * CONNECTED_MAX_PENALTY, f"max penalty at {', '.join(half)} of the "
                               "100%-random-label bottom (above the 'as good as' bound)"),
            paper="the exception: 100% label noise (Fig. 3A)", ours=f"max {est.text(2, 'points')}",
            controls=[control], kind="fails"))
    return numbers, judged_beyond_self(claims, ('first_half', 'except_noise'))


# --------------------------------------------------------------------------------------------
# B-F3B: training time


@dataclass(frozen=True)
class EpochsConfig(BottomsConfig):
    """B-F3B: snapshots of one seed-0 run; the midpoint is the top, earlier and later ones the bottoms."""

    MIN_CUTS = 3  # early, middle and late layers

    snapshots: tuple[float, ...] = param((0.25, 1.0), "the bottoms: fractions of the run (paper: epochs 40 and 160 "
                                         "of 160)", items={"gt": 0, "le": 1})
    top_snapshot: float = param(0.5, "the top: fraction of the run (paper: epoch 80 of 160)", gt=0, le=1)

    def models(self) -> tuple[network.ModelSpec, dict[str, network.ModelSpec]]:
        return _epochs_models(self)

    def later(self) -> list[str]:
        """The snapshot from latest in the run, if later than the top's (it decides both claims)."""
        later = [f for f in self.snapshots if f > self.top_snapshot]
        return [_epochs_name(max(later))] if later else []

    def summary(self, table: pd.DataFrame, accuracy: dict) -> tuple[dict, list[ClaimSpec]]:
        return epochs_summary(table, accuracy, self)

    def length_checks(self, table: pd.DataFrame, claims: list[ClaimSpec]) -> list[LengthCheck]:
        return _one_top_checks(self, table, claims)


PRESETS_F3B = sweep_presets(EpochsConfig)
# B-F3B's claims judged with the seed-variance component, as B-F2C's
SEED_CLAIMS_F3B: dict[str, tuple[int, str]] = {"compatible": (1, "max"), "improves": (1, "gain"),
                                               "early_first": (1, "cut")}


def _epochs_name(f: float) -> str:
    return f"{f:g} of the run (epoch {160 * f:g} of 160 in the paper)"


def _epochs_models(cfg: EpochsConfig) -> tuple[network.ModelSpec, dict[str, network.ModelSpec]]:
    top = cfg.variant(cfg.seeds[0], stop=cfg.top_snapshot)
    return top, {_epochs_name(f): cfg.variant(cfg.seeds[0], stop=f) for f in cfg.snapshots}


def epochs(cfg: EpochsConfig, **kw) -> tuple[pd.DataFrame, dict]:
    """Snapshots of one run of the zoo's seed-0 network (its full recipe, the learning-rate
    schedule of the whole run): ``top_snapshot`` is the top, ``snapshots`` the bottoms. The run is
    trained once, storing the snapshots on the way (the full run is B-F2A's receiver)."""
    if any(not 0 < f <= 1 for f in cfg.snapshots):
        raise ValueError(f"snapshots must be fractions in (0, 1], got {cfg.snapshots}")
    top, bottoms = _epochs_models(cfg)
    zoo.train_snapshots([top, *bottoms.values()], **{k: v for k, v in kw.items() if k in ("device", "store")},
                        progress=kw.get("progress", True))
    return bottoms_into_top(cfg, top, bottoms,
                            receiver_name=f"top ({_epochs_name(cfg.top_snapshot)}, seed 0)", **kw)


def epochs_summary(table: pd.DataFrame, accuracy: dict, cfg: EpochsConfig) -> tuple[dict, list[ClaimSpec]]:
    t = table.reset_index(drop=True)
    cuts = list(dict.fromkeys(t.cut))
    early, _, late = cut_thirds(cuts)
    keys = {SELF: "self", t.receiver.iloc[0]: "top",
            **{_epochs_name(f): f"at{f:g}".replace(".", "_") for f in cfg.snapshots}}
    numbers = short_numbers(t, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = top_self_stitch_control(t)
    negative, neg = untrained_bottom_control(t)
    if neg is not None:
        numbers.update(estimate_numbers("random_late_penalty_beyond", neg))
    longer = [f for f in cfg.snapshots if f > cfg.top_snapshot]
    shorter = [f for f in cfg.snapshots if f < cfg.top_snapshot]
    claims = []
    if longer:
        name = _epochs_name(max(longer))
        b = BeyondSelf(t, name, cuts)
        worst = grid_bootstrap(t, lambda x: float(b.of(x).max()))
        gain, where = gain_estimate(t, name)
        premise, gap = premise_stronger(t, name, top_name=f"the top ({cfg.top_snapshot:g} of the run)")
        numbers.update(estimate_numbers("longer_max_penalty", worst))
        numbers.update(estimate_numbers("longer_gain", gain))
        numbers.update(estimate_numbers("improves_premise_gap", gap))
        claims += [
            ClaimSpec(key="compatible", text="Representations from later in training are stitching compatible "
                                             "with the top",
                      criterion=at_most(worst, 100 * CONNECTED_MAX_PENALTY,
                                        f"max penalty of the bottom at {max(longer):g} of the run"),
                      paper="compatible (Fig. 3B)", ours=f"max {worst.text(2, 'points')}",
                      controls=[control, negative], kind="compatible"),
            ClaimSpec(key="improves", text="Longer training improves the top when plugged in",
                      criterion=at_least(gain, IMPROVE_MIN, f"gain of the bottom at {max(longer):g} of the run at its "
                                         "best block cut ('pool' left out)"),
                      paper="later epochs improve (Fig. 3B)",
                      ours=f"gain {gain.text(2, 'points')} (at {where}); the bottom's own accuracy minus the top's "
                           f"{gap.text(2, 'points')}",
                      controls=[control, negative, premise], kind="improves"),
        ]
    if shorter:
        name = _epochs_name(min(shorter))
        pen = penalty_beyond_self(t, name)
        be, bl = BeyondSelf(t, name, early), BeyondSelf(t, name, late)
        gap = grid_bootstrap(t, lambda x: float(bl.of(x).mean() - be.of(x).mean()))
        numbers.update(shorter_early_penalty=pen[early].mean(), shorter_late_penalty=pen[late].mean(),
                       **estimate_numbers("shorter_late_minus_early", gap))
        claims.append(ClaimSpec(
            key="early_first", text="Early layers converge first: the shorter run's penalty is lower early than late",
            criterion=at_least(gap, CONVERGE_MIN, f"bottom at {min(shorter):g} of the run: mean penalty at "
                               f"{', '.join(late)} minus at {', '.join(early)}"),
            paper="early layers converge faster (Fig. 3B; Raghu et al. 2017)",
            ours=f"{pen[early].mean():.2f} early, {pen[late].mean():.2f} late (difference {gap.text(2, 'points')})",
            controls=[control], kind="stitch_other"))
    return numbers, judged_beyond_self(claims, ('compatible', 'improves', 'early_first'))


# --------------------------------------------------------------------------------------------
# B-F2C and B-F3A's training-length control (B-F2A's, :func:`.length.retrain_longer`), like for
# like: the stitches that decide a verdict *and the top's self-stitches at those cuts* are
# retrained with LONGER x the epochs, and the claim is re-judged on them. Every stitching verdict
# gets it, decided or not, whichever way it went (issue 46): the self-stitch, the reference every
# penalty is measured beyond, is retrained too and may move either way. For a claim over several
# senders and cuts ("at most a bound everywhere") the deciding cells are all those past the bound,
# or the closest one when none is; a difference between stitches ("mid_degrades", "early_first")
# is decided by every stitch it reads.


def _past(pens: dict[str, pd.Series], bound: float, absolute: bool = False) -> list[tuple[str, list[str]]]:
    """(sender, cuts) with a penalty (its size if ``absolute``) past ``bound`` points, or the one
    cell closest to it when none is."""
    size = {n: (p.abs() if absolute else p) for n, p in pens.items()}
    cells = [(n, [str(c) for c in v.index[v > bound]]) for n, v in size.items()]
    cells = [(n, cuts) for n, cuts in cells if cuts]
    if cells:
        return cells
    n = max(size, key=lambda k: size[k].max())
    return [(n, [str(size[n].idxmax())])]


def _deciding(table: pd.DataFrame, claims: list[ClaimSpec], cfg: BottomsConfig
              ) -> list[tuple[str, tuple[tuple[str, tuple[str, ...]], ...], float]]:
    """Per stitching claim of B-F2C, B-F3A or B-F3B, decided or not: its key, the cells (sender,
    cuts) that decide it and the bound on the penalty beyond the self-stitch there (points)."""
    cuts = list(dict.fromkeys(table.cut))
    later = cfg.later()  # the bottoms with more samples, or from later in the run
    out = []
    for c in claims:
        key = c.key
        if key == "compatible":
            pens = {n: penalty_beyond_self(table, n) for n in later}
            out.append((c, _past(pens, 100 * CONNECTED_MAX_PENALTY), 100 * CONNECTED_MAX_PENALTY))
        elif key == "improves":  # the gain (minus the penalty) at the best block cut is at least IMPROVE_MIN
            sender = later[0]
            out.append((c, [(sender, [str(largest_gain(penalty_beyond_self(table, sender))[1])])], -IMPROVE_MIN))
        elif key == "early_similar":  # |penalty| at most SIMILAR_MAX at every early cut
            early = cut_thirds(cuts)[0]
            pens = {n: penalty_beyond_self(table, n)[early] for n in (f"{thousands_label(k)} samples" for k in cfg.bottom_samples)}
            out.append((c, _past(pens, SIMILAR_MAX, absolute=True), SIMILAR_MAX))
        elif key in ("first_half", "except_noise"):
            half = cuts[:(len(cuts) + 1) // 2]
            names = (["100% random labels"] if key == "except_noise"
                     else [v for v in cfg.variants if v != "100% random labels"])
            pens = {n: penalty_beyond_self(table, n)[half] for n in names}
            bound = 100 * CONNECTED_MAX_PENALTY
            # "high": the random-label bottom's largest penalty decides it
            cells = _past(pens, float("inf")) if key == "except_noise" else _past(pens, bound)
            out.append((c, cells, bound))
        elif key == "mid_degrades":  # both bottoms' stitches at the middle cuts (a difference of the two)
            mid = cut_thirds(cuts)[1]
            few, most = (f"{thousands_label(k)} samples" for k in (min(cfg.bottom_samples), max(cfg.bottom_samples)))
            out.append((c, [(few, list(mid)), (most, list(mid))], DEGRADE_MIN))
        elif key == "early_first":  # the shorter run's stitches at the early and late cuts
            early, _, late = cut_thirds(cuts)
            shorter = _epochs_name(min(f for f in cfg.snapshots if f < cfg.top_snapshot))
            out.append((c, [(shorter, list(early) + list(late))], CONVERGE_MIN))
    return [(c.key, tuple((n, tuple(at)) for n, at in cells), bound) for c, cells, bound in out]


def _one_top_checks(cfg: BottomsConfig, table: pd.DataFrame, claims: list[ClaimSpec]) -> list[LengthCheck]:
    """The checks of a page with one top (B-F2C, B-F3A, B-F3B): :func:`_deciding`'s cells, with the
    page's models and its summary to re-judge each claim."""
    top, bottoms = cfg.models()
    name = table.receiver.iloc[0]
    return [LengthCheck(claim=key, recipe=cfg.recipe(), table=table, rejudge=claim_rejudger(cfg, key), bound=bound,
                        parts=(LengthPart(receiver=top, receiver_name=name, cells=cells,
                                          sender_specs={n: bottoms[n] for n, _ in cells}),),
                        panel=name)
            for key, cells, bound in _deciding(table, claims, cfg)]
