"""Compare two of your own networks with every similarity notion of this book.

:func:`compare` takes any two PyTorch image classifiers (``nn.Module``, registered here or not),
the layers to compare on each (module names, as ``model.named_modules()`` lists them) and a set
of images, and returns one tidy table: a row per (layer of A, layer of B, measure) with the
value and, where it is resampled, a 95% bootstrap interval over the images.

The measures:

- ``cka``: linear CKA on the flattened activations (Gram form, float64), with a paired
  bootstrap interval over the images (:class:`stitchkit.similarity.CKABootstrap`);
- ``pwcca`` and ``procrustes``: PWCCA and orthogonal Procrustes *distances*, on positions as
  examples where the two layers' spatial shapes agree, else on pooled vectors (Balogh &
  Jelasity's preprocessing); computed on the images as they are (no interval);
- ``dm``: direct matching's structural distance, the relative residual of the least-squares map
  from A's activations to B's, fitted on the fit images and measured on the others (no interval);
- ``dm_accuracy``: direct matching's functional similarity: B's accuracy when its layer's output
  is replaced by the least-squares map of A's, relative to B's own accuracy on the same images,
  with a paired bootstrap interval. It needs ``labels``.
- ``tlm_accuracy``: the papers' task-loss stitch (:func:`stitchkit.adapter.train_stitch`: Bansal
  et al.'s BN-1x1-BN, started from direct matching as Balogh & Jelasity do, trained on the task
  loss through the frozen B on the fit images), B's accuracy with it relative to B's own, with a
  paired bootstrap interval. It needs ``labels`` and ``fit_labels`` and brings the book's two
  stitching controls, stated before the run (:mod:`stitchkit.controls`), as rows of their own:
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
bilinear, when they differ), a linear map between token or flat layers, and A's map pooled to a
vector when B's layer is flat.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np
import pandas as pd
import torch
import torch.nn.functional as F
from torch import nn

from . import noise
from . import similarity as sim
from .adapter import (CutNotFoundError, HookedModel, StitchError, StitchRecipe, correct, logits_of, module_tensor,
                      train_stitch, untrained_copy)
from .controls import NEGATIVE_MARGIN, POSITIVE_BOUND
from .linalg import least_squares

MEASURES = ("cka", "pwcca", "procrustes", "dm", "dm_accuracy", "tlm_accuracy")
CONTROL_ROWS = ("tlm_self_penalty", "tlm_untrained_sender")  # rows tlm_accuracy brings with it
COLUMNS = ["layer_a", "layer_b", "measure", "value", "low", "high", "n_images", "note"]


def _module(model: nn.Module, name: str, which: str) -> nn.Module:
    return HookedModel(model, which).module(name)


_tensor = module_tensor


@torch.no_grad()
def activations(model: nn.Module, images: torch.Tensor, cuts: Sequence[str], *, which: str = "A",
                batch_size: int = 250, device: torch.device | str | None = None) -> dict[str, torch.Tensor]:
    """The outputs (float32, on the CPU) of the modules ``cuts`` of ``model`` on ``images``
    (already preprocessed as the model expects), one forward pass per batch, in eval mode."""
    mods = {c: _module(model, c, which) for c in cuts}
    device = torch.device(device) if device is not None else next(model.parameters()).device
    out: dict[str, list[torch.Tensor]] = {c: [] for c in cuts}
    hooks = [m.register_forward_hook(lambda _m, _i, o, c=c: out[c].append(_tensor(o, c).detach().float().cpu()))
             for c, m in mods.items()]
    was_training = model.training
    model.eval()
    try:
        for s in range(0, len(images), batch_size):
            model(images[s:s + batch_size].to(device))
    finally:
        for h in hooks:
            h.remove()
        model.train(was_training)
    for c, parts in out.items():
        if len(parts) != -(-len(images) // batch_size):
            raise StitchError(f"module {c!r} ran {len(parts)} times for {-(-len(images) // batch_size)} batches: a "
                              "cut must run once per forward pass")
    return {c: torch.cat(v) for c, v in out.items()}


def _rows(h: torch.Tensor) -> torch.Tensor:
    """(N, C, H, W) -> (N*H*W, C); (N, T, D) -> (N*T, D); (N, D) unchanged."""
    return sim.positions_as_examples(h)


def _match(ha: torch.Tensor, like: torch.Tensor) -> torch.Tensor:
    """A's activations brought to the layout of B's: conv maps resized to B's spatial size;
    pooled to vectors when B's layer is flat."""
    if like.ndim == 2 and ha.ndim > 2:
        return sim.pooled(ha)
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
    w32, b32 = w.float(), b.float()

    def stitch(h: torch.Tensor) -> torch.Tensor:
        h = _match(h.float(), hb[:1].to(h.device))
        if h.ndim == 4:  # a 1x1 convolution
            return torch.einsum("nchw,cd->ndhw", h, w32.to(h.device)) + b32.to(h.device)[None, :, None, None]
        return h @ w32.to(h.device) + b32.to(h.device)

    return stitch


@torch.no_grad()
def stitched_correct(model_b: nn.Module, cut_b: str, stitch: Callable, acts_a: torch.Tensor, images: torch.Tensor,
                     labels: torch.Tensor, *, batch_size: int = 250,
                     device: torch.device | str | None = None) -> np.ndarray:
    """Per image, whether ``model_b`` classifies it right when the output of its module ``cut_b``
    is replaced by ``stitch`` of A's activations ``acts_a`` (same images, same order)."""
    module = _module(model_b, cut_b, "B")
    device = torch.device(device) if device is not None else next(model_b.parameters()).device
    current: dict[str, torch.Tensor] = {}

    def replace(_m, _i, out):
        new = current["h"]
        old = _tensor(out, cut_b)
        if new.shape != old.shape:
            raise StitchError(f"the stitch gives {tuple(new.shape)} at {cut_b!r}, whose output is {tuple(old.shape)}")
        return new.to(old.dtype) if not isinstance(out, (tuple, list)) else (new.to(old.dtype), *out[1:])

    hook = module.register_forward_hook(replace)
    was_training = model_b.training
    model_b.eval()
    correct = []
    try:
        for s in range(0, len(images), batch_size):
            current["h"] = stitch(acts_a[s:s + batch_size].to(device))
            logits = logits_of(model_b(images[s:s + batch_size].to(device)))
            correct.append((logits.argmax(1).cpu() == labels[s:s + batch_size].cpu()).numpy())
    finally:
        hook.remove()
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
        model.train(was_training)  # as activations() and stitched_correct() leave it


def compare(model_a: nn.Module, model_b: nn.Module, cuts_a: Sequence[str], cuts_b: Sequence[str],
            images: torch.Tensor, labels: torch.Tensor | None = None, *, measures: Sequence[str] = ("cka", "pwcca",
            "procrustes", "dm", "dm_accuracy"), fit_images: torch.Tensor | None = None,
            fit_labels: torch.Tensor | None = None, recipe: StitchRecipe | None = None, batch_size: int = 250,
            device: torch.device | str | None = None) -> pd.DataFrame:
    """Every pair (layer of A in ``cuts_a``, layer of B in ``cuts_b``) compared by each of
    ``measures`` on ``images`` (N, C, H, W, preprocessed as both models expect; ``labels`` (N,)
    for ``dm_accuracy``). The direct-matching maps (``dm``, ``dm_accuracy``) are fitted on
    ``fit_images`` (default: the first half of ``images``, the rest then measured), and so is the
    task-loss stitch (``tlm_accuracy``, with ``fit_labels``; its ``recipe``). Returns one
    row per pair and measure (:data:`COLUMNS`); ``low``/``high`` are a 95% paired bootstrap
    interval over the measured images where the measure is resampled, NaN where it is not."""
    unknown = [m for m in measures if m not in MEASURES]
    if unknown:
        raise ValueError(f"unknown measure(s) {', '.join(map(repr, unknown))}; valid: {', '.join(MEASURES)}")
    for m in ("dm_accuracy", "tlm_accuracy"):
        if m in measures and labels is None:
            raise ValueError(f"{m} needs labels (the images' classes)")
    if labels is not None and len(labels) != len(images):
        raise ValueError(f"{len(labels)} labels for {len(images)} images")
    for c in cuts_a:
        _module(model_a, c, "A")
    for c in cuts_b:
        _module(model_b, c, "B")
    if fit_images is None:
        half = len(images) // 2
        fit_images, images = images[:half], images[half:]
        fit_labels = labels[:half] if labels is not None else None
        labels = labels[half:] if labels is not None else None
    if "tlm_accuracy" in measures and (fit_labels is None or len(fit_labels) != len(fit_images)):
        raise ValueError("tlm_accuracy trains its stitches on the fit images: give fit_labels, one per fit image")
    if len(images) < 4:
        raise ValueError(f"{len(images)} images to measure on: too few for any measure")
    kw = {"batch_size": batch_size, "device": device}
    acts_a, acts_b = activations(model_a, images, cuts_a, which="A", **kw), activations(model_b, images, cuts_b,
                                                                                        which="B", **kw)
    dm = [m for m in measures if m.startswith("dm")]
    fit_a = activations(model_a, fit_images, cuts_a, which="A", **kw) if dm else {}
    fit_b = activations(model_b, fit_images, cuts_b, which="B", **kw) if dm else {}
    n = len(images)
    boot = sim.CKABootstrap(n, name="compare images") if "cka" in measures else None
    grams_a = {c: sim.centered_gram(sim.flat(v)) for c, v in acts_a.items()} if boot else {}
    grams_b = {c: sim.centered_gram(sim.flat(v)) for c, v in acts_b.items()} if boot else {}
    judged = "dm_accuracy" in measures or "tlm_accuracy" in measures
    counts = noise.resampler(n, "compare images").counts if judged else None
    own = _own_correct(model_b, images, labels, batch_size, device) if judged else None
    rows = []

    def row(a, b, m, value, low=np.nan, high=np.nan, note=""):
        rows.append({"layer_a": a, "layer_b": b, "measure": m, "value": float(value), "low": float(low),
                     "high": float(high), "n_images": n, "note": note})

    for a in cuts_a:
        for b in cuts_b:
            ha, hb = acts_a[a], acts_b[b]
            if "cka" in measures:
                reps = boot.replicates(grams_a[a], grams_b[b])
                e = noise.from_replicates(reps, n_test=n)
                row(a, b, "cka", e.value, e.low, e.high, "linear CKA; paired bootstrap over the images")
            for m in ("pwcca", "procrustes"):
                if m in measures:
                    x, y = sim.preprocess(ha, hb, m)
                    fn = sim.pwcca_distance if m == "pwcca" else sim.procrustes_distance
                    try:
                        value = fn(*((y, x) if m == "pwcca" and x.shape[1] > y.shape[1] else (x, y)))
                    except sim.SimilarityInputError as exc:
                        row(a, b, m, np.nan, note=f"undefined here: {exc}")
                        continue
                    row(a, b, m, value, note="distance; on the images as they are (not resampled)")
            if dm:
                stitch = dm_map(fit_a[a], fit_b[b])
                if "dm" in measures:
                    est = stitch(ha)
                    value = float(((est - hb).double() ** 2).sum() / (hb.double() ** 2).sum())
                    row(a, b, "dm", value, note="relative residual ||XW + b - Y||² / ||Y||²; fitted on the fit images")
                if "dm_accuracy" in measures:
                    try:
                        ok = stitched_correct(model_b, b, stitch, ha, images, labels, **kw)
                    except StitchError as exc:
                        row(a, b, "dm_accuracy", np.nan, note=f"cannot stitch here: {exc}")
                        continue
                    rel = np.r_[ok.mean(), counts @ ok / n] / np.maximum(np.r_[own.mean(), counts @ own / n], 1e-12)
                    e = noise.from_replicates(rel, n_test=n)
                    row(a, b, "dm_accuracy", e.value, e.low, e.high,
                        "B's accuracy with the DM stitch, relative to its own; paired bootstrap over the images")
    if "tlm_accuracy" in measures:
        _tlm_rows(row, model_a, model_b, cuts_a, cuts_b, fit_images, fit_labels, images, labels, own, counts,
                  recipe or StitchRecipe(), batch_size)
    return pd.DataFrame(rows, columns=COLUMNS)


def _tlm_rows(row, model_a, model_b, cuts_a, cuts_b, fit_images, fit_labels, images, labels, own, counts, recipe,
              batch_size) -> None:
    """The task-loss stitch's rows: per pair its relative accuracy and the negative control, per
    layer of B the positive control (see the module's docstring)."""
    n = len(images)
    a, b = HookedModel(model_a, "A"), HookedModel(model_b, "B")
    blank = HookedModel(untrained_copy(model_a, recipe.seed), "A (untrained)")

    def accuracy(sender, cut_a, cut_b) -> np.ndarray:
        stitched = train_stitch(sender, cut_a, b, cut_b, fit_images, fit_labels, recipe)
        return correct(stitched, images, labels, batch_size=batch_size)

    def estimate(point: float, reps: np.ndarray):
        return noise.from_replicates(np.r_[point, reps], n_test=n)

    for cut_b in cuts_b:
        selfed = accuracy(b, cut_b, cut_b)
        e = estimate(100 * (own.mean() - selfed.mean()), 100 * (counts @ own - counts @ selfed) / n)
        ok = e.high <= POSITIVE_BOUND
        row("(B itself)", cut_b, "tlm_self_penalty", e.value, e.low, e.high,
            f"positive control {'passed' if ok else 'FAILED'}: B stitched into itself loses at most "
            f"{POSITIVE_BOUND:g} point (upper end); points, B's own minus the self-stitch's accuracy")
        for cut_a in cuts_a:
            ok_a, ok_blank = accuracy(a, cut_a, cut_b), accuracy(blank, cut_a, cut_b)
            rel = np.r_[ok_a.mean(), counts @ ok_a / n] / np.maximum(np.r_[own.mean(), counts @ own / n], 1e-12)
            e = noise.from_replicates(rel, n_test=n)
            row(cut_a, cut_b, "tlm_accuracy", e.value, e.low, e.high,
                "B's accuracy with the task-loss stitch, relative to its own; paired bootstrap over the images")
            e = estimate(100 * (selfed.mean() - ok_blank.mean()), 100 * (counts @ selfed - counts @ ok_blank) / n)
            ok = e.low >= NEGATIVE_MARGIN
            row(cut_a, cut_b, "tlm_untrained_sender", e.value, e.low, e.high,
                f"negative control {'passed' if ok else 'FAILED'}: an untrained A stitched the same way stays at "
                f"least {NEGATIVE_MARGIN:g} points below B's self-stitch (lower end); points")


__all__ = ["COLUMNS", "CONTROL_ROWS", "MEASURES", "CutNotFoundError", "StitchError", "activations", "compare",
           "dm_map", "stitched_correct"]
