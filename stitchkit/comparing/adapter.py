"""Any PyTorch image classifier as a network to stitch: layers named by module path, reached
through forward hooks, and the papers' task-loss stitch trained between two of them.

The book's own networks are :class:`stitchkit.networks.models.CutModel` s, which run up to a cut and on from
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

:func:`train_hooked_stitch` trains the stitch of Bansal et al. (BatchNorm, 1x1 convolution, BatchNorm on
same-size maps; a linear map on tokens, a resize then a 1x1 convolution between maps of different
sizes), initialised by direct matching (Balogh & Jelasity) on a subset of the training images and
then trained on the task loss through the frozen receiver, both networks in eval mode, the
stitch's BatchNorm statistics kept where direct matching set them (:data:`COMPARE_RECIPE`). It is
the book's stitch path: the recipe is the book's :class:`stitchkit.stitching.grid_spec.StitchRecipe`, and
the stitch is built, started and trained by the same functions as every stitch of the book's
pages (:mod:`stitchkit.stitching.stitches`, :func:`stitchkit.networks.train.train`).
"""

from __future__ import annotations

import copy
from dataclasses import fields, replace
from typing import Any, Mapping, Sequence

import numpy as np
import torch
from torch import nn

from ..data.splits import stratified_subset
from ..networks.train import TrainConfig, train
from ..stitching.grid_spec import StitchRecipe
from ..stitching.stitches import Stitch, hold_bn_statistics, init_dm, make_stitch, training_batches


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


class PositionsAsTokens(nn.Module):
    """A conv map (N, C, H, W) as tokens (N, H*W, C): each spatial position a token, row by row
    (the order a ViT's patch embedding gives its patches)."""

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h.flatten(2).transpose(1, 2)


class TokensAsPositions(nn.Module):
    """Tokens (N, T, D) as a conv map (N, D, H, W): token ``skip + i`` at position ``i`` row by row;
    the first ``skip`` tokens (a CLS token) have no position and are left out."""

    def __init__(self, size: tuple[int, int], skip: int = 0) -> None:
        super().__init__()
        self.size, self.skip = tuple(size), skip

    def forward(self, h: torch.Tensor) -> torch.Tensor:
        return h[:, self.skip:].transpose(1, 2).reshape(h.shape[0], h.shape[2], *self.size)


def layout_bridge(in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> nn.Module | None:
    """The reshaping between a CNN's layer and a ViT's, spatial positions as tokens, that a map
    between them starts with: a conv map (C, H, W) into H*W tokens (:class:`PositionsAsTokens`);
    tokens (T, D) into an H x W map where T is H*W, or H*W + 1 with a CLS token first
    (:class:`TokensAsPositions`). None between layers of one kind; a :class:`StitchError` saying
    why where the counts do not match (a map has no position for a CLS token to come from)."""
    if len(in_shape) == 3 and len(out_shape) == 2:
        (_, h, w), t = in_shape, out_shape[0]
        if t == h * w:
            return PositionsAsTokens()
        extra = " (a CLS token has no position to come from)" if t == h * w + 1 else ""
        raise StitchError(f"a conv map of {h}x{w} positions into {t} tokens: positions become tokens only one to "
                          f"one{extra}")
    if len(in_shape) == 2 and len(out_shape) == 3:
        t, (_, h, w) = in_shape[0], out_shape
        if t in (h * w, h * w + 1):
            return TokensAsPositions((h, w), skip=t - h * w)
        raise StitchError(f"{t} tokens into a conv map of {h}x{w} positions: tokens become positions only one to "
                          "one (a CLS token first is left out)")
    return None


def stitch_kind(in_shape: tuple[int, ...], out_shape: tuple[int, ...]) -> str:
    """The stitch between two layers' per-image shapes: Bansal et al.'s BN-1x1-BN on same-size maps
    and on vectors, a resize then a 1x1 convolution between maps of other sizes, a linear map on
    tokens."""
    if len(in_shape) == 3 and len(out_shape) == 3 and in_shape[1:] != out_shape[1:]:
        return "resize_conv"
    return "conv" if len(in_shape) == 2 else "bn_conv_bn"


#: compare's task-loss stitch, as a recipe of the book's own kind (stitchkit.stitching.grid_spec.StitchRecipe, trained by
#: stitchkit.networks.train.train like every stitch of the book): a direct-matching start on 500 of the fit images, then
#: 2 epochs of SGD (momentum 0.9, lr 1e-2 with a cosine decay, batch 128, no weight decay) on the cross-entropy
#: of B's logits, both networks frozen in eval mode, the stitch's BatchNorm statistics kept where direct
#: matching set them (stitch_bn "frozen"). Measured on X-4's networks (B-F2A's at demo): with "train", B
#: stitched into itself at block7 lost 1.7 points (3.2 at lr 1e-3), failing the positive control; frozen, it
#: gained 0.3. In fp32, as every other pass of compare is (its report promises exact fp32); a recipe with
#: precision "auto" trains in bf16 where the CPU or GPU has it natively.
COMPARE_RECIPE = StitchRecipe(
    kind="bn_conv_bn", init="dm", dm_images=500, stitch_bn="frozen", frozen_bn="eval",
    train=TrainConfig(epochs=2.0, batch_size=128, optimizer="sgd", lr=1e-2, momentum=0.9, weight_decay=0.0,
                      schedule="cosine", augment=False, precision="fp32", seed=0))


def compare_recipe(**changes: Any) -> StitchRecipe:
    """:data:`COMPARE_RECIPE` with ``changes``, each a field of the recipe (``dm_images``,
    ``stitch_bn``, ``init_seed``, ...) or of its training (``epochs``, ``lr``, ``batch_size``,
    ``optimizer``, ``seed``, ...): ``compare_recipe(epochs=4, lr=3e-3)``. A name that is neither
    is refused, listing the valid ones."""
    recipe_fields = {f.name for f in fields(StitchRecipe)} - {"train"}
    train_fields = {f.name for f in fields(TrainConfig)}
    unknown = sorted(set(changes) - recipe_fields - train_fields)
    if unknown:
        raise ValueError(f"unknown stitch recipe field(s) {', '.join(map(repr, unknown))}; valid: "
                         f"{', '.join(sorted(recipe_fields | train_fields))}")
    train_changes = {k: v for k, v in changes.items() if k in train_fields}
    own = {k: v for k, v in changes.items() if k in recipe_fields}
    return check_recipe(replace(COMPARE_RECIPE, train=replace(COMPARE_RECIPE.train, **train_changes), **own))


def check_recipe(recipe: StitchRecipe) -> StitchRecipe:
    """``recipe`` if compare can train it, else a ValueError naming the field: compare's images
    are given (no ``train_size``/``test_size`` subsets), its networks stay in eval mode (no
    ``frozen_bn="train"``), and its inputs are tensors (no augmentation)."""
    if not isinstance(recipe, StitchRecipe):
        raise TypeError(f"recipe: a stitchkit.stitching.grid_spec.StitchRecipe (e.g. stitchkit.comparing.adapter.COMPARE_RECIPE), "
                        f"not a {type(recipe).__name__}")
    bad = [(f, v) for f, v, ok in (("train_size", recipe.train_size, recipe.train_size is None),
                                   ("test_size", recipe.test_size, recipe.test_size is None),
                                   ("frozen_bn", recipe.frozen_bn, recipe.frozen_bn == "eval"),
                                   ("train.augment", recipe.train.augment, not recipe.train.augment)) if not ok]
    if bad:
        f, v = bad[0]
        raise ValueError(f"stitch recipe: {f} = {v!r} does not apply to compare (its fit images are given, both "
                         "networks stay in eval mode, and it does not augment): leave it at None/eval/False")
    if recipe.kind not in ("bn_conv_bn", "conv", "resize_conv"):
        raise ValueError(f"stitch recipe: kind = {recipe.kind!r}; compare trains bn_conv_bn (chosen by the "
                         "layers' shapes: resize_conv between maps of other sizes, a linear map on tokens), conv "
                         "or resize_conv")
    return recipe


class HookedStitch(nn.Module):
    """``sender`` up to ``cut_a`` -> ``stitch`` -> ``receiver`` from ``cut_b``: logits. The two
    networks are frozen (no gradient to their parameters) and stay in eval mode."""

    def __init__(self, sender: HookedModel, cut_a: str, receiver: HookedModel, cut_b: str, stitch: Stitch,
                 stitch_bn: str = "frozen") -> None:
        super().__init__()
        self.sender, self.receiver, self.cut_a, self.cut_b = sender, receiver, cut_a, cut_b
        self.stitch, self.stitch_bn = stitch, stitch_bn

    def train(self, mode: bool = True) -> "HookedStitch":
        """Only the stitch trains (the two networks are not submodules: they stay in eval mode);
        with ``stitch_bn="frozen"`` its BatchNorm statistics stay where direct matching set them."""
        super().train(mode)
        if self.stitch_bn == "frozen":
            hold_bn_statistics(self.stitch)
        return self

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        with torch.no_grad():
            h = self.sender.activations(x, self.cut_a).float()
        return self.receiver.forward_replacing(x, self.cut_b, self.stitch(h))


@torch.no_grad()
def _acts(model: HookedModel, images: torch.Tensor, cut: str, batch_size: int) -> torch.Tensor:
    dev = model.device
    return torch.cat([model.activations(images[s:s + batch_size].to(dev), cut).float().cpu()
                      for s in range(0, len(images), batch_size)])


def _make(recipe: StitchRecipe, in_shape: tuple[int, ...], out_shape: tuple[int, ...], what: str) -> Stitch:
    """The stitch ``recipe`` builds between the two shapes (seeded by its ``init_seed``), starting
    with the CNN <-> ViT reshaping where one is needed (:func:`layout_bridge`); a
    :class:`StitchError` naming the pair where none can be built."""
    bridge = layout_bridge(in_shape, out_shape)
    if bridge is not None:
        in_shape = tuple(bridge(torch.zeros(1, *in_shape)).shape[1:])
    kind = stitch_kind(in_shape, out_shape) if recipe.kind == "bn_conv_bn" else recipe.kind
    try:
        with torch.random.fork_rng(devices=[]):
            torch.manual_seed(recipe.init_seed)
            stitch = make_stitch(kind, in_shape, out_shape)
    except ValueError as exc:  # no stitch of this kind between these shapes: this pair's rows say so
        raise StitchError(f"{what}: {exc}") from None
    if bridge is not None:
        stitch.pre = nn.Sequential(bridge, stitch.pre)
    return stitch


def train_hooked_stitch(sender: HookedModel, cut_a: str, receiver: HookedModel, cut_b: str, images: torch.Tensor,
                        labels: torch.Tensor, recipe: StitchRecipe = COMPARE_RECIPE, *,
                        progress: bool = False) -> HookedStitch:
    """The task-loss stitch from ``sender``'s module ``cut_a`` into ``receiver``'s ``cut_b``, trained
    on ``images`` (N, C, H, W, preprocessed as both networks expect) and ``labels`` by ``recipe``
    (:data:`COMPARE_RECIPE` by default; :func:`check_recipe` says what compare can train).

    The book's path: the stitch is :func:`stitchkit.stitching.stitches.make_stitch`'s, started by
    :func:`stitchkit.stitching.stitches.init_dm` on a seeded class-balanced sample of ``dm_images`` of the
    images (``init="dm"``), and trained by :func:`stitchkit.networks.train.train` with ``recipe.train``, the
    loop every stitch and network of the book trains in (its schedule, precision and the error on a
    non-finite loss), on the batches :func:`stitchkit.stitching.stitches.training_batches` makes
    for every stitch the book trains from tensors, with its progress bar on the terminal when
    ``progress``. What differs from the book's :func:`stitchkit.stitching.stitches.train_stitch` is
    only what a hooked network cannot do: be entered at the cut, so the batches are the images and
    the sender runs on them at every step (:class:`HookedStitch`)."""
    check_recipe(recipe)
    sender.module(cut_a)
    receiver.module(cut_b)
    for model in (sender.model, receiver.model):
        model.eval()
    dev = receiver.device
    if len(labels) != len(images):
        raise ValueError(f"{len(labels)} labels for {len(images)} fit images")
    dm = stratified_subset(labels, min(recipe.dm_images, len(images)), recipe.subset_seed)
    x_dm = _acts(sender, images[dm], cut_a, recipe.train.batch_size)
    y_dm = _acts(receiver, images[dm], cut_b, recipe.train.batch_size)
    stitch = _make(recipe, tuple(x_dm.shape[1:]), tuple(y_dm.shape[1:]), f"{cut_a} -> {cut_b}")
    if recipe.init == "dm":
        init_dm(stitch, x_dm, y_dm)
    stitched = HookedStitch(sender, cut_a, receiver, cut_b, stitch.to(dev), stitch_bn=recipe.stitch_bn_mode)
    frozen = [p for m in (sender.model, receiver.model) for p in m.parameters() if p.requires_grad]
    for p in frozen:
        p.requires_grad_(False)
    try:
        batches = training_batches(images.to(dev), labels.to(dev), recipe.train)
        train(stitched, batches, recipe.train, device=dev, desc=f"stitch {cut_a} -> {cut_b}", progress=progress)
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


__all__ = ["COMPARE_RECIPE", "CutNotFoundError", "HookedModel", "HookedStitch", "PositionsAsTokens", "StitchError",
           "TokensAsPositions", "check_recipe", "compare_recipe", "correct", "layout_bridge", "logits_of",
           "module_tensor", "stitch_kind", "train_hooked_stitch", "untrained_copy"]
