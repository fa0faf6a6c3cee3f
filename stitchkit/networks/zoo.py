"""The model zoo: each paper's network recipes, and the builders that make a network's spec from one.

A :class:`Recipe` is one family's networks at one scale (width, data, length and any change to the
family's optimiser), written once in its family's table (``BANSAL_RESNET18["demo"]``) and held by
the figure presets that train that family (the zoo never reads a scale). A builder makes the spec
of one network from a recipe and a seed: ``bansal_resnet18(BANSAL_RESNET18["demo"], seed=0)``
returns the :class:`ModelSpec` of the seed-0 ResNet-18 of Bansal et al. at the demo scale;
``load_or_train(spec)`` returns that network, trained once and then read from the store. Every
page that asks for the same recipe gets the same cached model, so pages share models instead of
training their own.

An untrained network (``trained=False``) keeps its random weights, but its BatchNorm statistics
are recalibrated on a few thousand training images without gradient: in eval mode a fresh BN
has mean 0 and variance 1, i.e. it is the identity, which makes a random deep network
degenerate (activations explode or vanish), which is not what "a random network" means.
"""

from __future__ import annotations

import dataclasses
import math
from dataclasses import dataclass, replace
from typing import Any, Mapping

from ..base.store import Store
from ..data import integrity
from ..data.datasets import DataSpec, default_normalisation
from ..data.datasets import fingerprint as data_fingerprint
from .network import ModelSpec, load_or_train
from .train import TrainConfig

# --------------------------------------------------------------------------------------------
# Recipes

FAMILIES = ("bansal_resnet18", "bansal_myrtle", "bansal_vit", "bansal_resnet164", "bansal_simclr",
            "hernandez_resnet", "smith_resnet18", "smith_vgg19", "balogh_resnet18", "balogh_vit")

# A recipe's changes to its family's optimiser (the ``gpu`` rows: a larger batch, a warm-up, label
# smoothing, ...): recipe field -> TrainConfig field. A field left None trains by the family's own recipe.
TRAIN_KEYS = {"batch": "batch_size", "optimizer": "optimizer", "lr": "lr", "momentum": "momentum",
              "nesterov": "nesterov", "weight_decay": "weight_decay", "schedule": "schedule", "warmup": "warmup",
              "label_smoothing": "label_smoothing"}


@dataclass(frozen=True)
class Recipe:
    """One family's networks at one scale: what its builder makes a network's spec from. Fields
    left None take the family's default (the paper's), which its builder states."""

    family: str  # the builder it is a recipe of (FAMILIES)
    width: int  # base width (a ViT's embedding dimension)
    train_size: int | None = None  # training images; None: the whole training split
    epochs: float = 0.0  # passes over the training set (0 when steps sets the length)
    steps: int | None = None  # optimiser steps; overrides epochs
    calibrate_bn: int = 0  # an untrained network's BatchNorm statistics: recomputed on this many images
    depth: int | None = None  # ResNet-164 stand-in's and ViT's depth
    heads: int | None = None  # ViT: attention heads
    hidden: int | None = None  # VGG19: width of the classifier's hidden layers
    init: str | None = None  # VGG19: weight initialisation (fan_in | torchvision)
    clip_norm: float | None = None  # clip the gradients' global norm to this (None: never)
    constant_lr: float | None = None  # a constant learning rate instead of the family's schedule
    probe_epochs: float | None = None  # SimCLR: the linear probe's epochs
    batch: int | None = None  # images per step
    optimizer: str | None = None  # sgd | adam
    lr: float | None = None  # peak learning rate
    momentum: float | None = None  # SGD momentum
    nesterov: bool | None = None  # SGD: Nesterov momentum
    weight_decay: float | None = None  # L2, coupled to the gradient
    schedule: str | None = None  # the learning-rate schedule (stitchkit.networks.train.SCHEDULES)
    warmup: float | None = None  # fraction of the steps of linear warm-up
    label_smoothing: float | None = None  # cross-entropy's label smoothing

    def __post_init__(self) -> None:
        if self.family not in FAMILIES:
            raise ValueError(f"unknown network family {self.family!r}; valid: {', '.join(FAMILIES)}")

    def __repr__(self) -> str:  # the fields that are set: what a printed config shows of its networks
        shown = [f"{f.name}={getattr(self, f.name)!r}" for f in dataclasses.fields(self)
                 if f.name in ("family", "width", "train_size") or getattr(self, f.name) not in (None, 0, 0.0)]
        return f"Recipe({', '.join(shown)})"

    def retrain(self, train: TrainConfig) -> TrainConfig:
        """``train`` (the family's optimiser) with the changes this recipe sets (:data:`TRAIN_KEYS`)."""
        changes = {field: getattr(self, key) for key, field in TRAIN_KEYS.items() if getattr(self, key) is not None}
        return replace(train, **changes) if changes else train


def _recipe(family: str, recipe: Recipe) -> Recipe:
    if not isinstance(recipe, Recipe):
        raise TypeError(f"{family} builds from a zoo.Recipe (e.g. zoo.{family.upper()}['demo']), got {recipe!r}")
    if recipe.family != family:
        raise ValueError(f"{family} cannot build from a {recipe.family} recipe")
    return recipe


def _table(family: str, rows: dict[str, dict[str, Any]]) -> dict[str, Recipe]:
    """A family's recipes by scale (``rows``: a dict literal keyed by scale, so that its ``gpu`` row
    stays out of a CPU page's code hash: :mod:`stitchkit.registry.staleness`)."""
    return {scale: Recipe(family, **row) for scale, row in rows.items()}


def at_scale(presets: Mapping[str, Any], **tables: Mapping[str, Recipe]) -> dict[str, Any]:
    """``presets`` (scale -> a figure's config) with each config's recipe fields set from ``tables``
    (field name -> a family's table, scale -> recipe) at the preset's own scale: the one way a
    preset holds its networks' recipes. A table without a recipe at one of the presets' scales is
    an error naming the scales it has."""
    out = {}
    for scale, cfg in presets.items():
        missing = [name for name, table in tables.items() if scale not in table]
        if missing:
            raise ValueError(f"no {scale!r} recipe for {', '.join(missing)}; scales: "
                             + "; ".join(f"{n}: {', '.join(tables[n])}" for n in missing))
        out[scale] = replace(cfg, **{name: table[scale] for name, table in tables.items()})
    return out


def recipe_field(help: str) -> Any:
    """A config field that holds a network recipe, or the config of a page whose networks and
    stitches a figure reuses (X-3 holds B-F2A's and H-F2's), set per scale by :func:`at_scale`:
    printed with the config, never a notebook or command-line parameter."""
    return dataclasses.field(default=None, metadata={"recipe": help})


def train_snapshots(specs: list[ModelSpec], **kw) -> None:
    """Make sure every spec in ``specs`` (one run at several ``train.stop``) is in the store,
    training the run once: up to the latest missing snapshot, storing the earlier ones on the way."""
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


def _sgd(recipe: Recipe, seed: int, *, epochs: float, steps: int | None, stop: float = 1.0) -> TrainConfig:
    """The paper's SGD recipe (batch 128, lr 0.05, x0.2 at 1/2 and 3/4, wd 1e-4), or the recipe's
    shortened one where it sets one (:data:`TRAIN_KEYS`; a ``warmup`` alone means a linear warm-up
    then a cosine decay)."""
    train = TrainConfig(epochs=epochs, steps=steps, batch_size=128, optimizer="sgd", lr=0.05, momentum=0.9,
                        weight_decay=1e-4, schedule="multistep", milestones=(0.5, 0.75), gamma=0.2, augment=True,
                        seed=seed, stop=stop)
    if recipe.warmup is not None:
        train = replace(train, schedule="warmup_cosine")
    return recipe.retrain(train)


# Bansal et al.: pre-activation ResNet-18 of width k on CIFAR-10, SGD lr 0.05 (x0.2 at 50% and
# 75%), wd 1e-4, batch 128, crop + flip; paper: width 64, 64k steps. Untrained networks get
# their BN statistics recalibrated on `calibrate_bn` images.
# Demo (since 2026-12-07, "Networks a reader can believe"): width 16 for 16 epochs at batch 512, Nesterov
# SGD at lr 0.2 after a 10% linear warm-up, then a cosine decay, wd 5e-4, label smoothing 0.1: 85.0% on
# the JPEG CIFAR-10 copy in about 12 minutes of 2 CPU cores with native bf16 (benchmarks/cpu-recipes.md,
# `bansal-r18-w16-e16`; on these CPUs width 16 costs what width 8 does). Until then width 8 for 3
# epochs of the paper's recipe: 62-66%.
BANSAL_RESNET18 = _table("bansal_resnet18", {
    "smoke": dict(width=8, train_size=2048, epochs=4, calibrate_bn=512),
    "demo": dict(width=16, train_size=None, epochs=16, calibrate_bn=2000, batch=512, lr=0.2, nesterov=True,
                 weight_decay=5e-4, warmup=0.1, label_smoothing=0.1),
    "paper": dict(width=64, train_size=None, steps=64_000, calibrate_bn=2000),
    # One GPU: width 64, 40 epochs at batch 512, lr 0.2 after a 10% linear warm-up, cosine decay, wd 5e-4:
    # 90.3% on the JPEG CIFAR-10 copy in 53 s on an H100 (one seed; benchmarks/spot/gpu-recipes.json,
    # 2026-11-27, the best of six candidates: 15-20 epochs 87.7-88.8%, the paper's recipe for 30 epochs
    # 89.1% in 138 s). The paper's networks reach about 95% on the original images.
    "gpu": dict(width=64, train_size=None, epochs=40, calibrate_bn=2000, batch=512, lr=0.2, weight_decay=5e-4,
                warmup=0.1),
})


def bansal_resnet18(recipe: Recipe, seed: int = 0, *, width: int | None = None, width_factor: float = 1.0,
                    train_size: int | None = None, labels: str = "none", label_noise: float = 0.0,
                    epochs: float | None = None, length_factor: float = 1.0, stop: float = 1.0,
                    trained: bool = True, final_bn: bool = True) -> ModelSpec:
    """Bansal et al.'s ResNet-18 by ``recipe``: ``width`` overrides its base width, ``width_factor``
    scales it (x0.5, x2); ``train_size``/``labels``/``label_noise`` pick the training data;
    ``epochs`` overrides the training length and ``length_factor`` scales it (epochs or steps, the
    schedule's milestones with it); ``stop`` takes the network part-way through its run (B-F3B's
    epochs 40, 80, 160 of 160 are stops 0.25, 0.5, 1); ``trained=False`` is the random network
    with recalibrated BN statistics."""
    recipe = _recipe("bansal_resnet18", recipe)
    base = width if width is not None else recipe.width
    w = max(1, int(round(base * width_factor)))
    if length_factor <= 0:
        raise ValueError(f"length_factor must be > 0, got {length_factor}")
    n_epochs, n_steps = (epochs, None) if epochs is not None else (recipe.epochs, recipe.steps)
    full = recipe.train_size or integrity.KNOWN_SHAPES["cifar10"][0]
    if train_size is not None and not 128 <= train_size <= full:
        raise ValueError(f"train_size {train_size} is outside [128, {full}] for this recipe (one batch of 128 "
                         "images at least; the recipe's training set at most)")
    size = train_size if train_size is not None and train_size < full else None
    if size is not None and not n_steps:
        # the paper trains every ResNet for the same number of steps, whatever its sample size:
        # on fewer images, the recipe's epochs of its full training set become steps
        n_steps, n_epochs = max(1, math.ceil(n_epochs * (full // (recipe.batch or 128)))), 0.0
    if length_factor != 1.0:
        if n_steps:
            n_steps = max(1, int(round(n_steps * length_factor)))
        else:
            n_epochs = n_epochs * length_factor
    if not trained:
        n_epochs, n_steps, stop = 0.0, None, 1.0
    data = DataSpec("cifar10", train_size=size if size is not None else recipe.train_size,
                    labels=labels, label_noise=label_noise, label_seed=seed)
    return ModelSpec(model="preact_resnet18", width=w, data=data, normalisation="cifar", seed=seed,
                     train=_sgd(recipe, seed, epochs=n_epochs, steps=n_steps, stop=stop),
                     options=() if final_bn else (("final_bn", False),),
                     calibrate_bn=0 if trained else recipe.calibrate_bn)


# Bansal et al.'s Myrtle CNN (Page 2018; App. A.2: 80k SGD steps at a constant learning rate of
# 1, crop + flip). At smoke the ResNet-18 recipe (lr 0.05, steps x0.2 at 1/2 and 3/4), at the base
# width of the scale's ResNet-18. At demo Page's own short recipe (as the gpu row), 12 epochs at width
# 16: 81.0% in 14 minutes of 2 fp32 cores (benchmarks/cpu-recipes.md, `myrtle-w16-e12`), short of the
# 90% asked of it; width 32 reached 83.7% at three times the cost, which B-F2A's two Myrtle networks do
# not repay (their claim is about connectivity, not accuracy).
BANSAL_MYRTLE = _table("bansal_myrtle", {
    "smoke": dict(width=8, train_size=2048, epochs=4, calibrate_bn=512),
    "demo": dict(width=16, train_size=None, epochs=12, calibrate_bn=2000, batch=512, lr=0.4, nesterov=True,
                 weight_decay=5e-4, schedule="warmup_linear", warmup=5 / 24, label_smoothing=0.2),
    "paper": dict(width=64, train_size=None, steps=80_000, calibrate_bn=2000, constant_lr=1.0),
    # One GPU: the paper's width on all 50k images, in Page's (2018) own short recipe for this network
    # instead of the paper's 80k constant-lr steps: 24 epochs at batch 512, Nesterov SGD, lr 0.4 after a
    # linear warm-up over the first 5 epochs, then a linear decay to zero, label smoothing 0.2, wd 5e-4
    # (Page reports 94% on the original images). Not yet measured here: its accuracy is on the page
    # that trains it. ~2,350 steps, host-bound at ~10.5 ms (1.37 GFLOP an image): ~25 s a network.
    "gpu": dict(width=64, train_size=None, epochs=24, calibrate_bn=2000, batch=512, lr=0.4, nesterov=True,
                weight_decay=5e-4, schedule="warmup_linear", warmup=5 / 24, label_smoothing=0.2),
})


def bansal_myrtle(recipe: Recipe, seed: int = 0, *, trained: bool = True) -> ModelSpec:
    """Bansal et al.'s Myrtle CNN by ``recipe`` (see :data:`BANSAL_MYRTLE`); ``trained=False`` is
    the random network with recalibrated BN statistics."""
    recipe = _recipe("bansal_myrtle", recipe)
    train = (_sgd(recipe, seed, epochs=recipe.epochs, steps=recipe.steps) if trained
             else _sgd(recipe, seed, epochs=0.0, steps=None))
    if recipe.constant_lr is not None:
        train = replace(train, lr=recipe.constant_lr, schedule="constant")
    return ModelSpec(model="myrtle", width=recipe.width, data=DataSpec("cifar10", train_size=recipe.train_size),
                     normalisation="cifar", seed=seed, train=train, calibrate_bn=0 if trained else recipe.calibrate_bn)


# Bansal et al.'s ViT (App. A.2: patch 4, depth 12, 12 heads, dim 768, pre-trained on CIFAR-5m,
# which is not available offline). ``paper``: that architecture trained on CIFAR-10 with Balogh &
# Jelasity's ViT recipe (Adam 1e-3, wd 1e-5, batch 64, 100 epochs); ``smoke``, ``demo`` and
# ``gpu``: Balogh & Jelasity's ViT of the scale itself (the same networks as their pages).


def bansal_vit(recipe: Recipe, seed: int = 0, *, trained: bool = True) -> ModelSpec:
    """Bansal et al.'s ViT by ``recipe`` (:data:`BANSAL_VIT`: Balogh & Jelasity's ViT recipe, or the
    paper's architecture, ``bansal_vit``, with their training recipe); ``trained=False`` is the
    untrained network."""
    if isinstance(recipe, Recipe) and recipe.family == "balogh_vit":
        spec = balogh_model(recipe, seed)
    else:
        recipe = _recipe("bansal_vit", recipe)
        spec = ModelSpec(model="vit_ti", width=recipe.width, data=DataSpec("cifar10", train_size=recipe.train_size),
                         normalisation="none", seed=seed, train=_balogh_train(recipe.epochs, seed),
                         options=(("depth", recipe.depth), ("heads", recipe.heads)))
    return spec if trained else replace(spec, train=replace(spec.train, epochs=0.0, steps=None))


# Bansal et al.'s ResNet-164 (pre-activation bottleneck, He et al. 2016b) with the ResNet-18
# recipe (SGD lr 0.05, 64k steps at paper scale). At demo the same design at depth 20 (two
# bottleneck blocks per stage): an 18-block ResNet-164 is hours on two CPU cores. Since 2026-12-07
# base width 16 for 13 epochs in the ResNet-18's demo recipe (10 epochs reached 79.5% in 18 minutes,
# benchmarks/cpu-recipes.md; until then width 8 for 3 epochs of the paper's optimiser, 61%).
BANSAL_RESNET164 = _table("bansal_resnet164", {
    "smoke": dict(width=4, depth=11, train_size=2048, epochs=4, calibrate_bn=512),
    "demo": dict(width=16, depth=20, train_size=None, epochs=13, calibrate_bn=2000, batch=512, lr=0.2, nesterov=True,
                 weight_decay=5e-4, warmup=0.1, label_smoothing=0.1),
    "paper": dict(width=16, depth=164, train_size=None, steps=64_000, calibrate_bn=2000),
    # One GPU: the paper's network (depth 164, width 16) on all 50k images, in the ResNet-18's measured
    # gpu recipe shortened to 30 epochs (batch 512, lr 0.2 after a 10% warm-up, cosine, wd 5e-4) instead
    # of 64k steps at batch 128. Not yet measured: 1.49 GFLOP an image, but 164 layers make each step
    # host-bound (kernel launches): ~30 ms a step guessed, ~90 s a network for its 2,940 steps.
    "gpu": dict(width=16, depth=164, train_size=None, epochs=30, calibrate_bn=2000, batch=512, lr=0.2,
                weight_decay=5e-4, warmup=0.1),
})


def bansal_resnet164(recipe: Recipe, seed: int = 0, *, epochs: float | None = None,
                     trained: bool = True) -> ModelSpec:
    """Bansal et al.'s ResNet-164 by ``recipe`` (see :data:`BANSAL_RESNET164`); ``epochs``
    overrides the training length; ``trained=False`` is the random network with recalibrated BN."""
    recipe = _recipe("bansal_resnet164", recipe)
    n_epochs, n_steps = (epochs, None) if epochs is not None else (recipe.epochs, recipe.steps)
    if not trained:
        n_epochs, n_steps = 0.0, None
    return ModelSpec(model="preact_resnet164", width=recipe.width,
                     data=DataSpec("cifar10", train_size=recipe.train_size), normalisation="cifar", seed=seed,
                     train=_sgd(recipe, seed, epochs=n_epochs, steps=n_steps), options=(("depth", recipe.depth),),
                     calibrate_bn=0 if trained else recipe.calibrate_bn)


# Bansal et al.'s Figure 6: the same ResNet-18 trained by SimCLR on the CIFAR-10 training images
# (no labels), then a linear probe. The paper gives no recipe; ours is a common CIFAR one: batch
# 256, SGD momentum 0.9, lr 0.06, wd 5e-4, cosine, temperature 0.5; probe Adam 1e-3, 30 epochs.
# Its width is its supervised twin's (BANSAL_RESNET18's at the same scale; a test checks).
BANSAL_SIMCLR = _table("bansal_simclr", {
    "smoke": dict(width=8, train_size=2048, epochs=2, probe_epochs=5),
    # 2 CPU cores: its twin's width (16), 4 epochs. B-F6's premise (the probe within 10 points of the
    # supervised twin, 85% at demo) is out of reach on 2 cores: on an H100, 30 epochs at width 64 gave 69%
    "demo": dict(width=16, train_size=None, epochs=4, probe_epochs=30),
    "paper": dict(width=64, train_size=None, epochs=500, probe_epochs=100),
    # One GPU: the paper's width, 30 of 500 epochs (measured on an H100 at width 64 and this recipe,
    # benchmarks/spot/bansal-f6-simclr-epochs-w64.json: 106 s, its probe 69.3%; 100 epochs gave 75.1%
    # in 355 s, more than a page's share of a loan): B-F6's premise that the SimCLR network performs
    # within 10 points of the supervised one (~90%) is not expected to hold at this length.
    "gpu": dict(width=64, train_size=None, epochs=30, probe_epochs=30),
})


def bansal_simclr(recipe: Recipe, seed: int = 0, *, width: int | None = None, epochs: float | None = None,
                  final_bn: bool = True) -> ModelSpec:
    """Bansal et al.'s ResNet-18 trained by SimCLR by ``recipe``, its classifier a linear probe."""
    recipe = _recipe("bansal_simclr", recipe)
    train = recipe.retrain(TrainConfig(epochs=epochs if epochs is not None else recipe.epochs, batch_size=256,
                                       optimizer="sgd", lr=0.06, momentum=0.9, weight_decay=5e-4, schedule="cosine",
                                       augment=False, seed=seed))
    probe = TrainConfig(epochs=recipe.probe_epochs, optimizer="adam", lr=1e-3, weight_decay=0.0, batch_size=256,
                        schedule="cosine", augment=False, seed=seed)
    return ModelSpec(model="preact_resnet18", width=width or recipe.width,
                     data=DataSpec("cifar10", train_size=recipe.train_size), normalisation="cifar", seed=seed,
                     train=train, options=() if final_bn else (("final_bn", False),), method="simclr", probe=probe)


# Hernandez et al.: BasicBlock ResNets R_abcd (CIFAR stem) and ResNet-34 on CIFAR-10 with the
# CIFAR mean/std, trained with the stitches' recipe (App. A): SGD momentum 0.9, lr 0.01, wd 0.01,
# batch 256, warmup then cosine, 40 epochs, crop + flip. The authors' scheduler never leaves its
# warmup (a code quirk); we warm up for 5% of the steps, then decay.
# Demo (since 2026-12-07): width 16 for 12 epochs in the short recipe the CPU benchmarks chose for every
# CIFAR ResNet (batch 512, Nesterov SGD at lr 0.2 after a 10% warm-up, cosine, wd 5e-4, label smoothing
# 0.1), not the paper's (batch 256, lr 0.01, wd 0.01, 40 epochs): R1111 81.4% in 4.7 min, R2222 81.3%
# and ResNet-34 81.7% at 8 epochs (benchmarks/cpu-recipes.md). Until then width 8, 4 epochs: 53-61%.
HERNANDEZ_RESNET = _table("hernandez_resnet", {
    "smoke": dict(width=4, train_size=2048, epochs=4, calibrate_bn=512),
    "demo": dict(width=16, train_size=None, epochs=12, calibrate_bn=2000, batch=512, lr=0.2, nesterov=True,
                 weight_decay=5e-4, warmup=0.1, label_smoothing=0.1),
    # one GPU: the paper's width and data, 30 of its 40 epochs (the paper-scale spot check trained
    # R1111 / R2222 for 40 epochs in 84 / 96 s on an H100, to 89.7 / 90.9%)
    "gpu": dict(width=64, train_size=None, epochs=30, calibrate_bn=2000),
    "paper": dict(width=64, train_size=None, epochs=40, calibrate_bn=2000),
})
HERNANDEZ_ARCHS = tuple(f"r{a}{b}{c}{d}" for a in (1, 2) for b in (1, 2) for c in (1, 2) for d in (1, 2)) + (
    "resnet34",)


def hernandez_resnet(recipe: Recipe, arch: str, seed: int = 0, *, width: int | None = None,
                     epochs: float | None = None, trained: bool = True) -> ModelSpec:
    """Hernandez et al.'s ``arch`` (one of :data:`HERNANDEZ_ARCHS`) by ``recipe``; ``trained=False``
    is the untrained control with recalibrated BN statistics."""
    if arch not in HERNANDEZ_ARCHS:
        raise ValueError(f"unknown Hernandez et al. architecture {arch!r}; valid: {', '.join(HERNANDEZ_ARCHS)}")
    recipe = _recipe("hernandez_resnet", recipe)
    n = epochs if epochs is not None else recipe.epochs
    train = recipe.retrain(TrainConfig(epochs=n if trained else 0.0, batch_size=256, optimizer="sgd", lr=0.01,
                                       momentum=0.9, weight_decay=0.01, schedule="warmup_cosine", warmup=0.05,
                                       augment=True, seed=seed))
    return ModelSpec(model=arch, width=width or recipe.width, data=DataSpec("cifar10", train_size=recipe.train_size),
                     normalisation="cifar", seed=seed, train=train, calibrate_bn=0 if trained else recipe.calibrate_bn)


# Smith & Marcu: torchvision-style ResNet-18 (ImageNet stem) on 28x28 coloured MNIST, SGD lr 0.1,
# momentum 0.9, wd 1e-4, batch 128, 4 epochs, no augmentation, constant learning rate (the
# paper names no schedule); VGG19 (no BN) on the same sets resized to 32x32, SGD lr 1e-2, batch
# 64, 50 epochs. Colour sets are normalised with mean = std = 0.5, greyscale MNIST with MNIST's.
SMITH_RESNET18 = _table("smith_resnet18", {  # calibrate_bn: the untrained networks' BN statistics (the negative control's senders)
    "smoke": dict(width=8, train_size=4000, epochs=2, calibrate_bn=512),
    # 2 CPU cores (since 2026-12-07): all 60k images, 3 epochs, the paper's SGD with a 5% warm-up and a
    # cosine decay (paper: constant): 98.7% on Digit in 1 minute (benchmarks/cpu-recipes.md,
    # `smith-r18-w16-digit-e3`). Until then 4 epochs on 15k images at a constant rate: 92-96% on Digit.
    "demo": dict(width=16, train_size=None, epochs=3, calibrate_bn=2000, schedule="warmup_cosine", warmup=0.05),
    # one GPU: the paper's networks themselves (width 64, 4 epochs on all 60k images): on a 28x28
    # input the ImageNet stem leaves 7x7 maps, so a network is seconds of an H100
    "gpu": dict(width=64, train_size=None, epochs=4, calibrate_bn=2000),
    "paper": dict(width=64, train_size=None, epochs=4, calibrate_bn=2000),
})
SMITH_VGG19 = _table("smith_vgg19", {  # thin nets need fan-in initialisation to leave chance in a few epochs, and then
    # gradient clipping: at demo, lr 1e-2 without it diverged to NaN (seed 0 in bf16 by step 550,
    # seed 1 in fp32 by step 250); the paper names no clipping, so its preset has none
    "smoke": dict(width=8, hidden=64, train_size=2000, epochs=1, init="fan_in", clip_norm=1.0),
    # 2 CPU cores (since 2026-12-07): width 16 (hidden 512) for 6 epochs on all 60k images at the paper's
    # batch 64 and constant lr 1e-2: 98.4% on Digit in 4.2 minutes (benchmarks/cpu-recipes.md,
    # `smith-vgg19-w16-digit-b64-e6`). Until then width 8 for 3 epochs on 15k images: 87-93% on Digit.
    "demo": dict(width=16, hidden=512, train_size=None, epochs=6, init="fan_in", clip_norm=1.0),
    # one GPU: the paper's VGG19 (width 64, hidden 4096) on all 60k images, shortened: 6 epochs (paper 50) in
    # batches of 256 (paper 64) at the paper's lr 1e-2, decayed by a cosine (the paper names no schedule:
    # constant), 1,410 steps, ~16 s a network (host-bound at ~10.5 ms a step; estimated, not yet measured).
    # Kept from demo, untested at this width: fan-in initialisation (paper: torchvision's) and gradient
    # clipping at global norm 1 (paper: none), deviations that keep a short run off chance and off NaN.
    "gpu": dict(width=64, hidden=4096, train_size=None, epochs=6, init="fan_in", clip_norm=1.0, batch=256,
                schedule="cosine"),
    "paper": dict(width=64, hidden=4096, train_size=None, epochs=50, init="torchvision", clip_norm=None),
})
SMITH_DATASETS = ("cmnist_correlated", "cmnist_digit", "cmnist_colour", "cmnist_colour_only", "mnist_grey3")


def _smith_data(dataset: str, train_size: int | None, size: int | None = None) -> DataSpec:
    if dataset not in SMITH_DATASETS:
        raise ValueError(f"unknown Smith & Marcu data set {dataset!r}; valid: {', '.join(SMITH_DATASETS)}")
    return DataSpec(dataset, train_size=train_size, size=size)


def smith_resnet18(recipe: Recipe, dataset: str, seed: int = 0, *, width: int | None = None,
                   epochs: float | None = None, train_size: int | None = None, trained: bool = True) -> ModelSpec:
    """Smith & Marcu's ResNet-18 trained on ``dataset`` (one of :data:`SMITH_DATASETS`) by
    ``recipe``; ``width``/``epochs``/``train_size`` override the recipe's values; ``trained=False``
    is the untrained network with its BN statistics recalibrated on ``dataset``."""
    recipe = _recipe("smith_resnet18", recipe)
    data = _smith_data(dataset, train_size if train_size is not None else recipe.train_size)
    n = epochs if epochs is not None else recipe.epochs
    train = recipe.retrain(TrainConfig(epochs=n if trained else 0.0, batch_size=128, optimizer="sgd", lr=0.1,
                                       momentum=0.9, weight_decay=1e-4, schedule="constant", augment=False, seed=seed))
    return ModelSpec(model="resnet18_imagenet", width=width or recipe.width, data=data,
                     normalisation=default_normalisation(dataset), seed=seed, train=train,
                     calibrate_bn=0 if trained else recipe.calibrate_bn)


def smith_vgg19(recipe: Recipe, dataset: str, seed: int = 0, *, width: int | None = None,
                epochs: float | None = None, train_size: int | None = None, trained: bool = True) -> ModelSpec:
    """Smith & Marcu's VGG19 (no BN) on ``dataset`` resized to 32x32, by ``recipe``;
    ``trained=False`` is the untrained network (no BN to recalibrate)."""
    recipe = _recipe("smith_vgg19", recipe)
    data = _smith_data(dataset, train_size if train_size is not None else recipe.train_size, size=32)
    n = epochs if epochs is not None else recipe.epochs
    train = recipe.retrain(TrainConfig(epochs=n if trained else 0.0, batch_size=64, optimizer="sgd", lr=1e-2,
                                       momentum=0.9, weight_decay=1e-4, schedule="constant", augment=False,
                                       clip_norm=recipe.clip_norm, seed=seed))
    return ModelSpec(model="vgg19", width=width or recipe.width, data=data,
                     normalisation=default_normalisation(dataset), seed=seed, train=train,
                     options=(("hidden", recipe.hidden), ("init", recipe.init)))


# Balogh & Jelasity: BasicBlock ResNet-18 (CIFAR stem) and ViT-Ti (image 32, patch 4, dim 192,
# depth 12, 3 heads, CLS token) on CIFAR-10, inputs in [0, 1] without normalisation, Adam lr
# 1e-3, wd 1e-5, batch 64, crop + flip, 100 epochs. The paper names no learning-rate schedule:
# constant. At demo the ViT is smaller (dim 64, depth 6, 2 heads), said on every page using it.
BALOGH_RESNET18 = _table("balogh_resnet18", {
    "smoke": dict(width=4, train_size=2048, epochs=2),
    # 2 CPU cores (since 2026-12-07): width 16, the paper's Adam (wd 1e-5) at batch 512 and lr 2e-3 for 24
    # epochs, a 10% warm-up then a cosine decay (the paper names no schedule: constant): 84.3% (seed 0),
    # 0.7 points short of the 85% asked of it; 16 epochs reached 82.9% in 10 minutes of 2 quiet cores
    # (benchmarks/cpu-recipes.md, `balogh-r18-w16-e24`, `-e16`). Until then width 8 for 3 epochs at batch 64
    # and a constant rate: 63-64%.
    "demo": dict(width=16, train_size=None, epochs=24, batch=512, lr=2e-3, schedule="warmup_cosine", warmup=0.1),
    "paper": dict(width=64, train_size=None, epochs=100),
    # One GPU: the paper's network (width 64) on all 50k images with the paper's Adam (lr 1e-3, wd 1e-5),
    # shortened: 30 epochs at batch 512 (~2,930 steps instead of ~78,000 at batch 64), a 10% linear warm-up
    # then a cosine decay (the paper names no schedule: constant). Not yet measured: 3.33 GFLOP an
    # image, ~13.6 ms a step at the ~125 TFLOP/s Bansal's ResNet-18 trained at: ~40 s a network
    # (Bansal's 40 epochs took 53 s). Its accuracy is on the pages that train it.
    "gpu": dict(width=64, train_size=None, epochs=30, batch=512, schedule="warmup_cosine", warmup=0.1),
})
BALOGH_VIT = _table("balogh_vit", {
    "smoke": dict(width=32, depth=3, heads=1, train_size=2048, epochs=2),
    # 2 CPU cores (since 2026-12-07): the same reduced ViT for 16 epochs at batch 512, Adam lr 1e-3 after a 10%
    # warm-up, then a cosine decay: 62.3% in 25 minutes of 2 cores (benchmarks/cpu-recipes.md,
    # `balogh-vit-d64x6-e16`; the paper's ViT-Ti is hours here). Until then 3 epochs at batch 64: 43-47%.
    "demo": dict(width=64, depth=6, heads=2, train_size=None, epochs=16, batch=512, schedule="warmup_cosine",
                 warmup=0.1),
    "paper": dict(width=192, depth=12, heads=3, train_size=None, epochs=100),
    # One GPU: the paper's ViT-Ti (dim 192, depth 12, 3 heads, patch 4) on all 50k images with the paper's
    # Adam (lr 1e-3, wd 1e-5), shortened: 40 epochs at batch 512 (~3,900 steps), a 10% linear warm-up
    # (a transformer's Adam at 8x the paper's batch) then a cosine decay; more epochs than the ResNet's,
    # as a ViT without a convolution's prior learns CIFAR-10 more slowly. Not yet measured: 2.07 GFLOP an
    # image, ~35 s by FLOPs at the ResNet's rate, up to ~70 s if its small matrices and attention run at
    # half that rate. Also Bansal et al.'s ViT at gpu (BANSAL_VIT).
    "gpu": dict(width=192, depth=12, heads=3, train_size=None, epochs=40, batch=512, schedule="warmup_cosine",
                warmup=0.1),
})
BALOGH_ARCHS = ("resnet18", "vit")
BALOGH = {"resnet18": BALOGH_RESNET18, "vit": BALOGH_VIT}  # the recipe table of each architecture

BANSAL_VIT = {**{s: BALOGH_VIT[s] for s in ("smoke", "demo", "gpu")},
              "paper": Recipe("bansal_vit", width=768, depth=12, heads=12, train_size=None, epochs=100)}


def _balogh_train(epochs: float, seed: int) -> TrainConfig:
    return TrainConfig(epochs=epochs, batch_size=64, optimizer="adam", lr=1e-3, weight_decay=1e-5,
                       schedule="constant", augment=True, seed=seed)


def balogh_model(recipe: Recipe, seed: int = 0, *, epochs: float | None = None) -> ModelSpec:
    """Balogh & Jelasity's ResNet-18 or ViT (the recipe's family: :data:`BALOGH`), initialised
    with ``seed``."""
    if not isinstance(recipe, Recipe) or recipe.family not in ("balogh_resnet18", "balogh_vit"):
        raise ValueError(f"balogh_model builds from a balogh_resnet18 or balogh_vit recipe, got {recipe!r}")
    data = DataSpec("cifar10", train_size=recipe.train_size)
    train = recipe.retrain(_balogh_train(epochs if epochs is not None else recipe.epochs, seed))
    if recipe.family == "balogh_resnet18":
        return ModelSpec(model="resnet18", width=recipe.width, data=data, normalisation="none", seed=seed,
                         train=train)
    return ModelSpec(model="vit_ti", width=recipe.width, data=data, normalisation="none", seed=seed, train=train,
                     options=(("depth", recipe.depth), ("heads", recipe.heads)))



# --------------------------------------------------------------------------------------------
# A recipe in words

_EXAMPLE = {  # family -> the spec of one of its networks (seed 0), which the recipe's words describe
    "bansal_resnet18": lambda r: bansal_resnet18(r, 0),
    "bansal_myrtle": lambda r: bansal_myrtle(r, 0),
    "bansal_vit": lambda r: bansal_vit(r, 0),
    "bansal_resnet164": lambda r: bansal_resnet164(r, 0),
    "bansal_simclr": lambda r: bansal_simclr(r, 0),
    "hernandez_resnet": lambda r: hernandez_resnet(r, "r1111", 0),
    "smith_resnet18": lambda r: smith_resnet18(r, "cmnist_digit", 0),
    "smith_vgg19": lambda r: smith_vgg19(r, "cmnist_digit", 0),
    "balogh_resnet18": lambda r: balogh_model(r, 0),
    "balogh_vit": lambda r: balogh_model(r, 0),
}


def describe(recipe: Recipe) -> str:
    """``recipe`` in words, as its family's builder trains it (the family's own optimiser with the
    changes the recipe sets): "width 16, all training images, 16 epochs at batch 512, SGD
    (Nesterov, momentum 0.9) at lr 0.2, ...". Pages glue it into their prose (``recipe_net``, by
    the config field that holds the recipe), so that what a page says of its networks is what ran."""
    spec = _EXAMPLE[recipe.family](recipe)
    shape = [f"{'dimension' if spec.model.startswith('vit') else 'width'} {spec.width}"]
    shape += [f"{k} {v}" for k, v in spec.options if k in ("depth", "heads", "hidden")]
    size = spec.data.train_size
    data = "all training images" if size is None else f"{size:,} training images"
    if spec.method == "simclr" and spec.probe is not None:
        pre = spec.train.describe().replace("no augmentation", "SimCLR's augmented views, no labels")
        probe = spec.probe.describe().replace(", no augmentation", "")
        return f"{', '.join(shape)}, {data}, SimCLR: {pre}; then a linear probe: {probe}"
    return f"{', '.join(shape)}, {data}, {spec.train.describe()}"
