"""Hernandez et al. 2022: the committed paper-scale GPU spot checks of H-F2 and H-T1
(``benchmarks/paper_spot.py``), read and judged with the pages' own criteria, the tables of
self-stitches (the convergence control) that H-F2 and H-T1 show for a spot check or a run, and
H-F2's spot-check section: what it shows (:func:`spot_section`, :func:`fell_section`,
:func:`diverge_section`, :func:`spot_figure`) and the numbers its prose quotes
(:func:`f2_spot_numbers`).
"""

from __future__ import annotations

from pathlib import Path
from typing import Sequence

import matplotlib.pyplot as plt
import pandas as pd

from ...base.provenance import SPOT_DIR, load_spot_json
from ...pagekit.display import Section, plain
from ...verdicts import noise
from ...verdicts.claims import ClaimSpec
from ...verdicts.results import Claim
from .all_layers import CONTROL_FLOOR, plot_grids, triangle_table
from .judging import grid_summary, self_stitch_rows
from .mse import mse_summary

# Paper-scale spot checks run on a GPU by benchmarks/paper_spot.py (the table and its provenance
# are committed in SPOT_DIR): the page shows them beside its own run, judged with the same criteria.


def load_spot(stem: str = "hernandez-f2", spot_dir=None) -> tuple[pd.DataFrame, dict] | None:
    """The stitch table and metadata (config, accuracies, device, commit, wall time) of a
    committed spot check, or None if there is none."""
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


def _judged(claims: list[ClaimSpec]) -> pd.DataFrame:
    rows = []
    for c in claims:
        claim = Claim(c.key, c.text, c.criterion.text, c.paper, c.ours, c.criterion.holds, "paper", c.controls)
        rows.append({"claim": claim.text, "criterion": claim.criterion, "ours (spot check)": claim.ours,
                     "judged on": c.criterion.interval or "-",  # a spot check's summary: point values
                     "controls": "; ".join(f"{k.text}: {k.value} ({'passed' if k.passed else 'FAILED'})"
                                           for k in claim.controls) or "-", "verdict": claim.verdict})
    return pd.DataFrame(rows)


def load_t1_spot(stem: str = "hernandez-t1", spot_dir=None) -> tuple[pd.DataFrame, pd.DataFrame, dict] | None:
    """An H-T1 spot check (``benchmarks/paper_spot.py hernandez-t1``): its stitch table, the
    per-stitch EV/ES/SV means and its metadata (with the pooled statistics), or None."""
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
    return table[self_stitch_rows(table)]


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


# --------------------------------------------------------------------------------------------
# H-F2's spot-check section: each committed spot check captioned with what it changed and where it
# ran, its triangle table and the page's claims judged on it; the self-stitches that fell during
# training; the diagnosis of the worst one; and the numbers the page's prose quotes.

FAR_BELOW = 0.10  # a self-stitch that ends more than 10 points below its network: failed, not a near miss
_START = {"dm": "direct-matching start", "default": "random start"}  # the spot config's stitch_init, in words


def _source(stem: str) -> str:
    return f"`benchmarks/spot/{stem}.csv`"


def spot_caption(stem: str, table: pd.DataFrame, meta: dict) -> str:
    """One paragraph (markdown) on a committed spot check: its stitch recipe where it differs
    between the checks (lr, start), the machine, commit, date and wall time of the run, each
    network's test accuracy and the number of stitches."""
    c = meta["config"]
    nets = ", ".join(f"{k} {100 * v:.2f}%" for k, v in meta["accuracy"].items())
    return (f"**Stitch lr {c['stitch_lr']:g}, {_START[c.get('stitch_init', 'dm')]}** ({_source(stem)}): run on "
            f"{meta['device']} ({meta['precision']}), commit `{meta['commit']}`, {meta['date'][:10]}, "
            f"{meta['wall_seconds'] / 60:.1f} min; networks: {nets}; {len(table)} stitches.")


def spot_section(stems: Sequence[str], spot_dir=None) -> Section:
    """Per committed spot check of ``stems``, in order: :func:`spot_caption`, the triangle per
    ordered pair (:func:`triangle_table`) and the page's claims judged on it
    (:func:`spot_claims`); a check not committed is named, without tables."""
    parts: list = []
    for stem in stems:
        spot = load_spot(stem, spot_dir)
        if spot is None:
            parts.append(f"No spot check committed ({_source(stem)}).")
            continue
        table, meta = spot
        parts += [spot_caption(stem, table, meta), triangle_table(table), plain(spot_claims(table, meta), None)]
    return Section(tuple(parts))


def spot_figure(stems: Sequence[str], spot_dir=None):
    """The heatmaps (:func:`plot_grids`) of the first committed spot check of ``stems``, or a
    figure saying that none is committed."""
    for stem in stems:
        spot = load_spot(stem, spot_dir)
        if spot is not None:
            table, meta = spot
            return plot_grids(table, title="Paper scale (GPU spot check): R1111 and R2222, width 64, stitch lr "
                                           f"{meta['config']['stitch_lr']:g}")
    fig = plt.figure(figsize=(4, 0.5))
    fig.text(0.5, 0.5, "no spot check committed", ha="center", va="center")
    return fig


def fell_section(checks: Sequence[tuple[str, str]], spot_dir=None) -> Section:
    """Per committed spot check of ``checks`` (stem, what its recipe was, in words): how many of
    its self-stitches fell during training by more than the control's floor, and those
    (:func:`spot_diagnosis`); a check not committed is left out."""
    parts: list = []
    for stem, what in checks:
        spot = load_spot(stem, spot_dir)
        if spot is None:
            continue
        diag = spot_diagnosis(spot[0])
        parts += [f"**{what[0].upper() + what[1:]}** ({_source(stem)}): {len(diag)} of "
                  f"{int(self_stitch_rows(spot[0]).sum())} self-stitches fell.", plain(diag, 3)]
    return Section(tuple(parts))


def diverge_table(spot: dict) -> pd.DataFrame:
    """The diagnosis of the worst self-stitch (``benchmarks/spot_diverge.py``), one row per way
    of training it (precision, lr): accuracy (%) at its direct-matching start and after training,
    the final training loss, the fall in points, and whether it fell by more than the control's
    floor."""
    rows = {}
    for k, v in spot["variants"].items():
        fall = 100 * (v["dm_accuracy"] - v["accuracy"])
        rows[k] = {"DM start (%)": 100 * v["dm_accuracy"], "after training (%)": 100 * v["accuracy"],
                   "final training loss": v["train_loss"], "below its DM start (points)": fall,
                   "verdict": "falls" if fall > 100 * CONTROL_FLOOR else "holds"}
    return pd.DataFrame.from_dict(rows, orient="index").rename_axis("stitch training")


def diverge_section(stem: str = "hernandez-f2-diverge", spot_dir=None) -> Section:
    """:func:`diverge_table` with a caption (network, cut, machine, commit, date and the
    network's own accuracy), or a line saying the diagnosis is not committed."""
    spot = load_spot_json(stem, spot_dir)
    if spot is None:
        return Section((f"No diagnosis committed (`benchmarks/spot/{stem}.json`).",))
    caption = (f"**{spot['network']} at {spot['cut']}** (`benchmarks/spot/{stem}.json`): run on {spot['device']}, "
               f"commit `{spot['commit']}`, {spot['date']}; the network's own accuracy {100 * spot['accuracy']:.2f}%.")
    return Section((caption, diverge_table(spot).style.format(precision=2)))


def _range(x: pd.Series) -> tuple[float, float]:
    return (float(x.min()), float(x.max())) if len(x) else (float("nan"), float("nan"))


def f2_spot_numbers(spot_dir=None) -> dict[str, float]:
    """The numbers H-F2's prose quotes from its spot checks (NaN where a check is not committed).
    With the authors' effective schedule (``hernandez-f2``): the self-stitches (``_self``), how
    many fell during training by more than the control's floor (``_fell``, :func:`spot_diagnosis`)
    and the smallest and largest fall (points). At a tenth of the lr (``hernandez-f2-lr0.001``):
    how many of the self-stitches held. From a random start (``hernandez-f2-random-init``): how
    many self-stitches end more than the floor below their network (``_below``), how many more
    than :data:`FAR_BELOW` (``_far``), and those's accuracies (%) and final training losses."""
    nan = float("nan")
    numbers = dict.fromkeys(["spot_schedule_self", "spot_schedule_fell", "spot_schedule_fall_min",
                             "spot_schedule_fall_max", "spot_lr_self", "spot_lr_held", "spot_random_self",
                             "spot_random_below", "spot_random_far", "spot_random_far_acc_min",
                             "spot_random_far_acc_max", "spot_random_far_loss_min", "spot_random_far_loss_max"], nan)
    spot = load_spot("hernandez-f2", spot_dir)
    if spot is not None:
        d = _self_rows(spot[0])
        fall = 100 * (d.dm_accuracy - d.accuracy)
        fell = fall[fall > 100 * CONTROL_FLOOR]  # the rows of spot_diagnosis
        numbers.update(spot_schedule_self=len(d), spot_schedule_fell=len(fell))
        numbers["spot_schedule_fall_min"], numbers["spot_schedule_fall_max"] = _range(fell)
    spot = load_spot("hernandez-f2-lr0.001", spot_dir)
    if spot is not None:
        n = int(self_stitch_rows(spot[0]).sum())
        numbers.update(spot_lr_self=n, spot_lr_held=n - len(spot_diagnosis(spot[0])))
    spot = load_spot("hernandez-f2-random-init", spot_dir)
    if spot is not None:
        d = _self_rows(spot[0])
        far = d[d.penalty > FAR_BELOW]
        numbers.update(spot_random_self=len(d), spot_random_below=int((d.penalty > CONTROL_FLOOR).sum()),
                       spot_random_far=len(far))
        numbers["spot_random_far_acc_min"], numbers["spot_random_far_acc_max"] = _range(100 * far.accuracy)
        numbers["spot_random_far_loss_min"], numbers["spot_random_far_loss_max"] = _range(far.train_loss)
    return numbers
