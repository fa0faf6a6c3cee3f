"""What a stitch grid is made of: how each stitch is built and trained (:class:`StitchRecipe`,
with :data:`LONGER`, the training-length controls' factor), the senders and receivers it stitches
(:class:`Net`, a zoo model; :class:`TensorSource`, activations given directly, e.g. Smith &
Marcu's clustered-noise sender), and :class:`StitchSpec`, everything that keys one trained
stitch in the store.
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any, Protocol

import torch

from ..base.store import Store
from ..data.datasets import DataSpec
from ..networks.models import CutModel
from ..networks.network import ModelSpec, load_or_train
from ..networks.train import TrainConfig
from . import stitches

INITS = ("dm", "default")


# Every paper's training-length control ("the verdict survives longer stitch training") retrains the
# stitches that decide a verdict with this many times the epochs: one factor for the whole book.
LONGER = 4


@dataclass(frozen=True)
class StitchRecipe:
    """How every stitch of a grid is built, initialised and trained."""

    kind: str = "bn_conv_bn"  # see stitchkit.stitching.stitches.STITCH_KINDS
    kernel_size: int = 1  # conv kernel of bn_conv_bn
    init: str = "dm"  # dm (direct matching, then fine-tune) | default (PyTorch's random init)
    dm_images: int = 1000  # training images the direct-matching fit uses
    stitch_bn: str | None = None  # train | frozen; None: frozen after DM, train after default init
    frozen_bn: str = "eval"  # eval | train (the authors' code quirk) for the frozen halves
    train: TrainConfig = field(default_factory=lambda: TrainConfig(
        epochs=1, optimizer="adam", lr=1e-3, weight_decay=0.0, schedule="cosine", augment=False))
    train_size: int | None = None  # stratified subset of the training split for each stitch
    test_size: int | None = None  # stratified subset of the test split for every accuracy
    subset_seed: int = 0  # seed of both subsets
    init_seed: int = 0  # seed of the stitch's random initialisation

    def __post_init__(self) -> None:
        if self.kind not in stitches.STITCH_KINDS:
            raise ValueError(f"unknown stitch kind {self.kind!r}; valid: {', '.join(stitches.STITCH_KINDS)}")
        if self.init not in INITS:
            raise ValueError(f"unknown init {self.init!r}; valid: {', '.join(INITS)}")
        if self.stitch_bn not in (None, *stitches.STITCH_BN_MODES):
            raise ValueError(f"unknown stitch_bn {self.stitch_bn!r}; valid: {', '.join(stitches.STITCH_BN_MODES)}")
        if self.frozen_bn not in stitches.FROZEN_BN_MODES:
            raise ValueError(f"unknown frozen_bn {self.frozen_bn!r}; valid: {', '.join(stitches.FROZEN_BN_MODES)}")

    @property
    def stitch_bn_mode(self) -> str:
        return self.stitch_bn or ("frozen" if self.init == "dm" else "train")

    def longer(self, factor: int | None = None) -> "StitchRecipe":
        """This recipe with ``factor`` (default :data:`LONGER`) times the epochs, or the steps
        where it counts steps, everything else the same: the training-length controls' stitch."""
        factor = LONGER if factor is None else factor
        if factor < 1:
            raise ValueError(f"factor={factor!r}: a longer recipe needs a factor >= 1")
        t = self.train
        return replace(self, train=replace(t, epochs=factor * t.epochs, steps=factor * t.steps if t.steps else None))


@dataclass
class Net:
    """A zoo model in a grid: a display name, its spec, and (lazily) the loaded network."""

    name: str
    spec: ModelSpec
    model: CutModel | None = field(default=None, repr=False, compare=False)

    def load(self, device: torch.device, store: Store, root, progress: bool) -> CutModel:
        if self.model is None:
            self.model, _ = load_or_train(self.spec, device=device, store=store, root=root, progress=progress)
        return self.model

    def detached(self) -> "Net":
        """A copy without the loaded network (what travels to a Dask worker)."""
        return Net(self.name, self.spec)


class TensorSource(Protocol):
    """A sender that is not a network: activations (and labels) given directly per cut.

    ``spec`` is a dataclass that keys its stitches in the store; ``tensors(cut, shape, split)``
    returns (activations ``(N, *shape)``, labels ``(N,)``) for 'train' or 'test', where ``shape`` is
    the receiver's activation shape at ``cut``."""

    name: str
    spec: Any

    def tensors(self, cut: str, shape: tuple[int, ...], split: str) -> tuple[torch.Tensor, torch.Tensor]: ...


@dataclass(frozen=True)
class StitchSpec:
    """Everything that determines one trained stitch and its numbers (its cache key)."""

    sender: Any  # ModelSpec, or a tensor source's spec
    receiver: ModelSpec
    cut_i: str
    cut_j: str
    recipe: StitchRecipe
    data: DataSpec  # the task the stitched model is trained and tested on


def is_net(sender: Any) -> bool:
    return isinstance(sender, Net)
