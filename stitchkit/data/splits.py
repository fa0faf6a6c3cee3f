"""A dataset split held in memory (:class:`Split`), and seeded subsets and label transforms of one.

A split is held whole: ``images`` is ``(N, C, H, W)`` uint8 and ``labels`` is ``(N,)`` int64.
:data:`DATASETS` and :data:`SPLITS` name what can be loaded; :mod:`stitchkit.data.archives` reads a
split from the data root and :class:`stitchkit.data.batches.Batches` iterates over one in batches.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Sequence

import torch

DATASETS = ("cifar10", "mnist")
SPLITS = ("train", "test")


@dataclass(frozen=True)
class Split:
    """One split of a dataset held as tensors: images (N, C, H, W) uint8, labels (N,) int64."""

    images: torch.Tensor
    labels: torch.Tensor
    classes: tuple[str, ...]
    fingerprint: str = ""  # identity of the source data (see :func:`fingerprint`); "" = unknown

    def __post_init__(self) -> None:
        if self.images.dtype != torch.uint8 or self.images.ndim != 4:
            raise ValueError(f"images must be (N, C, H, W) uint8, got {tuple(self.images.shape)} {self.images.dtype}")
        if self.labels.shape != (self.images.shape[0],):
            raise ValueError(f"labels must be ({self.images.shape[0]},), got {tuple(self.labels.shape)}")

    def __len__(self) -> int:
        return int(self.images.shape[0])

    @property
    def num_classes(self) -> int:
        return len(self.classes)

    def subset(self, index: torch.Tensor | Sequence[int]) -> "Split":
        index = torch.as_tensor(index, dtype=torch.long)
        return Split(self.images[index], self.labels[index], self.classes, self.fingerprint)

    def with_labels(self, labels: torch.Tensor, classes: Sequence[str] | None = None) -> "Split":
        return Split(self.images, labels.to(torch.int64), tuple(classes) if classes else self.classes,
                     self.fingerprint)

    def to(self, device: torch.device | str) -> "Split":
        return Split(self.images.to(device), self.labels.to(device), self.classes, self.fingerprint)


# --------------------------------------------------------------------------------------------
# Subsets and label transforms


def stratified_subset(labels: torch.Tensor, n: int, seed: int = 0) -> torch.Tensor:
    """Indices of a seeded subset of size ``n`` with classes as equal as possible (sorted)."""
    labels = labels.cpu()
    total = labels.numel()
    if not 0 < n <= total:
        raise ValueError(f"subset size must be in 1..{total}, got {n}")
    if n == total:
        return torch.arange(total)
    g = torch.Generator().manual_seed(seed)
    classes = labels.unique()
    per_class = [torch.nonzero(labels == c).flatten() for c in classes]
    per_class = [idx[torch.randperm(idx.numel(), generator=g)] for idx in per_class]
    quota = [n // len(classes)] * len(classes)
    for i in torch.randperm(len(classes), generator=g)[: n - sum(quota)].tolist():
        quota[i] += 1
    chosen = torch.cat([idx[:q] for idx, q in zip(per_class, quota)])
    return chosen.sort().values


# Bansal et al.'s coarse task: animals (bird, cat, deer, dog, frog, horse) vs objects. The
# catalogue lists cat, dog, frog, horse, deer = 0 and the rest = 1; we follow the catalogue.
OBJECTS_VS_ANIMALS = {0: 1, 1: 1, 2: 1, 3: 0, 4: 0, 5: 0, 6: 0, 7: 0, 8: 1, 9: 1}


def remap_labels(labels: torch.Tensor, mapping: dict[int, int]) -> torch.Tensor:
    """Map each label through ``mapping`` (every label present must be a key)."""
    missing = sorted(set(labels.unique().tolist()) - set(mapping))
    if missing:
        raise ValueError(f"labels {missing} have no entry in the mapping (keys: {sorted(mapping)})")
    table = torch.zeros(max(mapping) + 1, dtype=torch.int64)
    for k, v in mapping.items():
        table[k] = v
    return table[labels]


def randomise_labels(labels: torch.Tensor, fraction: float, num_classes: int, seed: int = 0) -> torch.Tensor:
    """Replace a seeded ``fraction`` of labels by uniformly random classes (as in Zhang et al. 2017)."""
    if not 0.0 <= fraction <= 1.0:
        raise ValueError(f"fraction must be in [0, 1], got {fraction}")
    g = torch.Generator().manual_seed(seed)
    out = labels.clone()
    k = int(round(fraction * labels.numel()))
    idx = torch.randperm(labels.numel(), generator=g)[:k]
    out[idx] = torch.randint(0, num_classes, (k,), generator=g)
    return out
