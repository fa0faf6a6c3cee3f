"""Content-addressed artifact store, and ``load_or_train``: the one way notebooks get models.

An entry is one file ``<cache>/store/<key[:2]>/<key>.pt`` where ``key`` is the SHA-256 of the
canonical JSON of its configuration (plus a format version). The file starts with a header line
``STITCHKIT-ENTRY 1 <sha256 of payload>`` followed by the payload (``torch.save`` of config,
metrics and tensors). Writes are atomic (temporary file + rename); a truncated or corrupt entry
fails its checksum, is deleted and recomputed. Training checkpoints live beside the store under
``partial/<key>.pt`` so an interrupted training resumes.
"""

from __future__ import annotations

import dataclasses
import hashlib
import io
import json
import time
import warnings
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Callable

import torch

from . import data as data_mod
from . import paths
from .io import atomic_write_bytes
from .models import CutModel, build_model
from .train import TrainConfig, default_device, evaluate, train

FORMAT_VERSION = 1
_MAGIC = b"STITCHKIT-ENTRY"


class CorruptEntryError(RuntimeError):
    pass


def config_key(config: Any) -> str:
    """SHA-256 of the canonical JSON of ``config`` (dataclasses become dicts, keys sorted)."""
    if dataclasses.is_dataclass(config):
        config = dataclasses.asdict(config)
    blob = json.dumps({"format": FORMAT_VERSION, "config": config}, sort_keys=True, default=str)
    return hashlib.sha256(blob.encode()).hexdigest()


@dataclass
class Entry:
    key: str
    config: dict
    metrics: dict
    tensors: dict[str, torch.Tensor]


class Store:
    """A folder of content-addressed entries."""

    def __init__(self, root: str | Path | None = None) -> None:
        self.root = Path(root) if root is not None else paths.cache_root() / "store"

    def path(self, key: str) -> Path:
        return self.root / key[:2] / f"{key}.pt"

    def partial(self, key: str) -> Path:
        return self.root.parent / "partial" / f"{key}.pt"

    def put(self, config: Any, metrics: dict, tensors: dict[str, torch.Tensor]) -> Entry:
        key = config_key(config)
        cfg = dataclasses.asdict(config) if dataclasses.is_dataclass(config) else config
        buf = io.BytesIO()
        torch.save({"config": cfg, "metrics": metrics,
                    "tensors": {k: v.detach().cpu() for k, v in tensors.items()}}, buf)
        payload = buf.getvalue()
        header = b"%s %d %s\n" % (_MAGIC, FORMAT_VERSION, hashlib.sha256(payload).hexdigest().encode())
        atomic_write_bytes(self.path(key), header + payload)
        return Entry(key, cfg, metrics, tensors)

    def read(self, key: str) -> Entry:
        """Read and verify an entry; raises FileNotFoundError or CorruptEntryError."""
        raw = self.path(key).read_bytes()
        head, sep, payload = raw.partition(b"\n")
        parts = head.split(b" ")
        if not sep or len(parts) != 3 or parts[0] != _MAGIC:
            raise CorruptEntryError(f"{self.path(key)}: bad header")
        if hashlib.sha256(payload).hexdigest().encode() != parts[2]:
            raise CorruptEntryError(f"{self.path(key)}: checksum mismatch (truncated or corrupt)")
        obj = torch.load(io.BytesIO(payload), map_location="cpu", weights_only=False)
        return Entry(key, obj["config"], obj["metrics"], obj["tensors"])

    def get(self, config: Any) -> Entry | None:
        """The entry for ``config``, or None if absent; a corrupt entry is removed (and None)."""
        key = config_key(config)
        try:
            return self.read(key)
        except FileNotFoundError:
            return None
        except Exception as exc:  # corrupt, truncated, unreadable: recompute
            warnings.warn(f"cache entry {key[:12]} is corrupt ({exc}); recomputing", stacklevel=2)
            self.path(key).unlink(missing_ok=True)
            return None

    def get_or_compute(self, config: Any, compute: Callable[[], tuple[dict, dict[str, torch.Tensor]]]) -> Entry:
        """Return the stored entry for ``config`` or compute (metrics, tensors), store and return it."""
        entry = self.get(config)
        if entry is None:
            metrics, tensors = compute()
            entry = self.put(config, metrics, tensors)
        return entry


# --------------------------------------------------------------------------------------------
# Trained models


LABEL_TRANSFORMS = ("none", "objects_vs_animals", "random")


@dataclass(frozen=True)
class ModelSpec:
    """Everything that determines a trained model (its cache key)."""

    model: str = "preact_resnet18"  # registry name
    width: int = 64  # base width (stage widths width * 2**i)
    dataset: str = "cifar10"  # cifar10 | mnist
    normalisation: str = "cifar"  # key of stitchkit.data.NORMALISATION
    train_size: int | None = None  # stratified subset of the training split; None = all
    subset_seed: int = 0  # seed of that subset
    labels: str = "none"  # none | objects_vs_animals | random
    label_noise: float = 0.0  # with labels='random': fraction of labels replaced
    seed: int = 0  # weight initialisation
    train: TrainConfig = field(default_factory=TrainConfig)

    def __post_init__(self) -> None:
        if self.labels not in LABEL_TRANSFORMS:
            raise ValueError(f"unknown label transform {self.labels!r}; valid: {', '.join(LABEL_TRANSFORMS)}")
        if self.dataset not in data_mod.DATASETS:
            raise ValueError(f"unknown dataset {self.dataset!r}; valid: {', '.join(data_mod.DATASETS)}")
        if self.normalisation not in data_mod.NORMALISATION:
            raise ValueError(f"unknown normalisation {self.normalisation!r}; "
                             f"valid: {', '.join(data_mod.NORMALISATION)}")


def training_split(spec: ModelSpec, root: str | Path | None = None) -> data_mod.Split:
    """The training data ``spec`` describes: subset, then label transform."""
    split = data_mod.load(spec.dataset, "train", root)
    if spec.train_size is not None:
        split = split.subset(data_mod.stratified_subset(split.labels, spec.train_size, spec.subset_seed))
    if spec.labels == "random":
        return split.with_labels(data_mod.randomise_labels(split.labels, spec.label_noise, split.num_classes,
                                                           seed=spec.seed))
    return _task_labels(split, spec)


def task_test_split(spec: ModelSpec, root: str | Path | None = None) -> data_mod.Split:
    """The test data for ``spec``'s task (true labels, remapped for a coarse task)."""
    return _task_labels(data_mod.load(spec.dataset, "test", root), spec)


def _task_labels(split: data_mod.Split, spec: ModelSpec) -> data_mod.Split:
    if spec.labels == "objects_vs_animals":
        return split.with_labels(data_mod.remap_labels(split.labels, data_mod.OBJECTS_VS_ANIMALS),
                                 ("animal", "object"))
    return split


def _build(spec: ModelSpec, num_classes: int, in_channels: int) -> CutModel:
    return build_model(spec.model, seed=spec.seed, width=spec.width, num_classes=num_classes, in_channels=in_channels)


def load_or_train(spec: ModelSpec, *, device: torch.device | str | None = None, store: Store | None = None,
                  root: str | Path | None = None, progress: bool = True) -> tuple[CutModel, dict]:
    """The trained model for ``spec`` (from the cache, else trained and stored) and its metrics.

    Metrics: test accuracy/loss on the full test split, per-epoch history, images/s. Training
    checkpoints after each epoch, so an interrupted call resumes where it stopped.
    ``spec.train.epochs == 0`` gives the untrained (randomly initialised) model.
    """
    device = torch.device(device or default_device())
    store = store or Store()
    key = config_key(spec)
    train_split = training_split(spec, root)
    num_classes = int(train_split.num_classes)
    in_ch = int(train_split.images.shape[1])
    model = _build(spec, num_classes, in_ch)
    entry = store.get(spec)
    if entry is None:
        model.to(device)
        cl = spec.train.precision == "bf16"
        if cl:
            model.to(memory_format=torch.channels_last)
        batches = data_mod.Batches(train_split, spec.train.batch_size, normalisation=spec.normalisation,
                                   shuffle=True, augment=spec.train.augment, drop_last=True, seed=spec.train.seed,
                                   device=device, channels_last=cl)
        t0 = time.perf_counter()
        history = [] if spec.train.total_steps(len(batches)) == 0 else train(
            model, batches, spec.train, device=device, checkpoint=store.partial(key),
            desc=f"{spec.model} w{spec.width} seed {spec.seed}", progress=progress)
        seconds = time.perf_counter() - t0
        steps = spec.train.total_steps(len(batches))
        test_batches = data_mod.Batches(task_test_split(spec, root), 500, normalisation=spec.normalisation,
                                        device=device, channels_last=cl)
        metrics = {"test": evaluate(model, test_batches, device=device, precision=spec.train.precision),
                   "history": history, "train_seconds": seconds,
                   "images_per_second": steps * spec.train.batch_size / seconds if steps else None,
                   "device": str(device)}
        entry = store.put(spec, metrics, model.state_dict())
        store.partial(key).unlink(missing_ok=True)
    else:
        model.load_state_dict(entry.tensors)
    model.to(device)
    if spec.train.precision == "bf16":
        model.to(memory_format=torch.channels_last)
    return model.eval(), entry.metrics


# --------------------------------------------------------------------------------------------
# Trained stitches


@dataclass(frozen=True)
class StitchSpec:
    """Everything that determines a task-loss-matched stitch and its test accuracy."""

    sender: ModelSpec
    receiver: ModelSpec
    cut_i: str  # sender cut
    cut_j: str  # receiver cut
    kind: str = "bn_conv_bn"  # see stitchkit.stitching.STITCH_KINDS
    kernel_size: int = 1
    frozen_bn: str = "eval"  # eval | train (the papers' code quirk)
    train: TrainConfig = field(default_factory=TrainConfig)
    train_size: int | None = None  # stratified subset of the training split for the stitch
    test_size: int | None = None  # stratified subset of the test split for evaluation
    subset_seed: int = 0
    init_seed: int = 0  # stitch initialisation


def eval_split(dataset: str, test_size: int | None, seed: int = 0, root: str | Path | None = None) -> data_mod.Split:
    test = data_mod.load(dataset, "test", root)
    if test_size is not None:
        test = test.subset(data_mod.stratified_subset(test.labels, test_size, seed))
    return test


def load_or_stitch(spec: StitchSpec, sender: CutModel, receiver: CutModel, *, device: torch.device | str | None = None,
                   store: Store | None = None, activations=None, root: str | Path | None = None,
                   progress: bool = True) -> Entry:
    """Train (or fetch) the stitch ``spec`` describes between the given models; metrics hold
    ``accuracy`` (stitched, test) and ``history``. ``activations`` (a
    :class:`stitchkit.stitching.ActivationCache`) shares sender activations across receivers."""
    from . import stitching

    store = store or Store()
    device = torch.device(device or default_device())

    def compute() -> tuple[dict, dict[str, torch.Tensor]]:
        train_split = data_mod.load(spec.sender.dataset, "train", root)
        if spec.train_size is not None:
            train_split = train_split.subset(data_mod.stratified_subset(train_split.labels, spec.train_size,
                                                                        spec.subset_seed))
        test = eval_split(spec.sender.dataset, spec.test_size, spec.subset_seed, root)
        stitched = stitching.stitch_models(sender, spec.cut_i, receiver, spec.cut_j, kind=spec.kind,
                                           frozen_bn=spec.frozen_bn, kernel_size=spec.kernel_size,
                                           seed=spec.init_seed, device=device,
                                           input_shape=tuple(test.images.shape[1:]))
        norm, prec = spec.sender.normalisation, spec.train.precision
        sender_key = config_key(spec.sender)
        acts_train = acts_test = None
        if stitching.can_cache_activations(spec.train, spec.frozen_bn):
            cache = activations or stitching.ActivationCache()
            tag = f"train:{spec.train_size}:{spec.subset_seed}"
            acts_train = cache.get((sender_key, spec.cut_i, tag), lambda: stitching.sender_activations(
                sender, spec.cut_i, train_split, normalisation=norm, device=device, precision=prec))
            acts_test = cache.get((sender_key, spec.cut_i, f"test:{spec.test_size}:{spec.subset_seed}"),
                                  lambda: stitching.sender_activations(sender, spec.cut_i, test, normalisation=norm,
                                                                       device=device, precision=prec))
        history = stitching.train_stitch(stitched, train_split, spec.train, normalisation=norm, device=device,
                                         activations=acts_train, desc=f"stitch {spec.cut_i}->{spec.cut_j}",
                                         progress=progress)
        result = stitching.evaluate_stitch(stitched, test, normalisation=norm, device=device, precision=prec,
                                           activations=acts_test)
        return {**result, "history": history}, stitched.stitch.state_dict()

    return store.get_or_compute(spec, compute)
