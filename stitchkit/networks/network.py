"""Trained networks: what determines one (:class:`ModelSpec`, its cache key), building it, and
training it once and reading it back from the store (:func:`load_or_train`), supervised or by
SimCLR with a linear probe. :mod:`stitchkit.networks.zoo` names each paper's recipes on top of it.

An untrained network (``epochs=0``) keeps its random weights, but its BatchNorm statistics are
recalibrated on a few thousand training images without gradient (``calibrate_bn``): in eval mode
a fresh BN is the identity, which makes a random deep network degenerate.
"""

from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Any

import torch
from torch import nn

from ..base.hardware import as_device, channels_last_ok, compile_wins, resolve_precision, to_memory_format
from ..base.ledger import note_network
from ..base.progress import say
from ..base.store import Store, config_key
from ..data import batches as data_mod
from ..data import splits
from ..data.datasets import DataSpec
from ..data.datasets import fingerprint as data_fingerprint
from ..data.datasets import test_split, train_split
from .models import CutModel, build_model
from .train import TrainConfig, evaluate, train

METHODS = ("supervised", "simclr")
SIMCLR_TEMPERATURE = 0.5  # NT-Xent temperature (SimCLR's CIFAR-10 setting)


@dataclass(frozen=True)
class ModelSpec:
    """Everything that determines a trained model (its cache key)."""

    model: str = "preact_resnet18"  # registry name
    width: int = 64  # base width (stage widths width * 2**i)
    data: DataSpec = field(default_factory=DataSpec)  # training data
    normalisation: str = "cifar"  # key of stitchkit.data.batches.NORMALISATION
    seed: int = 0  # weight initialisation
    train: TrainConfig = field(default_factory=TrainConfig)  # epochs=0 and steps=None: untrained
    options: tuple[tuple[str, Any], ...] = ()  # extra builder keywords, e.g. (("final_bn", False),)
    calibrate_bn: int = 0  # recompute BN statistics on this many training images, no gradient
    method: str = "supervised"  # supervised | simclr (self-supervised pre-training, then a linear probe)
    probe: TrainConfig | None = None  # simclr: the linear probe's epochs, lr, batch size and seed

    def __post_init__(self) -> None:
        if self.normalisation not in data_mod.NORMALISATION:
            raise ValueError(f"unknown normalisation {self.normalisation!r}; "
                             f"valid: {', '.join(data_mod.NORMALISATION)}")
        if self.width < 1:
            raise ValueError(f"width must be >= 1, got {self.width}")
        if self.method not in METHODS:
            raise ValueError(f"unknown training method {self.method!r}; valid: {', '.join(METHODS)}")

    @property
    def trained(self) -> bool:
        return bool(self.train.steps) or self.train.epochs > 0


def build(spec: ModelSpec, num_classes: int, in_channels: int) -> CutModel:
    return build_model(spec.model, seed=spec.seed, width=spec.width, num_classes=num_classes,
                       in_channels=in_channels, **dict(spec.options))


@torch.no_grad()
def recalibrate_batchnorm(model: nn.Module, batches) -> None:
    """Reset every BatchNorm's running statistics and re-estimate them (cumulative average) on
    ``batches`` in train mode without gradient; weights are untouched."""
    bns = [m for m in model.modules() if isinstance(m, nn.modules.batchnorm._BatchNorm)]
    saved = [m.momentum for m in bns]
    for m in bns:
        m.reset_running_stats()
        m.momentum = None
    was = model.training
    model.train()
    for x, _ in batches:
        model(x)
    model.train(was)
    for m, mom in zip(bns, saved):
        m.momentum = mom


def with_seed_offset(spec: ModelSpec, offset: int | None = None) -> ModelSpec:
    """``spec`` with ``offset`` (default ``STITCHKIT_SEED_OFFSET``, 0 when unset) added to its
    initialisation seed and its training's (and a SimCLR probe's) seed: another network of the same
    recipe. The replication check (``stitchkit replicate``) runs a page this way, in a cache of its
    own, so that nothing trained with the pages' own seeds is read in its place."""
    from dataclasses import replace

    from ..base.environment import seed_offset_from_env

    k = seed_offset_from_env() if offset is None else offset
    if not k:
        return spec
    probe = None if spec.probe is None else replace(spec.probe, seed=spec.probe.seed + k)
    return replace(spec, seed=spec.seed + k, train=replace(spec.train, seed=spec.train.seed + k), probe=probe)


def load_or_train(spec: ModelSpec, *, device: torch.device | str | None = None, store: Store | None = None,
                  root: str | os.PathLike | None = None, progress: bool = True,
                  snapshots: tuple[float, ...] = ()) -> tuple[CutModel, dict]:
    """The trained model for ``spec`` (from the store, else trained and stored) and its metrics.

    The cache key is the spec's and the training data's fingerprint (so another data root gives
    another model). Metrics: test accuracy/loss on the full test split, per-epoch history, training seconds
    (summed over resumed segments), images/s, device and precision. Training checkpoints after
    each epoch, so an interrupted call resumes where it stopped.

    ``snapshots``: fractions of the schedule (below ``spec.train.stop``) at which the network, as
    it is then, is also stored, under the spec with that ``train.stop``: one run gives the
    checkpoints that Bansal et al.'s training-time experiment compares.
    """
    device = as_device(device)
    store = store or Store()
    spec = with_seed_offset(spec)
    train_data = train_split(spec.data, root)
    model = build(spec, train_data.num_classes, int(train_data.images.shape[1]))
    salt = data_fingerprint(spec.data, root)  # the data's identity: other data, another model
    entry = store.get(spec, salt=salt)
    trained_here = False
    if entry is None:
        key = config_key(spec, salt)
        with store.lock(key, what=f"{spec.model} width {spec.width} seed {spec.seed}"):
            entry = store.get(spec, salt=salt)  # another run may have trained it while this one waited
            if entry is None:
                entry = _train_and_store(spec, model, train_data, salt, key, store, root, device, snapshots,
                                         progress)
                trained_here = True
    if not trained_here:
        model.load_state_dict(entry.tensors)
    to_memory_format(model.to(device))
    _note(spec, config_key(spec, salt), entry.metrics)
    return model.eval(), entry.metrics


def _note(spec: ModelSpec, key: str, metrics: dict) -> None:
    """Record the network in the run's list of networks used (:func:`stitchkit.base.ledger.note_network`)."""
    metrics = metrics if isinstance(metrics, dict) else {}
    accuracy = (metrics.get("test") or {}).get("accuracy")
    speed = metrics.get("images_per_second")
    note_network(key, {"model": spec.model, "width": spec.width, "seed": spec.seed, "data": spec.data.dataset,
                       "train_size": spec.data.train_size, "epochs": spec.train.epochs, "steps": spec.train.steps,
                       "trained": bool(spec.train.epochs or spec.train.steps),
                       # the recipe a reader needs to tell two networks apart (issue 65, item 3): its labels, how
                       # far through its schedule it stopped, the method, the optimiser and the builder's options
                       "labels": spec.data.labels, "label_noise": spec.data.label_noise, "stop": spec.train.stop,
                       "method": spec.method, "optimizer": spec.train.optimizer, "lr": spec.train.lr,
                       "schedule": spec.train.schedule, "options": {k: v for k, v in spec.options},
                       "accuracy": None if accuracy is None else round(float(accuracy), 4),
                       # how fast it trained, where and in what precision (the run that trained it: a network
                       # read from the cache keeps these); a batch on a GPU reports them per page
                       "images_per_second": None if speed is None else round(float(speed), 1),
                       "train_seconds": None if metrics.get("train_seconds") is None
                       else round(float(metrics["train_seconds"]), 2),
                       "batch_size": spec.train.batch_size, "device": metrics.get("device"),
                       "precision": metrics.get("precision"),
                       # with images_per_second: the FLOP rate it trained at, against the hardware's peak
                       "train_flops_per_image": metrics.get("train_flops_per_image")})


def train_flops_per_image(model: nn.Module, images: torch.Tensor) -> float:
    """FLOPs of one supervised training step (forward and backward) per image, counted by torch on
    two images of ``images``' shape ((N, C, H, W)) through a copy of ``model`` on the meta device:
    shapes only, so nothing is computed, and the model, its statistics and every random stream stay
    as they were. (Counting on the meta device also counts attention, as matrix products, where
    the CPU's fused attention kernel is not counted; and it keeps the count clear of oneDNN's AVX2
    1x1-convolution weight-gradient kernel, which hangs now and then on a two-image batch.)"""
    import copy

    from torch.utils.flop_counter import FlopCounterMode

    twin = copy.deepcopy(model).to("meta").eval()
    x = torch.empty((2, *images.shape[1:]), device="meta")
    with FlopCounterMode(display=False) as counter:
        twin(x).float().sum().backward()
    return counter.get_total_flops() / len(x)


def _train_and_store(spec: ModelSpec, model: CutModel, train_data, salt: str, key: str, store: Store, root, device,
                     snapshots: tuple[float, ...], progress: bool):
    """Train ``model`` by ``spec`` (resuming from its checkpoint), measure it and store it; the entry."""
    precision = resolve_precision(spec.train.precision, device)
    to_memory_format(model.to(device))
    cl = channels_last_ok(model)
    batches = data_mod.Batches(train_data, spec.train.batch_size, normalisation=spec.normalisation,
                               shuffle=True, augment=spec.train.augment, drop_last=True, seed=spec.train.seed,
                               device=device, channels_last=cl)
    steps = spec.train.stop_step(len(batches)) if spec.trained else 0
    history, extra = [], {}
    on_step = _snapshotter(spec, snapshots, model, len(batches), salt, store, root, device, precision, cl)
    compiled = bool(steps) and spec.method != "simclr" and compile_wins(device, model, steps)
    if steps and spec.method == "simclr":
        say(f"[stitchkit] SimCLR pre-training {spec.model} width {spec.width} seed {spec.seed} ({steps} steps)")
        history, extra = _train_simclr(model, spec, train_data, batches, device, store.partial(key), progress)
    elif steps:
        say(f"[stitchkit] training {spec.model} width {spec.width} seed {spec.seed} ({steps} steps, {precision}"
            f"{', compiled' if compiled else ''})")
        history = train(model, batches, spec.train, device=device, checkpoint=store.partial(key),
                        desc=f"{spec.model} w{spec.width} seed {spec.seed}", progress=progress, on_step=on_step,
                        compile=compiled)
    if spec.calibrate_bn:
        sub = train_data.subset(splits.stratified_subset(train_data.labels, spec.calibrate_bn, spec.seed))
        recalibrate_batchnorm(model, data_mod.Batches(sub, 250, normalisation=spec.normalisation,
                                                      device=device, channels_last=cl))
    seconds = history[-1]["seconds"] if history else 0.0
    test_batches = data_mod.Batches(test_split(spec.data, root=root), 500, normalisation=spec.normalisation,
                                    device=device, channels_last=cl)
    metrics = {"test": evaluate(model, test_batches, device=device),  # measured in fp32
               "history": list(history), "train_seconds": seconds,
               # the part an interrupted run had spent before this one resumed (the ledger counts it as cached)
               "resumed_seconds": getattr(history, "resumed_seconds", 0.0),
               "images_per_second": steps * spec.train.batch_size / seconds if steps else None,
               "device": str(device), "precision": precision,
               "compiled": compiled, **extra}
    if steps and spec.method != "simclr":  # (SimCLR's step, two views and a projection head, is another count)
        metrics["train_flops_per_image"] = train_flops_per_image(model, train_data.images)
    entry = store.put(spec, metrics, model.state_dict(), salt=salt)
    store.partial(key).unlink(missing_ok=True)
    return entry


def _snapshotter(spec: ModelSpec, fractions: tuple[float, ...], model: CutModel, steps_per_epoch: int, salt: str,
                 store: Store, root, device, precision: str, channels_last: bool):
    """An ``on_step`` callback storing ``model`` under ``spec`` with ``train.stop = f`` when the
    run passes that fraction of its schedule (None when there is nothing to store)."""
    from dataclasses import replace

    if not fractions:
        return None
    if any(not 0 < f < spec.train.stop for f in fractions):
        raise ValueError(f"snapshots must lie strictly between 0 and stop={spec.train.stop}, got {fractions}")
    at = {}
    for f in fractions:
        snap = replace(spec, train=replace(spec.train, stop=f))
        at.setdefault(snap.train.stop_step(steps_per_epoch), []).append(snap)

    def on_step(step: int) -> None:
        for snap in at.get(step, []):
            if store.get(snap, salt=salt) is not None:
                continue
            was = model.training
            test = data_mod.Batches(test_split(spec.data, root=root), 500, normalisation=spec.normalisation,
                                    device=device, channels_last=channels_last)
            metrics = {"test": evaluate(model, test, device=device), "history": [],
                       "snapshot_of": config_key(spec, salt), "step": step, "device": str(device),
                       "precision": precision}
            store.put(snap, metrics, model.state_dict(), salt=salt)
            model.train(was)

    return on_step


def _train_simclr(model: CutModel, spec: ModelSpec, train_data, batches, device, checkpoint, progress):
    """SimCLR pre-training of ``model`` (with a projection head), then its classifier fitted as
    a linear probe on the frozen pooled features of the training images (no augmentation)."""
    from . import simclr

    feature_dim = model.shape_at(model.cuts[-1], tuple(train_data.images.shape[1:]))[0]
    net = simclr.SimCLRNet(model, feature_dim, seed=spec.seed).to(device)
    history = train(net, batches, spec.train, device=device, checkpoint=checkpoint, progress=progress,
                    objective=simclr.objective(spec.normalisation, SIMCLR_TEMPERATURE, spec.train.seed),
                    desc=f"SimCLR {spec.model} w{spec.width} seed {spec.seed}")
    model.eval()
    plain = data_mod.Batches(train_data, 500, normalisation=spec.normalisation, device=device,
                             channels_last=channels_last_ok(model))
    with torch.no_grad():
        feats = torch.cat([model.forward_to(x, model.cuts[-1]).float() for x, _ in plain])
    probe = spec.probe or TrainConfig(epochs=30, optimizer="adam", lr=1e-3, batch_size=256)
    losses = simclr.linear_probe(model, feats, plain.split.labels.to(feats.device), epochs=int(probe.epochs),
                                 lr=probe.lr, batch_size=probe.batch_size, seed=probe.seed)
    return history, {"probe_losses": losses}
