"""Smith & Marcu's coloured-MNIST data sets, and their clustered-noise activations.

Every set is 28x28 RGB, derived deterministically from MNIST (paper App. A): digit pixels (any
non-zero MNIST pixel) are snapped to white, the background takes one of ten fixed colours
(the ``colour_MNIST`` package's map, below), shifted per image and per channel by
``0.1 * 255 * clip(N(0, 1), -1, 1)`` so that colour must be learned in a general way (the
same variation in the test sets). :data:`DATASETS` names the sets that :mod:`stitchkit.data.datasets`
registers (this module imports no registry):

- ``cmnist_correlated`` ("Correlated"): background colour = the digit's class; target = digit.
- ``cmnist_digit`` ("Digit"): colour drawn uniformly at random; target = digit.
- ``cmnist_colour`` ("Colour"): colour drawn uniformly at random; target = colour.
- ``cmnist_colour_only`` ("Colour-only"): no digit, a flat background; target = colour (the
  colour of image k is MNIST's label k, so classes stay balanced).
- ``mnist_grey3`` ("MNIST"): the greyscale digits copied to three channels; target = digit.

The random draws are seeded by (set, split), so every machine generates the same images; the
split's fingerprint hashes MNIST's fingerprint with this generator's version, so a change of
the recipe below (bump ``VERSION``) gives new cache keys.

:func:`clustered_noise` makes the "Clustered Noise" sender's data (paper Alg. 1-2): one uniform
[0, 1) base tensor per class in the shape of the representation at the cut, plus 0.1 x Gaussian
noise, clamped to [0, 1]; 6,000 training and 1,000 test examples per class.
"""

from __future__ import annotations

import hashlib
import os
import zlib
from functools import lru_cache

import torch

from . import archives, splits

VERSION = "colour-mnist-1"

# The colour_MNIST package's map (Bahng et al. 2020), class k -> RGB.
COLOURS = ((255, 0, 0), (0, 255, 0), (0, 0, 255), (225, 225, 0), (225, 0, 225),
           (0, 255, 255), (255, 128, 0), (255, 0, 128), (128, 0, 255), (128, 128, 128))
COLOUR_NAMES = ("red", "green", "blue", "yellow", "magenta", "cyan", "orange", "pink", "purple", "grey")
DIGITS = tuple(str(k) for k in range(10))
JITTER = 0.1  # per-image colour variation, as a fraction of 255

VARIANTS = {  # name: (colour: "label" | "random", digit drawn, target: "digit" | "colour")
    "correlated": ("label", True, "digit"),
    "digit": ("random", True, "digit"),
    "colour": ("random", True, "colour"),
    "colour_only": ("label", False, "colour"),
}
DISPLAY = {"correlated": "Correlated", "digit": "Digit", "colour": "Colour", "colour_only": "Colour-only",
           "grey3": "MNIST"}


def _generator(variant: str, split: str) -> torch.Generator:
    return torch.Generator().manual_seed(zlib.crc32(f"{VERSION}/{variant}/{split}".encode()))


def colourise(digits: torch.Tensor, colour_index: torch.Tensor, generator: torch.Generator, *,
              draw_digit: bool = True) -> torch.Tensor:
    """(N, 1, 28, 28) uint8 MNIST digits -> (N, 3, 28, 28) uint8: white digit (if ``draw_digit``)
    on a flat background of colour ``COLOURS[colour_index]`` jittered per image and channel."""
    n = digits.shape[0]
    base = torch.tensor(COLOURS, dtype=torch.float32)[colour_index]  # (N, 3)
    jitter = JITTER * 255.0 * torch.randn(n, 3, generator=generator).clamp(-1.0, 1.0)
    colour = (base + jitter).round().clamp(0, 255).to(torch.uint8)  # (N, 3)
    images = colour.view(n, 3, 1, 1).expand(n, 3, *digits.shape[2:]).clone()
    if draw_digit:
        images[(digits > 0).expand_as(images)] = 255
    return images


@lru_cache(maxsize=16)
def _make(variant: str, split: str, root: str | None) -> splits.Split:
    mnist = archives.load("mnist", split, root)
    fp = hashlib.sha256(f"{VERSION}|{variant}|{mnist.fingerprint}".encode()).hexdigest()
    if variant == "grey3":
        return splits.Split(mnist.images.expand(-1, 3, -1, -1).contiguous(), mnist.labels, DIGITS, fp)
    colour_from, draw_digit, target = VARIANTS[variant]
    g = _generator(variant, split)
    if colour_from == "label":
        colour_index = mnist.labels.clone()
    else:
        colour_index = torch.randint(0, len(COLOURS), (len(mnist),), generator=g)
    images = colourise(mnist.images, colour_index, g, draw_digit=draw_digit)
    if target == "digit":
        return splits.Split(images, mnist.labels, DIGITS, fp)
    return splits.Split(images, colour_index, COLOUR_NAMES, fp)


def load(variant: str, split: str, root: str | os.PathLike | None = None) -> splits.Split:
    """One split of a coloured-MNIST set (``variant``: a key of :data:`DISPLAY`)."""
    if variant not in DISPLAY:
        raise ValueError(f"unknown coloured-MNIST set {variant!r}; valid: {', '.join(DISPLAY)}")
    return _make(variant, split, None if root is None else str(root))


# registered dataset name -> (variant for :func:`load`, default normalisation): Smith & Marcu
# normalise the colour sets with mean = std = 0.5; the grey copy takes MNIST's mean/std on each of
# its three channels
DATASETS = {**{f"cmnist_{v}": (v, "half") for v in VARIANTS}, "mnist_grey3": ("grey3", "mnist3")}


def clustered_noise(shape: tuple[int, ...], split: str, *, seed: int = 0, noise: float = 0.1,
                    per_class: int | None = None, num_classes: int = 10) -> tuple[torch.Tensor, torch.Tensor]:
    """Smith & Marcu's Clustered Noise at one cut: (x ``(num_classes * per_class, *shape)``
    float32, labels). The class bases depend on (``seed``, ``shape``) only, so the train and test splits
    share them; the noise differs per split. ``per_class`` defaults to 6,000 (train) / 1,000
    (test) as in the paper."""
    if split not in ("train", "test"):
        raise ValueError(f"unknown split {split!r}; valid: train, test")
    if noise < 0:
        raise ValueError(f"noise must be >= 0, got {noise}")
    per_class = per_class if per_class is not None else (6000 if split == "train" else 1000)
    if per_class < 1:
        raise ValueError(f"per_class must be >= 1, got {per_class}")
    tag = f"{VERSION}/noise/{seed}/{'x'.join(map(str, shape))}"
    bases = torch.rand(num_classes, *shape, generator=torch.Generator().manual_seed(zlib.crc32(tag.encode())))
    g = torch.Generator().manual_seed(zlib.crc32(f"{tag}/{split}".encode()))
    labels = torch.arange(num_classes).repeat_interleave(per_class)
    x = bases[labels] + noise * torch.randn(len(labels), *shape, generator=g)
    return x.clamp_(0.0, 1.0), labels
