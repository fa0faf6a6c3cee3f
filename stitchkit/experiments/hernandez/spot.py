"""Hernandez et al. 2022: the committed paper-scale GPU spot checks of H-F2 and H-T1
(``benchmarks/paper_spot.py``), read and judged with the pages' own criteria, and the tables of
self-stitches (the convergence control) that H-F2 and H-T1 show for a spot check or a run.
"""

from __future__ import annotations

import pandas as pd

from ... import noise, results
from ...results import Claim
from .grid import CONTROL_FLOOR
from .mse import mse_summary
from .verdicts import _self_mask, grid_summary

# Paper-scale spot checks run on a GPU by benchmarks/paper_spot.py (the table and its provenance
# are committed there): the page shows them beside its own run, judged with the same criteria.
SPOT_DIR = results.SPOT_DIR
load_spot_json = results.load_spot_json


def load_spot(stem: str = "hernandez-f2", spot_dir=None) -> tuple[pd.DataFrame, dict] | None:
    """The stitch table and metadata (config, accuracies, device, commit, wall time) of a
    committed spot check, or None if there is none."""
    from pathlib import Path

    csv, meta = Path(spot_dir or SPOT_DIR) / f"{stem}.csv", load_spot_json(stem, spot_dir)
    if not csv.exists() or meta is None:
        return None
    # a CSV cannot carry per-image results (a grid table's arrays are written as numpy's truncated
    # repr): a spot check is judged on its point values (see _estimate)
    table = pd.read_csv(csv)
    return table.drop(columns=[c for c in noise.PER_IMAGE if c in table]), meta


def spot_claims(table: pd.DataFrame, meta: dict) -> pd.DataFrame:
    """The page's claims judged on a spot check with :func:`grid_summary`'s criteria and
    controls (one row per claim). They are shown, not recorded: the page's verdicts stay those
    of its own run at its own scale. The committed spot checks keep each stitch's accuracy, not
    its per-image results, so they are judged on point values, as the 'judged on' column says."""
    _, claims = grid_summary(table, meta["accuracy"])
    return _judged(claims)


def _judged(claims: list[dict]) -> pd.DataFrame:
    rows = []
    for c in claims:
        claim = Claim(c["key"], c["text"], c["criterion"].text, c["paper"], c["ours"], c["criterion"].holds, "paper",
                      tuple(c.get("controls", ())))
        rows.append({"claim": claim.text, "criterion": claim.criterion, "ours (spot check)": claim.ours,
                     "judged on": c["criterion"].interval or "-",  # a spot check's summary: point values
                     "controls": "; ".join(f"{k.text}: {k.value} ({'passed' if k.passed else 'FAILED'})"
                                           for k in claim.controls) or "-", "verdict": claim.verdict})
    return pd.DataFrame(rows)


def load_t1_spot(stem: str = "hernandez-t1", spot_dir=None) -> tuple[pd.DataFrame, pd.DataFrame, dict] | None:
    """An H-T1 spot check (``benchmarks/paper_spot.py hernandez-t1``): its stitch table, the
    per-stitch EV/ES/SV means and its metadata (with the pooled statistics), or None."""
    from pathlib import Path

    spot = load_spot(stem, spot_dir)
    per = Path(spot_dir or SPOT_DIR) / f"{stem}-per.csv"
    return (spot[0], pd.read_csv(per), spot[1]) if spot is not None and per.exists() else None


def t1_spot_claims(table: pd.DataFrame, per: pd.DataFrame, meta: dict) -> pd.DataFrame:
    """H-T1's claims recomputed from a spot check's committed tables with the page's criteria
    and controls (shown, not recorded, as :func:`spot_claims`)."""
    _, claims = mse_summary(per, pd.DataFrame(meta["stats"]), table, "corresponding layers, i = j")
    return _judged(claims)


def _self_rows(table: pd.DataFrame) -> pd.DataFrame:
    """The trained networks stitched into themselves at i = j: an exact stitch exists there."""
    return table[_self_mask(table)]


def spot_diagnosis(table: pd.DataFrame) -> pd.DataFrame:
    """The self-stitches (i = j, an exact stitch exists and is the DM start) whose accuracy fell
    during training, with their final training loss: where the stitch's training, not the
    representations, decided the number."""
    d = _self_rows(table)
    d = d.assign(fall=100 * (d.dm_accuracy - d.accuracy))
    d = d[d.fall > 100 * CONTROL_FLOOR]
    return pd.DataFrame({"network": d.sender, "layer i = j": d.i, "DM start (%)": (100 * d.dm_accuracy).round(2),
                         "after training (%)": (100 * d.accuracy).round(2),
                         "final training loss": d.train_loss.round(3)}).reset_index(drop=True)


def self_stitches(table: pd.DataFrame) -> pd.DataFrame:
    """Every network stitched into itself at i = j (the convergence control): the network's own
    accuracy, the stitched one, the penalty in points and the stitch's final training loss."""
    d = _self_rows(table)
    return pd.DataFrame({"network": d.sender, "layer i = j": d.i, "network (%)": 100 * d.receiver_accuracy,
                         "stitched (%)": 100 * d.accuracy, "penalty (points)": 100 * d.penalty,
                         "final training loss": d.train_loss}).reset_index(drop=True)
