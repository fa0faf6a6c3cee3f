"""The stitch grid: many stitches between senders and receivers, returned as one tidy table, and
how its stitches are computed.

``stitch_grid(senders, receivers, cut_pairs, recipe, data)`` trains (or reads from the store)
one stitch per (sender, receiver, (cut_i, cut_j)) and returns a DataFrame with one row per
stitch: sender, receiver, cuts, accuracy after direct matching only and after task-loss
fine-tuning, the receiver's own accuracy, both penalties, the DM residual, the final training
loss and the seconds spent. Rows where the sender *is* the receiver at the same cut are the
convergence control (an exact stitch exists, so its penalty measures the recipe's floor).
``client`` (a Dask client) maps the grid as one task per sender-receiver pair; the table is the
same as the local run's.

A sender is a :class:`Net` (a zoo model) or a :class:`TensorSource` (activations given
directly, e.g. Smith & Marcu's clustered-noise sender). What a grid is made of
(:class:`StitchRecipe`, :class:`Net`, :class:`TensorSource`, :class:`StitchSpec`, :data:`LONGER`)
lives in :mod:`stitchkit.stitching.grid_spec`; import those names from there.

The public face: :func:`stitch_grid` and the readers of trained stitches (:func:`load_stitched`,
:func:`load_stitches`, :func:`stitch_mse`); the training-length control's retraining and swapping
of stitches is :mod:`stitchkit.stitching.longer`. Its execution, in this module too: what one grid call
shares (:class:`GridContext`: device, store, data splits, receiver accuracies and DM targets), a
sender's activations at one cut (:class:`SenderCut`), one stitch, or a stacked pass of several,
trained (or read from the store) into a table row, the local walk over the grid, and the
per-pair task that :func:`stitch_grid` maps over a Dask client (:func:`pair_task`). A stitch is
trained here, in the grid's own frame: the grid claims the stitch's store entry
(:meth:`stitchkit.base.store.Store.claim`; several at once for a stacked pass) and hands the
batches :mod:`stitchkit.stitching.stitches` makes for it (:func:`~stitchkit.stitching.stitches.stitch_batches`,
:func:`~stitchkit.stitching.stitches.stacked_batches`) straight to :func:`stitchkit.networks.train.train`,
so a recipe's settings reach the optimiser from the grid, not through the store or the stitch module.

Speed: the grid computes each sender cut's activations once and feeds every stitch that reads
that cut (training and test activations are held on the device while that cut's stitches
train); walking a sender's cuts in order, it continues each cut's activations from the previous
cut's, so all the cuts of a sender cost about one forward pass. It starts every stitch from
direct matching. The decision to cache activations lives here only (:func:`can_cache_activations`).
On a GPU, the stitches into one receiver cut train several per pass (:data:`STITCHES_PER_PASS`).
"""

from __future__ import annotations

import os
import time
from typing import Any, Sequence

import numpy as np
import pandas as pd
import torch

from ..base.cluster import grid_client
from ..base.hardware import MEASURE_PRECISION, as_device, channels_last_ok, resolve_precision
from ..base.progress import progress_bar
from ..base.store import Store, config_key
from ..data import batches as data_mod
from ..data import splits
from ..data.datasets import DataSpec, combined_fingerprint, test_split, train_split
from ..networks.models import CutModel
from ..networks.train import evaluate, train
from . import stitches
from .grid_spec import Net, StitchRecipe, StitchSpec, is_net

# Stitches into one receiver cut trained together per pass, by device type: a CPU is busy with
# one stitch (stacking gains nothing there); on a GPU one small stitch leaves it mostly idle.
STITCHES_PER_PASS = {"cpu": 1, "cuda": 8}

__all__ = ["stitch_grid", "load_stitched", "load_stitches", "stitch_mse", "STITCHES_PER_PASS",
           "can_cache_activations", "GridContext", "SenderCut", "pack_correct", "unpack_correct", "data_salt",
           "build_stitched", "evaluate_on_test", "local_rows", "local_order", "pair_task"]


def _check(senders, receivers, cut_pairs) -> None:
    names = [s.name for s in senders]
    if len(set(names)) != len(names) or len({r.name for r in receivers}) != len(receivers):
        raise ValueError(f"sender and receiver names must be unique within a grid, got {names}")
    if not cut_pairs:
        raise ValueError("cut_pairs is empty: give at least one (sender cut, receiver cut)")
    for r in receivers:
        if not isinstance(r, Net):
            raise TypeError(f"receivers must be Net, got {type(r).__name__}")


def stitch_grid(senders: Sequence[Any], receivers: Sequence[Net], cut_pairs: Sequence[tuple[str, str]],
                recipe: StitchRecipe, data: DataSpec, *, device: torch.device | str | None = None,
                store: Store | None = None, root: str | os.PathLike | None = None, progress: bool = True,
                client=None, stitches_per_pass: int | None = None) -> pd.DataFrame:
    """Every stitch of every sender into every receiver at every (cut_i, cut_j) in ``cut_pairs``.

    Returns one row per stitch (see the module docstring), in sender, cut, receiver order.
    With a Dask ``client`` (default: the cluster ``STITCHKIT_DASK`` names, :mod:`stitchkit.base.cluster`)
    each sender-receiver pair is one task (workers share the store on disk).
    ``stitches_per_pass``: stitches into one receiver cut trained together in one pass (same
    numbers up to rounding; it fills a GPU that one small stitch leaves idle). None: the
    device's default (:data:`STITCHES_PER_PASS`); 1 trains one at a time.
    """
    _check(senders, receivers, cut_pairs)
    if stitches_per_pass is not None and (isinstance(stitches_per_pass, bool) or not isinstance(stitches_per_pass, int)
                                          or stitches_per_pass < 1):
        raise ValueError(f"stitches_per_pass must be a whole number >= 1 or None, got {stitches_per_pass!r}")
    store = store or Store()
    cut_pairs = [tuple(p) for p in cut_pairs]
    client = client if client is not None else grid_client()  # STITCHKIT_DASK: this process's cluster
    if client is not None:
        futures = client.map(pair_task, [s.detached() if is_net(s) else s for s in senders for _ in receivers],
                             [r.detached() for _ in senders for r in receivers],
                             pure=False, cut_pairs=cut_pairs, recipe=recipe, data=data, store_root=str(store.root),
                             root=root, stitches_per_pass=stitches_per_pass)
        rows = [row for part in client.gather(futures) for row in part]
        rows.sort(key=local_order(senders, receivers, cut_pairs))
    else:
        ctx = GridContext(recipe, data, as_device(device), store, root, progress, stitches_per_pass=stitches_per_pass)
        bar = progress_bar(total=len(senders) * len(receivers) * len(cut_pairs), desc="stitch grid",
                           disable=not progress, unit="stitch")
        rows = local_rows(senders, receivers, cut_pairs, ctx, bar)
        bar.close()
    return pd.DataFrame(rows)


def can_cache_activations(recipe: StitchRecipe) -> bool:
    """Sender activations are fixed (computable once per cut) only without augmentation and with
    the sender's BatchNorm in eval mode."""
    return not recipe.train.augment and recipe.frozen_bn == "eval"


# --------------------------------------------------------------------------------------------
# What one grid call shares, and a sender's activations at one cut


class GridContext:
    """What one grid call shares: device, store, data splits, receiver accuracies and targets."""

    def __init__(self, recipe: StitchRecipe, data: DataSpec, device, store, root, progress,
                 stitches_per_pass: int | None = None) -> None:
        self.recipe, self.data, self.device, self.store, self.root = recipe, data, device, store, root
        self.progress = progress
        self.stitches_per_pass = stitches_per_pass or STITCHES_PER_PASS.get(device.type, 1)
        self.precision = resolve_precision(recipe.train.precision, device)
        split = train_split(data, root)
        if recipe.train_size is not None:
            split = split.subset(splits.stratified_subset(split.labels, recipe.train_size, recipe.subset_seed))
        self.train = split
        self.test = test_split(data, recipe.test_size, recipe.subset_seed, root)
        self.dm_index = splits.stratified_subset(split.labels, min(recipe.dm_images, len(split)),
                                                   recipe.subset_seed)
        self._receiver: dict[str, dict] = {}
        self._targets: dict[tuple[str, str], torch.Tensor] = {}

    def _receiver_eval(self, receiver: Net) -> dict:
        key = config_key(receiver.spec)
        if key not in self._receiver:
            model = receiver.load(self.device, self.store, self.root, self.progress)
            batches = data_mod.Batches(self.test, 500, normalisation=receiver.spec.normalisation,
                                       device=self.device, channels_last=channels_last_ok(model))
            self._receiver[key] = evaluate(model, batches, device=self.device, per_image=True)  # fp32
        return self._receiver[key]

    def receiver_accuracy(self, receiver: Net) -> float:
        return self._receiver_eval(receiver)["accuracy"]

    def receiver_correct(self, receiver: Net) -> np.ndarray:
        """(n_test,) bool: which test images the receiver gets right (the paired bootstrap's other half)."""
        return self._receiver_eval(receiver)["correct"]

    def dm_target(self, receiver: Net, cut_j: str) -> torch.Tensor:
        """The receiver's activations at ``cut_j`` on the DM images (float32)."""
        key = (config_key(receiver.spec), cut_j)
        if key not in self._targets:
            model = receiver.load(self.device, self.store, self.root, self.progress)
            self._targets[key] = stitches.activations(model, cut_j, self.train.subset(self.dm_index),
                                                       normalisation=receiver.spec.normalisation,
                                                       device=self.device, precision="fp32")
        return self._targets[key]


class SenderCut:
    """A sender's activations at one cut, computed on first use and shared by every stitch that
    reads that cut (train, test and DM images).

    ``previous``: the same sender's SenderCut at an earlier cut, whose stitches are done. A split
    it holds exactly as the forward handed it on (float32; under bf16, the dtype the forward has at
    that cut: :func:`stitchkit.stitching.stitches.boundary_dtype`) is continued from there (only the pieces
    in between run: the numbers are those of a forward from the images) and then released, so a
    grid walking a sender's cuts in order pays about one forward pass for all of them, not one
    per cut. A split stored rounded (bf16 where the forward had float32) is computed from the
    images again."""

    def __init__(self, ctx: GridContext, sender: Any, cut: str, previous: "SenderCut | None" = None) -> None:
        self.ctx, self.sender, self.cut = ctx, sender, cut
        self._acts: dict[str, tuple[torch.Tensor, torch.Tensor | None]] = {}
        self._previous = previous
        if previous is not None:
            previous._previous = None  # no chain of held tensors

    def _continued(self, model: CutModel, split: str, precision: str) -> torch.Tensor | None:
        prev = self._previous
        if prev is None or split not in prev._acts or model.check_cut(prev.cut) > model.check_cut(self.cut):
            return None
        h, _ = prev._acts[split]
        if precision != "fp32" and h.dtype != stitches.boundary_dtype(
                model, prev.cut, tuple(self.ctx.test.images.shape[1:]), device=self.ctx.device, precision=precision):
            return None  # stored rounded: continuing would not give the forward's numbers
        prev._acts.pop(split)
        return stitches.activations_between(model, prev.cut, self.cut, h, device=self.ctx.device,
                                             precision=precision, dtype=h.dtype)

    def get(self, split: str, shape: tuple[int, ...] | None = None) -> tuple[torch.Tensor, torch.Tensor | None]:
        if split not in self._acts:
            ctx = self.ctx
            if is_net(self.sender):
                model = self.sender.load(ctx.device, ctx.store, ctx.root, ctx.progress)
                source = {"train": ctx.train, "test": ctx.test, "dm": ctx.train.subset(ctx.dm_index)}[split]
                # the stitch trains on the training split in the training precision; the test and
                # DM splits are measured (fp32 whatever the training precision: see hardware)
                precision = ctx.precision if split == "train" else MEASURE_PRECISION
                dtype = torch.float32 if precision == "fp32" else torch.bfloat16
                acts = self._continued(model, split, precision)
                if acts is None:
                    acts = stitches.activations(model, self.cut, source, normalisation=self.sender.spec.normalisation,
                                                 device=ctx.device, precision=precision, dtype=dtype)
                self._acts[split] = (acts, None)
            else:
                x, y = self.sender.tensors(self.cut, shape, split)
                self._acts[split] = (x.to(ctx.device), y.to(ctx.device))
        return self._acts[split]


# --------------------------------------------------------------------------------------------
# One stitch (or a stacked pass of several) into a table row


def _spec(ctx: GridContext, sender: Any, receiver: Net, cut_i: str, cut_j: str) -> StitchSpec:
    return StitchSpec(sender=sender.spec, receiver=receiver.spec, cut_i=cut_i, cut_j=cut_j, recipe=ctx.recipe,
                      data=ctx.data)


def _start(ctx: GridContext, sender: Any, sc: SenderCut, rx: CutModel, receiver: Net, cut_i: str, cut_j: str):
    """A fresh stitch, directly matched if the recipe says so: (stitched model, normalisation,
    receiver shape at cut_j, metrics so far, the DM result or None)."""
    recipe, cached = ctx.recipe, can_cache_activations(ctx.recipe)
    stitched, norm, out_shape = build_stitched(ctx, sender, sc, rx, cut_i, cut_j, tuple(ctx.test.images.shape[1:]))
    metrics: dict[str, Any] = {"dm_accuracy": None, "dm_residual": None}
    result = None
    if recipe.init == "dm":
        if not is_net(sender):
            raise ValueError(f"sender {sender.name!r} is a tensor source: direct matching needs images that "
                             "both networks see; use init='default'")
        x_dm, _ = sc.get("dm")
        metrics.update(stitches.init_dm(stitched.stitch, x_dm, ctx.dm_target(receiver, cut_j)))
        result = evaluate_on_test(ctx, stitched, sc, norm, cached, out_shape)
        metrics["dm_accuracy"] = result["accuracy"]
        metrics["dm_correct"] = pack_correct(result["correct"])
    return stitched, norm, out_shape, metrics, result


def _finish(ctx: GridContext, stitched, sc: SenderCut, norm: str, out_shape, metrics: dict, result,
            history: list[dict], seconds: float) -> tuple[dict, dict[str, torch.Tensor]]:
    """Evaluate a trained stitch (unless direct matching alone made it): (metrics, tensors) to store."""
    if history or result is None:  # direct matching alone: its evaluation is the result
        result = evaluate_on_test(ctx, stitched, sc, norm, can_cache_activations(ctx.recipe), out_shape)
    metrics.update(accuracy=result["accuracy"], loss=result["loss"], n=result["n"], correct=pack_correct(result["correct"]),
                   history=history,
                   train_loss=history[-1]["loss"] if history else None, seconds=seconds, precision=ctx.precision)
    return metrics, stitched.stitch.state_dict()


def _trains(recipe: StitchRecipe) -> bool:
    return recipe.train.epochs > 0 or bool(recipe.train.steps)


def _row(ctx: GridContext, sender: Any, receiver: Net, cut_i: str, cut_j: str, entry) -> dict:
    receiver_acc = ctx.receiver_accuracy(receiver)
    m = entry.metrics
    return {"sender": sender.name, "receiver": receiver.name, "cut_i": cut_i, "cut_j": cut_j,
            "control": is_net(sender) and sender.spec == receiver.spec and cut_i == cut_j,
            "accuracy": m["accuracy"], "receiver_accuracy": receiver_acc, "penalty": receiver_acc - m["accuracy"],
            "dm_accuracy": m["dm_accuracy"],
            "dm_penalty": None if m["dm_accuracy"] is None else receiver_acc - m["dm_accuracy"],
            "dm_residual": m["dm_residual"], "train_loss": m["train_loss"], "seconds": m["seconds"],
            "n_test": m["n"], "key": entry.key,
            # per-image results on the test split, for the paired bootstrap (stitchkit.verdicts.noise); None in
            # an entry stored before they were kept
            "correct": unpack_correct(m.get("correct"), m["n"]), "receiver_correct": ctx.receiver_correct(receiver),
            "dm_correct": unpack_correct(m.get("dm_correct"), m["n"])}


def pack_correct(correct: np.ndarray) -> bytes:
    """Per-image correctness as bits, the form a cache entry keeps (:func:`unpack_correct` reads it)."""
    return np.packbits(np.asarray(correct, dtype=bool)).tobytes()


def unpack_correct(packed: bytes | None, n: int) -> np.ndarray | None:
    """The ``n`` per-image booleans :func:`pack_correct` stored (None stays None)."""
    if packed is None:
        return None
    return np.unpackbits(np.frombuffer(packed, dtype=np.uint8), count=n).astype(bool)


def _one_stitch(ctx: GridContext, sender: Any, sc: SenderCut, receiver: Net, cut_i: str, cut_j: str) -> dict:
    """One stitch, read from the store or trained here (under the store's claim on its key) and stored."""
    recipe = ctx.recipe
    rx = receiver.load(ctx.device, ctx.store, ctx.root, ctx.progress)
    cached = can_cache_activations(recipe)
    with ctx.store.claim(_spec(ctx, sender, receiver, cut_i, cut_j), salt=data_salt(ctx, sender, receiver)) as slot:
        if slot.entry is None:
            t0 = time.perf_counter()
            stitched, norm, out_shape, metrics, result = _start(ctx, sender, sc, rx, receiver, cut_i, cut_j)
            history: list[dict] = []
            if _trains(recipe):
                # precomputed activations when they are fixed (or all a tensor source has), else image batches
                x, y = sc.get("train", out_shape) if cached or not is_net(sender) else (None, None)
                model, batches = stitches.stitch_batches(stitched, ctx.train, recipe.train, normalisation=norm,
                                                         device=ctx.device, activations=x, labels=y)
                history = train(model, batches, recipe.train, device=ctx.device, desc="stitch", progress=False)
            slot.put(*_finish(ctx, stitched, sc, norm, out_shape, metrics, result, history, time.perf_counter() - t0))
    return _row(ctx, sender, receiver, cut_i, cut_j, slot.entry)


def _stacked_stitches(ctx: GridContext, sender: Net, cuts: dict[str, SenderCut], receiver: Net, cut_j: str,
                      cuts_i: Sequence[str]) -> list[dict]:
    """Every stitch from ``cuts_i`` of ``sender`` into ``cut_j`` of ``receiver``: those not in the
    store are claimed ``ctx.stitches_per_pass`` at a time (:meth:`stitchkit.base.store.Store.claim_all`),
    directly matched one by one, trained together in one pass and stored one by one."""
    recipe = ctx.recipe
    rx = receiver.load(ctx.device, ctx.store, ctx.root, ctx.progress)
    salt = data_salt(ctx, sender, receiver)
    entries = {ci: ctx.store.get(_spec(ctx, sender, receiver, ci, cut_j), salt=salt) for ci in cuts_i}
    todo = [ci for ci in cuts_i if entries[ci] is None]
    k = ctx.stitches_per_pass
    for chunk in (todo[n:n + k] for n in range(0, len(todo), k)):
        with ctx.store.claim_all([_spec(ctx, sender, receiver, ci, cut_j) for ci in chunk], salt=salt) as slots:
            # another run may have computed some of them while this one waited
            open_ = [(ci, slot) for ci, slot in zip(chunk, slots) if slot.entry is None]
            if open_:
                t0 = time.perf_counter()
                started = [_start(ctx, sender, cuts[ci], rx, receiver, ci, cut_j) for ci, _ in open_]
                histories: list[list[dict]] = [[] for _ in open_]
                if _trains(recipe):
                    xs = [cuts[ci].get("train", st[2])[0] for (ci, _), st in zip(open_, started)]
                    model, batches, objective = stitches.stacked_batches([st[0] for st in started], xs,
                                                                         ctx.train.labels, recipe.train,
                                                                         device=ctx.device)
                    history = train(model, batches, recipe.train, device=ctx.device, objective=objective,
                                    desc="stitches", progress=False)
                    histories = objective.per_stitch(history)
                seconds = (time.perf_counter() - t0) / len(open_)  # the pass is shared: each stitch its part
                for (ci, slot), (stitched, norm, out_shape, metrics, result), h in zip(open_, started, histories):
                    slot.put(*_finish(ctx, stitched, cuts[ci], norm, out_shape, metrics, result, h, seconds))
        entries.update((ci, slot.entry) for ci, slot in zip(chunk, slots))
    return [_row(ctx, sender, receiver, ci, cut_j, entries[ci]) for ci in cuts_i]


def data_salt(ctx: GridContext, sender: Any, receiver: Net) -> str:
    """The identity of every dataset a stitch depends on (its task's, the receiver's, the sender's)."""
    return combined_fingerprint(ctx.data, receiver.spec.data, *([sender.spec.data] if is_net(sender) else []),
                                root=ctx.root)


def build_stitched(ctx: GridContext, sender: Any, sc: SenderCut, rx: CutModel, cut_i: str, cut_j: str, input_shape):
    """A fresh stitched model (stitch initialised with the recipe's seed), the normalisation of
    its input images, and the receiver's activation shape at ``cut_j``."""
    recipe = ctx.recipe
    out_shape = rx.shape_at(cut_j, input_shape)
    if is_net(sender):
        sx = sender.load(ctx.device, ctx.store, ctx.root, ctx.progress)
        stitched = stitches.stitch_models(sx, cut_i, rx, cut_j, kind=recipe.kind, frozen_bn=recipe.frozen_bn,
                                           stitch_bn=recipe.stitch_bn_mode, kernel_size=recipe.kernel_size,
                                           seed=recipe.init_seed, device=ctx.device, input_shape=input_shape)
        return stitched, sender.spec.normalisation, out_shape
    x_train, _ = sc.get("train", out_shape)
    with torch.random.fork_rng(devices=[]):
        torch.manual_seed(recipe.init_seed)
        st = stitches.make_stitch(recipe.kind, tuple(x_train.shape[1:]), out_shape, kernel_size=recipe.kernel_size)
    # a tensor source feeds the stitch directly: the "sender" half is never run
    stitched = stitches.StitchedModel(rx, cut_j, rx, cut_j, st.to(ctx.device), frozen_bn=recipe.frozen_bn,
                                       stitch_bn=recipe.stitch_bn_mode)
    return stitched, "none", out_shape  # no images to normalise


def evaluate_on_test(ctx: GridContext, stitched, sc: SenderCut, norm: str, cached: bool, out_shape) -> dict:
    """A stitched network's test accuracy, loss and per-image correctness (on the sender's cached test
    activations when ``cached``, else on the test images)."""
    if cached or not is_net(sc.sender):
        x, y = sc.get("test", out_shape)
        return stitches.evaluate_stitch(stitched, ctx.test, normalisation=norm, device=ctx.device,
                                         activations=x, labels=y, per_image=True)
    return stitches.evaluate_stitch(stitched, ctx.test, normalisation=norm, device=ctx.device, per_image=True)


# --------------------------------------------------------------------------------------------
# The local walk over the grid, and the per-pair Dask task


def _stacks(ctx: GridContext, senders) -> bool:
    """Train several stitches per pass: asked for, activations cacheable, every sender a network."""
    return ctx.stitches_per_pass > 1 and can_cache_activations(ctx.recipe) and all(is_net(s) for s in senders)


def local_rows(senders, receivers, cut_pairs, ctx: GridContext, bar=None) -> list[dict]:
    if _stacks(ctx, senders):
        return _stacked_rows(senders, receivers, cut_pairs, ctx, bar)
    rows = []
    by_cut: dict[str, list[str]] = {}
    for ci, cj in cut_pairs:
        by_cut.setdefault(ci, []).append(cj)
    for sender in senders:
        sc = None
        for cut_i, cuts_j in by_cut.items():
            # one forward of this sender cut for all its stitches, continued from the previous cut
            sc = SenderCut(ctx, sender, cut_i, previous=sc)
            for receiver in receivers:
                for cut_j in cuts_j:
                    rows.append(_one_stitch(ctx, sender, sc, receiver, cut_i, cut_j))
                    if bar is not None:
                        bar.update(1)
        del sc
    return rows


def _stacked_rows(senders, receivers, cut_pairs, ctx: GridContext, bar=None) -> list[dict]:
    """The local grid with the stitches into each receiver cut stacked: every cut of a sender is
    held (computed once) while its stitches into all receivers train; rows in the local order."""
    rows = []
    by_j: dict[str, list[str]] = {}
    for ci, cj in cut_pairs:
        by_j.setdefault(cj, []).append(ci)
    for sender in senders:
        cuts = {ci: SenderCut(ctx, sender, ci) for ci, _ in cut_pairs}
        for receiver in receivers:
            for cut_j, cuts_i in by_j.items():
                rows.extend(_stacked_stitches(ctx, sender, cuts, receiver, cut_j, cuts_i))
                if bar is not None:
                    bar.update(len(cuts_i))
        del cuts
    rows.sort(key=local_order(senders, receivers, cut_pairs))
    return rows


def local_order(senders, receivers, cut_pairs):
    """Sort key putting rows in the order the local run produces them."""
    s_idx = {s.name: k for k, s in enumerate(senders)}
    r_idx = {r.name: k for k, r in enumerate(receivers)}
    ci_idx: dict[str, int] = {}
    for ci, _ in cut_pairs:
        ci_idx.setdefault(ci, len(ci_idx))
    p_idx = {p: k for k, p in enumerate(cut_pairs)}
    return lambda r: (s_idx[r["sender"]], ci_idx[r["cut_i"]], r_idx[r["receiver"]], p_idx[(r["cut_i"], r["cut_j"])])


def pair_task(sender, receiver, cut_pairs, recipe, data, store_root, root, stitches_per_pass=None) -> list[dict]:
    """One Dask task: every stitch of one sender-receiver pair (models loaded on the worker)."""
    ctx = GridContext(recipe, data, as_device(None), Store(store_root), root, progress=False,
                   stitches_per_pass=stitches_per_pass)
    return local_rows([sender], [receiver], cut_pairs, ctx)


# --------------------------------------------------------------------------------------------
# Reading trained stitches back from the store


def _stored(ctx: GridContext, sender: Any, receiver: Net, cut_pairs: Sequence[tuple[str, str]]):
    """Yield ((cut_i, cut_j), stitched model with its trained stitch loaded, metrics) for each
    pair, read from the store (a missing one raises, naming it)."""
    rx = receiver.load(ctx.device, ctx.store, ctx.root, False)
    salt = data_salt(ctx, sender, receiver)
    for cut_i, cut_j in cut_pairs:
        spec = StitchSpec(sender=sender.spec, receiver=receiver.spec, cut_i=cut_i, cut_j=cut_j, recipe=ctx.recipe,
                          data=ctx.data)
        entry = ctx.store.get(spec, salt=salt)
        if entry is None:
            raise KeyError(f"no stored stitch {sender.name} -> {receiver.name} at ({cut_i}, {cut_j}); "
                           "run stitch_grid first")
        stitched, _, _ = build_stitched(ctx, sender, SenderCut(ctx, sender, cut_i), rx, cut_i, cut_j,
                                tuple(ctx.test.images.shape[1:]))
        stitched.stitch.load_state_dict(entry.tensors)
        yield (cut_i, cut_j), stitched, entry.metrics


def load_stitched(sender: Any, receiver: Net, cut_i: str, cut_j: str, recipe: StitchRecipe, data: DataSpec, *,
                  device: torch.device | str | None = None, store: Store | None = None,
                  root: str | os.PathLike | None = None) -> tuple[stitches.StitchedModel, dict]:
    """The trained stitched model of one grid row (read from the store; run the grid first) and
    its metrics. For a tensor-source sender, feed ``stitched.top`` the source's tensors."""
    ctx = GridContext(recipe, data, as_device(device), store or Store(), root, progress=False)
    _, stitched, metrics = next(_stored(ctx, sender, receiver, [(cut_i, cut_j)]))
    return stitched.eval(), metrics


def load_stitches(sender: Any, receiver: Net, cut_pairs: Sequence[tuple[str, str]], recipe: StitchRecipe,
                  data: DataSpec, *, device: torch.device | str | None = None, store: Store | None = None,
                  root: str | os.PathLike | None = None) -> dict[tuple[str, str], torch.nn.Module]:
    """The trained stitch modules (eval mode) of many grid rows of one sender-receiver pair,
    read from the store with one shared context (run the grid first)."""
    ctx = GridContext(recipe, data, as_device(device), store or Store(), root, progress=False)
    return {pair: stitched.stitch.eval() for pair, stitched, _ in _stored(ctx, sender, receiver, cut_pairs)}


def stitch_mse(sender: Net, receiver: Net, cut_i: str, cut_j: str, recipe: StitchRecipe, data: DataSpec, *,
               n_images: int = 1000, device: torch.device | str | None = None, store: Store | None = None,
               root: str | os.PathLike | None = None, memo: dict | None = None) -> dict[str, torch.Tensor]:
    """Hernandez et al.'s sanity check for one grid row: per test image, the mean squared error
    (over the elements of the representation) between the receiver's expected representation at
    ``cut_j`` (E), the trained stitch's output (V) and the similarity-trained stitch's output (S),
    as float64 vectors ``EV``, ``ES``, ``SV`` of length ``n_images`` (the first images of the
    grid's test subset). S is the stitch that minimises the squared error to E, computed in
    closed form by direct matching on the grid's DM images. Run the grid first.

    ``memo``: a dict shared by calls over one grid (same recipe, data and ``n_images``). It keeps
    the data splits, the DM targets, and the activations of the latest sender cut and of the
    latest receiver's cuts, so a loop over the grid in its order (sender cut outer, receiver cut
    inner) runs each network forward once per cut instead of once per stitch. The numbers are
    those of calls without it."""
    memo = {} if memo is None else memo
    setting = (recipe, data, n_images, str(device), root)
    if memo.get("setting") != setting:
        memo.clear()
        memo["setting"] = setting
        memo["ctx"] = GridContext(recipe, data, as_device(device), store or Store(), root, progress=False)
    ctx = memo["ctx"]
    stitched, _ = load_stitched(sender, receiver, cut_i, cut_j, recipe, data, device=ctx.device, store=ctx.store,
                                root=root)
    rx = receiver.load(ctx.device, ctx.store, ctx.root, False)
    images = ctx.test.subset(torch.arange(min(n_images, len(ctx.test))))
    skey, rkey = (config_key(sender.spec), cut_i), config_key(receiver.spec)
    if memo.get("sender") != skey:  # one sender cut at a time: its DM and test activations
        sx = sender.load(ctx.device, ctx.store, ctx.root, False)
        memo["sender"], memo["sc"] = skey, SenderCut(ctx, sender, cut_i)
        memo["x"] = stitches.activations(sx, cut_i, images, normalisation=sender.spec.normalisation,
                                          device=ctx.device, precision="fp32")
    if memo.get("receiver") != rkey:  # one receiver at a time: its cuts' expected representations
        memo["receiver"], memo["e"] = rkey, {}
    sc, x = memo["sc"], memo["x"]
    similar, _, _ = build_stitched(ctx, sender, sc, rx, cut_i, cut_j, tuple(ctx.test.images.shape[1:]))
    stitches.init_dm(similar.stitch, sc.get("dm")[0], ctx.dm_target(receiver, cut_j))
    if cut_j not in memo["e"]:
        memo["e"][cut_j] = stitches.activations(rx, cut_j, images, normalisation=receiver.spec.normalisation,
                                                 device=ctx.device, precision="fp32").double().flatten(1)
    e = memo["e"][cut_j]
    with torch.no_grad():
        v = torch.cat([stitched.stitch.eval()(b) for b in x.split(500)]).double().flatten(1)
        s = torch.cat([similar.stitch.eval()(b) for b in x.split(500)]).double().flatten(1)
    return {"EV": ((e - v) ** 2).mean(1).cpu(), "ES": ((e - s) ** 2).mean(1).cpu(), "SV": ((s - v) ** 2).mean(1).cpu()}
