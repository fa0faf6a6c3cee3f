"""The training-length control, once for the whole book: "the verdict survives longer stitch
training".

A stitch that stopped short costs more than a trained one, so a page re-judges each stitching
claim with the stitches that decide it retrained at ``factor`` times the epochs (default
``LONGER``; :meth:`~stitchkit.stitching.grid_spec.StitchRecipe.longer`),
together with the references the claim subtracts where it subtracts any (a receiver's
self-stitches). Three steps, the same on every page:

- :func:`retrain`: the deciding cells (:class:`Cells`: senders, receivers, cut pairs, the 1x
  recipe and data) retrained through :func:`~stitchkit.stitching.grid.stitch_grid`, so the store
  keys, and with them the cached stitches, are those of any other run of the same recipe;
- :func:`replace_cells`: those rows put in place of their 1x values in the page's table;
- :func:`length_control` and :func:`with_length_control`: the re-judged criterion beside the 1x one, as
  :func:`stitchkit.verdicts.controls.training_length`, attached to the claim.

What stays with each page is its own rule: which cells decide its claim, and how the claim is
re-judged on the swapped table.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Mapping, Sequence

import pandas as pd

from ..data.datasets import DataSpec
from ..verdicts import controls
from ..verdicts.claims import ClaimSpec, replace_in
from ..verdicts.results import Control, Criterion
from .grid import stitch_grid
from .grid_spec import LONGER, Net, StitchRecipe

__all__ = ["Cells", "retrain", "replace_cells", "length_control", "with_length_control"]


@dataclass(frozen=True)
class Cells:
    """Stitches a training-length control retrains in one :func:`stitch_grid` call: every sender
    (a :class:`~stitchkit.stitching.grid_spec.Net` or a tensor source) into every receiver at every
    cut pair, with ``recipe`` (the 1x recipe: :func:`retrain` makes it longer) on ``data``.
    ``tags``: columns set on these rows of :func:`retrain`'s table (which initialisation, which
    name the page's table gives them)."""

    senders: tuple[Any, ...]
    receivers: tuple[Net, ...]
    cut_pairs: tuple[tuple[str, str], ...]
    recipe: StitchRecipe
    data: DataSpec
    tags: Mapping[str, Any] = field(default_factory=dict)


def retrain(cells: Sequence[Cells], factor: int | None = None, *, device=None, store=None,
            progress: bool = True) -> pd.DataFrame:
    """Each of ``cells`` retrained with its recipe at ``factor`` (default
    ``LONGER``) times the epochs, or the steps where it counts
    steps, everything else the same: the grid rows (:func:`stitch_grid`'s columns, and each
    :class:`Cells`' ``tags``), in the order of ``cells``. An empty table for no cells."""
    frames = []
    for c in cells:
        t = stitch_grid(list(c.senders), list(c.receivers), [tuple(p) for p in c.cut_pairs], c.recipe.longer(factor),
                        c.data, device=device, store=store, progress=progress)
        frames.append(t.assign(**c.tags) if c.tags else t)
    return pd.concat(frames, ignore_index=True) if frames else pd.DataFrame()


def replace_cells(table: pd.DataFrame, new: pd.DataFrame, on, columns, *, many: bool = False) -> pd.DataFrame:
    """A copy of ``table`` in which, for each row of ``new``, the rows of ``table`` that match it
    on ``on`` take its values in ``columns``: how a training-length control swaps its longer
    stitches into a page's table before re-judging a claim. ``on`` and ``columns`` map a column
    of ``table`` to one of ``new`` (a sequence: the same names in both). Every row of ``new`` must
    match exactly one row (``many``: at least one, e.g. every evaluation of one stitch); columns
    of per-image arrays and of strings are replaced element by element, numeric ones are floats."""
    on = dict(on) if isinstance(on, dict) else {c: c for c in on}
    columns = dict(columns) if isinstance(columns, dict) else {c: c for c in columns}
    out = table.reset_index(drop=True).copy()
    rows: dict[tuple, list[int]] = {}
    for i, key in enumerate(zip(*(out[c] for c in on))):
        rows.setdefault(tuple(key), []).append(i)
    values = {c: list(out[c]) for c in columns}
    for r in range(len(new)):
        key = tuple(new[n].iloc[r] for n in on.values())
        hit = rows.get(key, [])
        if not hit or (len(hit) > 1 and not many):
            where = ", ".join(f"{c}={(k.item() if hasattr(k, 'item') else k)!r}" for c, k in zip(on, key))
            raise ValueError(f"{len(hit)} rows of the table at {where} to replace (expected "
                             f"{'at least ' if many else ''}1)")
        for c, n in columns.items():
            for i in hit:
                values[c][i] = new[n].iloc[r]
    for c in columns:
        # numbers stay floats; per-image arrays and strings (a stitch's cache key: pandas' str dtype,
        # not object) keep their values as they are
        out[c] = pd.Series(values[c], dtype=float if pd.api.types.is_numeric_dtype(table[c]) else object)
    return out


def length_control(base: Criterion, again: Criterion, how: str = "", factor: int = LONGER) -> Control:
    """The training-length control of a claim judged ``base`` at 1x and ``again`` on the table
    with its deciding cells retrained at ``factor`` x the epochs
    (:func:`stitchkit.verdicts.controls.training_length`): its text says "the verdict survives
    ``factor``\\ x longer stitch training", then ``how`` (which cells were retrained) where given."""
    what = f"the verdict survives {factor}x longer stitch training: {how}" if how else ""
    return controls.training_length(base, again, factor, what=what)


def with_length_control(claims: list[ClaimSpec], key: str, again: Criterion, how: str = "",
                        factor: int = LONGER) -> ClaimSpec:
    """The claim ``key`` of ``claims`` with its :func:`length_control` (``again``: its criterion
    re-judged at ``factor`` x the epochs) put in its place in the list
    (:func:`stitchkit.verdicts.claims.replace_in`); returns the new claim."""
    base = next((c for c in claims if c.key == key), None)
    if base is None:
        raise KeyError(f"no claim {key!r} among {[c.key for c in claims]}")
    return replace_in(claims, key, length_control(base.criterion, again, how, factor))
