"""Device batches: what training code uses at every step, on a split held whole on the device as
one uint8 image tensor plus int64 labels: the per-recipe input normalisation
(:data:`NORMALISATION`, :func:`normalise`), batch-level augmentation (:func:`random_crop_flip`) and
:class:`Batches`. The rest of the data layer is imported from where it is defined:

- :mod:`stitchkit.data.splits`: :class:`~stitchkit.data.splits.Split` (images ``(N, C, H, W)``
  uint8, labels ``(N,)`` int64), seeded subsets and label transforms;
- :mod:`stitchkit.data.integrity`: the errors for missing, corrupt and incomplete data, and the
  official sizes a split is checked against;
- :mod:`stitchkit.data.archives`: :func:`~stitchkit.data.archives.load` and
  :func:`~stitchkit.data.archives.fingerprint`: finding a dataset's source in the data root
  (CIFAR-10 pickles, MNIST IDX files, an image folder or a ``.tar.gz`` of one), decoding it once
  into the decoded-dataset cache, and the source's content fingerprint.
"""

from __future__ import annotations

from typing import Iterator

import torch

from .splits import Split

__all__ = ["NORMALISATION", "normalise", "random_crop_flip", "index_batches", "Batches"]

#: Per-recipe input normalisation (mean, std per channel, on the [0, 1] scale); None = inputs in [0, 1].
NORMALISATION: dict[str, tuple[tuple[float, ...], tuple[float, ...]] | None] = {
    "cifar": ((0.4914, 0.4822, 0.4465), (0.2470, 0.2435, 0.2616)),  # Bansal, Hernandez
    "half": ((0.5, 0.5, 0.5), (0.5, 0.5, 0.5)),  # Smith & Marcu, colour sets
    "mnist": ((0.1307,), (0.3081,)),  # MNIST, one channel
    "mnist3": ((0.1307,) * 3, (0.3081,) * 3),  # Smith & Marcu, greyscale MNIST on three channels
    "none": None,  # Balogh & Jelasity
    "imagenet": ((0.485, 0.456, 0.406), (0.229, 0.224, 0.225)),  # torchvision's and timm's models (stitchkit compare)
}


# --------------------------------------------------------------------------------------------
# Device-resident batches with batch-level augmentation


def normalise(images: torch.Tensor, recipe: str, dtype: torch.dtype = torch.float32) -> torch.Tensor:
    """uint8 (B, C, H, W) -> float (B, C, H, W) scaled to [0, 1] and normalised per ``recipe``."""
    if recipe not in NORMALISATION:
        raise ValueError(f"unknown normalisation {recipe!r}; valid: {', '.join(NORMALISATION)}")
    x = images.to(dtype).div_(255.0)
    stats = NORMALISATION[recipe]
    if stats is None:
        return x
    mean, std = stats
    if len(mean) != x.shape[1]:
        raise ValueError(f"normalisation {recipe!r} has {len(mean)} channels, images have {x.shape[1]}")
    mean_t = torch.tensor(mean, dtype=dtype, device=x.device).view(1, -1, 1, 1)
    std_t = torch.tensor(std, dtype=dtype, device=x.device).view(1, -1, 1, 1)
    return x.sub_(mean_t).div_(std_t)


def random_crop_flip(images: torch.Tensor, generator: torch.Generator, pad: int = 4, flip: bool = True) -> torch.Tensor:
    """Per-image random crop (zero padding ``pad``) and horizontal flip, done on the whole batch.

    images: (B, C, H, W) any dtype; returns the same shape. Equivalent to torchvision's
    RandomCrop(H, padding=pad) + RandomHorizontalFlip applied image by image.
    """
    b, c, h, w = images.shape
    dev = images.device
    padded = torch.nn.functional.pad(images, (pad, pad, pad, pad))  # (B, C, H+2p, W+2p)
    oy = torch.randint(0, 2 * pad + 1, (b,), generator=generator).to(dev)
    ox = torch.randint(0, 2 * pad + 1, (b,), generator=generator).to(dev)
    rows = oy[:, None] + torch.arange(h, device=dev)[None]  # (B, H)
    cols = ox[:, None] + torch.arange(w, device=dev)[None]  # (B, W)
    if flip:
        mirror = (torch.rand(b, generator=generator) < 0.5).to(dev)
        cols = torch.where(mirror[:, None], cols.flip(1), cols)
    bi = torch.arange(b, device=dev)[:, None, None]
    out = padded.permute(0, 2, 3, 1)[bi, rows[:, :, None], cols[:, None, :]]  # (B, H, W, C)
    return out.permute(0, 3, 1, 2).contiguous()


def index_batches(n: int, batch_size: int, *, shuffle: bool, drop_last: bool, generator: torch.Generator,
                  device: torch.device | str = "cpu") -> Iterator[torch.Tensor]:
    """Index tensors of one epoch over ``n`` examples (a fresh permutation from ``generator``)."""
    order = torch.randperm(n, generator=generator) if shuffle else torch.arange(n)
    order = order.to(device)
    count = n // batch_size if drop_last else -(-n // batch_size)
    for i in range(count):
        yield order[i * batch_size:(i + 1) * batch_size]


class Batches:
    """Iterate over a :class:`Split` held whole on ``device`` in (normalised float) batches.

    Each epoch draws a fresh permutation from ``generator`` (seeded: reproducible order and
    augmentation). ``augment`` applies random crop (pad 4) + horizontal flip per batch on the
    uint8 tensor before normalisation. Yields (x (B, C, H, W) float, y (B,) int64).
    """

    def __init__(self, split: Split, batch_size: int, *, normalisation: str, shuffle: bool = False,
                 augment: bool = False, drop_last: bool = False, seed: int = 0,
                 device: torch.device | str = "cpu", channels_last: bool = False) -> None:
        if batch_size <= 0:
            raise ValueError(f"batch_size must be positive, got {batch_size}")
        if normalisation not in NORMALISATION:
            raise ValueError(f"unknown normalisation {normalisation!r}; valid: {', '.join(NORMALISATION)}")
        self.split = split.to(device)
        self.batch_size, self.normalisation = batch_size, normalisation
        self.shuffle, self.augment, self.drop_last = shuffle, augment, drop_last
        self.channels_last = channels_last
        self.generator = torch.Generator().manual_seed(seed)

    def __len__(self) -> int:
        n = len(self.split)
        return n // self.batch_size if self.drop_last else -(-n // self.batch_size)

    def __iter__(self) -> Iterator[tuple[torch.Tensor, torch.Tensor]]:
        for idx in index_batches(len(self.split), self.batch_size, shuffle=self.shuffle, drop_last=self.drop_last,
                                 generator=self.generator, device=self.split.images.device):
            x = self.split.images[idx]
            if self.augment:
                x = random_crop_flip(x, self.generator)
            x = normalise(x, self.normalisation)
            # the memory format asked for, whatever the split's images were laid out in: oneDNN picks
            # another convolution (other roundings) for NHWC input, and a split left NHWC by an earlier
            # step made a cold run differ from a warm one at 1e-6 (issue 50)
            x = x.contiguous(memory_format=torch.channels_last if self.channels_last else torch.contiguous_format)
            yield x, self.split.labels[idx]
