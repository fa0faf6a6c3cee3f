"""The model zoo: each paper's model recipes as named functions of (scale, seed, variant).

``bansal_resnet18("demo", seed=0)`` returns the :class:`ModelSpec` of the seed-0 ResNet-18 of
Bansal et al. at the demo scale; ``load_or_train(spec)`` returns that network, trained once and
then read from the store. Every page that asks for the same recipe gets the same cached model,
so pages share models instead of training their own. Per-scale model settings live here, once;
a figure's preset keeps only the figure's own settings.

An untrained network (``trained=False``) keeps its random weights, but its BatchNorm statistics
are recalibrated on a few thousand training images without gradient: in eval mode a fresh BN
has mean 0 and variance 1, i.e. it is the identity, which makes a random deep network
degenerate (activations explode or vanish), which is not what "a random network" means.
"""

from __future__ import annotations

import math
import os
from dataclasses import dataclass, field, replace
from typing import Any

import torch
from torch import nn

from . import data as data_mod
from .datasets import DataSpec, default_normalisation, test_split, train_split
from .datasets import fingerprint as data_fingerprint
from .hardware import as_device, channels_last_ok, compile_wins, resolve_precision, to_memory_format
from .models import CutModel, build_model
from .progress import say
from .scales import SCALES, UnknownScaleError, check_scale
from .store import Store, config_key, note_network
from .train import TrainConfig, evaluate, train


METHODS = ("supervised", "simclr")
SIMCLR_TEMPERATURE = 0.5  # NT-Xent temperature (SimCLR's CIFAR-10 setting)


@dataclass(frozen=True)
class ModelSpec:
    """Everything that determines a trained model (its cache key)."""

    model: str = "preact_resnet18"  # registry name
    width: int = 64  # base width (stage widths width * 2**i)
    data: DataSpec = field(default_factory=DataSpec)  # training data
    normalisation: str = "cifar"  # key of stitchkit.data.NORMALISATION
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
    """Record the network in the run's list of networks used (:func:`stitchkit.store.note_network`)."""
    test = metrics.get("test") if isinstance(metrics, dict) else None
    accuracy = test.get("accuracy") if isinstance(test, dict) else None
    note_network(key, {"model": spec.model, "width": spec.width, "seed": spec.seed, "data": spec.data.dataset,
                       "trained": bool(spec.train.epochs or spec.train.steps),
                       "accuracy": None if accuracy is None else round(float(accuracy), 4)})


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
        sub = train_data.subset(data_mod.stratified_subset(train_data.labels, spec.calibrate_bn, spec.seed))
        recalibrate_batchnorm(model, data_mod.Batches(sub, 250, normalisation=spec.normalisation,
                                                      device=device, channels_last=cl))
    seconds = history[-1]["seconds"] if history else 0.0
    test_batches = data_mod.Batches(test_split(spec.data, root=root), 500, normalisation=spec.normalisation,
                                    device=device, channels_last=cl)
    metrics = {"test": evaluate(model, test_batches, device=device),  # measured in fp32
               "history": history, "train_seconds": seconds,
               "images_per_second": steps * spec.train.batch_size / seconds if steps else None,
               "device": str(device), "precision": precision,
               "compiled": compiled, **extra}
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


# --------------------------------------------------------------------------------------------
# Recipes


def _at(table: dict[str, dict], scale: str, family: str) -> dict:
    """A copy of ``table``'s recipe at ``scale``; a scale the family has no recipe for yet (``gpu``
    comes family by family) is an error naming the ones it has."""
    check_scale(scale)
    if scale not in table:
        raise UnknownScaleError(f"no {scale!r} recipe for {family} yet; its scales: "
                                f"{', '.join(s for s in SCALES if s in table)}")
    return dict(table[scale])


def _sgd(cfg: dict, seed: int) -> TrainConfig:
    return TrainConfig(epochs=cfg.get("epochs", 0.0), steps=cfg.get("steps"), batch_size=128, optimizer="sgd",
                       lr=0.05, momentum=0.9, weight_decay=1e-4, schedule="multistep", milestones=(0.5, 0.75),
                       gamma=0.2, augment=True, seed=seed, stop=cfg.get("stop", 1.0))


def train_snapshots(specs: list[ModelSpec], **kw) -> None:
    """Make sure every spec in ``specs`` (one run at several ``train.stop``) is in the store,
    training the run once: up to the latest missing snapshot, storing the earlier ones on the way."""
    from dataclasses import replace

    store = kw.get("store") or Store()
    kw["store"] = store
    salt = data_fingerprint(specs[0].data, kw.get("root"))
    missing = sorted((s for s in specs if store.get(s, salt=salt) is None), key=lambda s: s.train.stop)
    if missing:
        last = missing[-1]
        if any(replace(s, train=replace(s.train, stop=1.0)) != replace(last, train=replace(last.train, stop=1.0))
               for s in missing):
            raise ValueError("train_snapshots needs snapshots of one run (specs that differ only in train.stop)")
        load_or_train(last, snapshots=tuple(s.train.stop for s in missing[:-1]), **kw)


# Bansal et al.: pre-activation ResNet-18 of width k on CIFAR-10, SGD lr 0.05 (x0.2 at 50% and
# 75%), wd 1e-4, batch 128, crop + flip; paper: width 64, 64k steps. Untrained networks get
# their BN statistics recalibrated on `calibrate_bn` images. Demo: 3 epochs (the width-8 seed-0
# net reaches 66.4% in 2.6 min on 2 cores; 5 epochs gave 71.9% in 4 min: the part's budget decides).
BANSAL_RESNET18 = {
    "smoke": {"width": 8, "train_size": 2048, "epochs": 4, "calibrate_bn": 512},
    "demo": {"width": 8, "train_size": None, "epochs": 3, "calibrate_bn": 2000},
    "paper": {"width": 64, "train_size": None, "steps": 64_000, "calibrate_bn": 2000},
}


def bansal_resnet18(scale: str, seed: int = 0, *, width: int | None = None, width_factor: float = 1.0,
                    train_size: int | None = None, labels: str = "none", label_noise: float = 0.0,
                    epochs: float | None = None, length_factor: float = 1.0, stop: float = 1.0,
                    trained: bool = True, final_bn: bool = True) -> ModelSpec:
    """Bansal et al.'s ResNet-18 at ``scale``: ``width`` overrides the scale's base width,
    ``width_factor`` scales it (x0.5, x2); ``train_size``/``labels``/``label_noise`` pick the
    training data; ``epochs`` overrides the training length and ``length_factor`` scales it
    (epochs or steps, the schedule's milestones with it); ``stop`` takes the network part-way
    through its run (B-F3B's epochs 40, 80, 160 of 160 are stops 0.25, 0.5, 1); ``trained=False``
    is the random network with recalibrated BN statistics."""
    cfg = _at(BANSAL_RESNET18, scale, "Bansal et al.'s ResNet-18")
    base = width if width is not None else cfg["width"]
    w = max(1, int(round(base * width_factor)))
    if length_factor <= 0:
        raise ValueError(f"length_factor must be > 0, got {length_factor}")
    if epochs is not None:
        cfg.update(epochs=epochs, steps=None)
    full = cfg["train_size"] or data_mod.KNOWN_SHAPES["cifar10"][0]
    if train_size is not None and not 128 <= train_size <= full:
        raise ValueError(f"train_size {train_size} is outside [128, {full}] at scale {scale!r} (one batch of 128 "
                         "images at least; the scale's training set at most)")
    size = train_size if train_size is not None and train_size < full else None
    if size is not None and not cfg.get("steps"):
        # the paper trains every ResNet for the same number of steps, whatever its sample size:
        # on fewer images, the scale's epochs of its full training set become steps
        cfg.update(steps=max(1, math.ceil(cfg["epochs"] * (full // 128))), epochs=0.0)
    if length_factor != 1.0:
        if cfg.get("steps"):
            cfg["steps"] = max(1, int(round(cfg["steps"] * length_factor)))
        else:
            cfg["epochs"] = cfg["epochs"] * length_factor
    cfg["stop"] = stop
    if not trained:
        cfg.update(epochs=0.0, steps=None, stop=1.0)
    data = DataSpec("cifar10", train_size=size if size is not None else cfg["train_size"],
                    labels=labels, label_noise=label_noise, label_seed=seed)
    return ModelSpec(model="preact_resnet18", width=w, data=data, normalisation="cifar", seed=seed,
                     train=_sgd(cfg, seed), options=() if final_bn else (("final_bn", False),),
                     calibrate_bn=0 if trained else cfg["calibrate_bn"])



# Bansal et al.'s Myrtle CNN (Page 2018; App. A.2: 80k SGD steps at a constant learning rate of
# 1, crop + flip). At smoke and demo the ResNet-18 recipe (lr 0.05, steps x0.2 at 1/2 and 3/4),
# at the base width of the scale's ResNet-18.
BANSAL_MYRTLE = {
    "smoke": {"width": 8, "train_size": 2048, "epochs": 4, "calibrate_bn": 512},
    "demo": {"width": 8, "train_size": None, "epochs": 3, "calibrate_bn": 2000},
    "paper": {"width": 64, "train_size": None, "steps": 80_000, "calibrate_bn": 2000, "constant_lr": 1.0},
}


def bansal_myrtle(scale: str, seed: int = 0, *, trained: bool = True) -> ModelSpec:
    """Bansal et al.'s Myrtle CNN at ``scale`` (see :data:`BANSAL_MYRTLE`); ``trained=False`` is
    the random network with recalibrated BN statistics."""
    cfg = _at(BANSAL_MYRTLE, scale, "Bansal et al.'s Myrtle CNN")
    if not trained:
        cfg.update(epochs=0.0, steps=None)
    train = _sgd(cfg, seed)
    if "constant_lr" in cfg:
        train = replace(train, lr=cfg["constant_lr"], schedule="constant")
    return ModelSpec(model="myrtle", width=cfg["width"], data=DataSpec("cifar10", train_size=cfg["train_size"]),
                     normalisation="cifar", seed=seed, train=train, calibrate_bn=0 if trained else cfg["calibrate_bn"])


def bansal_vit(scale: str, seed: int = 0, *, trained: bool = True) -> ModelSpec:
    """Bansal et al.'s ViT (App. A.2: patch 4, depth 12, 12 heads, dim 768, pre-trained on
    CIFAR-5m, which is not available offline). ``paper``: that architecture trained on CIFAR-10
    with Balogh & Jelasity's ViT recipe (Adam 1e-3, wd 1e-5, batch 64, 100 epochs); ``smoke`` and
    ``demo``: Balogh & Jelasity's ViT of the scale itself (the same networks as their pages)."""
    if check_scale(scale) == "gpu":
        raise UnknownScaleError("no 'gpu' recipe for Bansal et al.'s ViT yet; its scales: smoke, demo, paper")
    if scale != "paper":
        spec = balogh_model(scale, "vit", seed)
    else:
        spec = ModelSpec(model="vit_ti", width=768, data=DataSpec("cifar10"), normalisation="none", seed=seed,
                         train=_balogh_train(100, seed), options=(("depth", 12), ("heads", 12)))
    return spec if trained else replace(spec, train=replace(spec.train, epochs=0.0, steps=None))


# Bansal et al.'s ResNet-164 (pre-activation bottleneck, He et al. 2016b) with the ResNet-18
# recipe (SGD lr 0.05, 64k steps at paper scale). At demo the same design at depth 20 (two
# bottleneck blocks per stage) and base width 8, 3 epochs: an 18-block ResNet-164 is hours on two
# CPU cores, depth 56 took 15 minutes per network (5 epochs), depth 20 about 5 (5 epochs).
BANSAL_RESNET164 = {
    "smoke": {"width": 4, "depth": 11, "train_size": 2048, "epochs": 4, "calibrate_bn": 512},
    "demo": {"width": 8, "depth": 20, "train_size": None, "epochs": 3, "calibrate_bn": 2000},
    "paper": {"width": 16, "depth": 164, "train_size": None, "steps": 64_000, "calibrate_bn": 2000},
}


def bansal_resnet164(scale: str, seed: int = 0, *, epochs: float | None = None, trained: bool = True) -> ModelSpec:
    """Bansal et al.'s ResNet-164 at ``scale`` (see :data:`BANSAL_RESNET164`); ``epochs``
    overrides the training length; ``trained=False`` is the random network with recalibrated BN."""
    cfg = _at(BANSAL_RESNET164, scale, "Bansal et al.'s ResNet-164")
    if epochs is not None:
        cfg.update(epochs=epochs, steps=None)
    if not trained:
        cfg.update(epochs=0.0, steps=None)
    return ModelSpec(model="preact_resnet164", width=cfg["width"], data=DataSpec("cifar10", train_size=cfg["train_size"]),
                     normalisation="cifar", seed=seed, train=_sgd(cfg, seed), options=(("depth", cfg["depth"]),),
                     calibrate_bn=0 if trained else cfg["calibrate_bn"])


# Bansal et al.'s Figure 6: the same ResNet-18 trained by SimCLR on the CIFAR-10 training images
# (no labels), then a linear probe. The paper gives no recipe; ours is a common CIFAR one: batch
# 256, SGD momentum 0.9, lr 0.06, wd 5e-4, cosine, temperature 0.5; probe Adam 1e-3, 30 epochs.
BANSAL_SIMCLR = {
    "smoke": {"width": 8, "train_size": 2048, "epochs": 2, "probe_epochs": 5},
    "demo": {"width": 16, "train_size": None, "epochs": 3, "probe_epochs": 30},
    "paper": {"width": 64, "train_size": None, "epochs": 500, "probe_epochs": 100},
}


def bansal_simclr(scale: str, seed: int = 0, *, width: int | None = None, epochs: float | None = None,
                  final_bn: bool = True) -> ModelSpec:
    """Bansal et al.'s ResNet-18 trained by SimCLR at ``scale``, its classifier a linear probe."""
    cfg = _at(BANSAL_SIMCLR, scale, "Bansal et al.'s SimCLR ResNet-18")
    train = TrainConfig(epochs=epochs if epochs is not None else cfg["epochs"], batch_size=256, optimizer="sgd",
                        lr=0.06, momentum=0.9, weight_decay=5e-4, schedule="cosine", augment=False, seed=seed)
    probe = TrainConfig(epochs=cfg["probe_epochs"], optimizer="adam", lr=1e-3, weight_decay=0.0, batch_size=256,
                        schedule="cosine", augment=False, seed=seed)
    return ModelSpec(model="preact_resnet18", width=width or _at(BANSAL_RESNET18, scale, "Bansal et al.'s ResNet-18")["width"],
                     data=DataSpec("cifar10", train_size=cfg["train_size"]), normalisation="cifar", seed=seed,
                     train=train, options=() if final_bn else (("final_bn", False),), method="simclr", probe=probe)


# Hernandez et al.: BasicBlock ResNets R_abcd (CIFAR stem) and ResNet-34 on CIFAR-10 with the
# CIFAR mean/std, trained with the stitches' recipe (App. A): SGD momentum 0.9, lr 0.01, wd 0.01,
# batch 256, warmup then cosine, 40 epochs, crop + flip. The authors' scheduler never leaves its
# warmup (a code quirk); we warm up for 5% of the steps, then decay.
HERNANDEZ_RESNET = {
    "smoke": {"width": 4, "train_size": 2048, "epochs": 4, "calibrate_bn": 512},
    "demo": {"width": 8, "train_size": None, "epochs": 4, "calibrate_bn": 2000},
    # one GPU: the paper's width and data, 30 of its 40 epochs (the paper-scale spot check trained
    # R1111 / R2222 for 40 epochs in 84 / 96 s on an H100, to 89.7 / 90.9%)
    "gpu": {"width": 64, "train_size": None, "epochs": 30, "calibrate_bn": 2000},
    "paper": {"width": 64, "train_size": None, "epochs": 40, "calibrate_bn": 2000},
}
HERNANDEZ_ARCHS = tuple(f"r{a}{b}{c}{d}" for a in (1, 2) for b in (1, 2) for c in (1, 2) for d in (1, 2)) + (
    "resnet34",)


def hernandez_resnet(scale: str, arch: str, seed: int = 0, *, width: int | None = None, epochs: float | None = None,
                     trained: bool = True) -> ModelSpec:
    """Hernandez et al.'s ``arch`` (one of :data:`HERNANDEZ_ARCHS`) at ``scale``; ``trained=False``
    is the untrained control with recalibrated BN statistics."""
    if arch not in HERNANDEZ_ARCHS:
        raise ValueError(f"unknown Hernandez et al. architecture {arch!r}; valid: {', '.join(HERNANDEZ_ARCHS)}")
    cfg = _at(HERNANDEZ_RESNET, scale, "Hernandez et al.'s ResNets")
    n = epochs if epochs is not None else cfg["epochs"]
    train = TrainConfig(epochs=n if trained else 0.0, batch_size=256, optimizer="sgd", lr=0.01, momentum=0.9,
                        weight_decay=0.01, schedule="warmup_cosine", warmup=0.05, augment=True, seed=seed)
    return ModelSpec(model=arch, width=width or cfg["width"], data=DataSpec("cifar10", train_size=cfg["train_size"]),
                     normalisation="cifar", seed=seed, train=train, calibrate_bn=0 if trained else cfg["calibrate_bn"])


# Smith & Marcu: torchvision-style ResNet-18 (ImageNet stem) on 28x28 coloured MNIST, SGD lr 0.1,
# momentum 0.9, wd 1e-4, batch 128, 4 epochs, no augmentation, constant learning rate (the
# paper names no schedule); VGG19 (no BN) on the same sets resized to 32x32, SGD lr 1e-2, batch
# 64, 50 epochs. Colour sets are normalised with mean = std = 0.5, greyscale MNIST with MNIST's.
SMITH_RESNET18 = {
    "smoke": {"width": 8, "train_size": 4000, "epochs": 2},
    "demo": {"width": 16, "train_size": 15_000, "epochs": 4},
    "paper": {"width": 64, "train_size": None, "epochs": 4},
}
SMITH_VGG19 = {  # thin nets need fan-in initialisation to leave chance in a few epochs, and then
    # gradient clipping: at demo, lr 1e-2 without it diverged to NaN (seed 0 in bf16 by step 550,
    # seed 1 in fp32 by step 250); the paper names no clipping, so its preset has none
    "smoke": {"width": 8, "hidden": 64, "train_size": 2000, "epochs": 1, "init": "fan_in", "clip_norm": 1.0},
    "demo": {"width": 8, "hidden": 512, "train_size": 15_000, "epochs": 3, "init": "fan_in", "clip_norm": 1.0},
    "paper": {"width": 64, "hidden": 4096, "train_size": None, "epochs": 50, "init": "torchvision", "clip_norm": None},
}
SMITH_DATASETS = ("cmnist_correlated", "cmnist_digit", "cmnist_colour", "cmnist_colour_only", "mnist_grey3")


def _smith_data(dataset: str, train_size: int | None, size: int | None = None) -> DataSpec:
    if dataset not in SMITH_DATASETS:
        raise ValueError(f"unknown Smith & Marcu data set {dataset!r}; valid: {', '.join(SMITH_DATASETS)}")
    return DataSpec(dataset, train_size=train_size, size=size)


def smith_resnet18(scale: str, dataset: str, seed: int = 0, *, width: int | None = None,
                   epochs: float | None = None, train_size: int | None = None) -> ModelSpec:
    """Smith & Marcu's ResNet-18 trained on ``dataset`` (one of :data:`SMITH_DATASETS`) at
    ``scale``; ``width``/``epochs``/``train_size`` override the scale's values."""
    cfg = _at(SMITH_RESNET18, scale, "Smith & Marcu's ResNet-18")
    data = _smith_data(dataset, train_size if train_size is not None else cfg["train_size"])
    train = TrainConfig(epochs=epochs if epochs is not None else cfg["epochs"], batch_size=128, optimizer="sgd",
                        lr=0.1, momentum=0.9, weight_decay=1e-4, schedule="constant", augment=False, seed=seed)
    return ModelSpec(model="resnet18_imagenet", width=width or cfg["width"], data=data,
                     normalisation=default_normalisation(dataset), seed=seed, train=train)


def smith_vgg19(scale: str, dataset: str, seed: int = 0, *, width: int | None = None,
                epochs: float | None = None, train_size: int | None = None) -> ModelSpec:
    """Smith & Marcu's VGG19 (no BN) on ``dataset`` resized to 32x32, at ``scale``."""
    cfg = _at(SMITH_VGG19, scale, "Smith & Marcu's VGG19")
    data = _smith_data(dataset, train_size if train_size is not None else cfg["train_size"], size=32)
    train = TrainConfig(epochs=epochs if epochs is not None else cfg["epochs"], batch_size=64, optimizer="sgd",
                        lr=1e-2, momentum=0.9, weight_decay=1e-4, schedule="constant", augment=False,
                        clip_norm=cfg["clip_norm"], seed=seed)
    return ModelSpec(model="vgg19", width=width or cfg["width"], data=data, normalisation=default_normalisation(dataset),
                     seed=seed, train=train, options=(("hidden", cfg["hidden"]), ("init", cfg["init"])))


# Balogh & Jelasity: BasicBlock ResNet-18 (CIFAR stem) and ViT-Ti (image 32, patch 4, dim 192,
# depth 12, 3 heads, CLS token) on CIFAR-10, inputs in [0, 1] without normalisation, Adam lr
# 1e-3, wd 1e-5, batch 64, crop + flip, 100 epochs. The paper names no learning-rate schedule:
# constant. At demo the ViT is smaller (dim 64, depth 6, 2 heads), said on every page using it.
BALOGH_RESNET18 = {
    "smoke": {"width": 4, "train_size": 2048, "epochs": 2},
    "demo": {"width": 8, "train_size": None, "epochs": 3},
    "paper": {"width": 64, "train_size": None, "epochs": 100},
}
BALOGH_VIT = {
    "smoke": {"width": 32, "depth": 3, "heads": 1, "train_size": 2048, "epochs": 2},
    "demo": {"width": 64, "depth": 6, "heads": 2, "train_size": None, "epochs": 3},
    "paper": {"width": 192, "depth": 12, "heads": 3, "train_size": None, "epochs": 100},
}
BALOGH_ARCHS = ("resnet18", "vit")


def _balogh_train(epochs: float, seed: int) -> TrainConfig:
    return TrainConfig(epochs=epochs, batch_size=64, optimizer="adam", lr=1e-3, weight_decay=1e-5,
                       schedule="constant", augment=True, seed=seed)


def balogh_model(scale: str, arch: str, seed: int = 0, *, epochs: float | None = None) -> ModelSpec:
    """Balogh & Jelasity's ``arch`` ("resnet18" or "vit") at ``scale``, initialised with ``seed``."""
    if arch not in BALOGH_ARCHS:
        raise ValueError(f"unknown Balogh & Jelasity architecture {arch!r}; valid: {', '.join(BALOGH_ARCHS)}")
    cfg = _at(BALOGH_RESNET18 if arch == "resnet18" else BALOGH_VIT, scale, f"Balogh & Jelasity's {arch}")
    data = DataSpec("cifar10", train_size=cfg["train_size"])
    train = _balogh_train(epochs if epochs is not None else cfg["epochs"], seed)
    if arch == "resnet18":
        return ModelSpec(model="resnet18", width=cfg["width"], data=data, normalisation="none", seed=seed, train=train)
    return ModelSpec(model="vit_ti", width=cfg["width"], data=data, normalisation="none", seed=seed, train=train,
                     options=(("depth", cfg["depth"]), ("heads", cfg["heads"])))
