"""Bansal et al. 2021, Sections 5-6: the machinery of the pages that stitch weaker or stronger
bottoms into one top (B-F2C, B-F3A, B-F3B, B-F3C, B-F6; the pages' own code is in :mod:`.f2c_f3ab`
and :mod:`.f3c_f6`).

Each figure varies one thing about the bottom (sender) network and stitches it into a fixed top
(receiver) at several cuts, with the receiver stitched into itself as the convergence control
and the linear CKA between bottom and top at each cut beside the penalty. This module holds
their shared config (:class:`BottomsConfig`) and presets, the grid (:func:`bottoms_into_top`),
the helpers their claims are judged with, the tables they display and their training-length
control (:func:`training_length_control`).

Models come from :func:`stitchkit.networks.zoo.bansal_resnet18`; the paper trains every ResNet for the
same number of SGD steps whatever its sample size (App. A.2), and so does the zoo. Stitches are
B-F2A's recipe (:class:`stitchkit.experiments.bansal.common.ConnectivityConfig`), so the seed-0
network's stitches and models are shared with B-F2A, B-F4 and B-F5.

Verdicts are judged as B-F2A's (:mod:`stitchkit.experiments.bansal.common`): on 95% paired-bootstrap
intervals over the test images, each penalty beyond the top stitched into itself at the same cut
(the two resampled together), maxima and gains over cuts bootstrapped as such; the controls
are :mod:`stitchkit.verdicts.controls`' (issue 46): the positive control on every stitching claim, the
negative control (an untrained ResNet-18 of the top's width stitched into each top at the last two
cuts, :func:`untrained_like`, :func:`untrained_bottom_control`) on the claims that a stitch works or improves,
and the training-length control on every stitching verdict; a "more is better" premise (the stronger bottom is the more accurate
network) is judged on the interval of the accuracy difference, measured on the same test images
(``sender_correct``: each bottom's own per-image results); CKA claims on the bootstrap over the
CKA images (:class:`stitchkit.measures.similarity.CKABootstrap`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd
import torch

from ...base.hardware import as_device, channels_last_ok
from ...data import batches as data_mod
from ...data.datasets import DataSpec, test_split
from ...measures import similarity
from ...measures.similarity import CKABootstrap
from ...networks import network, zoo
from ...networks.train import evaluate
from ...registry.scales import check_names, derived, param
from ...stitching.grid import stitch_grid
from ...stitching.grid_spec import Net, StitchRecipe
from ...verdicts import controls, noise
from ...verdicts.claims import ClaimSpec
from ...verdicts.results import Control
from .common import SELF  # the receiver into itself: the same rows as B-F2A's (retrain_longer's default)
from .common import PRESETS, RANDOM, ConnectivityConfig, beyond_self, boot, points, positions, replicate_networks
from .length import retrain_longer

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

    def networks(self) -> list[network.ModelSpec]:
        """The trained networks the page needs (a batch trains them ahead): its top and bottoms
        (``models``) and the seed-variance component's, which every such page is judged with."""
        top, bottoms = self.models()
        return [top, *bottoms.values(), *replicate_networks(self)]

    def check(self) -> None:
        super().check()
        check_names("cuts", self.cuts, network.build(self.model(self.seeds[0]), 10, 3).cuts, at_least=self.MIN_CUTS)


# Demo: six of the ten cuts (two early, two middle, two late) keep each page within minutes.
DEMO_CUTS = ("stem", "block1", "block3", "block5", "block7", "pool")
SMOKE_CUTS = ("stem", "block3", "block5")  # three: early, middle and late need one cut each


def sweep_presets(cls: type, **per_scale: dict) -> dict:
    """B-F2A's presets as presets of ``cls``, with the sweep's cut subsets and ``per_scale`` changes."""
    return {scale: derived(cls, cfg, cuts={"smoke": SMOKE_CUTS, "demo": DEMO_CUTS, "gpu": DEMO_CUTS}.get(scale),
                           cka_images=500 if scale == "smoke" else 2000, **per_scale.get(scale, {}))
            for scale, cfg in PRESETS.items()}


def _grams(spec: network.ModelSpec, cuts, images, device, store, progress) -> dict[str, torch.Tensor]:
    model, _ = network.load_or_train(spec, device=device, store=store, progress=progress)
    return similarity.model_grams(model, images, cuts, normalisation=spec.normalisation, device=device)


def cka_per_cut(a: network.ModelSpec, b: network.ModelSpec, cuts, n_images: int, *, device=None, store=None,
                progress: bool = True, replicates: bool = False) -> dict[str, float] | dict[str, np.ndarray]:
    """Linear CKA (Gram form, float64) between models ``a`` and ``b`` at each cut, on the first
    ``n_images`` of a stratified CIFAR-10 test subset. ``replicates``: each cut's (R+1,) array
    instead, the full-sample value first and then one per bootstrap resample of the images
    (:class:`stitchkit.measures.similarity.CKABootstrap`)."""
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


def own_correct(model, spec: network.ModelSpec, recipe: StitchRecipe, device=None) -> np.ndarray:
    """(n_test,) bool: which of the grid's test images (``recipe``'s stratified subset, in the
    grid's order) ``model`` gets right on its own; the premise controls compare two networks on
    them image by image."""
    return task_correct(model, spec, test_split(DataSpec("cifar10"), recipe.test_size, recipe.subset_seed), device)


def task_correct(model, spec: network.ModelSpec, test, device=None) -> np.ndarray:
    """(n,) bool: which images of ``test`` (a split with its task's labels) ``model`` gets right."""
    device = as_device(device)
    batches = data_mod.Batches(test, 500, normalisation=spec.normalisation, device=device,
                               channels_last=channels_last_ok(model))
    return evaluate(model, batches, device=device, per_image=True)["correct"]


def same_task(a: network.ModelSpec, b: network.ModelSpec) -> bool:
    """Whether two networks are trained for the same task (data set, labels, image size), so that
    their own accuracies on the same test images compare (the sample size may differ)."""
    da, db = a.data, b.data
    return (da.dataset, da.labels, da.label_noise, da.size) == (db.dataset, db.labels, db.label_noise, db.size)


def untrained_like(cfg: BottomsConfig, receiver: network.ModelSpec) -> network.ModelSpec:
    """The negative control's sender for ``receiver``: an untrained pre-activation ResNet-18 of the
    receiver's width (seed ``cfg.random_seed``, BatchNorm recalibrated; B-F2A's random bottom for
    the base width)."""
    return zoo.bansal_resnet18(cfg.net, cfg.random_seed, width=receiver.width, trained=False,
                               final_bn=dict(receiver.options).get("final_bn", True))


def bottoms_into_top(cfg: BottomsConfig, receiver: network.ModelSpec, senders: dict[str, network.ModelSpec], *,
                     receiver_name: str = "top", device=None, store=None, progress: bool = True,
                     client=None, cka_replicates: bool = False,
                     negative: bool = True) -> tuple[pd.DataFrame, dict[str, float]]:
    """Stitch every sender (and the receiver itself, the control) into ``receiver`` at
    ``cfg.cuts`` (each sender cut into the same receiver cut). Returns the grid's table with
    ``cut``, ``receiver``, ``cka`` (linear CKA between sender and receiver at that cut) and
    ``sender_correct`` (the sender's own per-image results on the grid's test images; None for a
    sender trained for another task, see :func:`same_task`) columns,
    and every model's test accuracy on its own task (full test set) by name.
    ``cka_replicates``: also ``cka_reps`` (the CKA's bootstrap replicates over the CKA images)
    and ``cka_n`` (their number), for pages that judge a CKA."""
    probe = network.build(receiver, num_classes=10, in_channels=3)  # untrained: checks the cuts before any training
    cuts = list(cfg.cuts or probe.cuts)
    for cut in cuts:
        probe.check_cut(cut)
    rx = Net(receiver_name, receiver)
    rx.model, metrics = network.load_or_train(receiver, device=device, store=store, progress=progress)
    accuracy = {rx.name: metrics["test"]["accuracy"]}
    nets = [Net(SELF, receiver, rx.model)] + [Net(name, spec) for name, spec in senders.items()]
    for net in nets[1:]:  # loaded once here; the grid reuses them
        net.model, metrics = network.load_or_train(net.spec, device=device, store=store, progress=progress)
        accuracy[net.name] = metrics["test"]["accuracy"]
    recipe = cfg.recipe()
    table = stitch_grid(nets, [rx], [(c, c) for c in cuts], recipe, DataSpec("cifar10"), device=device,
                        store=store, progress=progress, client=client)
    if negative:  # the negative control: an untrained network of the top's width at the last two cuts
        late = cuts[-controls.NEGATIVE_CUTS:]
        rnd = stitch_grid([Net(RANDOM, untrained_like(cfg, receiver))], [rx], [(c, c) for c in late], recipe,
                          DataSpec("cifar10"), device=device, store=store, progress=progress, client=client)
        table = pd.concat([table, rnd], ignore_index=True)
    table = table.rename(columns={"cut_i": "cut"}).drop(columns=["cut_j"])
    own = {SELF: table.receiver_correct.iloc[0]}
    own.update({net.name: own_correct(net.model, net.spec, recipe, device) if same_task(net.spec, receiver) else None
                for net in nets[1:]})
    if negative:  # the untrained network's own results (near chance), so every row carries them
        untrained = untrained_like(cfg, receiver)
        model, _ = network.load_or_train(untrained, device=device, store=store, progress=progress)
        own[RANDOM] = own_correct(model, untrained, recipe, device)
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
    table["cka"] = [cka.get((row.sender, row.cut), float("nan")) for row in table.itertuples()]
    if cka_boot is not None:
        table["cka_reps"] = [reps.get((row.sender, row.cut)) for row in table.itertuples()]
        table["cka_n"] = len(images)
    table["receiver"] = receiver_name
    return table, accuracy


def penalty_beyond_self(table: pd.DataFrame, sender: str, receiver: str | None = None) -> pd.Series:
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
    return beyond_self(t.set_index("cut"), own.set_index("cut")).loc[t.cut]


class BeyondSelf:
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


def grid_bootstrap(table: pd.DataFrame, stat, own: bool = False, **kw) -> noise.Estimate:
    """The paired bootstrap over the grid's test images; ``own``: with the senders' own results
    (``sender_accuracy``, for the premises)."""
    return boot(table, stat, columns=COLUMNS if own else noise.PER_IMAGE, **kw)


def cut_thirds(cuts: list[str]) -> tuple[list[str], list[str], list[str]]:
    """Early, middle and late cuts (the first and last third; the middle the rest)."""
    if len(cuts) < 3:
        raise ValueError(f"early, middle and late layers need at least 3 cuts, got {cuts}")
    k = len(cuts) // 3
    return cuts[:k], cuts[k:len(cuts) - k], cuts[len(cuts) - k:]


def judged_beyond_self(claims: list[ClaimSpec], keys: tuple[str, ...]) -> list[ClaimSpec]:
    """The claims, those of ``keys`` with a criterion that says its penalties are measured beyond
    the self-stitch (the criterion's numbers and result unchanged)."""
    return [replace(c, criterion=replace(c.criterion, text=c.criterion.text + BEYOND)) if c.key in keys else c
            for c in claims]


def _map_cuts(cuts: list[str]) -> list[str]:
    """The cuts with a spatial map: at ``pool`` the stitch and the top's classifier form a linear
    probe of the bottom, which any stronger network wins, so "plugging in" is judged at the blocks."""
    return [c for c in cuts if c != "pool"]


def largest_gain(pen: pd.Series) -> tuple[float, str]:
    """The largest gain (minus the penalty, points) over the map cuts and where (see :func:`_map_cuts`)."""
    maps = pen.drop("pool", errors="ignore")
    return float(-maps.min()), str(maps.idxmin())


def gain_estimate(table: pd.DataFrame, sender: str, receiver: str | None = None) -> tuple[noise.Estimate, str]:
    """The largest gain over the map cuts of ``sender`` beyond the self-stitch, bootstrapped as a
    maximum, and the cut where it is on all images."""
    cuts = _map_cuts(list(dict.fromkeys(table.cut)))
    b = BeyondSelf(table, sender, cuts, receiver)
    return grid_bootstrap(table, lambda x: float(-b.of(x).min())), cuts[int(np.argmin(b.of(table.reset_index(drop=True))))]


def top_self_stitch_control(table: pd.DataFrame) -> tuple[Control, float]:
    """The positive control on a sweep's table (:func:`stitchkit.verdicts.controls.self_stitch_control`):
    every top stitched into itself at every cut of the table; and the largest self-penalty
    (points; a loss positive) on all images."""
    t = table.reset_index(drop=True)
    control, e = controls.self_stitch_control(t, np.flatnonzero((t.sender == SELF).to_numpy()),
                                              "top stitched into itself at every cut")
    return control, e.value


def untrained_bottom_control(table: pd.DataFrame,
                             receivers: list[str] | None = None) -> tuple[Control, noise.Estimate | None]:
    """The negative control (:func:`stitchkit.verdicts.controls.untrained_sender_fails`): the untrained
    network's penalty beyond the top's self-stitch, mean over the cuts it was stitched at (the
    last two), at least :data:`stitchkit.verdicts.controls.NEGATIVE_MARGIN` points into each of
    ``receivers`` (default: every top of the table); the smallest over them is judged."""
    t = table.reset_index(drop=True)
    receivers = receivers or list(dict.fromkeys(t.receiver))
    rnd = t[t.sender == RANDOM]
    what = "an untrained network stitched into the top" + ("s" if len(receivers) > 1 else "") + " at the last two cuts"
    if rnd.empty or not set(receivers) <= set(rnd.receiver):
        return Control(f"{what}: not run", f"penalty beyond the self-stitch ≥ {controls.NEGATIVE_MARGIN:g} points",
                       "not run", False, None, controls.NEGATIVE), None
    bs = [BeyondSelf(t, RANDOM, list(rnd[rnd.receiver == r].cut), r) for r in receivers]
    e = grid_bootstrap(t, lambda x: float(min(b.of(x).mean() for b in bs)))
    return controls.untrained_sender_fails(e, what=what), e


def accuracy_gap(table: pd.DataFrame, stronger: str, weaker: str | None = None,
                  receiver: str | None = None) -> noise.Estimate:
    """``stronger``'s own test accuracy minus ``weaker``'s (points; None: the top's, i.e. the
    receiver ``stronger`` is stitched into), on the grid's test images, paired."""
    t = table.reset_index(drop=True)
    rows = t[t.sender == stronger] if receiver is None else t[(t.sender == stronger) & (t.receiver == receiver)]
    a = int(rows.index[0])
    if weaker is None:
        return grid_bootstrap(t, lambda x: 100 * float(x.sender_accuracy.iloc[a] - x.receiver_accuracy.iloc[a]), own=True)
    b = int(t.index[(t.sender == weaker).to_numpy()][0])
    return grid_bootstrap(t, lambda x: 100 * float(x.sender_accuracy.iloc[a] - x.sender_accuracy.iloc[b]), own=True)


def premise_stronger(table: pd.DataFrame, bottom: str, top: str | None = None, *, receiver: str | None = None,
              top_name: str | None = None) -> tuple[Control, noise.Estimate]:
    """The premise of a "more is better" claim: the network with more (samples, training, width)
    is itself the more accurate one, on the interval of the accuracy difference (a premise that
    holds by less than its uncertainty fails). ``top``: the weaker network as a sender of the
    table; None: the top ``bottom`` is stitched into. Where it fails, a stitch cannot show that
    "more" made a better representation, and the claim is inconclusive at this scale."""
    gap = accuracy_gap(table, bottom, top, receiver)
    other = top or top_name or "the top"
    ctl = controls.premise(gap, PREMISE_MARGIN, f"the {bottom} network is more accurate than {other} on its own "
                           "(the premise)", what=f"{bottom}'s test accuracy minus {other}'s, same images")
    return ctl, gap


def short_numbers(table: pd.DataFrame, accuracy: dict[str, float], keys: dict[str, str],
             cfg: BottomsConfig) -> dict[str, float]:
    """Per-sender, per-cut penalty and CKA and every model's accuracy, under short keys."""
    out = {f"accuracy_{keys[name]}": 100 * acc for name, acc in accuracy.items() if name in keys}
    out["cka_images_used"] = cfg.cka_images
    out["n_test"] = int(noise.n_test_of(table))
    for name, g in table.groupby("sender", sort=False):
        if name not in keys:  # the negative control's untrained sender: judged, not listed per cut
            continue
        for row in g.itertuples():
            tag = keys[name] + (f"_into_{keys[row.receiver]}" if table.receiver.nunique() > 1 else "")
            out[f"penalty_{tag}_{row.cut}"] = 100 * row.penalty
            out[f"cka_{tag}_{row.cut}"] = row.cka
    return out


def per_cut(table: pd.DataFrame, value: str = "penalty") -> pd.DataFrame:
    """``value`` ('penalty' in points, or 'cka') per cut (rows; per receiver when there are
    several) and sender (columns), for display."""
    view = table.assign(penalty=(100 * table.penalty).round(2), cka=table.cka.round(3))
    index = ["receiver", "cut"] if table.receiver.nunique() > 1 else ["cut"]
    return view.pivot_table(index=index, columns="sender", values=value, sort=False)


def title(cfg: BottomsConfig) -> str:
    return f"Pre-activation ResNet-18 (width {cfg.width or cfg.net.width}) on CIFAR-10"


# --------------------------------------------------------------------------------------------
# The sweeps' training-length control: the cells each page's ``length_checks`` says decide its
# claims (:class:`.length.LengthCheck` records), retrained by :func:`.length.retrain_longer` and
# re-judged by the page's summary.


def training_length_control(cfg: BottomsConfig, table: pd.DataFrame, claims: list[ClaimSpec], *,
                            device=None, store=None, progress: bool = True) -> pd.DataFrame:
    """B-F2C's, B-F3A's, B-F3B's, B-F3C's or B-F6's stitching claims, decided or not (``cfg`` a
    :class:`SamplesConfig`, :class:`LabelsConfig`, :class:`EpochsConfig`, :class:`WidthConfig` or
    :class:`SimCLRConfig`), each retrained with :data:`stitchkit.stitching.grid_spec.LONGER` times
    the epochs at the stitches that decide it (``cfg.length_checks``: :class:`.length.LengthCheck`
    records) and the top's self-stitches at those cuts, and re-judged on them (see
    :func:`.length.retrain_longer`: the claim's copy with the control takes its place in
    ``claims``). Returns one row per check and sender."""
    return retrain_longer(cfg.length_checks(table, claims), claims, device=device, store=store,
                          progress=progress)


def claim_rejudger(cfg, key: str):
    """The claim ``key`` of the page of ``cfg`` (its ``summary``) judged on another table."""
    return lambda t: next(c for c in cfg.summary(t, {})[1] if c.key == key).criterion
