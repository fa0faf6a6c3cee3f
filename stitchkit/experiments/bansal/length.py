"""Bansal et al. 2021: the training-length control every Bansal page's verdicts get (B-F2A to
B-F8), and :func:`decided`, which says whether a verdict can be checked at all.

A stitch that stopped short costs more than a trained one, so every decided verdict is checked
at the cells that decide it: those stitches *and the receiver's self-stitches at the same cuts*
(the reference the claims subtract, which may move either way) are retrained with ``LONGER`` x
the epochs, the 1x cells are replaced by them (:func:`swap_grid_rows`), and the claim is re-judged
on that table (:func:`retrain_longer`, through the book's one training-length control,
:mod:`stitchkit.stitching.longer`: the control passes when the re-judged claim gives the same
decided result). Which cells decide a claim is each page's own
rule, handed over as :class:`LengthCheck` records (B-F2A's in :mod:`.f2a`, the sweeps' in
:mod:`.f2c_f3ab` and :mod:`.f3c_f6`).
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Callable, Mapping

import pandas as pd

from ...data.datasets import DataSpec
from ...networks.network import ModelSpec
from ...pagekit.display import plain
from ...stitching.grid_spec import LONGER, Net, StitchRecipe
from ...stitching.longer import Cells, retrain, with_length_control
from ...stitching.longer import replace_cells
from ...verdicts.claims import ClaimSpec
from ...verdicts.results import Criterion
from .common import SELF

# per-stitch columns of a grid row that a retrained stitch replaces (the receiver's stay)
CELL_COLUMNS = ("accuracy", "penalty", "dm_accuracy", "dm_penalty", "dm_residual", "train_loss", "seconds",
                "key", "correct", "dm_correct")


def decided(claim: ClaimSpec) -> bool:
    """Whether a claim's verdict is decided: its interval on one side and every control passed
    (:attr:`ClaimSpec.decided`)."""
    return claim.decided


def swap_grid_rows(table: pd.DataFrame, longer: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the rows of ``longer`` (grid rows: sender, cut_i or cut) in place of its rows
    of the same sender and cut, and receiver where ``table`` has several (the per-stitch columns,
    :data:`CELL_COLUMNS`; :func:`stitchkit.stitching.longer.replace_cells`)."""
    new = longer.rename(columns={"cut_i": "cut"}).reset_index(drop=True)
    on = ["sender", "cut"] + (["receiver"] if "receiver" in table and "receiver" in new
                              and table.receiver.nunique() > 1 else [])
    return replace_cells(table, new, on, [c for c in CELL_COLUMNS if c in new.columns and c in table.columns])


LENGTH_COLUMNS = ["claim", "panel", "sender", "cuts", "grid (points)", f"{LONGER}x epochs (points)",
                  "self-stitch 1x (points)", f"self-stitch {LONGER}x (points)", "bound (points)", "change",
                  "verdict 1x", f"verdict {LONGER}x"]


def _holds_word(h: bool | None) -> str:
    return {True: "holds", False: "fails", None: "within noise"}[h]


@dataclass(frozen=True)
class LengthPart:
    """The stitches of a check that go into one receiver: ``cells`` (sender name, the cuts) with
    each sender's spec in ``sender_specs``, retrained beside the receiver's self-stitches at the
    same cuts. ``receiver_name`` is the table's receiver column (a grid's receiver name);
    ``panel`` names the part on display (default: the check's)."""

    receiver: ModelSpec
    receiver_name: str
    cells: tuple[tuple[str, tuple[str, ...]], ...]
    sender_specs: Mapping[str, ModelSpec]
    panel: str | None = None


@dataclass(frozen=True)
class LengthCheck:
    """One claim's training-length check: the claim's key, the stitch ``recipe`` (retrained
    :meth:`~stitchkit.stitching.grid_spec.StitchRecipe.longer`), the 1x ``table`` it was judged on,
    ``rejudge`` (table -> the claim's Criterion, the page's own code), the ``bound`` it is judged
    against (points, for display; None where it has none) and the ``parts`` to retrain: one per
    receiver (several where the claim reads a table with several receivers, B-F6's both
    directions). ``self_name`` is the self-stitch's sender name in the table."""

    claim: str
    recipe: StitchRecipe
    table: pd.DataFrame
    rejudge: Callable[[pd.DataFrame], Criterion]
    bound: float | None
    parts: tuple[LengthPart, ...]
    panel: str | None = None
    self_name: str = SELF


def retrain_longer(checks: list[LengthCheck], *claims: list[ClaimSpec], device=None, store=None,
                   progress: bool = True) -> pd.DataFrame:
    """Retrain each check's stitches with :data:`LONGER` times the epochs (or steps), like for
    like: the deciding senders' stitches *and* the receiver's self-stitches at the same cuts (the
    reference of every penalty beyond the self-stitch), for each of its parts. The 1x cells of the
    check's ``table`` are replaced by the longer ones, every part's together
    (:func:`swap_grid_rows`), the claim is re-judged once on that table with ``rejudge``, and the
    control is attached to the claim (:func:`stitchkit.stitching.longer.with_length_control`): its
    copy with the control takes its place in whichever of the lists ``claims`` (one, or several:
    B-F2A's base and other architectures) holds its key (the lists change in place, the claims
    never do). The control passes when the re-judged claim gives the
    same decided result. Returns one row per part and sender."""
    holder = {c.key: group for group in claims for c in group}  # the list that holds each claim
    rows = []
    for chk in checks:
        self_name = chk.self_name
        outs = []
        for part in chk.parts:
            rx = Net(part.receiver_name, part.receiver)
            all_cuts = list(dict.fromkeys(c for _, cuts in part.cells for c in cuts))
            cells = [Cells((Net(self_name, part.receiver),), (rx,), tuple((c, c) for c in all_cuts), chk.recipe,
                           DataSpec("cifar10"))]
            cells += [Cells((Net(sender, part.sender_specs[sender]),), (rx,), tuple((c, c) for c in cuts), chk.recipe,
                            DataSpec("cifar10")) for sender, cuts in part.cells]
            outs.append(retrain(cells, device=device, store=store, progress=progress))
        merged = swap_grid_rows(chk.table, pd.concat(outs, ignore_index=True))
        base = next(c for c in holder[chk.claim] if c.key == chk.claim).criterion
        longer = chk.rejudge(merged)
        for part, out in zip(chk.parts, outs):
            new = out.rename(columns={"cut_i": "cut"})
            o_pen = new[new.sender == self_name].set_index("cut").penalty
            t0 = chk.table
            if "receiver" in t0 and t0.receiver.nunique() > 1:  # several tops (B-F3C, B-F6): this part's
                t0 = t0[t0.receiver == part.receiver_name]
            o_1x = t0[t0.sender == self_name].set_index("cut").penalty
            for sender, cut_names in part.cells:
                cuts = list(cut_names)  # a list: .loc reads a tuple as one key
                s_pen = new[new.sender == sender].set_index("cut").penalty
                after = float((100 * (s_pen - o_pen)).loc[cuts].mean())
                grid = float((100 * (t0[t0.sender == sender].set_index("cut").penalty - o_1x)).loc[cuts].mean())
                rows.append({"claim": chk.claim, "panel": part.panel or chk.panel, "sender": sender,
                             "cuts": ", ".join(cuts), "grid (points)": grid, f"{LONGER}x epochs (points)": after,
                             "self-stitch 1x (points)": float(100 * o_1x.loc[cuts].mean()),
                             f"self-stitch {LONGER}x (points)": float(100 * o_pen.loc[cuts].mean()),
                             "bound (points)": chk.bound, "change": after - grid,
                             "verdict 1x": _holds_word(base.holds), f"verdict {LONGER}x": _holds_word(longer.holds)})
        where = "; ".join(f"{sender} at {', '.join(cuts)}" + (f" into {part.receiver_name}" if len(chk.parts) > 1 else "")
                          for part in chk.parts for sender, cuts in part.cells)
        with_length_control(holder[chk.claim], chk.claim, longer,
                            f"the stitches of {where} and the receiver's self-stitches there retrained, the claim "
                            "re-judged on them")
    return pd.DataFrame(rows, columns=LENGTH_COLUMNS)


def length_table(longer: pd.DataFrame, claims: list[ClaimSpec]):
    """:func:`retrain_longer`'s rows as a page shows them: each claim by its text (not its key),
    without row numbers, in points at 2 decimals."""
    text = {c.key: c.text for c in claims}
    return plain(longer.assign(claim=[text.get(k, k) for k in longer.claim]))
