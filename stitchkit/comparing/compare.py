"""Compare two of your own networks with every similarity notion of this book.

:func:`compare` takes any two PyTorch image classifiers (``nn.Module``, registered here or not),
the layers to compare on each (module names, as ``model.named_modules()`` lists them) and a set
of images, and returns one tidy table: a row per (layer of A, layer of B, measure) with the
value and, where it is resampled, a 95% bootstrap interval over the images.

The measures:

- ``cka``: linear CKA on the flattened activations, the minibatch estimator from unbiased HSIC
  (Nguyen, Raghu & Kornblith 2021; :mod:`stitchkit.measures.minibatch`), float64, with a bootstrap
  interval over the minibatches. (The book's pages use the full-sample Gram form,
  :class:`stitchkit.measures.similarity.CKABootstrap`, whose memory grows with the square of the images;
  the minibatch estimator has no such bias toward 1 at high dimension, so the two differ most
  where features outnumber images.)
- ``pwcca`` and ``procrustes``: PWCCA and orthogonal Procrustes *distances*, on positions as
  examples where the two layers' spatial shapes agree, else on pooled vectors (Balogh &
  Jelasity's preprocessing); computed on the first ``sample_images`` measured images as they
  are (no interval);
- ``dm``: direct matching's structural distance, the relative residual of the least-squares map
  from A's activations to B's, fitted on the fit images and measured on the others (no interval);
- ``dm_accuracy``: direct matching's functional similarity: B's accuracy when its layer's output
  is replaced by the least-squares map of A's, relative to B's own accuracy on the same images,
  with a paired bootstrap interval. It needs ``labels``.
- ``tlm_accuracy``: the papers' task-loss stitch (:func:`stitchkit.comparing.adapter.train_hooked_stitch`: Bansal
  et al.'s BN-1x1-BN, started from direct matching as Balogh & Jelasity do, trained on the task
  loss through the frozen B on the fit images by the book's own stitch path and a recipe of the
  book's kind, :data:`stitchkit.comparing.adapter.COMPARE_RECIPE`), B's accuracy with it relative to B's own, with a
  paired bootstrap interval. It needs ``labels`` and ``fit_labels`` and brings the book's two
  stitching controls, stated before the run (:mod:`stitchkit.verdicts.controls`), as rows of their own:
  ``tlm_self_penalty`` (positive control, once per layer of B: B stitched into itself at that
  layer by the same recipe loses at most 1 point, the upper end of its interval; a gain is
  reported, not gated) and ``tlm_untrained_sender`` (negative control, per pair: an untrained copy
  of A, stitched the same way, stays at least 20 points below B's self-stitch on its whole
  interval: the stitch cannot do the task alone). Each control's row says whether it passed.

What a model must provide. The representational measures need only the activations, taken with
forward hooks on the named modules (a module returning a tuple gives its first tensor). A stitch
(``dm_accuracy``) also needs to run the rest of B from the cut: here a forward hook on B's module
*replaces* that module's output with the stitched tensor, so the rest of B's forward pass runs
unchanged on it. That works for any module whose output is a single tensor that the rest of the
network reads, of the same shape as the stitched one (a module called twice in one forward pass,
or whose output is read before the module returns, cannot be stitched; :class:`StitchError` names
the cut). The maps: a 1x1 convolution between two conv maps (A's resized to B's spatial size,
bilinear, when they differ), a linear map between token or flat layers, A's map pooled to a
vector when B's layer is flat, and between a CNN's conv map and a ViT's tokens, spatial positions
as tokens (H x W positions are H*W tokens, row by row; a CLS token first is left out of tokens
going into a map, and a map cannot feed one: those pairs get rows saying so).
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from ..base.hardware import exact_fp32
from ..base.linalg import NormalEquations, least_squares
from ..measures import similarity as sim
from ..measures.minibatch import MIN_BATCH, MinibatchCKA, gram
from ..stitching.grid_spec import StitchRecipe
from ..verdicts import noise
from ..verdicts.controls import NEGATIVE_MARGIN, POSITIVE_BOUND
from .adapter import (COMPARE_RECIPE, HookedModel, StitchError, check_recipe, layout_bridge, logits_of,
                      train_hooked_stitch, untrained_copy)

MEASURES = ("cka", "pwcca", "procrustes", "dm", "dm_accuracy", "tlm_accuracy")
DEFAULT_MEASURES = MEASURES  # the API's and the command line's default alike: every measure
CONTROL_ROWS = ("tlm_self_penalty", "tlm_untrained_sender")  # rows tlm_accuracy brings with it
COLUMNS = ["layer_a", "layer_b", "measure", "value", "low", "high", "n_images", "note", "control"]
# a control row's outcome (the "control" column; "" on other rows): its interval on the right side of the
# bound; on the wrong side; or its point estimate on the right side but the interval across the bound,
# too few images to tell (a verdict would be inconclusive, never "failed")
CONTROL_OUTCOMES = ("passed", "failed", "underpowered", "not informative")


@torch.no_grad()
def hooked_activations(model: nn.Module, images: torch.Tensor, layers: Sequence[str], *, which: str = "A",
                       batch_size: int = 250, device: torch.device | str | None = None) -> dict[str, torch.Tensor]:
    """Any model's activations at its modules ``layers`` (named by module path), taken by forward
    hooks (:class:`stitchkit.comparing.adapter.HookedModel`): their outputs (float32, on the CPU) on
    ``images`` (already preprocessed as the model expects), one forward pass per batch, in eval
    mode, in exact fp32 (no TF32 on a GPU: :func:`stitchkit.base.hardware.exact_fp32`). The book's
    own networks are read at their cuts instead (:func:`stitchkit.stitching.stitches.activations`)."""
    hooked = HookedModel(model, which)
    for c in layers:
        hooked.module(c)  # a wrong name is refused before any forward pass
    device = torch.device(device) if device is not None else next(model.parameters()).device
    out: dict[str, list[torch.Tensor]] = {c: [] for c in layers}
    was_training = model.training
    model.eval()
    try:
        with exact_fp32(device):
            for s in range(0, len(images), batch_size):
                got, _ = hooked.outputs(images[s:s + batch_size].to(device), layers)
                for c, h in got.items():
                    out[c].append(h.cpu())
    finally:
        model.train(was_training)
    return {c: torch.cat(v) for c, v in out.items()}


def _rows(h: torch.Tensor) -> torch.Tensor:
    """(N, C, H, W) -> (N*H*W, C); (N, T, D) -> (N*T, D); (N, D) unchanged."""
    return sim.positions_as_examples(h)


def _match(ha: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A's activations brought to the layout of B's: conv maps resized to B's spatial size;
    pooled to vectors when B's layer is flat; a conv map as tokens and tokens as a map between a
    CNN's layer and a ViT's (:func:`stitchkit.comparing.adapter.layout_bridge`)."""
    if like.ndim == 2 and ha.ndim > 2:
        return sim.pooled(ha)
    bridge = layout_bridge(tuple(ha.shape[1:]), tuple(like.shape[1:]))  # CNN <-> ViT: positions as tokens
    if bridge is not None:
        return bridge(ha)
    if like.ndim == 4 and ha.ndim == 4 and ha.shape[2:] != like.shape[2:]:
        return F.interpolate(ha, size=like.shape[2:], mode="bilinear", align_corners=False)
    if like.ndim == 3 and ha.ndim == 3 and ha.shape[1] != like.shape[1]:
        raise StitchError(f"token layers of {ha.shape[1]} and {like.shape[1]} tokens: no map between them here")
    if like.ndim != ha.ndim:
        raise StitchError(f"no map from a layer of shape {tuple(ha.shape[1:])} to one of {tuple(like.shape[1:])}")
    return ha


def dm_map(ha: torch.Tensor, hb: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    """The direct-matching stitch from A's layer to B's, fitted by float64 least squares on the
    activations ``ha`` -> ``hb`` of the same images: a function of A's activations (a batch)
    returning B's estimated ones, in B's layout and float32."""
    x = _match(ha, hb)
    w, b = least_squares(_rows(x), _rows(hb), bias=True)
    w32, b32, like = w.float(), b.float(), hb[:1]
    return lambda h: _apply_map(h, w32, b32, like)


def _apply_map(h: torch.Tensor, w32: torch.Tensor, b32: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A fitted direct-matching map (``w32``, ``b32``) applied to A's activations ``h``, brought to
    the layout of B's layer (``like``: one of its activations) first (:func:`_match`)."""
    h = _match(h.float(), like.to(h.device))
    if h.ndim == 4:  # a 1x1 convolution
        return torch.einsum("nchw,cd->ndhw", h, w32.to(h.device)) + b32.to(h.device)[None, :, None, None]
    return h @ w32.to(h.device) + b32.to(h.device)


@torch.no_grad()
def stitched_correct(model_b: nn.Module, cut_b: str, stitch: Callable, acts_a: torch.Tensor, images: torch.Tensor,
                     labels: torch.Tensor, *, batch_size: int = 250,
                     device: torch.device | str | None = None) -> np.ndarray:
    """Per image, whether ``model_b`` classifies it right when the output of its module ``cut_b``
    is replaced by ``stitch`` of A's activations ``acts_a`` (same images, same order)."""
    hooked = HookedModel(model_b, "B")
    hooked.module(cut_b)  # a wrong name is refused before any forward pass
    device = torch.device(device) if device is not None else next(model_b.parameters()).device
    was_training = model_b.training
    model_b.eval()
    correct = []
    try:
        for s in range(0, len(images), batch_size):
            h = stitch(acts_a[s:s + batch_size].to(device))
            logits = hooked.forward_replacing(images[s:s + batch_size].to(device), cut_b, h)
            correct.append((logits.argmax(1).cpu() == labels[s:s + batch_size].cpu()).numpy())
    finally:
        model_b.train(was_training)
    return np.concatenate(correct)


@torch.no_grad()
def _own_correct(model: nn.Module, images, labels, batch_size, device) -> np.ndarray:
    device = torch.device(device) if device is not None else next(model.parameters()).device
    was_training = model.training
    model.eval()
    try:
        return np.concatenate([(logits_of(model(images[s:s + batch_size].to(device))).argmax(1).cpu()
                                == labels[s:s + batch_size].cpu()).numpy() for s in range(0, len(images), batch_size)])
    finally:
        model.train(was_training)  # as hooked_activations() and stitched_correct() leave it


Images = "torch.Tensor | Iterable"


def _stream(images, labels, batch_size: int):
    """(x, y or None) batches from a tensor of images (and labels), or from an iterable of batches
    (a DataLoader yielding images, or (images, labels) pairs)."""
    if isinstance(images, torch.Tensor):
        for s in range(0, len(images), batch_size):
            yield images[s:s + batch_size], (labels[s:s + batch_size] if labels is not None else None)
        return
    for batch in images:
        x, y = (batch[0], batch[1]) if isinstance(batch, (tuple, list)) else (batch, None)
        yield x, y


def _materialise(images, labels, batch_size: int) -> tuple[torch.Tensor, torch.Tensor | None]:
    xs, ys = zip(*_stream(images, labels, batch_size))
    return torch.cat(xs), (torch.cat(ys) if all(y is not None for y in ys) else None)


def balanced_halves(n: int, labels: torch.Tensor | None, seed: int = 0) -> tuple[torch.Tensor, torch.Tensor]:
    """(fit, measured): indices of ``n`` images split in two disjoint halves drawn by ``seed``. Where
    ``labels`` are given, every class is itself split in half (the two halves' counts of a class
    differ by at most one), so both halves hold the classes in the proportions of the whole; each
    half is in a seeded random order (mixed classes in every batch). ``fit`` has ``n // 2`` images."""
    g = torch.Generator().manual_seed(seed)
    order = torch.randperm(n, generator=g)
    if labels is not None:  # class by class, each class's images in the random order: alternate halves
        order = order[torch.sort(labels.cpu()[order], stable=True).indices]
    fit, measured = order[1::2], order[0::2]
    return fit[torch.randperm(len(fit), generator=g)], measured[torch.randperm(len(measured), generator=g)]


@torch.no_grad()
def compare(model_a: nn.Module, model_b: nn.Module, layers_a: Sequence[str], layers_b: Sequence[str],
            images: Images, labels: torch.Tensor | None = None, *, measures: Sequence[str] = DEFAULT_MEASURES,
            fit_images: Images | None = None, fit_labels: torch.Tensor | None = None,
            recipe: StitchRecipe | None = None, batch_size: int = 250, sample_images: int = 2000,
            device: torch.device | str | None = None, seed: int = 0, verbose: bool = False) -> pd.DataFrame:
    """Every pair (layer of A in ``layers_a``, layer of B in ``layers_b``: module paths, as
    ``model.named_modules()`` and ``stitchkit layers`` list them) compared by each of ``measures``
    (default: every one, as on the command line) on ``images`` (preprocessed as both models
    expect: a tensor (N, C, H, W) with ``labels`` (N,), or an iterable of batches such as a
    DataLoader, yielding images or (images, labels)). The direct-matching maps (``dm``,
    ``dm_accuracy``) and the task-loss stitch (``tlm_accuracy``, with ``fit_labels``; its
    ``recipe``, :data:`stitchkit.comparing.adapter.COMPARE_RECIPE` by default, the book's kind of recipe:
    :func:`stitchkit.comparing.adapter.compare_recipe` derives one) are fitted on ``fit_images``. Without
    them, a tensor is split in two halves drawn by ``seed``, class-balanced where ``labels`` are
    given, in a seeded random order, disjoint (:func:`balanced_halves`): never its first half, which
    for a data set stored class by class would fit every map on a few classes. Returns one row
    per pair and measure (:data:`COLUMNS`); ``low``/``high`` are a 95% bootstrap interval where
    the measure is resampled, NaN where it is not. Long work shows progress bars on the terminal
    (the passes over the fit and measured images, the task-loss stitches); ``verbose`` adds each
    stitch's own training bar.

    Memory is bounded by one batch, not by the number of images: CKA is the minibatch estimator
    (:mod:`stitchkit.measures.minibatch`, its interval over the batches), direct matching accumulates its
    normal equations batch by batch (float64), the stitched accuracies are per image; PWCCA and
    Procrustes, which need every activation at once, use the first ``sample_images`` measured
    images (their rows say so). The task-loss stitch holds its fit images in memory (it trains on
    them in shuffled batches)."""
    unknown = [m for m in measures if m not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure(s) {', '.join(map(repr, unknown))}; valid: {', '.join(MEASURES)}")
    hooked_a, hooked_b = HookedModel(model_a, "A"), HookedModel(model_b, "B")
    for which, layers in (("A", layers_a), ("B", layers_b)):
        twice = sorted({c for c in layers if list(layers).count(c) > 1})
        if twice:
            raise ValueError(f"layer(s) {', '.join(map(repr, twice))} named twice in {which}'s layers: name each once")
    for c in layers_a:
        hooked_a.module(c)  # a wrong name is refused before any forward pass
    for c in layers_b:
        hooked_b.module(c)
    for which, model in (("A", model_a), ("B", model_b)):
        if next(model.parameters(), None) is None:
            raise ValueError(f"model {which} has no parameters: there is no trained network to compare")
    if batch_size < MIN_BATCH:
        raise ValueError(f"batch_size {batch_size}: CKA's unbiased minibatch estimator needs at least {MIN_BATCH}")
    recipe = check_recipe(recipe if recipe is not None else COMPARE_RECIPE)  # before any compute
    tensor = isinstance(images, torch.Tensor)
    for m in ("dm_accuracy", "tlm_accuracy"):
        if m in measures and tensor and labels is None:
            raise ValueError(f"{m} needs labels (the images' classes)")
    if tensor and labels is not None and len(labels) != len(images):
        raise ValueError(f"{len(labels)} labels for {len(images)} images")
    dm = [m for m in measures if m.startswith("dm")]
    if fit_images is None and tensor:
        fit_idx, test_idx = balanced_halves(len(images), labels, seed)
        fit_images, images = images[fit_idx], images[test_idx]
        fit_labels = labels[fit_idx] if labels is not None else None
        labels = labels[test_idx] if labels is not None else None
    elif fit_images is None and (dm or "tlm_accuracy" in measures):
        raise ValueError("with images given as batches, give fit_images (and fit_labels) for dm, dm_accuracy and "
                         "tlm_accuracy")
    if tensor and len(images) < 4:
        raise ValueError(f"{len(images)} images to measure on: too few for any measure")
    dev_a = torch.device(device) if device is not None else next(model_a.parameters()).device
    dev_b = torch.device(device) if device is not None else next(model_b.parameters()).device
    was = (model_a.training, model_b.training)
    model_a.eval()
    model_b.eval()
    try:
        probe(hooked_a, hooked_b, images, labels, dev_a, dev_b)  # before any pass over the images
    except Exception:
        model_a.train(was[0])
        model_b.train(was[1])
        raise
    # every forward pass, fit and stitch in exact fp32 (on a GPU, PyTorch lets convolutions use TF32, whose
    # 10-bit inputs would move the measures at the third digit)
    gpu = "cuda" if "cuda" in (dev_a.type, dev_b.type) else "cpu"
    try:
        with exact_fp32(gpu):
            maps = _fit_dm(hooked_a, hooked_b, layers_a, layers_b, fit_images, fit_labels, batch_size, dev_a, dev_b) \
                if dm else {}
            accuracy: dict = {}
            rows = _measure(hooked_a, hooked_b, layers_a, layers_b, images, labels, measures, maps, batch_size,
                            sample_images, dev_a, dev_b, (fit_images, fit_labels), recipe, accuracy, verbose)
    finally:
        model_a.train(was[0])
        model_b.train(was[1])
    table = pd.DataFrame(rows, columns=COLUMNS)
    # each model's own accuracy on the measured images (None without labels): what every relative row divides by
    table.attrs["accuracy"] = accuracy
    return table


class InputError(ValueError):
    """The models cannot be compared on these images (channels, classes, non-finite outputs): the
    message names which model and why, before any measurement."""


@torch.no_grad()
def probe(hooked_a: HookedModel, hooked_b: HookedModel, images, labels, dev_a, dev_b) -> None:
    """One forward pass of each model on two of the images, before any measurement: a model that
    cannot take them (a greyscale model given RGB images, and the reverse), one whose outputs are
    not finite (NaN weights), and labels beyond the classes B outputs are each an
    :class:`InputError` naming the model and the shapes, not a traceback after the compute."""
    if isinstance(images, torch.Tensor):
        x, y = images[:2], None if labels is None else labels[:2]
        top = None if labels is None or not len(labels) else int(labels.max())
    else:
        first = next(iter(images), None)
        if first is None:
            raise InputError("no images to measure on (the batches are empty)")
        x, y = (first[0], first[1]) if isinstance(first, (tuple, list)) else (first, None)
        x = x[:2]
        top = None if y is None else int(y.max())
    for which, hooked, dev in (("A", hooked_a, dev_a), ("B", hooked_b, dev_b)):
        convs = [m for m in hooked.model.modules() if isinstance(m, nn.Conv2d)]
        if convs and x.dim() == 4 and convs[0].in_channels != x.shape[1]:
            raise InputError(f"model {which} takes {convs[0].in_channels}-channel images, these have {x.shape[1]} "
                             f"(shape {tuple(x.shape)}): give data of the model's kind (e.g. mnist for a greyscale "
                             "model), or a model for these images")
        try:
            out = logits_of(hooked.model(x.to(dev)))
        except Exception as exc:
            line = (str(exc).strip().splitlines() or [type(exc).__name__])[0][:300]
            raise InputError(f"model {which} cannot take these images (shape {tuple(x.shape)}): "
                             f"{type(exc).__name__}: {line}") from None
        if not torch.isfinite(out).all():
            raise InputError(f"model {which}'s outputs on these images are not finite (NaN or infinite): check its "
                             "weights (a NaN weight makes every measure meaningless)")
        if which == "B" and top is not None and out.dim() == 2 and top >= out.shape[1]:
            raise InputError(f"model B outputs {out.shape[1]} classes, but the labels go up to {top}: give a model "
                             f"with a head for these classes (e.g. --kwargs-b '{{\"num_classes\": {top + 1}}}')")


def _undefined(values, what: str) -> str | None:
    """Why a measure is undefined on these activations (not finite: a constant or NaN layer), or None."""
    arr = np.asarray(values, dtype=np.float64)
    if np.isfinite(arr).all():
        return None
    return f"undefined here: {what} is not finite on these images (a constant, NaN or infinite layer)"


@torch.no_grad()
def _fit_dm(hooked_a: HookedModel, hooked_b: HookedModel, cuts_a, cuts_b, fit_images, fit_labels, batch_size, dev_a,
            dev_b) -> dict:
    """The direct-matching maps of every pair, their normal equations accumulated batch by batch."""
    eqs: dict[tuple[str, str], NormalEquations | StitchError] = {}
    like: dict[str, torch.Tensor] = {}
    for x, _ in _passing(_stream(fit_images, fit_labels, batch_size), fit_images, batch_size, "direct matching: fit"):
        acts_a, _ = hooked_a.outputs(x.to(dev_a), cuts_a)
        acts_b, _ = hooked_b.outputs(x.to(dev_b), cuts_b)
        for b, hb in acts_b.items():
            like.setdefault(b, hb[:1].cpu())
            for a, ha in acts_a.items():
                ne = eqs.setdefault((a, b), NormalEquations(bias=True))
                if isinstance(ne, StitchError):
                    continue
                try:
                    if _upsampled(ha, hb):
                        _update_upsampled(ne, ha.to(hb.device), hb)
                        continue
                    for part in _parts(ha, hb):  # a few images at a time: A's map resized to B's can be large
                        ne.update(_rows(_match(ha[part].to(hb.device), hb[part])), _rows(hb[part]))
                except StitchError as exc:  # no linear map between these layers: its rows say so
                    eqs[(a, b)] = exc
    maps = {}
    for pair, ne in eqs.items():
        if isinstance(ne, StitchError):
            maps[pair] = ne
            continue
        try:
            maps[pair] = _map_of(ne, like[pair[1]])
        except (np.linalg.LinAlgError, RuntimeError, ValueError) as exc:  # NaN or degenerate activations
            maps[pair] = StitchError(f"the least-squares fit failed ({type(exc).__name__}): the activations are "
                                     "constant, NaN or infinite on the fit images")
    return maps


ROW_BUDGET = 1 << 22  # elements of A's rows (matched to B's layout) handled at once: 32 MB in float64


def _parts(ha: torch.Tensor, hb: torch.Tensor) -> list[slice]:
    """Slices of a batch's images whose rows, A's activations brought to B's layout, hold at most
    :data:`ROW_BUDGET` elements (at least one image each)."""
    per_image = (hb[0].numel() // hb.shape[1] if hb.ndim > 2 else 1) * (ha.shape[1] + hb.shape[1] + 1)
    step = max(1, ROW_BUDGET // max(per_image, 1))
    return [slice(s, s + step) for s in range(0, ha.shape[0], step)]


def _upsampled(ha: torch.Tensor, hb: torch.Tensor) -> bool:
    """Whether A's conv map is smaller than B's, so direct matching resizes it up."""
    return ha.ndim == 4 and hb.ndim == 4 and ha.shape[2] * ha.shape[3] < hb.shape[2] * hb.shape[3]


def _resize_matrix(size_a: tuple[int, int], size_b: tuple[int, int], device) -> torch.Tensor:
    """M (Hb*Wb, Ha*Wa), float64: bilinear resizing (align_corners=False, as :func:`_match`) as a
    matrix on a channel's flattened positions."""
    ha, wa = size_a
    basis = torch.eye(ha * wa, dtype=torch.float64, device=device).reshape(ha * wa, 1, ha, wa)
    return F.interpolate(basis, size=size_b, mode="bilinear", align_corners=False).reshape(ha * wa, -1).T


def _update_upsampled(ne: NormalEquations, ha: torch.Tensor, hb: torch.Tensor) -> None:
    """Add to ``ne`` the rows of A's map resized up to B's size, without making them: with M the
    resize (:func:`_resize_matrix`) and H_n an image's (Ha*Wa, C) positions, the rows are M H_n, so
    XᵀX = Σ H_nᵀ (MᵀM) H_n, XᵀY = Σ H_nᵀ (Mᵀ Y_n), and the bias column's sums are (Mᵀ1)ᵀ H_n and 1ᵀY_n.
    The cost is that of A's positions, not of B's (64x less for a 4x4 map matched to 32x32)."""
    m = _resize_matrix(tuple(ha.shape[2:]), tuple(hb.shape[2:]), ha.device)
    h = ha.double().flatten(2).transpose(1, 2)  # (n, Ha*Wa, C)
    y = hb.double().flatten(2).transpose(1, 2)  # (n, Hb*Wb, Q)
    g, ones = m.T @ m, m.sum(0)  # (Ha*Wa, Ha*Wa), Mᵀ1 (Ha*Wa,)
    # contracted in this order, so that nothing of B's size times A's channels is ever made
    xtx = torch.einsum("nqc,nqd->cd", torch.einsum("npc,pq->nqc", h, g), h)
    x1 = torch.einsum("npc,p->c", h, ones)
    xty = torch.einsum("npc,npq->cq", h, torch.einsum("bp,nbq->npq", m, y))
    y1 = y.sum((0, 1))
    rows = h.shape[0] * m.shape[0]
    full_xtx = torch.cat([torch.cat([xtx, x1[:, None]], 1), torch.cat([x1, x1.new_tensor([rows])])[None]], 0)
    full_xty = torch.cat([xty, y1[None]], 0)
    ne.xtx = full_xtx if ne.xtx is None else ne.xtx + full_xtx
    ne.xty = full_xty if ne.xty is None else ne.xty + full_xty
    ne.n += rows


def _map_of(ne: NormalEquations, like: torch.Tensor) -> Callable[[torch.Tensor], torch.Tensor]:
    w, b = ne.solve()
    w32, b32 = w.float(), b.float()

    def stitch(h: torch.Tensor) -> torch.Tensor:
        if _upsampled(h, like):  # the 1x1 map first, then the resize: both linear, and the resize keeps constants
            mapped = torch.einsum("nchw,cd->ndhw", h.float(), w32.to(h.device))
            return F.interpolate(mapped, size=like.shape[2:], mode="bilinear", align_corners=False) + \
                b32.to(h.device)[None, :, None, None]
        return _apply_map(h, w32, b32, like)

    return stitch


def _passing(batches, images, batch_size: int, desc: str):
    """``batches`` with a progress bar on the terminal (its length known for a tensor or a sized
    loader); closed when the pass ends."""
    from ..base.progress import progress_bar

    total = -(-len(images) // batch_size) if isinstance(images, torch.Tensor) else (
        len(images) if hasattr(images, "__len__") else None)
    with progress_bar(total=total, desc=desc, unit="batch") as bar:
        for item in batches:
            yield item
            bar.update(1)


def _measure(hooked_a: HookedModel, hooked_b: HookedModel, cuts_a, cuts_b, images, labels, measures, maps, batch_size,
             sample_images, dev_a, dev_b, fit, recipe, accuracy: dict, verbose: bool = False) -> list[dict]:
    """One pass over the measured images: every measure's sums, per-image results and sample;
    ``accuracy`` gets each model's own accuracy on them (A, B, and the untrained A where the
    task-loss stitch brings it)."""
    cka = MinibatchCKA() if "cka" in measures else None
    resid = {pair: [0.0, 0.0] for pair in maps} if "dm" in measures else {}
    own, stitched, ys = [], {pair: [] for pair in maps} if "dm_accuracy" in measures else {}, []
    sample_a: dict[str, list[torch.Tensor]] = {c: [] for c in cuts_a}
    sample_b: dict[str, list[torch.Tensor]] = {c: [] for c in cuts_b}
    sampled, n, small = 0, 0, 0
    own_a: list[np.ndarray] = []
    for x, y in _passing(_stream(images, labels, batch_size), images, batch_size, "measuring"):
        acts_a, logits_a = hooked_a.outputs(x.to(dev_a), cuts_a)
        acts_b, logits = hooked_b.outputs(x.to(dev_b), cuts_b)
        if y is not None and logits_a.dim() == 2:
            own_a.append((logits_a.argmax(1).cpu() == y.cpu()).numpy())
        n += len(x)
        if cka is not None:
            if len(x) >= MIN_BATCH:
                cka.update({a: gram(h) for a, h in acts_a.items()}, {b: gram(h) for b, h in acts_b.items()})
            else:
                small += len(x)
        if y is not None:
            ys.append(y.cpu())
            own.append((logits.argmax(1).cpu() == y.cpu()).numpy())
        for (a, b), stitch in maps.items():
            if isinstance(stitch, StitchError):
                continue
            ha, hb = acts_a[a].to(acts_b[b].device), acts_b[b]
            est = torch.cat([stitch(ha[part]) for part in _parts(ha, hb)])
            if resid:
                resid[(a, b)][0] += float(((est - hb) ** 2).sum(dtype=torch.float64))  # float64 sums, no copy
                resid[(a, b)][1] += float((hb ** 2).sum(dtype=torch.float64))
            if stitched and y is not None:
                try:
                    logits_s = hooked_b.forward_replacing(x.to(dev_b), b, est)
                    stitched[(a, b)].append((logits_s.argmax(1).cpu() == y.cpu()).numpy())
                except StitchError as exc:
                    stitched[(a, b)] = exc
        if sampled < sample_images and ({"pwcca", "procrustes"} & set(measures)):
            take = min(len(x), sample_images - sampled)
            for c, h in acts_a.items():
                sample_a[c].append(h[:take].cpu())
            for c, h in acts_b.items():
                sample_b[c].append(h[:take].cpu())
            sampled += take
    if any(m in measures for m in ("dm_accuracy", "tlm_accuracy")) and len(ys) == 0:
        raise ValueError("dm_accuracy and tlm_accuracy need labels (the images' classes)")
    rows: list[dict] = []

    def row(a, b, m, value, low=np.nan, high=np.nan, note="", count=n, control=""):
        rows.append({"layer_a": a, "layer_b": b, "measure": m, "value": float(value), "low": float(low),
                     "high": float(high), "n_images": count, "note": note, "control": control})

    own_ok = np.concatenate(own) if own else None
    accuracy["B"] = None if own_ok is None else float(own_ok.mean())
    accuracy["A"] = float(np.concatenate(own_a).mean()) if own_a else None
    judged = own_ok is not None and ("dm_accuracy" in measures or "tlm_accuracy" in measures)
    at_chance = _at_chance(own_ok, torch.cat(ys) if ys else None)
    counts = noise.resampler(n, "compare images").counts if judged else None  # (R, n): the paired bootstrap
    for a in cuts_a:
        for b in cuts_b:
            if cka is not None and (a, b) not in cka.terms:
                row(a, b, "cka", np.nan, note=f"undefined: no minibatch of at least {MIN_BATCH} images", count=0)
            elif cka is not None:
                reps = cka.replicates(a, b)
                why = _undefined(reps, f"CKA between {a} and {b}")
                if why:
                    row(a, b, "cka", np.nan, note=why, count=n - small)
                elif len(cka.terms[(a, b)]) < 2:
                    row(a, b, "cka", float(np.asarray(reps)[0]), note="linear CKA, minibatch unbiased HSIC; ONE "
                        "minibatch only, so no interval: it cannot carry the images' noise (give more images than "
                        "--batch)", count=n - small)
                else:
                    e = noise.from_replicates(reps, n_test=n - small)
                    row(a, b, "cka", e.value, e.low, e.high, "linear CKA, minibatch unbiased HSIC (Nguyen et al. "
                        "2021); bootstrap over the minibatches", count=n - small)
            for m in ("pwcca", "procrustes"):
                if m in measures:
                    x_, y_ = sim.preprocess(torch.cat(sample_a[a]), torch.cat(sample_b[b]), m)
                    fn = sim.pwcca_distance if m == "pwcca" else sim.procrustes_distance
                    try:
                        if not (torch.isfinite(x_).all() and torch.isfinite(y_).all()):
                            raise sim.SimilarityInputError("the activations are not finite (NaN or infinite)")
                        value = fn(*((y_, x_) if m == "pwcca" and x_.shape[1] > y_.shape[1] else (x_, y_)))
                    except (sim.SimilarityInputError, np.linalg.LinAlgError, torch.linalg.LinAlgError) as exc:
                        row(a, b, m, np.nan, note=f"undefined here: {exc}", count=sampled)
                        continue
                    why = _undefined([value], f"{m} between {a} and {b}")
                    row(a, b, m, np.nan if why else value,
                        note=why or f"distance; on the first {sampled} measured images (not resampled)", count=sampled)
            if isinstance(maps.get((a, b)), StitchError):
                for m in ("dm", "dm_accuracy"):
                    if m in measures:
                        row(a, b, m, np.nan, note=f"cannot map here: {maps[(a, b)]}")
                continue
            if (a, b) in resid:
                num, den = resid[(a, b)]
                why = _undefined([num, den], f"the residual of {a} → {b}") or (
                    "undefined here: B's layer is zero on these images" if den == 0 else None)
                row(a, b, "dm", np.nan if why else num / den,
                    note=why or "relative residual ||XW + b - Y||² / ||Y||²; fitted on the fit images")
            if (a, b) in stitched:
                got = stitched[(a, b)]
                if isinstance(got, StitchError):
                    row(a, b, "dm_accuracy", np.nan, note=f"cannot stitch here: {got}")
                    continue
                if at_chance:
                    row(a, b, "dm_accuracy", np.nan, note=at_chance)
                    continue
                ok = np.concatenate(got)
                rel = np.r_[ok.mean(), counts @ ok / n] / np.r_[own_ok.mean(), counts @ own_ok / n]
                why = _undefined(rel, "B's accuracy on a resample")
                if why:
                    row(a, b, "dm_accuracy", np.nan, note=why)
                    continue
                e = noise.from_replicates(rel, n_test=n)
                row(a, b, "dm_accuracy", e.value, e.low, e.high,
                    "B's accuracy with the DM stitch, relative to its own; paired bootstrap over the images")
    if "tlm_accuracy" in measures:
        fit_x, fit_y = fit if isinstance(fit[0], torch.Tensor) else _materialise(fit[0], fit[1], batch_size)
        if fit_y is None or len(fit_y) != len(fit_x):
            raise ValueError("tlm_accuracy trains its stitches on the fit images: give fit_labels, one per fit image")
        _tlm_rows(row, hooked_a, hooked_b, cuts_a, cuts_b, fit_x, fit_y, images, labels, own_ok, counts, recipe,
                  batch_size, at_chance, accuracy, verbose)
    return rows


def _at_chance(own: np.ndarray | None, labels: torch.Tensor | None) -> str | None:
    """Why accuracies relative to B's own are undefined (B at or below chance on these images: a
    ratio to nothing, 1e12 where B scores 0), or None."""
    if own is None or labels is None or not len(labels):
        return None
    counts = torch.bincount(labels.long().flatten())
    chance = float(counts.max()) / len(labels)  # always answering the commonest class
    acc = float(own.mean())
    if acc <= chance:
        return (f"undefined: B's own accuracy on these images is {100 * acc:.1f}%, at or below chance "
                f"({100 * chance:.1f}%: always answering the commonest of their {int((counts > 0).sum())} classes), "
                "so an accuracy relative to it means nothing (is B trained for these images and classes?)")
    return None


def _tlm_rows(row, a: HookedModel, b: HookedModel, cuts_a, cuts_b, fit_images, fit_labels, images, labels, own, counts, recipe,
              batch_size, at_chance: str | None = None, accuracy: dict | None = None, verbose: bool = False) -> None:
    """The task-loss stitch's rows: per pair its relative accuracy and the negative control, per
    layer of B the positive control (see the module's docstring). A pair that cannot be stitched
    gets rows saying why, and the others go on; with B at chance every row says so (its controls
    cannot tell anything either)."""
    n = len(own)
    if at_chance:
        for cut_b in cuts_b:
            row("(B itself)", cut_b, "tlm_self_penalty", np.nan, note=f"control not informative: {at_chance}",
                control="not informative")
            for cut_a in cuts_a:
                row(cut_a, cut_b, "tlm_accuracy", np.nan, note=at_chance)
                row(cut_a, cut_b, "tlm_untrained_sender", np.nan, note=f"control not informative: {at_chance}",
                    control="not informative")
        return
    blank = HookedModel(untrained_copy(a.model, recipe.init_seed), "A (untrained)")
    if accuracy is not None:  # the untrained sender's own accuracy: a network that knows nothing of the task
        with torch.no_grad():
            hits = [(logits_of(blank.model(x.to(blank.device))).argmax(1).cpu() == y.cpu()).numpy()
                    for x, y in _stream(images, labels, batch_size)]
        accuracy["untrained A"] = float(np.concatenate(hits).mean()) if hits else None

    def accuracy(sender, cut_a, cut_b) -> np.ndarray:
        with torch.enable_grad():  # compare runs under no_grad; the stitch trains
            stitched = train_hooked_stitch(sender, cut_a, b, cut_b, fit_images, fit_labels, recipe, progress=verbose)
        dev = b.device
        return np.concatenate([(logits_of(stitched(x.to(dev))).argmax(1).cpu() == y.cpu()).numpy()
                               for x, y in _stream(images, labels, batch_size)])

    def estimate(point: float, reps: np.ndarray):
        return noise.from_replicates(np.r_[point, reps], n_test=n)

    from ..base.progress import progress_bar

    bar = progress_bar(total=len(cuts_b) * (1 + 2 * len(cuts_a)), desc="task-loss stitches", unit="stitch")
    for cut_b in cuts_b:
        bar.update(1)
        try:
            selfed = accuracy(b, cut_b, cut_b)
        except StitchError as exc:
            row("(B itself)", cut_b, "tlm_self_penalty", np.nan, note=f"cannot stitch here: {exc}")
            for cut_a in cuts_a:
                for m in ("tlm_accuracy", "tlm_untrained_sender"):
                    row(cut_a, cut_b, m, np.nan, note=f"cannot stitch into B's {cut_b}: {exc}")
            continue
        e = estimate(100 * (own.mean() - selfed.mean()), 100 * (counts @ own - counts @ selfed) / n)
        outcome = "passed" if e.high <= POSITIVE_BOUND else "underpowered" if e.value <= POSITIVE_BOUND else "failed"
        said = {"passed": "passed", "failed": "FAILED",
                "underpowered": f"UNDERPOWERED (too few images to tell: {e.value:.2f} points, within the bound, but "
                                "the interval reaches past it)"}[outcome]
        row("(B itself)", cut_b, "tlm_self_penalty", e.value, e.low, e.high,
            f"positive control {said}: B stitched into itself loses at most "
            f"{POSITIVE_BOUND:g} point (upper end); points, B's own minus the self-stitch's accuracy", control=outcome)
        for cut_a in cuts_a:
            try:
                ok_a = accuracy(a, cut_a, cut_b)
                bar.update(1)
                ok_blank = accuracy(blank, cut_a, cut_b)
                bar.update(1)
            except StitchError as exc:  # this pair only: the others go on
                for m in ("tlm_accuracy", "tlm_untrained_sender"):
                    row(cut_a, cut_b, m, np.nan, note=f"cannot stitch here: {exc}")
                continue
            rel = np.r_[ok_a.mean(), counts @ ok_a / n] / np.r_[own.mean(), counts @ own / n]
            e = noise.from_replicates(rel, n_test=n)
            row(cut_a, cut_b, "tlm_accuracy", e.value, e.low, e.high,
                "B's accuracy with the task-loss stitch, relative to its own; paired bootstrap over the images")
            e = estimate(100 * (selfed.mean() - ok_blank.mean()), 100 * (counts @ selfed - counts @ ok_blank) / n)
            outcome = ("passed" if e.low >= NEGATIVE_MARGIN else "underpowered" if e.value >= NEGATIVE_MARGIN
                       else "failed")
            said = {"passed": "passed", "failed": "FAILED",
                    "underpowered": f"UNDERPOWERED (too few images to tell: {e.value:.1f} points, past the margin, "
                                    "but the interval reaches below it)"}[outcome]
            row(cut_a, cut_b, "tlm_untrained_sender", e.value, e.low, e.high,
                f"negative control {said}: an untrained A stitched the same way stays at "
                f"least {NEGATIVE_MARGIN:g} points below B's self-stitch (lower end); points", control=outcome)
    bar.close()


__all__ = ["COLUMNS", "CONTROL_OUTCOMES", "CONTROL_ROWS", "DEFAULT_MEASURES", "MEASURES", "InputError",
           "balanced_halves", "compare", "dm_map", "hooked_activations", "probe", "stitched_correct"]
