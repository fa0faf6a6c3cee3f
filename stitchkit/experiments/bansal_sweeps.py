"""Bansal et al. 2021, Sections 5-6: weaker or stronger bottoms stitched into one top.

Each figure varies one thing about the bottom (sender) network and stitches it into a fixed top
(receiver) at several cuts, with the receiver stitched into itself as the convergence control
and the linear CKA between bottom and top at each cut beside the penalty:

- B-F2C, number of samples: bottoms trained on 5k, 25k and 50k images into a 10k top;
- B-F3A, label distribution: objects-vs-animals labels, 10/50/100% random labels into a normal top;
- B-F3B, training time: snapshots of one run at a quarter, half and all of its schedule (the
  paper's epochs 40, 80 and 160 of 160), the earlier and later ones into the midpoint;
- B-F3C, width: x0.25, x1 and x2 widths, every ordered pair.

Models come from :func:`stitchkit.zoo.bansal_resnet18`; the paper trains every ResNet for the
same number of SGD steps whatever its sample size (App. A.2), and so does the zoo. Stitches are
B-F2A's recipe (:class:`stitchkit.experiments.bansal.ConnectivityConfig`), so the seed-0
network's stitches and models are shared with B-F2A, B-F4 and B-F5.

Verdicts are judged as B-F2A's (:mod:`stitchkit.experiments.bansal`): on 95% paired-bootstrap
intervals over the test images, each penalty beyond the top stitched into itself at the same cut
(the two resampled together), maxima and gains over cuts bootstrapped as such; the self-stitch
control is two-sided; a "more is better" premise (the stronger bottom is the more accurate
network) is judged on the interval of the accuracy difference, measured on the same test images
(``sender_correct``: each bottom's own per-image results); CKA claims on the bootstrap over the
CKA images (:class:`stitchkit.similarity.CKABootstrap`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import torch

from .. import controls, data as data_mod, noise, similarity, zoo
from ..datasets import DataSpec, test_split
from ..grid import Net, StitchRecipe, stitch_grid
from ..hardware import as_device, channels_last_ok
from ..results import Control, at_least, at_most, within
from ..scales import check_names, figure_config, param
from ..train import evaluate
from ..similarity import CKABootstrap
from .bansal_core import SELF  # the receiver into itself: the same rows as B-F2A's (retrain_longer's default)
from .bansal_core import (CONNECTED_MAX_PENALTY, CONTROL_FLOOR, PRESETS, ConnectivityConfig, _beyond_self, boot,
                          cka_estimate, cka_reps_of, estimate_numbers, points, positions)
from .bansal_length import decided, retrain_longer

BEYOND = " (penalties beyond the top stitched into itself at the same cut)"
IMPROVE_MIN = 1.0  # points: a stronger bottom "improves" the top when it gains at least this
SIMILAR_MAX = 2.0  # points: bottoms "perform similarly" at a cut when |penalty| is at most this
DEGRADE_MIN = 2.0  # points: a weaker bottom "degrades" when its mid-layer penalty exceeds a stronger one's by this
CONVERGE_MIN = 1.0  # points: "early layers converge first": late minus early penalty of the short run
PREMISE_MARGIN = 0.0  # points: a stronger bottom's accuracy minus the weaker network's, on its interval

# per-image columns of a sweep's table -> the accuracies the bootstrap recomputes from them
COLUMNS = {**noise.PER_IMAGE, "sender_correct": "sender_accuracy"}


@dataclass(frozen=True)
class BottomsConfig(ConnectivityConfig):
    """B-F2A's models and stitch recipe, a subset of cuts, and CKA images."""

    cuts: tuple[str, ...] | None = param(None, "cuts to stitch at (e.g. ['stem', 'block3']); None: every cut")
    cka_images: int = param(2000, "test images for the per-layer CKA between bottom and top", ge=10, le=10_000)

    MIN_CUTS = 1  # pages that read early, middle and late layers need 3

    def check(self, scale: str | None = None) -> None:
        if scale is not None:
            check_names("cuts", self.cuts, zoo.build(self.model(scale, self.seeds[0]), 10, 3).cuts,
                        at_least=self.MIN_CUTS)


# Demo: six of the ten cuts (two early, two middle, two late) keep each page within minutes.
DEMO_CUTS = ("stem", "block1", "block3", "block5", "block7", "pool")
SMOKE_CUTS = ("stem", "block3", "block5")  # three: early, middle and late need one cut each


def _presets(cls: type, **per_scale: dict) -> dict:
    """B-F2A's presets as presets of ``cls``, with the sweep's cut subsets and ``per_scale`` changes."""
    out = {}
    for scale, cfg in PRESETS.items():
        values = {f: getattr(cfg, f) for f in cfg.__dataclass_fields__}
        values.update(cuts={"smoke": SMOKE_CUTS, "demo": DEMO_CUTS}.get(scale),
                      cka_images=500 if scale == "smoke" else 2000, **per_scale.get(scale, {}))
        out[scale] = cls(**values)
    return out


def _grams(spec: zoo.ModelSpec, cuts, images, device, store, progress) -> dict[str, torch.Tensor]:
    model, _ = zoo.load_or_train(spec, device=device, store=store, progress=progress)
    return similarity.model_grams(model, images, cuts, normalisation=spec.normalisation, device=device)


def cka_per_cut(a: zoo.ModelSpec, b: zoo.ModelSpec, cuts, n_images: int, *, device=None, store=None,
                progress: bool = True, replicates: bool = False) -> dict[str, float] | dict[str, np.ndarray]:
    """Linear CKA (Gram form, float64) between models ``a`` and ``b`` at each cut, on the first
    ``n_images`` of a stratified CIFAR-10 test subset. ``replicates``: each cut's (R+1,) array
    instead, the full-sample value first and then one per bootstrap resample of the images
    (:class:`stitchkit.similarity.CKABootstrap`)."""
    images = test_split(DataSpec("cifar10"), n_images, seed=0).images
    ga, gb = (_grams(s, cuts, images, device, store, progress) for s in (a, b))
    if not replicates:
        return {cut: similarity.cka_from_grams(ga[cut], gb[cut]) for cut in cuts}
    cka_boot = CKABootstrap(len(images))
    out = {}
    for cut in cuts:
        out[cut] = cka_boot.replicates(ga[cut], gb[cut])
        cka_boot.forget()
    return out


def own_correct(model, spec: zoo.ModelSpec, recipe: StitchRecipe, device=None) -> np.ndarray:
    """(n_test,) bool: which of the grid's test images (``recipe``'s stratified subset, in the
    grid's order) ``model`` gets right on its own; the premise controls compare two networks on
    them image by image."""
    device = as_device(device)
    test = test_split(DataSpec("cifar10"), recipe.test_size, recipe.subset_seed)
    batches = data_mod.Batches(test, 500, normalisation=spec.normalisation, device=device,
                               channels_last=channels_last_ok(model))
    return evaluate(model, batches, device=device, per_image=True)["correct"]


def same_task(a: zoo.ModelSpec, b: zoo.ModelSpec) -> bool:
    """Whether two networks are trained for the same task (data set, labels, image size), so that
    their own accuracies on the same test images compare (the sample size may differ)."""
    da, db = a.data, b.data
    return (da.dataset, da.labels, da.label_noise, da.size) == (db.dataset, db.labels, db.label_noise, db.size)


def bottoms_into_top(cfg: BottomsConfig, scale: str, receiver: zoo.ModelSpec, senders: dict[str, zoo.ModelSpec], *,
                     receiver_name: str = "top", device=None, store=None, progress: bool = True,
                     client=None, cka_replicates: bool = False) -> tuple[pd.DataFrame, dict[str, float]]:
    """Stitch every sender (and the receiver itself, the control) into ``receiver`` at
    ``cfg.cuts`` (each sender cut into the same receiver cut). Returns the grid's table with
    ``cut``, ``receiver``, ``cka`` (linear CKA between sender and receiver at that cut) and
    ``sender_correct`` (the sender's own per-image results on the grid's test images; None for a
    sender trained for another task, see :func:`same_task`) columns,
    and every model's test accuracy on its own task (full test set) by name.
    ``cka_replicates``: also ``cka_reps`` (the CKA's bootstrap replicates over the CKA images)
    and ``cka_n`` (their number), for pages that judge a CKA."""
    probe = zoo.build(receiver, num_classes=10, in_channels=3)  # untrained: checks the cuts before any training
    cuts = list(cfg.cuts or probe.cuts)
    for cut in cuts:
        probe.check_cut(cut)
    rx = Net(receiver_name, receiver)
    rx.model, metrics = zoo.load_or_train(receiver, device=device, store=store, progress=progress)
    accuracy = {rx.name: metrics["test"]["accuracy"]}
    nets = [Net(SELF, receiver, rx.model)] + [Net(name, spec) for name, spec in senders.items()]
    for net in nets[1:]:  # loaded once here; the grid reuses them
        net.model, metrics = zoo.load_or_train(net.spec, device=device, store=store, progress=progress)
        accuracy[net.name] = metrics["test"]["accuracy"]
    recipe = cfg.recipe()
    table = stitch_grid(nets, [rx], [(c, c) for c in cuts], recipe, DataSpec("cifar10"), device=device,
                        store=store, progress=progress, client=client)
    table = table.rename(columns={"cut_i": "cut"}).drop(columns=["cut_j"])
    own = {SELF: table.receiver_correct.iloc[0]}
    own.update({net.name: own_correct(net.model, net.spec, recipe, device) if same_task(net.spec, receiver) else None
                for net in nets[1:]})
    table["sender_correct"] = [own[s] for s in table.sender]
    images = test_split(DataSpec("cifar10"), cfg.cka_images, seed=0).images
    top = _grams(receiver, cuts, images, device, store, progress)
    cka_boot = CKABootstrap(len(images)) if cka_replicates else None
    cka = {(SELF, cut): 1.0 for cut in cuts}
    reps = {(SELF, cut): np.ones(noise.RESAMPLES + 1) for cut in cuts}
    for name, spec in senders.items():
        g = _grams(spec, cuts, images, device, store, progress)
        for cut in cuts:
            if cka_boot is not None:
                reps[(name, cut)] = cka_boot.replicates(g[cut], top[cut])
                cka[(name, cut)] = float(reps[(name, cut)][0])
            else:
                cka[(name, cut)] = similarity.cka_from_grams(g[cut], top[cut])
        if cka_boot is not None:
            cka_boot.forget()
        del g
    table["cka"] = [cka[(row.sender, row.cut)] for row in table.itertuples()]
    if cka_boot is not None:
        table["cka_reps"] = [reps[(row.sender, row.cut)] for row in table.itertuples()]
        table["cka_n"] = len(images)
    table["receiver"] = receiver_name
    return table, accuracy


def _pen(table: pd.DataFrame, sender: str, receiver: str | None = None) -> pd.Series:
    """Penalty in points per cut (in cut order) of one sender (into one receiver) *beyond* the
    receiver stitched into itself at the same cut. Every claim of these pages is judged on it:
    a stitch trained on the task can itself improve a top that is not fully trained (the
    self-stitch penalty is then negative), and that gain is the stitch's, not the bottom's."""
    t = table[table.sender == sender]
    own = table[table.sender == SELF]
    if receiver is not None:
        t, own = t[t.receiver == receiver], own[own.receiver == receiver]
    elif t.receiver.nunique() > 1:
        raise ValueError(f"{sender!r} is stitched into several receivers: name one")
    else:
        own = own[own.receiver == t.receiver.iloc[0]]
    return _beyond_self(t.set_index("cut"), own.set_index("cut")).loc[t.cut]


class _Beyond:
    """Row positions of one sender's stitches (into one receiver) at some cuts and of that
    receiver's self-stitches at the same cuts: ``of(x)`` is the penalty beyond the self-stitch
    (points, per cut) in a bootstrap replicate ``x`` of the table."""

    def __init__(self, table: pd.DataFrame, sender: str, cuts, receiver: str | None = None) -> None:
        t = table.reset_index(drop=True)
        if receiver is None:
            receiver = t[t.sender == sender].receiver.iloc[0]
        self.cuts = list(cuts)
        self.sender = positions(t, sender, self.cuts, receiver)
        self.self_ = positions(t, SELF, self.cuts, receiver)

    def of(self, x: pd.DataFrame) -> np.ndarray:
        return points(x, self.sender) - points(x, self.self_)


def _boot(table: pd.DataFrame, stat, own: bool = False) -> noise.Estimate:
    """The paired bootstrap over the grid's test images; ``own``: with the senders' own results
    (``sender_accuracy``, for the premises)."""
    return boot(table, stat, columns=COLUMNS if own else noise.PER_IMAGE)


def _thirds(cuts: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Early, middle and late cuts (the first and last third; the middle the rest)."""
    if len(cuts) < 3:
        raise ValueError(f"early, middle and late layers need at least 3 cuts, got {cuts}")
    k = len(cuts) // 3
    return cuts[:k], cuts[k:len(cuts) - k], cuts[len(cuts) - k:]


def _beyond(claims: list[dict], keys: tuple[str, ...]) -> list[dict]:
    """Say in each criterion of ``keys`` that its penalties are measured beyond the self-stitch
    (the criterion's numbers and result unchanged)."""
    for c in claims:
        if c["key"] in keys:
            c["criterion"] = replace(c["criterion"], text=c["criterion"].text + BEYOND)
    return claims


def _map_cuts(cuts: list[str]) -> list[str]:
    """The cuts with a spatial map: at ``pool`` the stitch and the top's classifier form a linear
    probe of the bottom, which any stronger network wins, so "plugging in" is judged at the blocks."""
    return [c for c in cuts if c != "pool"]


def _gain(pen: pd.Series) -> tuple[float, str]:
    """The largest gain (minus the penalty, points) over the map cuts and where (see :func:`_map_cuts`)."""
    maps = pen.drop("pool", errors="ignore")
    return float(-maps.min()), str(maps.idxmin())


def _gain_estimate(table: pd.DataFrame, sender: str, receiver: str | None = None) -> tuple[noise.Estimate, str]:
    """The largest gain over the map cuts of ``sender`` beyond the self-stitch, bootstrapped as a
    maximum, and the cut where it is on all images."""
    cuts = _map_cuts(list(dict.fromkeys(table.cut)))
    b = _Beyond(table, sender, cuts, receiver)
    return _boot(table, lambda x: float(-b.of(x).min())), cuts[int(np.argmin(b.of(table.reset_index(drop=True))))]


def _control(table: pd.DataFrame) -> tuple[Control, float]:
    """The two-sided self-stitch control over every cut (and every receiver) of the table, and the
    largest self-penalty (points, with its sign) on all images."""
    t = table.reset_index(drop=True)
    pos = np.flatnonzero((t.sender == SELF).to_numpy())
    e = _boot(t, lambda x: controls.largest_abs(points(x, pos)))
    return controls.self_stitch(e, 100 * CONTROL_FLOOR, what="top stitched into itself at every cut"), e.value


def _accuracy_gap(table: pd.DataFrame, stronger: str, weaker: str | None = None,
                  receiver: str | None = None) -> noise.Estimate:
    """``stronger``'s own test accuracy minus ``weaker``'s (points; None: the top's, i.e. the
    receiver ``stronger`` is stitched into), on the grid's test images, paired."""
    t = table.reset_index(drop=True)
    rows = t[t.sender == stronger] if receiver is None else t[(t.sender == stronger) & (t.receiver == receiver)]
    a = int(rows.index[0])
    if weaker is None:
        return _boot(t, lambda x: 100 * float(x.sender_accuracy.iloc[a] - x.receiver_accuracy.iloc[a]), own=True)
    b = int(t.index[(t.sender == weaker).to_numpy()][0])
    return _boot(t, lambda x: 100 * float(x.sender_accuracy.iloc[a] - x.sender_accuracy.iloc[b]), own=True)


def _stronger(table: pd.DataFrame, bottom: str, top: str | None = None, *, receiver: str | None = None,
              top_name: str | None = None) -> tuple[Control, noise.Estimate]:
    """The premise of a "more is better" claim: the network with more (samples, training, width)
    is itself the more accurate one, on the interval of the accuracy difference (a premise that
    holds by less than its uncertainty fails). ``top``: the weaker network as a sender of the
    table; None: the top ``bottom`` is stitched into. Where it fails, a stitch cannot show that
    "more" made a better representation, and the claim is inconclusive at this scale."""
    gap = _accuracy_gap(table, bottom, top, receiver)
    other = top or top_name or "the top"
    ctl = controls.premise(gap, PREMISE_MARGIN, f"the {bottom} network is more accurate than {other} on its own "
                           "(the premise)", what=f"{bottom}'s test accuracy minus {other}'s, same images")
    return ctl, gap


def _numbers(table: pd.DataFrame, accuracy: dict[str, float], keys: dict[str, str],
             cfg: BottomsConfig) -> dict[str, float]:
    """Per-sender, per-cut penalty and CKA and every model's accuracy, under short keys."""
    out = {f"accuracy_{keys[name]}": 100 * acc for name, acc in accuracy.items() if name in keys}
    out["cka_images_used"] = cfg.cka_images
    out["n_test"] = int(noise.n_test_of(table))
    for name, g in table.groupby("sender", sort=False):
        for row in g.itertuples():
            tag = keys[name] + (f"_into_{keys[row.receiver]}" if table.receiver.nunique() > 1 else "")
            out[f"penalty_{tag}_{row.cut}"] = 100 * row.penalty
            out[f"cka_{tag}_{row.cut}"] = row.cka
    return out


def accuracy_table(accuracy: dict[str, float]) -> pd.DataFrame:
    """Each model's test accuracy (%) on its own task, for display."""
    return pd.DataFrame({"test accuracy (%)": {k: round(100 * v, 2) for k, v in accuracy.items()}})


def per_cut(table: pd.DataFrame, value: str = "penalty") -> pd.DataFrame:
    """``value`` ('penalty' in points, or 'cka') per cut (rows; per receiver when there are
    several) and sender (columns), for display."""
    view = table.assign(penalty=(100 * table.penalty).round(2), cka=table.cka.round(3))
    index = ["receiver", "cut"] if table.receiver.nunique() > 1 else ["cut"]
    return view.pivot_table(index=index, columns="sender", values=value, sort=False)


def title(cfg: BottomsConfig, scale: str) -> str:
    width = cfg.width or zoo.BANSAL_RESNET18[scale]["width"]
    return f"Pre-activation ResNet-18 (width {width}) on CIFAR-10, scale '{scale}'"
# --------------------------------------------------------------------------------------------
# B-F2C: number of samples


@figure_config("B-F2C")
@dataclass(frozen=True)
class SamplesConfig(BottomsConfig):
    """B-F2C: bottoms trained on more or fewer images stitched into a top trained on 10k."""

    MIN_CUTS = 3  # early, middle and late layers

    top_samples: int = param(10_000, "training images of the top (paper 10k)", ge=1, le=50_000)
    bottom_samples: tuple[int, ...] = param((5_000, 25_000, 50_000), "training images of each bottom (paper "
                                            "5k, 10k, 25k; the top into itself stands for 10k; 50k added)")

    def models(self, scale: str) -> tuple[zoo.ModelSpec, dict[str, zoo.ModelSpec]]:
        return _samples_models(self, scale)

    def later(self) -> list[str]:
        """The bottoms with more than the top ("more is better" is judged on them)."""
        return [f"{_k(k)} samples" for k in _more_samples(self)]

    def summary(self, table: pd.DataFrame, accuracy: dict) -> tuple[dict, list[dict]]:
        return samples_summary(table, accuracy, self)

    def length_checks(self, scale: str, table: pd.DataFrame, claims: list[dict]) -> list[dict]:
        return _one_top_checks(self, scale, table, claims)


PRESETS_F2C = _presets(SamplesConfig, smoke={"top_samples": 1024, "bottom_samples": (512, 2048)})


def _k(n: int) -> str:
    return f"{n // 1000}k" if n % 1000 == 0 else str(n)


def _samples_models(cfg: SamplesConfig, scale: str) -> tuple[zoo.ModelSpec, dict[str, zoo.ModelSpec]]:
    top = cfg.variant(scale, cfg.seeds[0], train_size=cfg.top_samples)
    return top, {f"{_k(n)} samples": cfg.variant(scale, cfg.seeds[1], train_size=n) for n in cfg.bottom_samples}


def _more_samples(cfg: SamplesConfig) -> list[int]:
    """The bottoms' sample sizes above the top's (the first is the paper's 25k: "improves")."""
    return sorted(n for n in cfg.bottom_samples if n > cfg.top_samples)


def samples(cfg: SamplesConfig, scale: str, **kw) -> tuple[pd.DataFrame, dict]:
    """The top (seed 0, ``top_samples`` images) and bottoms (seed 1, each sample size)."""
    top, bottoms = _samples_models(cfg, scale)
    return bottoms_into_top(cfg, scale, top, bottoms, receiver_name=f"top ({_k(cfg.top_samples)} samples)", **kw)


def samples_summary(table: pd.DataFrame, accuracy: dict, cfg: SamplesConfig) -> tuple[dict, list[dict]]:
    t = table.reset_index(drop=True)
    cuts = list(dict.fromkeys(t.cut))
    early, mid, _ = _thirds(cuts)
    names = {n: f"{_k(n)} samples" for n in cfg.bottom_samples}
    keys = {SELF: "self", **{v: f"n{_k(n)}" for n, v in names.items()}, t.receiver.iloc[0]: "top"}
    numbers = _numbers(t, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = _control(t)
    more = _more_samples(cfg)
    fewest, most = min(cfg.bottom_samples), max(cfg.bottom_samples)
    claims = []
    if more:
        bs = [_Beyond(t, names[n], cuts) for n in more]
        worst = _boot(t, lambda x: float(max(b.of(x).max() for b in bs)))
        best_n = min(more)  # the paper's 25k: the smallest bottom with more samples than the top
        gain, where = _gain_estimate(t, names[best_n])
        premise, gap = _stronger(t, names[best_n], top_name=f"the {_k(cfg.top_samples)}-sample top")
        numbers.update(estimate_numbers("more_max_penalty", worst))
        numbers.update(estimate_numbers("improvement", gain))
        numbers.update(estimate_numbers("improves_premise_gap", gap))
        claims += [
            dict(key="compatible", text="Bottoms trained on more samples are stitching compatible with the top",
                 criterion=at_most(worst, 100 * CONNECTED_MAX_PENALTY, "max penalty over cuts of the bottoms "
                                   f"with more samples than the top ({', '.join(names[n] for n in more)})"),
                 paper="all stitching compatible (Fig. 2C)", ours=f"max {worst.text(2, 'points')}",
                 controls=[control]),
            dict(key="improves", text=f"A bottom trained on more samples ({names[best_n]}) improves on the "
                                      f"{_k(cfg.top_samples)}-sample top",
                 criterion=at_least(gain, IMPROVE_MIN, "gain over the top at the best block cut (minus the "
                                    "penalty; 'pool' left out)"),
                 paper="negative penalty: the 25k bottom improves on the 10k top (Fig. 2C)",
                 ours=f"gain {gain.text(2, 'points')} (at {where}); the bottom's own accuracy minus the top's "
                      f"{gap.text(2, 'points')}",
                 controls=[control, premise]),
        ]
    bottoms = [_Beyond(t, name, early) for name in names.values()]
    early_max = _boot(t, lambda x: float(max(np.abs(b.of(x)).max() for b in bottoms)))
    b_few, b_most = _Beyond(t, names[fewest], mid), _Beyond(t, names[most], mid)
    degrade = _boot(t, lambda x: float(b_few.of(x).mean() - b_most.of(x).mean()))
    mid_premise, mid_gap = _stronger(t, names[most], names[fewest])
    numbers.update(estimate_numbers("early_max_abs_penalty", early_max))
    numbers.update(estimate_numbers("mid_degradation", degrade))
    numbers.update(estimate_numbers("mid_premise_gap", mid_gap))
    claims += [
        dict(key="early_similar", text="Stitched at the first layers, all bottoms perform like the top",
             criterion=at_most(early_max, SIMILAR_MAX, f"max |penalty| over every bottom at {', '.join(early)}"),
             paper="similar performance at the first few layers (Sec. 6)",
             ours=f"max |penalty| {early_max.text(2, 'points')}", controls=[control]),
        dict(key="mid_degrades", text="In the middle layers, the penalty grows as the bottom's samples shrink",
             criterion=at_least(degrade, DEGRADE_MIN, f"mean penalty at {', '.join(mid)}: {names[fewest]} minus "
                                f"{names[most]}"),
             paper="performance degrades rapidly with fewer samples in the mid layers (Sec. 6)",
             ours=f"{degrade.text(2, 'points')}; the {names[most]} network's own accuracy minus the "
                  f"{names[fewest]} network's {mid_gap.text(2, 'points')}",
             controls=[control, mid_premise]),
    ]
    return numbers, _beyond(claims, ('compatible', 'improves', 'early_similar', 'mid_degrades'))


# --------------------------------------------------------------------------------------------
# B-F3A: label distribution


LABEL_VARIANTS = {"objects vs animals": dict(labels="objects_vs_animals"),
                  "10% random labels": dict(labels="random", label_noise=0.1),
                  "50% random labels": dict(labels="random", label_noise=0.5),
                  "100% random labels": dict(labels="random", label_noise=1.0)}
VARIANT_KEYS = {"objects vs animals": "objects", "10% random labels": "noise10", "50% random labels": "noise50",
                "100% random labels": "noise100"}
NORMAL = "normal labels (seed 1)"


@figure_config("B-F3A")
@dataclass(frozen=True)
class LabelsConfig(BottomsConfig):
    """B-F3A: bottoms trained with less informative labels stitched into a normal top."""

    MIN_CUTS = 3  # early, middle and late layers

    variants: tuple[str, ...] = param(tuple(LABEL_VARIANTS), "label distributions of the bottoms: "
                                      + ", ".join(LABEL_VARIANTS), items={"choices": tuple(LABEL_VARIANTS)},
                                      unique=True)

    def models(self, scale: str) -> tuple[zoo.ModelSpec, dict[str, zoo.ModelSpec]]:
        return _labels_models(self, scale)

    def later(self) -> list[str]:
        return []

    def summary(self, table: pd.DataFrame, accuracy: dict) -> tuple[dict, list[dict]]:
        return labels_summary(table, accuracy, self)

    def length_checks(self, scale: str, table: pd.DataFrame, claims: list[dict]) -> list[dict]:
        return _one_top_checks(self, scale, table, claims)


PRESETS_F3A = _presets(LabelsConfig, smoke={"variants": ("objects vs animals", "100% random labels")})


def labels(cfg: LabelsConfig, scale: str, **kw) -> tuple[pd.DataFrame, dict]:
    """The normal top (seed 0), a normal bottom (seed 1, the reference) and one bottom per label
    distribution (seed 1)."""
    top, bottoms = _labels_models(cfg, scale)
    return bottoms_into_top(cfg, scale, top, bottoms, receiver_name="top (normal labels, seed 0)", **kw)


def _labels_models(cfg: LabelsConfig, scale: str) -> tuple[zoo.ModelSpec, dict[str, zoo.ModelSpec]]:
    bottoms = {NORMAL: cfg.variant(scale, cfg.seeds[1])}
    bottoms.update({v: cfg.variant(scale, cfg.seeds[1], **LABEL_VARIANTS[v]) for v in cfg.variants})
    return cfg.variant(scale, cfg.seeds[0]), bottoms


def labels_summary(table: pd.DataFrame, accuracy: dict, cfg: LabelsConfig) -> tuple[dict, list[dict]]:
    t = table.reset_index(drop=True)
    cuts = list(dict.fromkeys(t.cut))
    half = cuts[:(len(cuts) + 1) // 2]
    keys = {SELF: "self", NORMAL: "normal", t.receiver.iloc[0]: "top",
            **{v: VARIANT_KEYS[v] for v in cfg.variants}}
    numbers = _numbers(t, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = _control(t)
    weak = [v for v in cfg.variants if v != "100% random labels"]
    claims = []
    if weak:
        worst = {v: _pen(t, v)[half].max() for v in weak}
        w = max(worst, key=worst.get)
        bs = [_Beyond(t, v, half) for v in weak]
        est = _boot(t, lambda x: float(max(b.of(x).max() for b in bs)))
        numbers.update(estimate_numbers("weak_first_half_max_penalty", est))
        claims.append(dict(
            key="first_half", text="The first half of the layers of networks trained with less informative labels "
                                   "are as good as a normal network's",
            criterion=at_most(est, 100 * CONNECTED_MAX_PENALTY,
                              f"max penalty at {', '.join(half)} over {', '.join(weak)}"),
            paper="first half of layers 'as good as' normal (Fig. 3A)",
            ours=f"max {est.text(2, 'points')} ({w}); the normal bottom's max there "
                 f"{_pen(t, NORMAL)[half].max():.2f}", controls=[control]))
    if "100% random labels" in cfg.variants:
        b = _Beyond(t, "100% random labels", half)
        est = _boot(t, lambda x: float(b.of(x).max()))
        numbers.update(estimate_numbers("noise100_first_half_max_penalty", est))
        claims.append(dict(
            key="except_noise", text="... except the network trained on 100% random labels",
            criterion=at_least(est, 100 * CONNECTED_MAX_PENALTY, f"max penalty at {', '.join(half)} of the "
                               "100%-random-label bottom (above the 'as good as' bound)"),
            paper="the exception: 100% label noise (Fig. 3A)", ours=f"max {est.text(2, 'points')}",
            controls=[control]))
    return numbers, _beyond(claims, ('first_half', 'except_noise'))


# --------------------------------------------------------------------------------------------
# B-F2C and B-F3A's training-length control (B-F2A's, :func:`bansal.retrain_longer`), like for
# like: the stitches that decide a verdict *and the top's self-stitches at those cuts* are
# retrained with LONGER x the epochs, and the claim is re-judged on them. Every decided claim gets
# it, whichever way it went: the self-stitch, the reference every penalty is measured beyond, is
# retrained too and may move either way. For a claim over several senders and cuts ("at most a
# bound everywhere") the deciding cells are all those past the bound, or the closest one when none
# is. "mid_degrades" compares two bottoms' penalties, which more training moves both ways, and gets
# none; a claim already inconclusive gets none either.


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


def _deciding(table: pd.DataFrame, claims: list[dict], cfg: BottomsConfig) -> list[dict]:
    """Per decided claim of B-F2C, B-F3A or B-F3B ("early_first", a difference, gets none): the cells (sender, cuts) that decide it, the bound on
    the penalty beyond the self-stitch there (points), and whether the claim is "penalty high"."""
    cuts = list(dict.fromkeys(table.cut))
    later = cfg.later()  # the bottoms with more samples, or from later in the run
    out = []
    for c in claims:
        key = c["key"]
        if key == "compatible":
            pens = {n: _pen(table, n) for n in later}
            out.append((c, _past(pens, 100 * CONNECTED_MAX_PENALTY), 100 * CONNECTED_MAX_PENALTY, False))
        elif key == "improves":  # the gain (minus the penalty) at the best block cut is at least IMPROVE_MIN
            sender = later[0]
            out.append((c, [(sender, [str(_gain(_pen(table, sender))[1])])], -IMPROVE_MIN, False))
        elif key == "early_similar":  # |penalty| at most SIMILAR_MAX at every early cut
            early = _thirds(cuts)[0]
            pens = {n: _pen(table, n)[early] for n in (f"{_k(k)} samples" for k in cfg.bottom_samples)}
            out.append((c, _past(pens, SIMILAR_MAX, absolute=True), SIMILAR_MAX, False))
        elif key in ("first_half", "except_noise"):
            half = cuts[:(len(cuts) + 1) // 2]
            names = (["100% random labels"] if key == "except_noise"
                     else [v for v in cfg.variants if v != "100% random labels"])
            pens = {n: _pen(table, n)[half] for n in names}
            bound = 100 * CONNECTED_MAX_PENALTY
            # "high": the random-label bottom's largest penalty decides it
            cells = _past(pens, float("inf")) if key == "except_noise" else _past(pens, bound)
            out.append((c, cells, bound, key == "except_noise"))
    return [dict(claim=c["key"], sender=cells[0][0], cells=cells, bound=bound, high=high)
            for c, cells, bound, high in out if decided(c)]


def training_length_control(cfg: BottomsConfig, scale: str, table: pd.DataFrame, claims: list[dict], *,
                            device=None, store=None, progress: bool = True) -> pd.DataFrame:
    """B-F2C's, B-F3A's, B-F3B's, B-F3C's or B-F6's decided claims (``cfg`` a :class:`SamplesConfig`,
    :class:`LabelsConfig`, :class:`EpochsConfig`, :class:`WidthConfig` or :class:`SimCLRConfig`: its
    ``length_checks``),
    each retrained with :data:`bansal.LONGER` times the epochs at the stitches that decide it
    (:func:`_deciding`) and the top's self-stitches at those cuts, and re-judged on them (see
    :func:`bansal.retrain_longer`: the control is attached to the claim). Returns one row per
    check and sender."""
    return retrain_longer(cfg.length_checks(scale, table, claims), claims, device=device, store=store,
                          progress=progress)


def _one_top_checks(cfg: BottomsConfig, scale: str, table: pd.DataFrame, claims: list[dict]) -> list[dict]:
    """The checks of a page with one top (B-F2C, B-F3A, B-F3B): :func:`_deciding`'s cells, with the
    page's models and its summary to re-judge each claim."""
    top, bottoms = cfg.models(scale)
    checks = _deciding(table, claims, cfg)
    for chk in checks:
        chk.update(panel=table.receiver.iloc[0], sender_specs={n: bottoms[n] for n, _ in chk["cells"]}, receiver=top,
                   receiver_name=table.receiver.iloc[0], self_name=SELF, recipe=cfg.recipe(), table=table,
                   rejudge=_rejudge(cfg, chk["claim"]))
    return checks


def _rejudge(cfg, key: str):
    """The claim ``key`` of the page of ``cfg`` (its ``summary``) judged on another table."""
    return lambda t: next(c for c in cfg.summary(t, {})[1] if c["key"] == key)["criterion"]
# --------------------------------------------------------------------------------------------
# B-F3B: training time


@figure_config("B-F3B")
@dataclass(frozen=True)
class EpochsConfig(BottomsConfig):
    """B-F3B: snapshots of one seed-0 run; the midpoint is the top, earlier and later ones the bottoms."""

    MIN_CUTS = 3  # early, middle and late layers

    snapshots: tuple[float, ...] = param((0.25, 1.0), "the bottoms: fractions of the run (paper: epochs 40 and 160 "
                                         "of 160)")
    top_snapshot: float = param(0.5, "the top: fraction of the run (paper: epoch 80 of 160)", gt=0, le=1)

    def models(self, scale: str) -> tuple[zoo.ModelSpec, dict[str, zoo.ModelSpec]]:
        return _epochs_models(self, scale)

    def later(self) -> list[str]:
        """The snapshot from latest in the run, if later than the top's (it decides both claims)."""
        later = [f for f in self.snapshots if f > self.top_snapshot]
        return [_epochs_name(max(later))] if later else []

    def summary(self, table: pd.DataFrame, accuracy: dict) -> tuple[dict, list[dict]]:
        return epochs_summary(table, accuracy, self)

    def length_checks(self, scale: str, table: pd.DataFrame, claims: list[dict]) -> list[dict]:
        return _one_top_checks(self, scale, table, claims)


PRESETS_F3B = _presets(EpochsConfig)


def _epochs_name(f: float) -> str:
    return f"{f:g} of the run (epoch {160 * f:g} of 160 in the paper)"


def _epochs_models(cfg: EpochsConfig, scale: str) -> tuple[zoo.ModelSpec, dict[str, zoo.ModelSpec]]:
    top = cfg.variant(scale, cfg.seeds[0], stop=cfg.top_snapshot)
    return top, {_epochs_name(f): cfg.variant(scale, cfg.seeds[0], stop=f) for f in cfg.snapshots}


def epochs(cfg: EpochsConfig, scale: str, **kw) -> tuple[pd.DataFrame, dict]:
    """Snapshots of one run of the zoo's seed-0 network (its full recipe, the learning-rate
    schedule of the whole run): ``top_snapshot`` is the top, ``snapshots`` the bottoms. The run is
    trained once, storing the snapshots on the way (the full run is B-F2A's receiver)."""
    if any(not 0 < f <= 1 for f in cfg.snapshots):
        raise ValueError(f"snapshots must be fractions in (0, 1], got {cfg.snapshots}")
    top, bottoms = _epochs_models(cfg, scale)
    zoo.train_snapshots([top, *bottoms.values()], **{k: v for k, v in kw.items() if k in ("device", "store")},
                        progress=kw.get("progress", True))
    return bottoms_into_top(cfg, scale, top, bottoms,
                            receiver_name=f"top ({_epochs_name(cfg.top_snapshot)}, seed 0)", **kw)


def epochs_summary(table: pd.DataFrame, accuracy: dict, cfg: EpochsConfig) -> tuple[dict, list[dict]]:
    t = table.reset_index(drop=True)
    cuts = list(dict.fromkeys(t.cut))
    early, _, late = _thirds(cuts)
    keys = {SELF: "self", t.receiver.iloc[0]: "top",
            **{_epochs_name(f): f"at{f:g}".replace(".", "_") for f in cfg.snapshots}}
    numbers = _numbers(t, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = _control(t)
    longer = [f for f in cfg.snapshots if f > cfg.top_snapshot]
    shorter = [f for f in cfg.snapshots if f < cfg.top_snapshot]
    claims = []
    if longer:
        name = _epochs_name(max(longer))
        b = _Beyond(t, name, cuts)
        worst = _boot(t, lambda x: float(b.of(x).max()))
        gain, where = _gain_estimate(t, name)
        premise, gap = _stronger(t, name, top_name=f"the top ({cfg.top_snapshot:g} of the run)")
        numbers.update(estimate_numbers("longer_max_penalty", worst))
        numbers.update(estimate_numbers("longer_gain", gain))
        numbers.update(estimate_numbers("improves_premise_gap", gap))
        claims += [
            dict(key="compatible", text="Representations from later in training are stitching compatible "
                                        "with the top",
                 criterion=at_most(worst, 100 * CONNECTED_MAX_PENALTY,
                                   f"max penalty of the bottom at {max(longer):g} of the run"),
                 paper="compatible (Fig. 3B)", ours=f"max {worst.text(2, 'points')}", controls=[control]),
            dict(key="improves", text="Longer training improves the top when plugged in",
                 criterion=at_least(gain, IMPROVE_MIN, f"gain of the bottom at {max(longer):g} of the run at its "
                                    "best block cut ('pool' left out)"),
                 paper="later epochs improve (Fig. 3B)",
                 ours=f"gain {gain.text(2, 'points')} (at {where}); the bottom's own accuracy minus the top's "
                      f"{gap.text(2, 'points')}",
                 controls=[control, premise]),
        ]
    if shorter:
        name = _epochs_name(min(shorter))
        pen = _pen(t, name)
        be, bl = _Beyond(t, name, early), _Beyond(t, name, late)
        gap = _boot(t, lambda x: float(bl.of(x).mean() - be.of(x).mean()))
        numbers.update(shorter_early_penalty=pen[early].mean(), shorter_late_penalty=pen[late].mean(),
                       **estimate_numbers("shorter_late_minus_early", gap))
        claims.append(dict(
            key="early_first", text="Early layers converge first: the shorter run's penalty is lower early than late",
            criterion=at_least(gap, CONVERGE_MIN, f"bottom at {min(shorter):g} of the run: mean penalty at "
                               f"{', '.join(late)} minus at {', '.join(early)}"),
            paper="early layers converge faster (Fig. 3B; Raghu et al. 2017)",
            ours=f"{pen[early].mean():.2f} early, {pen[late].mean():.2f} late (difference {gap.text(2, 'points')})",
            controls=[control]))
    return numbers, _beyond(claims, ('compatible', 'improves', 'early_first'))


# --------------------------------------------------------------------------------------------
# B-F3C: width


@figure_config("B-F3C")
@dataclass(frozen=True)
class WidthConfig(BottomsConfig):
    """B-F3C: networks of several widths (seed 0) stitched into each other, every ordered pair."""

    width_factors: tuple[float, ...] = param((0.25, 1.0, 2.0), "widths relative to the base width "
                                             "(paper x0.25, x1, x2)")

    def summary(self, table: pd.DataFrame, accuracy: dict) -> tuple[dict, list[dict]]:
        return widths_summary(table, accuracy, self)

    def length_checks(self, scale: str, table: pd.DataFrame, claims: list[dict]) -> list[dict]:
        return _width_checks(table, claims, self, scale)


PRESETS_F3C = _presets(WidthConfig, smoke={"width_factors": (0.5, 1.0)})


def _width_name(f: float) -> str:
    return f"x{f:g} width"


def widths(cfg: WidthConfig, scale: str, **kw) -> tuple[pd.DataFrame, dict]:
    """Every width into every other (and itself, the control); one table with a receiver column."""
    if len(cfg.width_factors) < 2 or any(f <= 0 for f in cfg.width_factors):
        raise ValueError(f"width_factors needs at least two positive factors, got {cfg.width_factors}")
    specs = {_width_name(f): cfg.variant(scale, cfg.seeds[0], width_factor=f) for f in cfg.width_factors}
    tables, accuracy = [], {}
    for rx_name, rx in specs.items():
        others = {name: spec for name, spec in specs.items() if name != rx_name}
        t, acc = bottoms_into_top(cfg, scale, rx, others, receiver_name=rx_name, **kw)
        tables.append(t)
        accuracy.update({k: v for k, v in acc.items() if k != SELF})
    return pd.concat(tables, ignore_index=True), accuracy


def _width_checks(table: pd.DataFrame, claims: list[dict], cfg: WidthConfig, scale: str) -> list[dict]:
    """B-F3C's decided claims, each decided by one cell: the gain of the wider bottom into the
    thinnest top ("wider_improves") or of the thinnest bottom into the widest top
    ("not_vice_versa") at its best block cut, measured beyond that top's self-stitch there."""
    names = [_width_name(f) for f in sorted(cfg.width_factors)]
    thin, wide = names[0], names[-1]
    specs = {_width_name(f): cfg.variant(scale, cfg.seeds[0], width_factor=f) for f in cfg.width_factors}
    pairs = {"wider_improves": (wide, thin), "not_vice_versa": (thin, wide)}
    checks = []
    for c in claims:
        if c["key"] not in pairs or not decided(c):
            continue
        sender, top = pairs[c["key"]]
        _, where = _gain_estimate(table, sender, top)
        checks.append(dict(claim=c["key"], sender=sender, cells=[(sender, [where])], panel=f"top {top}",
                           sender_specs={sender: specs[sender]}, receiver=specs[top], receiver_name=top,
                           self_name=SELF, recipe=cfg.recipe(), table=table,
                           bound=IMPROVE_MIN if c["key"] == "not_vice_versa" else -IMPROVE_MIN,
                           rejudge=_rejudge(cfg, c["key"])))
    return checks


def widths_summary(table: pd.DataFrame, accuracy: dict, cfg: WidthConfig) -> tuple[dict, list[dict]]:
    t = table.reset_index(drop=True)
    names = [_width_name(f) for f in sorted(cfg.width_factors)]
    keys = {SELF: "self", **{n: n.split()[0].replace(".", "_") for n in names}}
    numbers = _numbers(t, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = _control(t)
    thin, wide = names[0], names[-1]
    down = _pen(t, thin, wide)  # thinnest bottom into the widest top
    gain_up, where_up = _gain_estimate(t, wide, thin)  # wider bottom into the thinnest top
    gain_down, _ = _gain_estimate(t, thin, wide)
    premise, gap = _stronger(t, wide, receiver=thin, top_name=f"the {thin} network")
    cka = t[(t.sender == thin) & (t.receiver == wide)].set_index("cut").cka
    numbers.update(thin_into_wide_max_penalty=down.max(), cka_thin_wide_min=cka.min(), cka_thin_wide_max=cka.max(),
                   **estimate_numbers("wide_into_thin_gain", gain_up),
                   **estimate_numbers("thin_into_wide_gain", gain_down),
                   **estimate_numbers("wider_premise_gap", gap))
    claims = [
        dict(key="wider_improves", text="A wider bottom stitched into a thinner top improves its performance",
             criterion=at_least(gain_up, IMPROVE_MIN, f"gain of the {wide} bottom into the {thin} top at its best "
                                "block cut ('pool' left out)"),
             paper="wider into thinner improves (Fig. 3C)",
             ours=f"gain {gain_up.text(2, 'points')} (at {where_up}); the {wide} network's own accuracy minus the "
                  f"{thin} network's {gap.text(2, 'points')}",
             controls=[control, premise]),
        dict(key="not_vice_versa", text="... but not vice versa: a thinner bottom does not improve a wider top",
             criterion=at_most(gain_down, IMPROVE_MIN, f"gain of the {thin} bottom into the {wide} top at its best "
                               "block cut (below the 'improves' bound)"),
             paper="not vice versa (Fig. 3C)", ours=f"best gain {gain_down.text(2, 'points')}, worst penalty "
             f"{down.max():.2f}", controls=[control]),
    ]
    return numbers, _beyond(claims, ('wider_improves', 'not_vice_versa'))


# --------------------------------------------------------------------------------------------
# B-F7: CKA for "more is better" (the models of B-F2C, B-F3B and B-F3C; no stitching)


@figure_config("B-F7")
@dataclass(frozen=True)
class MoreCKAConfig:
    """B-F7: per-layer linear CKA between the weaker and stronger networks of B-F2C/F3B/F3C."""

    width: int | None = param(None, "base width k of the ResNet-18 (paper 64); None: the zoo's width at this scale",
                              ge=1)
    model_epochs: float | None = param(None, "passes over the training set per model; None: the zoo's recipe", ge=0)
    final_bn: bool = param(True, "BN-ReLU before pooling (standard pre-activation net; absent in the authors' code)")
    samples_pair: tuple[int, ...] = param((5_000, 25_000), "training images of the two networks compared "
                                          "(paper 5k vs 25k; seed 1, as B-F2C's bottoms)")
    width_pair: tuple[float, ...] = param((0.25, 2.0), "widths compared (paper x0.25 vs x2; seed 0, as B-F3C)")
    length_pair: tuple[float, ...] = param((0.5, 1.0), "snapshots compared, as fractions of one run (paper "
                                           "epoch 80 vs 160; seed 0, as B-F3B)")
    cka_images: int = param(2000, "test images for the per-layer CKA", ge=10, le=10_000)

    def variant(self, scale: str, seed: int, **changes) -> zoo.ModelSpec:
        return zoo.bansal_resnet18(scale, seed, width=self.width, epochs=self.model_epochs, final_bn=self.final_bn,
                                   **changes)

    def pairs(self, scale: str) -> dict[str, tuple[zoo.ModelSpec, zoo.ModelSpec]]:
        for name, pair in (("samples_pair", self.samples_pair), ("width_pair", self.width_pair),
                           ("length_pair", self.length_pair)):
            if len(pair) != 2:
                raise ValueError(f"{name} must name two values, got {pair}")
        (n1, n2), (w1, w2), (l1, l2) = self.samples_pair, self.width_pair, self.length_pair
        return {f"{_k(n1)} vs {_k(n2)} samples": (self.variant(scale, 1, train_size=n1),
                                                  self.variant(scale, 1, train_size=n2)),
                f"x{w1:g} vs x{w2:g} width": (self.variant(scale, 0, width_factor=w1),
                                              self.variant(scale, 0, width_factor=w2)),
                f"epoch {160 * l1:g} vs {160 * l2:g} of 160": (self.variant(scale, 0, stop=l1),
                                                              self.variant(scale, 0, stop=l2))}


PRESETS_F7 = {"smoke": MoreCKAConfig(samples_pair=(512, 2048), width_pair=(0.5, 1.0), cka_images=500),
              "demo": MoreCKAConfig(), "paper": MoreCKAConfig()}

CKA_SAMPLES_NEAR_ZERO = 0.2  # "CKA can go as low as 0" for 5k vs 25k samples
CKA_WIDTH_RANGE = (0.7, 0.9)  # "CKA between x0.25 and x2 is in the range 0.7-0.9"
CKA_SIMILAR_MIN = 0.5  # "CKA finds the representations similar" (epochs); B-F5's bound for high CKA


def more_cka(cfg: MoreCKAConfig, scale: str, *, device=None, store=None, progress: bool = True) -> pd.DataFrame:
    """Linear CKA per cut (every cut) for each pair of :meth:`MoreCKAConfig.pairs`; columns
    pair, cut, cka, and cka_reps / cka_n (its bootstrap replicates over the CKA images, the same
    resamples for every pair and cut)."""
    rows = []
    for name, (a, b) in cfg.pairs(scale).items():
        model = zoo.build(a, num_classes=10, in_channels=3)
        for cut, reps in cka_per_cut(a, b, list(model.cuts), cfg.cka_images, device=device, store=store,
                                     progress=progress, replicates=True).items():
            rows.append({"pair": name, "cut": cut, "cka": float(reps[0]), "cka_reps": reps,
                         "cka_n": cfg.cka_images})
    return pd.DataFrame(rows)


def more_cka_summary(table: pd.DataFrame, cfg: MoreCKAConfig) -> tuple[dict, list[dict]]:
    """B-F7's claims, each on the minimum CKA over the cuts bootstrapped as a minimum (over the
    CKA images)."""
    t = table.reset_index(drop=True)
    by = {name: g.set_index("cut").cka for name, g in t.groupby("pair", sort=False)}
    samples_, width_, length_ = list(by)
    n = int(t.cka_n.iloc[0]) if "cka_n" in t else cfg.cka_images
    mins = {name: cka_estimate(cka_reps_of(t, np.flatnonzero((t.pair == name).to_numpy())).min(axis=1), n)
            for name in by}
    numbers = {"cka_images_used": n}
    for key, name in (("samples", samples_), ("width", width_), ("length", length_)):
        numbers.update({f"{key}_cka_min": by[name].min(), f"{key}_cka_max": by[name].max(),
                        f"{key}_cka_mean": by[name].mean(), f"{key}_cka_min_low": mins[name].low,
                        f"{key}_cka_min_high": mins[name].high})
        numbers.update({f"{key}_cka_{cut}": v for cut, v in by[name].items()})
    lo, hi = CKA_WIDTH_RANGE
    w = by[width_]
    claims = [
        dict(key="samples_far", text=f"CKA between networks trained on different numbers of samples ({samples_}) "
                                     "can be close to 0",
             criterion=at_most(mins[samples_], CKA_SAMPLES_NEAR_ZERO, "min CKA over the cuts", unit=""),
             paper="can go as low as 0 (App. B.2, Table 1)",
             ours=f"min {mins[samples_].text(3)} (at {by[samples_].idxmin()}), mean {by[samples_].mean():.3f}"),
        dict(key="width_range", text=f"CKA between the {width_} networks is in the range 0.7-0.9 at its lowest",
             criterion=within(mins[width_], (lo + hi) / 2, (hi - lo) / 2, "min CKA over the cuts", unit=""),
             paper="0.7-0.9; as low as 0.7 for early layers (Sec. 6, App. B.2)",
             ours=f"min {mins[width_].text(3)} (at {w.idxmin()}), max {w.max():.3f}"),
        dict(key="length_similar", text=f"CKA finds the {length_} networks similar",
             criterion=at_least(mins[length_], CKA_SIMILAR_MIN, "min CKA over the cuts", unit=""),
             paper="CKA finds the representations similar (App. B.2)",
             ours=f"min {mins[length_].text(3)} (at {by[length_].idxmin()}), mean {by[length_].mean():.3f}"),
    ]
    return numbers, claims


# --------------------------------------------------------------------------------------------
# B-F6: SimCLR vs end-to-end (supervised), both directions, with CKA


@figure_config("B-F6")
@dataclass(frozen=True)
class SimCLRConfig(BottomsConfig):
    """B-F6: a SimCLR-trained ResNet-18 (linear probe on top) and supervised ones, stitched both ways."""

    simclr_epochs: float | None = param(None, "SimCLR pre-training epochs; None: the zoo's recipe at this scale",
                                        gt=0)

    def models(self, scale: str) -> tuple[zoo.ModelSpec, zoo.ModelSpec]:
        """The supervised top (seed 0) and the SimCLR network (seed 1)."""
        return self.variant(scale, self.seeds[0]), zoo.bansal_simclr(scale, self.seeds[1], width=self.width,
                                                                      epochs=self.simclr_epochs, final_bn=self.final_bn)

    def summary(self, table: pd.DataFrame, accuracy: dict) -> tuple[dict, list[dict]]:
        return simclr_summary(table, accuracy, self)

    def length_checks(self, scale: str, table: pd.DataFrame, claims: list[dict]) -> list[dict]:
        return _simclr_checks(self, scale, table, claims)


PRESETS_F6 = _presets(SimCLRConfig)
E2E_TOP, SIMCLR = "supervised top (seed 0)", "SimCLR (seed 1, linear probe)"
E2E_SEED = "supervised (seed 1)"
CKA_MARGIN = 0.05  # "further apart by CKA": the mean CKA differs by at least this
PROBE_MAX_GAP = 10.0  # points: the SimCLR network counts as "well-performing" within this of the supervised one


def simclr_length_table(spot: dict) -> pd.DataFrame:
    """The GPU diagnosis of the SimCLR control (``benchmarks/spot_simclr.py``): the linear probe
    after each SimCLR length at the demo's width, and its gap to the supervised network."""
    sup = 100 * spot["supervised"]["accuracy"]
    rows = []
    for r in spot["simclr"]:
        probe = 100 * r["probe_accuracy"]
        gap = probe - sup
        rows.append({"SimCLR epochs": f"{r['epochs']:g}", "width": r["width"], "linear probe (%)": round(probe, 2),
                     "supervised (%)": round(sup, 2), "gap (points)": round(gap, 2),
                     "control": "passes" if gap >= -PROBE_MAX_GAP else "fails", "GPU seconds": round(r["seconds"])})
    return pd.DataFrame(rows)


def simclr_vs_e2e(cfg: SimCLRConfig, scale: str, **kw) -> tuple[pd.DataFrame, dict]:
    """The SimCLR network and a second supervised seed stitched into the supervised top, and the
    supervised network stitched into the SimCLR network (each top also into itself); the CKA
    with its bootstrap replicates (the CKA claim is judged on them)."""
    e2e, ssl = cfg.models(scale)
    kw = {"cka_replicates": True, **kw}
    into_e2e, acc = bottoms_into_top(cfg, scale, e2e, {SIMCLR: ssl, E2E_SEED: cfg.variant(scale, cfg.seeds[1])},
                                     receiver_name=E2E_TOP, **kw)
    into_ssl, _ = bottoms_into_top(cfg, scale, ssl, {E2E_BOTTOM: e2e}, receiver_name="SimCLR top "
                                   "(seed 1, linear probe)", **kw)
    return pd.concat([into_e2e, into_ssl], ignore_index=True), acc  # each network once: top, SimCLR, seed 1


E2E_BOTTOM = "supervised (seed 0)"


def _simclr_checks(cfg: SimCLRConfig, scale: str, table: pd.DataFrame, claims: list[dict]) -> list[dict]:
    """B-F6's "connected" (the largest penalty over both directions, beyond each top's
    self-stitch), when decided: the cells past the bound in either direction (SimCLR into the
    supervised top, the supervised network into the SimCLR top), or the one closest to it, each
    retrained with its top's self-stitch there, both directions swapped in together."""
    claim = next((c for c in claims if c["key"] == "connected"), None)
    if claim is None or not decided(claim):
        return []
    t = table.reset_index(drop=True)
    receivers = list(dict.fromkeys(t.receiver))
    e2e, ssl = cfg.models(scale)
    dirs = [(SIMCLR, receivers[0], e2e, ssl), (E2E_BOTTOM, receivers[1], ssl, e2e)]
    bound = 100 * CONNECTED_MAX_PENALTY
    pens = {(s, r): _pen(t, s, r) for s, r, _, _ in dirs}
    past = {k: [str(c) for c in p.index[p > bound]] for k, p in pens.items()}
    if not any(past.values()):  # none past the bound: the one cell closest to it decides
        k = max(pens, key=lambda k: pens[k].max())
        past = {k: [str(pens[k].idxmax())]}
    parts = [dict(receiver=rx_spec, receiver_name=rx, cells=[(s, past[(s, rx)])], sender_specs={s: s_spec},
                  panel=f"into {rx}") for s, rx, rx_spec, s_spec in dirs if past.get((s, rx))]
    return [dict(claim="connected", parts=parts, recipe=cfg.recipe(), table=t, bound=bound, self_name=SELF,
                 rejudge=_rejudge(cfg, "connected"))]


def simclr_summary(table: pd.DataFrame, accuracy: dict, cfg: SimCLRConfig) -> tuple[dict, list[dict]]:
    t = table.reset_index(drop=True)
    receivers = list(dict.fromkeys(t.receiver))
    keys = {SELF: "self", SIMCLR: "simclr", E2E_SEED: "seed1", "supervised (seed 0)": "e2e",
            receivers[0]: "e2e_top", receivers[1]: "simclr_top"}
    numbers = _numbers(t, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = _control(t)
    ssl_acc = 100 * accuracy.get(SIMCLR, float("nan"))  # (a re-judged table comes without accuracies)
    probe_gap = _accuracy_gap(t, SIMCLR, receiver=receivers[0])  # SimCLR's own accuracy minus the top's
    good = controls.premise(probe_gap, -PROBE_MAX_GAP, f"the SimCLR network's linear probe is within "
                            f"{PROBE_MAX_GAP:g} points of the supervised network (the paper compares networks of "
                            "similar accuracy)", what="linear-probe accuracy minus the supervised network's, same "
                            "images")
    cuts = list(dict.fromkeys(t.cut))
    up = _pen(t, SIMCLR, receivers[0])
    down = _pen(t, "supervised (seed 0)", receivers[1])
    seed = _pen(t, E2E_SEED, receivers[0])
    b_up, b_down = _Beyond(t, SIMCLR, cuts, receivers[0]), _Beyond(t, "supervised (seed 0)", cuts, receivers[1])
    worst = _boot(t, lambda x: float(max(b_up.of(x).max(), b_down.of(x).max())))
    cka_ssl = t[(t.sender == SIMCLR)].cka
    cka_seed = t[(t.sender == E2E_SEED)].cka
    n_cka = int(t.cka_n.iloc[0])
    diff_reps = (cka_reps_of(t, positions(t, E2E_SEED, cuts, receivers[0])).mean(axis=1)
                 - cka_reps_of(t, positions(t, SIMCLR, cuts, receivers[0])).mean(axis=1))
    cka_diff = cka_estimate(diff_reps, n_cka)
    numbers.update(simclr_into_e2e_max=up.max(), e2e_into_simclr_max=down.max(), seed_into_e2e_max=seed.max(),
                   both_ways_max=worst.value, cka_min=cka_ssl.min(), cka_max=cka_ssl.max(), cka_mean=cka_ssl.mean(),
                   seed_cka_mean=cka_seed.mean(), probe_accuracy=ssl_acc, **estimate_numbers("max_penalty", worst),
                   **estimate_numbers("cka_difference", cka_diff), **estimate_numbers("probe_gap", probe_gap))
    claims = [
        dict(key="connected", text="SimCLR and supervised networks are stitching connected in both directions",
             criterion=at_most(worst, 100 * CONNECTED_MAX_PENALTY, "max penalty over the cuts of both directions"),
             paper="connected both ways, penalty like a different seed's (App. B.2.2, Fig. 6b)",
             ours=f"max {worst.text(2, 'points')}: SimCLR into supervised max {up.max():.2f}, supervised into "
                  f"SimCLR max {down.max():.2f} points (another supervised seed: max {seed.max():.2f})",
             controls=[control, good]),
        dict(key="cka_differs", text="CKA finds SimCLR and supervised representations further apart than two "
                                     "supervised seeds",
             criterion=at_least(cka_diff, CKA_MARGIN, "mean CKA with the supervised top over the cuts: another "
                                "supervised seed minus SimCLR", unit="", digits=3),
             paper="CKA 0.35-0.9; differs more than two initialisations (Table 1, Fig. 6a)",
             ours=f"SimCLR {cka_ssl.min():.2f}-{cka_ssl.max():.2f} (mean {cka_ssl.mean():.3f}); another seed mean "
                  f"{cka_seed.mean():.3f}; difference {cka_diff.text(3)}", controls=[good]),
    ]
    return numbers, _beyond(claims, ('connected',))
