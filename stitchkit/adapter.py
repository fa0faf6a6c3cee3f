"""Any PyTorch image classifier as a network to stitch: layers named by module path, reached
through forward hooks, and the papers' task-loss stitch trained between two of them.

The book's own networks are :class:`stitchkit.models.CutModel` s, which run up to a cut and on from
it. A user's network (a torchvision or timm model, a Hugging Face image model, a checkpoint of
their own) has no such methods; :class:`HookedModel` gives it the two a stitch needs, with forward
hooks on the module named by its path (``model.named_modules()``):

- :meth:`HookedModel.activations`: the cut module's output, the forward pass stopped right after
  it (the rest of the network is not run);
- :meth:`HookedModel.forward_replacing`: the logits of a full forward pass in which the cut
  module's output is replaced by a given tensor, so the rest of the network runs unchanged on it
  (the modules before the cut run too, on the images: a general module graph cannot be entered
  in the middle).

A cut must be a module called once per forward pass whose output is a tensor (or a tuple whose
first item is); the logits are read from whatever the model returns (:func:`logits_of`: a tensor,
a tuple, or an output object or mapping with ``logits``). Nothing is downloaded: the user loads
their models.

:func:`train_stitch` trains the stitch of Bansal et al. (BatchNorm, 1x1 convolution, BatchNorm on
same-size maps; a linear map on tokens, a resize then a 1x1 convolution between maps of different
sizes), initialised by direct matching (Balogh & Jelasity) on a subset of the training images and
then trained on the task loss through the frozen receiver, both networks in eval mode, the
stitch's BatchNorm statistics kept where direct matching set them (:class:`StitchRecipe`).
"""

from __future__ import annotations

import copy
from dataclasses import dataclass
from typing import Any, Mapping, Sequence

import numpy as np
import torch
import torch.nn.functional as F
from torch import nn

from .stitching import Stitch, init_dm, make_stitch


class CutNotFoundError(ValueError):
    pass


class StitchError(ValueError):
    pass


class _Reached(Exception):
    """Raised by a hook once the cut's output is taken: the rest of the forward pass is skipped."""


def logits_of(out: Any) -> torch.Tensor:
    """The logits a model returned: a tensor; the first tensor of a tuple or list; the ``logits``
    of an output object (Hugging Face's ``ModelOutput``) or mapping."""
    if isinstance(out, torch.Tensor):
        return out
    found = getattr(out, "logits", None)
    if found is None and isinstance(out, Mapping):
        found = out.get("logits")
    if found is None and isinstance(out, (tuple, list)):
        found = next((o for o in out if isinstance(o, torch.Tensor)), None)
    if not isinstance(found, torch.Tensor):
        raise StitchError(f"cannot read logits from a {type(out).__name__}: return a tensor, a tuple whose first "
                          "item is the logits, or an object with .logits")
    return found


def module_tensor(out: Any, name: str) -> torch.Tensor:
    """A cut module's output as a tensor (the first item of a tuple)."""
    if isinstance(out, (tuple, list)) and out and isinstance(out[0], torch.Tensor):
        out = out[0]
    if not isinstance(out, torch.Tensor):
        raise StitchError(f"module {name!r} returns a {type(out).__name__}, not a tensor: it cannot be a cut")
    return out


class HookedModel:
    """``model`` (any ``nn.Module`` classifier) with cuts named by module path. ``which`` names it
    in errors ("A", "B")."""

    def __init__(self, model: nn.Module, which: str = "model") -> None:
        self.model, self.which = model, which
        self._modules = {n: m for n, m in model.named_modules() if n}

    def cuts(self) -> list[str]:
        return list(self._modules)

    def module(self, cut: str) -> nn.Module:
        if cut not in self._modules:
            names = self.cuts()
            shown = ", ".join(names[:40]) + (f", ... ({len(names) - 40} more)" if len(names) > 40 else "")
            raise CutNotFoundError(f"no module {cut!r} in model {self.which}; valid: {shown}")
        return self._modules[cut]

    @property
    def device(self) -> torch.device:
        return next(self.model.parameters(), torch.empty(0)).device

    def activations(self, x: torch.Tensor, cut: str) -> torch.Tensor:
        """The output of module ``cut`` on ``x``, the forward pass stopped right after it."""
        got: list[torch.Tensor] = []

        def take(_m, _i, out):
            got.append(module_tensor(out, cut))
            raise _Reached

        hook = self.module(cut).register_forward_hook(take)
        try:
            self.model(x)
        except _Reached:
            pass
        finally:
            hook.remove()
        if len(got) != 1:
            raise StitchError(f"module {cut!r} of model {self.which} did not run in its forward pass")
        return got[0]

    def outputs(self, x: torch.Tensor, cuts: Sequence[str]) -> tuple[dict[str, torch.Tensor], torch.Tensor]:
        """One whole forward pass on ``x``: the outputs of the modules ``cuts`` (detached,
        float32, where the model computed them) and the logits. A module that runs other than once
        per pass cannot be a cut."""
        got: dict[str, list[torch.Tensor]] = {c: [] for c in cuts}
        hooks = [self.module(c).register_forward_hook(
            lambda _m, _i, out, c=c: got[c].append(module_tensor(out, c).detach().float())) for c in cuts]
        try:
            logits = logits_of(self.model(x))
        finally:
            for hook in hooks:
                hook.remove()
        for c, parts in got.items():
            if len(parts) != 1:
                raise StitchError(f"module {c!r} of model {self.which} ran {len(parts)} times in one forward pass: a "
                                  "cut must run once")
        return {c: v[0] for c, v in got.items()}, logits

    def forward_replacing(self, x: torch.Tensor, cut: str, h: torch.Tensor) -> torch.Tensor:
        """Logits of the forward pass on ``x`` with the output of module ``cut`` replaced by ``h``
        (its shape); a module that runs more than once per pass cannot be a cut."""
        calls = []

        def replace(_m, _i, out):
            calls.append(1)
            if len(calls) > 1:
                raise StitchError(f"module {cut!r} of model {self.which} runs more than once per forward pass")
            old = module_tensor(out, cut)
            if h.shape != old.shape:
                raise StitchError(f"the stitch gives {tuple(h.shape)} at {cut!r}, whose output is {tuple(old.shape)}")
            new = h.to(old.dtype)
            return new if not isinstance(out, (tuple, list)) else type(out)((new, *out[1:]))

        hook = self.module(cut).register_forward_hook(replace)
        try:
            return logits_of(self.model(x))
        finally:
            hook.remove()


UNTRAINED_STD = 0.02  # a parameter no module re-initialises (a ViT's CLS token, its position embeddings): N(0, 0.02²)


def untrained_copy(model: nn.Module, seed: int = 0) -> nn.Module:
    """A copy of ``model`` with no training left in it: the negative control's sender, the same
    architecture untrained. Every module that can re-initialise itself (``reset_parameters``) is
    re-initialised, and every other parameter (one a module holds directly without a way to reset
    it: a ViT's CLS token and position embeddings, in this book's ViT, Hugging Face's and timm's)
    is drawn again from a truncated N(0, 0.02²), the transformers' own initialisation: otherwise
    the "untrained" sender would keep trained embeddings (issue 67, finding 5)."""
    twin = copy.deepcopy(model)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(seed)
        reset: set[int] = set()
        for m in twin.modules():
            if hasattr(m, "reset_parameters") and callable(m.reset_parameters):
                m.reset_parameters()
                reset.update(id(p) for p in m.parameters(recurse=False))
            if isinstance(m, nn.modules.batchnorm._BatchNorm):
                m.reset_running_stats()
        with torch.no_grad():
            for p in twin.parameters():
                if id(p) not in reset:
                    nn.init.trunc_normal_(p, std=UNTRAINED_STD, a=-2 * UNTRAINED_STD, b=2 * UNTRAINED_STD)
    return twin


def stitch_kind(in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    """The stitch between two layers' per-image shapes: Bansal et al.'s BN-1x1-BN on same-size maps
    and on vectors, a resize then a 1x1 convolution between maps of other sizes, a linear map on
    tokens."""
    if len(in_shape) == 3 and len(out_shape) == 3 and in_shape[1:] != out_shape[1:]:
        return "resize_conv"
    return "conv" if len(in_shape) == 2 else "bn_conv_bn"


@dataclass(frozen=True)
class StitchRecipe:
    """How a task-loss stitch is trained: direct-matching start on ``dm_images`` training images,
    then ``epochs`` of SGD (momentum 0.9, ``lr`` with cosine decay, batch ``batch_size``) on the
    cross-entropy of the receiver's logits, both networks frozen in eval mode. ``stitch_bn``:
    ``frozen`` (default) keeps the stitch's BatchNorm statistics where direct matching set them, so
    the stitch stays an affine map and only its parameters move (Balogh & Jelasity's setting, the
    book's ``stitch_bn="frozen"``); ``train`` lets them follow the batches. Measured on X-4's
    networks (B-F2A's at demo): with ``train``, the receiver stitched into itself at block7 lost
    1.7 points (3.2 at lr 1e-3), failing the positive control; with ``frozen`` it gained 0.3."""

    epochs: float = 2.0
    lr: float = 1e-2
    batch_size: int = 128
    dm_images: int = 500
    seed: int = 0
    stitch_bn: str = "frozen"  # frozen: the stitch's BatchNorm keeps the statistics DM set; train: they update

    def __post_init__(self) -> None:
        for name, ok in (("epochs", self.epochs > 0), ("lr", self.lr > 0), ("batch_size", self.batch_size >= 2),
                         ("dm_images", self.dm_images >= 2)):
            if not ok:
                raise ValueError(f"stitch recipe: {name} = {getattr(self, name)!r} is out of range")
        if self.stitch_bn not in ("frozen", "train"):
            raise ValueError(f"stitch recipe: stitch_bn = {self.stitch_bn!r}; valid: frozen, train")


class HookedStitch(nn.Module):
    """``sender`` up to ``cut_a`` -> ``stitch`` -> ``receiver`` from ``cut_b``: logits. The two
    networks are frozen (no gradient to their parameters) and stay in eval mode."""

    def __init__(self, sender: HookedModel, cut_a: str, receiver: HookedModel, cut_b: str, stitch: Stitch) -> None:
        super().__init__()
        self.sender, self.receiver, self.cut_a, self.cut_b = sender, receiver, cut_a, cut_b
        self.stitch = stitch

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            h = self.sender.activations(x, self.cut_a).float()
        return self.receiver.forward_replacing(x, self.cut_b, self.stitch(h))


def _batches(n: int, size: int, generator: torch.Generator | None = None):
    order = torch.randperm(n, generator=generator) if generator is not None else torch.arange(n)
    return [order[s:s + size] for s in range(0, n, size)]


@torch.no_grad()
def _acts(model: HookedModel, images: torch.Tensor, cut: str, batch_size: int) -> torch.Tensor:
    dev = model.device
    return torch.cat([model.activations(images[idx].to(dev), cut).float().cpu()
                      for idx in _batches(len(images), batch_size)])


def train_stitch(sender: HookedModel, cut_a: str, receiver: HookedModel, cut_b: str, images: torch.Tensor,
                 labels: torch.Tensor, recipe: StitchRecipe = StitchRecipe()) -> HookedStitch:
    """The task-loss stitch from ``sender``'s module ``cut_a`` into ``receiver``'s ``cut_b``, trained
    on ``images`` (N, C, H, W, preprocessed as both networks expect) and ``labels`` by ``recipe``."""
    sender.module(cut_a)
    receiver.module(cut_b)
    for model in (sender.model, receiver.model):
        model.eval()
    dev = receiver.device
    dm = torch.arange(min(recipe.dm_images, len(images)))
    x_dm, y_dm = _acts(sender, images[dm], cut_a, recipe.batch_size), _acts(receiver, images[dm], cut_b,
                                                                             recipe.batch_size)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.seed)
        stitch = make_stitch(stitch_kind(tuple(x_dm.shape[1:]), tuple(y_dm.shape[1:])), tuple(x_dm.shape[1:]),
                             tuple(y_dm.shape[1:]))
    init_dm(stitch, x_dm, y_dm)
    stitched = HookedStitch(sender, cut_a, receiver, cut_b, stitch.to(dev))
    frozen = [p for m in (sender.model, receiver.model) for p in m.parameters() if p.requires_grad]
    for p in frozen:
        p.requires_grad_(False)
    try:
        opt = torch.optim.SGD(stitch.parameters(), lr=recipe.lr, momentum=0.9)
        per_epoch = -(-len(images) // recipe.batch_size)
        steps = max(1, round(recipe.epochs * per_epoch))
        sched = torch.optim.lr_scheduler.CosineAnnealingLR(opt, steps)
        gen = torch.Generator().manual_seed(recipe.seed)
        done = 0
        stitch.train()
        if recipe.stitch_bn == "frozen":  # the statistics DM set stay: the stitch is the affine map DM found
            for m in stitch.modules():
                if isinstance(m, nn.modules.batchnorm._BatchNorm):
                    m.eval()
        while done < steps:
            for idx in _batches(len(images), recipe.batch_size, gen):
                if done == steps:
                    break
                loss = F.cross_entropy(stitched(images[idx].to(dev)), labels[idx].to(dev))
                if not torch.isfinite(loss):
                    raise FloatingPointError(f"the stitch {cut_a} -> {cut_b}: training loss became {loss.item()} at "
                                             f"step {done}; lower the learning rate (lr={recipe.lr:g})")
                opt.zero_grad(set_to_none=True)
                loss.backward()
                opt.step()
                sched.step()
                done += 1
    finally:
        for p in frozen:
            p.requires_grad_(True)
    return stitched.eval()


@torch.no_grad()
def correct(forward, images: torch.Tensor, labels: torch.Tensor, *, batch_size: int = 250,
            device: torch.device | str | None = None) -> np.ndarray:
    """Per image, whether ``forward`` (a model or a stitched model; its output read by
    :func:`logits_of`) classifies it right."""
    if isinstance(forward, nn.Module):
        forward.eval()
        if device is None:
            device = next(forward.parameters(), torch.empty(0)).device
    out = []
    for s in range(0, len(images), batch_size):
        logits = logits_of(forward(images[s:s + batch_size].to(device)))
        out.append((logits.argmax(1).cpu() == labels[s:s + batch_size].cpu()).numpy())
    return np.concatenate(out)


__all__ = ["CutNotFoundError", "HookedModel", "HookedStitch", "StitchError", "StitchRecipe", "correct", "logits_of",
           "module_tensor", "stitch_kind", "train_stitch", "untrained_copy"]
