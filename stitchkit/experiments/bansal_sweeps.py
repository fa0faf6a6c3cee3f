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
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from .. import similarity, zoo
from ..datasets import DataSpec, test_split
from ..grid import Net, stitch_grid
from ..results import Control, at_least, at_most, within
from ..scales import figure_config, param
from .bansal import (CONNECTED_MAX_PENALTY, CONTROL_FLOOR, PRESETS, ConnectivityConfig, _beyond_self,
                     retrain_longer)

SELF = "receiver into itself (control)"
BEYOND = " (penalties beyond the top stitched into itself at the same cut)"
IMPROVE_MIN = 1.0  # points: a stronger bottom "improves" the top when it gains at least this
SIMILAR_MAX = 2.0  # points: bottoms "perform similarly" at a cut when |penalty| is at most this
DEGRADE_MIN = 2.0  # points: a weaker bottom "degrades" when its mid-layer penalty exceeds a stronger one's by this
CONVERGE_MIN = 1.0  # points: "early layers converge first": late minus early penalty of the short run


@dataclass(frozen=True)
class BottomsConfig(ConnectivityConfig):
    """B-F2A's models and stitch recipe, a subset of cuts, and CKA images."""

    cuts: tuple[str, ...] | None = param(None, "cuts to stitch at (e.g. ['stem', 'block3']); None: every cut")
    cka_images: int = param(2000, "test images for the per-layer CKA between bottom and top", ge=10, le=10_000)


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
                progress: bool = True) -> dict[str, float]:
    """Linear CKA (Gram form, float64) between models ``a`` and ``b`` at each cut, on the first
    ``n_images`` of a stratified CIFAR-10 test subset."""
    images = test_split(DataSpec("cifar10"), n_images, seed=0).images
    ga, gb = (_grams(s, cuts, images, device, store, progress) for s in (a, b))
    return {cut: similarity.cka_from_grams(ga[cut], gb[cut]) for cut in cuts}


def bottoms_into_top(cfg: BottomsConfig, scale: str, receiver: zoo.ModelSpec, senders: dict[str, zoo.ModelSpec], *,
                     receiver_name: str = "top", device=None, store=None, progress: bool = True,
                     client=None) -> tuple[pd.DataFrame, dict[str, float]]:
    """Stitch every sender (and the receiver itself, the control) into ``receiver`` at
    ``cfg.cuts`` (each sender cut into the same receiver cut). Returns the grid's table with
    ``cut``, ``receiver`` and ``cka`` (linear CKA between sender and receiver at that cut)
    columns, and every model's test accuracy on its own task by name."""
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
    table = stitch_grid(nets, [rx], [(c, c) for c in cuts], cfg.recipe(), DataSpec("cifar10"), device=device,
                        store=store, progress=progress, client=client)
    table = table.rename(columns={"cut_i": "cut"}).drop(columns=["cut_j"])
    images = test_split(DataSpec("cifar10"), cfg.cka_images, seed=0).images
    top = _grams(receiver, cuts, images, device, store, progress)
    cka = {SELF: {cut: 1.0 for cut in cuts}}
    for name, spec in senders.items():
        g = _grams(spec, cuts, images, device, store, progress)
        cka[name] = {cut: similarity.cka_from_grams(g[cut], top[cut]) for cut in cuts}
    table["cka"] = [cka[row.sender][row.cut] for row in table.itertuples()]
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


def _thirds(cuts: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Early, middle and late cuts (the first and last third; the middle the rest)."""
    if len(cuts) < 3:
        raise ValueError(f"early, middle and late layers need at least 3 cuts, got {cuts}")
    k = len(cuts) // 3
    return cuts[:k], cuts[k:len(cuts) - k], cuts[len(cuts) - k:]


def _beyond(claims: list[dict], keys: tuple[str, ...]) -> list[dict]:
    """Say in each criterion of ``keys`` that its penalties are measured beyond the self-stitch."""
    from ..results import Criterion

    for c in claims:
        if c["key"] in keys:
            c["criterion"] = Criterion(c["criterion"].text + BEYOND, c["criterion"].holds)
    return claims


def _gain(pen: pd.Series) -> tuple[float, str]:
    """The largest gain (minus the penalty, points) over the map cuts and where: at ``pool`` the
    stitch and the top's classifier form a linear probe of the bottom, which any stronger
    network wins, so "plugging in" is judged at the blocks."""
    maps = pen.drop("pool", errors="ignore")
    return float(-maps.min()), str(maps.idxmin())


def _control(table: pd.DataFrame) -> tuple[Control, float]:
    self_max = float(100 * table[table.sender == SELF].penalty.max())
    return Control.of("receiver stitched into itself at every cut (an exact stitch exists)",
                      at_most(self_max, 100 * CONTROL_FLOOR, "max self-stitch penalty"),
                      f"max {self_max:.2f} points"), self_max


def _stronger(accuracy: dict[str, float], bottom: str, top: str) -> Control:
    """The premise of a "more is better" claim: the bottom with more (samples, training, width)
    is itself the more accurate network. Where it is not, its stitch cannot show that "more" made
    a better representation, and the claim is inconclusive at this scale."""
    b, t = 100 * accuracy[bottom], 100 * accuracy[top]
    return Control.of(f"the {bottom} bottom is more accurate than the top on its own (the premise)",
                      at_least(b - t, 0.0, "bottom's test accuracy minus the top's"), f"{b:.2f}% vs {t:.2f}%")


def _numbers(table: pd.DataFrame, accuracy: dict[str, float], keys: dict[str, str],
             cfg: BottomsConfig) -> dict[str, float]:
    """Per-sender, per-cut penalty and CKA and every model's accuracy, under short keys."""
    out = {f"accuracy_{keys[name]}": 100 * acc for name, acc in accuracy.items() if name in keys}
    out["cka_images_used"] = cfg.cka_images
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

    top_samples: int = param(10_000, "training images of the top (paper 10k)", ge=1, le=50_000)
    bottom_samples: tuple[int, ...] = param((5_000, 25_000, 50_000), "training images of each bottom (paper "
                                            "5k, 10k, 25k; the top into itself stands for 10k; 50k added)")


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
    cuts = list(dict.fromkeys(table.cut))
    early, mid, _ = _thirds(cuts)
    names = {n: f"{_k(n)} samples" for n in cfg.bottom_samples}
    keys = {SELF: "self", **{v: f"n{_k(n)}" for n, v in names.items()}, table.receiver.iloc[0]: "top"}
    numbers = _numbers(table, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = _control(table)
    more = _more_samples(cfg)
    fewest, most = min(cfg.bottom_samples), max(cfg.bottom_samples)
    claims = []
    if more:
        worst = max(_pen(table, names[n]).max() for n in more)
        best_n = min(more)  # the paper's 25k: the smallest bottom with more samples than the top
        gain, where = _gain(_pen(table, names[best_n]))
        numbers.update(more_max_penalty=worst, improvement=gain)
        claims += [
            dict(key="compatible", text="Bottoms trained on more samples are stitching compatible with the top",
                 criterion=at_most(worst, 100 * CONNECTED_MAX_PENALTY, "max penalty over cuts of the bottoms "
                                   f"with more samples than the top ({', '.join(names[n] for n in more)})"),
                 paper="all stitching compatible (Fig. 2C)", ours=f"max {worst:.2f} points", controls=[control]),
            dict(key="improves", text=f"A bottom trained on more samples ({names[best_n]}) improves on the "
                                      f"{_k(cfg.top_samples)}-sample top",
                 criterion=at_least(gain, IMPROVE_MIN, "gain over the top at the best block cut (minus the "
                                    "penalty; 'pool' left out)"),
                 paper="negative penalty: the 25k bottom improves on the 10k top (Fig. 2C)",
                 ours=f"gain {gain:.2f} points (at {where})",
                 controls=[control, _stronger(accuracy, names[best_n], table.receiver.iloc[0])]),
        ]
    early_max = max(_pen(table, name)[early].abs().max() for name in names.values())
    degrade = _pen(table, names[fewest])[mid].mean() - _pen(table, names[most])[mid].mean()
    numbers.update(early_max_abs_penalty=early_max, mid_degradation=degrade)
    claims += [
        dict(key="early_similar", text="Stitched at the first layers, all bottoms perform like the top",
             criterion=at_most(early_max, SIMILAR_MAX, f"max |penalty| over every bottom at {', '.join(early)}"),
             paper="similar performance at the first few layers (Sec. 6)", ours=f"max |penalty| {early_max:.2f} points",
             controls=[control]),
        dict(key="mid_degrades", text="In the middle layers, the penalty grows as the bottom's samples shrink",
             criterion=at_least(degrade, DEGRADE_MIN, f"mean penalty at {', '.join(mid)}: {names[fewest]} minus "
                                f"{names[most]}"),
             paper="performance degrades rapidly with fewer samples in the mid layers (Sec. 6)",
             ours=f"{degrade:.2f} points", controls=[control]),
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

    variants: tuple[str, ...] = param(tuple(LABEL_VARIANTS), "label distributions of the bottoms: "
                                      + ", ".join(LABEL_VARIANTS))


PRESETS_F3A = _presets(LabelsConfig, smoke={"variants": ("objects vs animals", "100% random labels")})


def labels(cfg: LabelsConfig, scale: str, **kw) -> tuple[pd.DataFrame, dict]:
    """The normal top (seed 0), a normal bottom (seed 1, the reference) and one bottom per label
    distribution (seed 1)."""
    unknown = [v for v in cfg.variants if v not in LABEL_VARIANTS]
    if unknown:
        raise ValueError(f"unknown label variant(s) {unknown}; valid: {', '.join(LABEL_VARIANTS)}")
    top, bottoms = _labels_models(cfg, scale)
    return bottoms_into_top(cfg, scale, top, bottoms, receiver_name="top (normal labels, seed 0)", **kw)


def _labels_models(cfg: LabelsConfig, scale: str) -> tuple[zoo.ModelSpec, dict[str, zoo.ModelSpec]]:
    bottoms = {NORMAL: cfg.variant(scale, cfg.seeds[1])}
    bottoms.update({v: cfg.variant(scale, cfg.seeds[1], **LABEL_VARIANTS[v]) for v in cfg.variants})
    return cfg.variant(scale, cfg.seeds[0]), bottoms


def labels_summary(table: pd.DataFrame, accuracy: dict, cfg: LabelsConfig) -> tuple[dict, list[dict]]:
    cuts = list(dict.fromkeys(table.cut))
    half = cuts[:(len(cuts) + 1) // 2]
    keys = {SELF: "self", NORMAL: "normal", table.receiver.iloc[0]: "top",
            **{v: VARIANT_KEYS[v] for v in cfg.variants}}
    numbers = _numbers(table, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = _control(table)
    weak = [v for v in cfg.variants if v != "100% random labels"]
    claims = []
    if weak:
        worst = {v: _pen(table, v)[half].max() for v in weak}
        w = max(worst, key=worst.get)
        numbers["weak_first_half_max_penalty"] = worst[w]
        claims.append(dict(
            key="first_half", text="The first half of the layers of networks trained with less informative labels "
                                   "are as good as a normal network's",
            criterion=at_most(worst[w], 100 * CONNECTED_MAX_PENALTY,
                              f"max penalty at {', '.join(half)} over {', '.join(weak)}"),
            paper="first half of layers 'as good as' normal (Fig. 3A)",
            ours=f"max {worst[w]:.2f} points ({w}); the normal bottom's max there "
                 f"{_pen(table, NORMAL)[half].max():.2f}", controls=[control]))
    if "100% random labels" in cfg.variants:
        noise = _pen(table, "100% random labels")[half].max()
        numbers["noise100_first_half_max_penalty"] = noise
        claims.append(dict(
            key="except_noise", text="... except the network trained on 100% random labels",
            criterion=at_least(noise, 100 * CONNECTED_MAX_PENALTY, f"max penalty at {', '.join(half)} of the "
                               "100%-random-label bottom (above the 'as good as' bound)"),
            paper="the exception: 100% label noise (Fig. 3A)", ours=f"max {noise:.2f} points", controls=[control]))
    return numbers, _beyond(claims, ('first_half', 'except_noise'))


# --------------------------------------------------------------------------------------------
# B-F2C and B-F3A's training-length control (B-F2A's, :func:`bansal.retrain_longer`): a stitch
# that stopped short costs more than a trained one, so each verdict that more training could turn
# is checked at the stitch that decides it. More training lowers penalties, so a claim that a
# penalty is low (at most a bound) can be turned when it fails, and a claim that it is high (at
# least a bound) when it holds. "mid_degrades" compares two bottoms' penalties, which more
# training moves both ways, and gets no such control.


def _deciding(table: pd.DataFrame, claims: list[dict], cfg: BottomsConfig) -> list[dict]:
    """Per claim of B-F2C or B-F3A: the sender and cut that decide it, the bound on the penalty
    beyond the self-stitch there (points), and whether the claim is "penalty high"."""
    cuts = list(dict.fromkeys(table.cut))
    out = []

    def worst(names, among):
        pens = {n: _pen(table, n)[among] for n in names}
        n = max(pens, key=lambda k: pens[k].max())
        return n, str(pens[n].idxmax())

    for c in claims:
        key = c["key"]
        if key == "compatible":
            sender, cut = worst([f"{_k(n)} samples" for n in _more_samples(cfg)], cuts)
            out.append((c, sender, cut, 100 * CONNECTED_MAX_PENALTY, False))
        elif key == "improves":  # the gain (minus the penalty) at the best block cut is at least IMPROVE_MIN
            sender = f"{_k(_more_samples(cfg)[0])} samples"
            out.append((c, sender, _gain(_pen(table, sender))[1], -IMPROVE_MIN, False))
        elif key == "early_similar":  # only a positive worst |penalty| can fall below the bound
            early = _thirds(cuts)[0]
            pens = {n: _pen(table, n)[early] for n in (f"{_k(k)} samples" for k in cfg.bottom_samples)}
            sender = max(pens, key=lambda k: pens[k].abs().max())
            cut = str(pens[sender].abs().idxmax())
            if pens[sender][cut] > 0:
                out.append((c, sender, cut, SIMILAR_MAX, False))
        elif key in ("first_half", "except_noise"):
            half = cuts[:(len(cuts) + 1) // 2]
            names = (["100% random labels"] if key == "except_noise"
                     else [v for v in cfg.variants if v != "100% random labels"])
            sender, cut = worst(names, half)
            out.append((c, sender, cut, 100 * CONNECTED_MAX_PENALTY, key == "except_noise"))
    return [dict(claim=c["key"], sender=sender, cuts=[cut], bound=bound, high=high,
                 grid=float(_pen(table, sender)[cut]),
                 self_penalty={cut: float(table[(table.sender == SELF) & (table.cut == cut)].penalty.iloc[0])})
            for c, sender, cut, bound, high in out if c["criterion"].holds == high]


def training_length_control(cfg: BottomsConfig, scale: str, table: pd.DataFrame, claims: list[dict], *,
                            device=None, store=None, progress: bool = True) -> pd.DataFrame:
    """B-F2C's or B-F3A's claims (``cfg`` a :class:`SamplesConfig` or :class:`LabelsConfig`)
    that more training could turn, each retrained with :data:`bansal.LONGER` times the epochs at
    the stitch that decides it (see :func:`bansal.retrain_longer`: the control is attached to
    the claim). Returns one row per check."""
    top, bottoms = (_samples_models if isinstance(cfg, SamplesConfig) else _labels_models)(cfg, scale)
    checks = _deciding(table, claims, cfg)
    for chk in checks:
        chk.update(panel=table.receiver.iloc[0], sender_spec=bottoms[chk["sender"]], receiver=top,
                   recipe=cfg.recipe())
    return retrain_longer(checks, claims, device=device, store=store, progress=progress)


# --------------------------------------------------------------------------------------------
# B-F3B: training time


@figure_config("B-F3B")
@dataclass(frozen=True)
class EpochsConfig(BottomsConfig):
    """B-F3B: snapshots of one seed-0 run; the midpoint is the top, earlier and later ones the bottoms."""

    snapshots: tuple[float, ...] = param((0.25, 1.0), "the bottoms: fractions of the run (paper: epochs 40 and 160 "
                                         "of 160)")
    top_snapshot: float = param(0.5, "the top: fraction of the run (paper: epoch 80 of 160)", gt=0, le=1)


PRESETS_F3B = _presets(EpochsConfig)


def _epochs_name(f: float) -> str:
    return f"{f:g} of the run (epoch {160 * f:g} of 160 in the paper)"


def epochs(cfg: EpochsConfig, scale: str, **kw) -> tuple[pd.DataFrame, dict]:
    """Snapshots of one run of the zoo's seed-0 network (its full recipe, the learning-rate
    schedule of the whole run): ``top_snapshot`` is the top, ``snapshots`` the bottoms. The run is
    trained once, storing the snapshots on the way (the full run is B-F2A's receiver)."""
    if any(not 0 < f <= 1 for f in cfg.snapshots):
        raise ValueError(f"snapshots must be fractions in (0, 1], got {cfg.snapshots}")
    top = cfg.variant(scale, cfg.seeds[0], stop=cfg.top_snapshot)
    bottoms = {_epochs_name(f): cfg.variant(scale, cfg.seeds[0], stop=f) for f in cfg.snapshots}
    zoo.train_snapshots([top, *bottoms.values()], **{k: v for k, v in kw.items() if k in ("device", "store")},
                        progress=kw.get("progress", True))
    return bottoms_into_top(cfg, scale, top, bottoms,
                            receiver_name=f"top ({_epochs_name(cfg.top_snapshot)}, seed 0)", **kw)


def epochs_summary(table: pd.DataFrame, accuracy: dict, cfg: EpochsConfig) -> tuple[dict, list[dict]]:
    cuts = list(dict.fromkeys(table.cut))
    early, _, late = _thirds(cuts)
    keys = {SELF: "self", table.receiver.iloc[0]: "top",
            **{_epochs_name(f): f"at{f:g}".replace(".", "_") for f in cfg.snapshots}}
    numbers = _numbers(table, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = _control(table)
    longer = [f for f in cfg.snapshots if f > cfg.top_snapshot]
    shorter = [f for f in cfg.snapshots if f < cfg.top_snapshot]
    claims = []
    if longer:
        name = _epochs_name(max(longer))
        worst = _pen(table, name).max()
        gain, where = _gain(_pen(table, name))
        numbers.update(longer_max_penalty=worst, longer_gain=gain)
        claims += [
            dict(key="compatible", text="Representations from later in training are stitching compatible "
                                        "with the top", criterion=at_most(worst, 100 * CONNECTED_MAX_PENALTY,
                                                                          f"max penalty of the bottom at {max(longer):g} of the run"),
                 paper="compatible (Fig. 3B)", ours=f"max {worst:.2f} points", controls=[control]),
            dict(key="improves", text="Longer training improves the top when plugged in",
                 criterion=at_least(gain, IMPROVE_MIN, f"gain of the bottom at {max(longer):g} of the run at its best block cut "
                                    "('pool' left out)"),
                 paper="later epochs improve (Fig. 3B)", ours=f"gain {gain:.2f} points (at {where})",
                 controls=[control, _stronger(accuracy, name, table.receiver.iloc[0])]),
        ]
    if shorter:
        pen = _pen(table, _epochs_name(min(shorter)))
        gap = pen[late].mean() - pen[early].mean()
        numbers.update(shorter_early_penalty=pen[early].mean(), shorter_late_penalty=pen[late].mean(),
                       shorter_late_minus_early=gap)
        claims.append(dict(
            key="early_first", text="Early layers converge first: the shorter run's penalty is lower early than late",
            criterion=at_least(gap, CONVERGE_MIN, f"bottom at {min(shorter):g} of the run: mean penalty at {', '.join(late)} "
                               f"minus at {', '.join(early)}"),
            paper="early layers converge faster (Fig. 3B; Raghu et al. 2017)",
            ours=f"{pen[early].mean():.2f} early, {pen[late].mean():.2f} late", controls=[control]))
    return numbers, _beyond(claims, ('compatible', 'improves', 'early_first'))


# --------------------------------------------------------------------------------------------
# B-F3C: width


@figure_config("B-F3C")
@dataclass(frozen=True)
class WidthConfig(BottomsConfig):
    """B-F3C: networks of several widths (seed 0) stitched into each other, every ordered pair."""

    width_factors: tuple[float, ...] = param((0.25, 1.0, 2.0), "widths relative to the base width "
                                             "(paper x0.25, x1, x2)")


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


def widths_summary(table: pd.DataFrame, accuracy: dict, cfg: WidthConfig) -> tuple[dict, list[dict]]:
    names = [_width_name(f) for f in sorted(cfg.width_factors)]
    keys = {SELF: "self", **{n: n.split()[0].replace(".", "_") for n in names}}
    numbers = _numbers(table, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = _control(table)
    thin, wide = names[0], names[-1]
    up = _pen(table, wide, thin)  # wider bottom into the thinnest top
    down = _pen(table, thin, wide)  # thinnest bottom into the widest top
    (gain_up, where_up), (gain_down, _) = _gain(up), _gain(down)
    cka = table[(table.sender == thin) & (table.receiver == wide)].set_index("cut").cka
    numbers.update(wide_into_thin_gain=gain_up, thin_into_wide_gain=gain_down, thin_into_wide_max_penalty=down.max(),
                   cka_thin_wide_min=cka.min(), cka_thin_wide_max=cka.max())
    claims = [
        dict(key="wider_improves", text="A wider bottom stitched into a thinner top improves its performance",
             criterion=at_least(gain_up, IMPROVE_MIN, f"gain of the {wide} bottom into the {thin} top at its best "
                                "block cut ('pool' left out)"),
             paper="wider into thinner improves (Fig. 3C)", ours=f"gain {gain_up:.2f} points (at {where_up})",
             controls=[control, _stronger(accuracy, wide, thin)]),
        dict(key="not_vice_versa", text="... but not vice versa: a thinner bottom does not improve a wider top",
             criterion=at_most(gain_down, IMPROVE_MIN, f"gain of the {thin} bottom into the {wide} top at its best "
                               "block cut (below the 'improves' bound)"),
             paper="not vice versa (Fig. 3C)", ours=f"best gain {gain_down:.2f} points, worst penalty "
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
    pair, cut, cka."""
    rows = []
    for name, (a, b) in cfg.pairs(scale).items():
        model = zoo.build(a, num_classes=10, in_channels=3)
        for cut, value in cka_per_cut(a, b, list(model.cuts), cfg.cka_images, device=device, store=store,
                                      progress=progress).items():
            rows.append({"pair": name, "cut": cut, "cka": value})
    return pd.DataFrame(rows)


def more_cka_summary(table: pd.DataFrame, cfg: MoreCKAConfig) -> tuple[dict, list[dict]]:
    by = {name: g.set_index("cut").cka for name, g in table.groupby("pair", sort=False)}
    samples_, width_, length_ = list(by)
    numbers = {"cka_images_used": cfg.cka_images}
    for key, name in (("samples", samples_), ("width", width_), ("length", length_)):
        numbers.update({f"{key}_cka_min": by[name].min(), f"{key}_cka_max": by[name].max(),
                        f"{key}_cka_mean": by[name].mean()})
        numbers.update({f"{key}_cka_{cut}": v for cut, v in by[name].items()})
    lo, hi = CKA_WIDTH_RANGE
    w = by[width_]
    claims = [
        dict(key="samples_far", text=f"CKA between networks trained on different numbers of samples ({samples_}) "
                                     "can be close to 0",
             criterion=at_most(by[samples_].min(), CKA_SAMPLES_NEAR_ZERO, "min CKA over the cuts", unit=""),
             paper="can go as low as 0 (App. B.2, Table 1)",
             ours=f"min {by[samples_].min():.3f} (at {by[samples_].idxmin()}), mean {by[samples_].mean():.3f}"),
        dict(key="width_range", text=f"CKA between the {width_} networks is in the range 0.7-0.9 at its lowest",
             criterion=within(w.min(), (lo + hi) / 2, (hi - lo) / 2, "min CKA over the cuts", unit=""),
             paper="0.7-0.9; as low as 0.7 for early layers (Sec. 6, App. B.2)",
             ours=f"min {w.min():.3f} (at {w.idxmin()}), max {w.max():.3f}"),
        dict(key="length_similar", text=f"CKA finds the {length_} networks similar",
             criterion=at_least(by[length_].min(), CKA_SIMILAR_MIN, "min CKA over the cuts", unit=""),
             paper="CKA finds the representations similar (App. B.2)",
             ours=f"min {by[length_].min():.3f} (at {by[length_].idxmin()}), mean {by[length_].mean():.3f}"),
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
    supervised network stitched into the SimCLR network (each top also into itself)."""
    e2e = cfg.variant(scale, cfg.seeds[0])
    ssl = zoo.bansal_simclr(scale, cfg.seeds[1], width=cfg.width, epochs=cfg.simclr_epochs, final_bn=cfg.final_bn)
    into_e2e, acc = bottoms_into_top(cfg, scale, e2e, {SIMCLR: ssl, E2E_SEED: cfg.variant(scale, cfg.seeds[1])},
                                     receiver_name=E2E_TOP, **kw)
    into_ssl, _ = bottoms_into_top(cfg, scale, ssl, {"supervised (seed 0)": e2e}, receiver_name="SimCLR top "
                                   "(seed 1, linear probe)", **kw)
    return pd.concat([into_e2e, into_ssl], ignore_index=True), acc  # each network once: top, SimCLR, seed 1


def simclr_summary(table: pd.DataFrame, accuracy: dict, cfg: SimCLRConfig) -> tuple[dict, list[dict]]:
    receivers = list(dict.fromkeys(table.receiver))
    keys = {SELF: "self", SIMCLR: "simclr", E2E_SEED: "seed1", "supervised (seed 0)": "e2e",
            receivers[0]: "e2e_top", receivers[1]: "simclr_top"}
    numbers = _numbers(table, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = _control(table)
    ssl_acc, e2e_acc = 100 * accuracy[SIMCLR], 100 * accuracy[E2E_TOP]
    good = Control.of(f"the SimCLR network's linear probe is within {PROBE_MAX_GAP:g} points of the supervised "
                      "network (the paper compares networks of similar accuracy)",
                      at_least(ssl_acc - e2e_acc, -PROBE_MAX_GAP, "linear-probe accuracy minus the supervised "
                               "network's"), f"{ssl_acc:.2f}% vs {e2e_acc:.2f}%")
    up = _pen(table, SIMCLR, receivers[0])
    down = _pen(table, "supervised (seed 0)", receivers[1])
    seed = _pen(table, E2E_SEED, receivers[0])
    worst = max(up.max(), down.max())
    cka_ssl = table[(table.sender == SIMCLR)].cka
    cka_seed = table[(table.sender == E2E_SEED)].cka
    numbers.update(simclr_into_e2e_max=up.max(), e2e_into_simclr_max=down.max(), seed_into_e2e_max=seed.max(),
                   both_ways_max=worst, cka_min=cka_ssl.min(), cka_max=cka_ssl.max(), cka_mean=cka_ssl.mean(),
                   seed_cka_mean=cka_seed.mean(), probe_accuracy=ssl_acc, max_penalty=worst)
    claims = [
        dict(key="connected", text="SimCLR and supervised networks are stitching connected in both directions",
             criterion=at_most(worst, 100 * CONNECTED_MAX_PENALTY, "max penalty over the cuts of both directions"),
             paper="connected both ways, penalty like a different seed's (App. B.2.2, Fig. 6b)",
             ours=f"SimCLR into supervised max {up.max():.2f}, supervised into SimCLR max {down.max():.2f} points "
                  f"(another supervised seed: max {seed.max():.2f})", controls=[control, good]),
        dict(key="cka_differs", text="CKA finds SimCLR and supervised representations further apart than two "
                                     "supervised seeds",
             criterion=at_least(cka_seed.mean() - cka_ssl.mean(), CKA_MARGIN, "mean CKA with the supervised top "
                                "over the cuts: another supervised seed minus SimCLR", unit="", digits=3),
             paper="CKA 0.35-0.9; differs more than two initialisations (Table 1, Fig. 6a)",
             ours=f"SimCLR {cka_ssl.min():.2f}-{cka_ssl.max():.2f} (mean {cka_ssl.mean():.3f}); another seed mean "
                  f"{cka_seed.mean():.3f}", controls=[good]),
    ]
    return numbers, _beyond(claims, ('connected',))
