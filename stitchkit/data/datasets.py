"""Dataset registry: which images and labels a recipe trains and tests on.

A :class:`DataSpec` names a registered base dataset and the derivations applied to it: a
seeded stratified subset of the training split, a label transform (Bansal et al.'s
objects-vs-animals task, or a fraction of random labels). Base datasets are registered by name
with a loader ``(split, root) -> Split``; ``cifar10`` and ``mnist`` read the data root through
:mod:`stitchkit.data.batches`, and derived sets (Smith & Marcu's coloured MNIST) register the same way.

A ``size`` resizes every image (bilinear), e.g. 28x28 MNIST sets to VGG19's 32x32.

``train_split(spec)`` and ``test_split(spec)`` are the one way the zoo and the stitch grid get
data, so two recipes that name the same spec see the same images. ``fingerprint(spec)`` names
the data itself (its source's content): the zoo and the grid pass it as the salt of their cache
keys, so a model is never reused for different data under the same spec.
"""

from __future__ import annotations

import hashlib
import os
from dataclasses import dataclass
from functools import lru_cache, partial
from typing import Callable

import torch

from . import archives, colour_mnist, splits

Loader = Callable[[str, "str | os.PathLike | None"], splits.Split]
_DATASETS: dict[str, tuple[Loader, str]] = {}

LABEL_TRANSFORMS = ("none", "objects_vs_animals", "random")


def register_dataset(name: str, normalisation: str) -> Callable[[Loader], Loader]:
    """Register a base dataset ``name`` whose images a recipe normalises with ``normalisation``
    by default (a key of :data:`stitchkit.data.batches.NORMALISATION`)."""
    def deco(fn: Loader) -> Loader:
        if name in _DATASETS:
            raise ValueError(f"dataset {name!r} registered twice")
        _DATASETS[name] = (fn, normalisation)
        return fn
    return deco


def list_datasets() -> list[str]:
    return sorted(_DATASETS)


def check_dataset(name: str) -> str:
    if name not in _DATASETS:
        raise ValueError(f"unknown dataset {name!r}; valid: {', '.join(list_datasets())}")
    return name


def default_normalisation(name: str) -> str:
    return _DATASETS[check_dataset(name)][1]


@register_dataset("cifar10", normalisation="cifar")
def _cifar10(split: str, root: str | os.PathLike | None = None) -> splits.Split:
    return archives.load("cifar10", split, root)


@register_dataset("mnist", normalisation="mnist")
def _mnist(split: str, root: str | os.PathLike | None = None) -> splits.Split:
    return archives.load("mnist", split, root)


# Smith & Marcu's coloured-MNIST sets, derived from MNIST (:mod:`stitchkit.data.colour_mnist`)
for _name, (_variant, _normalisation) in colour_mnist.DATASETS.items():
    register_dataset(_name, _normalisation)(partial(colour_mnist.load, _variant))


@dataclass(frozen=True)
class DataSpec:
    """A registered dataset and the derivations a recipe applies to it."""

    dataset: str = "cifar10"  # registered base dataset
    train_size: int | None = None  # stratified subset of the training split; None = all
    subset_seed: int = 0  # seed of that subset
    labels: str = "none"  # none | objects_vs_animals | random
    label_noise: float = 0.0  # with labels='random': fraction of training labels replaced
    label_seed: int = 0  # seed of the random labels
    size: int | None = None  # resize images to size x size (bilinear); None = as stored

    def __post_init__(self) -> None:
        check_dataset(self.dataset)
        if self.labels not in LABEL_TRANSFORMS:
            raise ValueError(f"unknown label transform {self.labels!r}; valid: {', '.join(LABEL_TRANSFORMS)}")
        if not 0.0 <= self.label_noise <= 1.0:
            raise ValueError(f"label_noise must be in [0, 1], got {self.label_noise}")
        if self.train_size is not None and self.train_size < 1:
            raise ValueError(f"train_size must be >= 1 or None, got {self.train_size}")
        if self.size is not None and self.size < 1:
            raise ValueError(f"size must be >= 1 or None, got {self.size}")


def base_split(dataset: str, split: str, root: str | os.PathLike | None = None) -> splits.Split:
    """The undecorated ``split`` of a registered dataset."""
    return _DATASETS[check_dataset(dataset)][0](split, root)


@lru_cache(maxsize=8)
def _resized(dataset: str, split: str, size: int, root: str | None) -> splits.Split:
    s = base_split(dataset, split, root)
    x = torch.nn.functional.interpolate(s.images.float(), size=(size, size), mode="bilinear", align_corners=False,
                                        antialias=True)
    return splits.Split(x.round_().clamp_(0, 255).to(torch.uint8), s.labels, s.classes, s.fingerprint)


def _split(spec: DataSpec, split: str, root) -> splits.Split:
    if spec.size is None:
        return base_split(spec.dataset, split, root)
    return _resized(spec.dataset, split, spec.size, None if root is None else str(root))


def train_split(spec: DataSpec, root: str | os.PathLike | None = None) -> splits.Split:
    """The training data ``spec`` describes: subset, then label transform."""
    split = _split(spec, "train", root)
    if spec.train_size is not None:
        split = split.subset(splits.stratified_subset(split.labels, spec.train_size, spec.subset_seed))
    if spec.labels == "random":
        return split.with_labels(splits.randomise_labels(split.labels, spec.label_noise, split.num_classes,
                                                       seed=spec.label_seed))
    return _task_labels(split, spec)


def test_split(spec: DataSpec, size: int | None = None, seed: int = 0,
               root: str | os.PathLike | None = None) -> splits.Split:
    """The test data for ``spec``'s task (true labels, remapped for a coarse task); ``size``
    takes a seeded stratified subset."""
    split = _split(spec, "test", root)
    if size is not None:
        split = split.subset(splits.stratified_subset(split.labels, size, seed))
    return _task_labels(split, spec)


def fingerprint(spec: DataSpec, root: str | os.PathLike | None = None) -> str:
    """The identity (64 hex digits) of the data ``spec``'s dataset reads under ``root``: for a
    base dataset, its source's fingerprint (:func:`stitchkit.data.archives.fingerprint`), the same for
    both splits; for a derived dataset whose splits carry no fingerprint, a hash of their content.

    The derivations named in ``spec`` (subset, labels) are not part of it: they are in the spec,
    which the cache keys hash anyway. Loads the splits (memoised per process).
    """
    prints = []
    for split in ("train", "test"):
        s = base_split(spec.dataset, split, root)
        prints.append(s.fingerprint or _content_hash(s))
    return prints[0] if prints[0] == prints[1] else hashlib.sha256("|".join(prints).encode()).hexdigest()


def combined_fingerprint(*specs: DataSpec, root: str | os.PathLike | None = None) -> str:
    """One fingerprint for everything ``specs`` read (e.g. a stitch's data, its sender's and its
    receiver's training data): :func:`fingerprint` when they all read the same data, else a hash
    of the distinct fingerprints, sorted."""
    prints = sorted({fingerprint(s, root) for s in specs})
    return prints[0] if len(prints) == 1 else hashlib.sha256("|".join(prints).encode()).hexdigest()


def _content_hash(split: splits.Split) -> str:
    h = hashlib.sha256()
    h.update(repr((tuple(split.images.shape), split.classes)).encode())
    h.update(split.images.cpu().contiguous().numpy().tobytes())
    h.update(split.labels.cpu().contiguous().numpy().tobytes())
    return h.hexdigest()


def _task_labels(split: splits.Split, spec: DataSpec) -> splits.Split:
    if spec.labels == "objects_vs_animals":
        return split.with_labels(splits.remap_labels(split.labels, splits.OBJECTS_VS_ANIMALS), ("animal", "object"))
    return split


test_split.__test__ = False  # not a pytest test despite its name

