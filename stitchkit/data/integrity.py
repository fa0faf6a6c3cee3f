"""What a dataset source must be: the errors raised when it is missing, corrupt or incomplete.

:class:`DataNotFoundError`: no source of a dataset exists. :class:`CorruptDataError`: a source
that cannot be read as it should (a corrupt or truncated archive or file, an image that does not
decode, train and test classes that differ). :class:`IncompleteDataError`: a split whose image
or class count (or image shape) differs from the official release (:data:`KNOWN_SHAPES`), raised
by :func:`check_shape` unless a partial dataset is allowed explicitly
(``load(..., allow_partial=True)`` or ``STITCHKIT_ALLOW_PARTIAL_DATA=1``: :func:`partial_allowed`).
"""

from __future__ import annotations

import os
from pathlib import Path

from ..base.environment import ALLOW_PARTIAL_ENV
from .splits import Split


class DataNotFoundError(FileNotFoundError):
    """Raised when no source of a dataset exists; the message lists where we looked."""


class CorruptDataError(ValueError):
    """A dataset source that cannot be read as it should (corrupt or truncated archive or file,
    an image that does not decode, train and test classes that differ); the message names the
    file and what to do."""


class IncompleteDataError(CorruptDataError):
    """A split whose image count, class count or image shape differs from the official release."""


# The official releases: (train images, test images, classes, image shape (C, H, W)).
KNOWN_SHAPES: dict[str, tuple[int, int, int, tuple[int, int, int]]] = {
    "cifar10": (50_000, 10_000, 10, (3, 32, 32)),
    "mnist": (60_000, 10_000, 10, (1, 28, 28)),
}


def partial_allowed(allow_partial: bool | None = None) -> bool:
    """``allow_partial`` if given, else whether ``$STITCHKIT_ALLOW_PARTIAL_DATA`` says yes."""
    if allow_partial is not None:
        return bool(allow_partial)
    return os.environ.get(ALLOW_PARTIAL_ENV, "").strip().lower() in ("1", "true", "yes", "on")


def check_shape(name: str, split: str, data: Split, source: Path, allow_partial: bool | None = None) -> None:
    """Raise :class:`IncompleteDataError` naming ``source`` unless ``data`` has the official
    release's image count, class count and image shape (or a partial dataset is allowed)."""
    if name not in KNOWN_SHAPES or partial_allowed(allow_partial):
        return
    n_train, n_test, n_classes, shape = KNOWN_SHAPES[name]
    want = (n_train if split == "train" else n_test, n_classes, shape)
    got = (len(data), data.num_classes, tuple(int(d) for d in data.images.shape[1:]))
    if got != want:
        raise IncompleteDataError(
            f"the {name} {split} split read from {source} has {got[0]} images in {got[1]} classes of shape "
            f"{got[2]}; {name} has {want[0]} images in {want[1]} classes of shape {want[2]}. The source is "
            f"incomplete or is not {name}: replace it with a complete copy, or to use it as it is set "
            f"{ALLOW_PARTIAL_ENV}=1 (or load(..., allow_partial=True)).")
