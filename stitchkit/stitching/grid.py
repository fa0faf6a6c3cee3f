"""The stitch grid: many stitches between senders and receivers, returned as one tidy table.

``stitch_grid(senders, receivers, cut_pairs, recipe, data)`` trains (or reads from the store)
one stitch per (sender, receiver, (cut_i, cut_j)) and returns a DataFrame with one row per
stitch: sender, receiver, cuts, accuracy after direct matching only and after task-loss
fine-tuning, the receiver's own accuracy, both penalties, the DM residual, the final training
loss and the seconds spent. Rows where the sender *is* the receiver at the same cut are the
convergence control (an exact stitch exists, so its penalty measures the recipe's floor).
``client`` (a Dask client) maps the grid as one task per sender-receiver pair; the table is the
same as the local run's.

A sender is a :class:`Net` (a zoo model) or a :class:`TensorSource` (activations given
directly, e.g. Smith & Marcu's clustered-noise sender).

This module is the grid's public face: :func:`stitch_grid` and the readers of trained
stitches (:func:`load_stitched`, :func:`load_stitches`, :func:`stitch_mse`). What a grid is made
of (:class:`StitchRecipe`, :class:`Net`, :class:`TensorSource`, :class:`StitchSpec`,
:data:`LONGER`) lives in :mod:`stitchkit.stitching.grid_spec`, how its stitches are computed (activation
caching, stacking, the Dask task) in :mod:`stitchkit.stitching.grid_exec`, and the training-length
control's retraining and swapping of stitches in :mod:`stitchkit.stitching.longer`; import those names from there.
"""

from __future__ import annotations

import os
from typing import Any, Sequence

import pandas as pd
import torch

from ..base.cluster import grid_client
from ..base.hardware import as_device
from ..base.progress import progress_bar
from ..base.store import Store, config_key
from ..data.datasets import DataSpec
from . import stitches
from .grid_exec import GridContext, SenderCut, build_stitched, data_salt, local_order, local_rows, pair_task
from .grid_spec import Net, StitchRecipe, StitchSpec, is_net

__all__ = ["stitch_grid", "load_stitched", "load_stitches", "stitch_mse"]


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
