"""Hernandez et al. 2022: how the claims are judged, and H-F2/H-F4's claims. The intervals and the
self-stitch control every figure uses, the training-length control (stitches retrained for
longer, swapped into the grid) and :func:`grid_summary`, the triangle's numbers and claims.

Verdicts (review of issue 33). Every judged number carries a 95% interval from the paired
bootstrap over the test images (:mod:`stitchkit.verdicts.noise`): the triangle's minimum and maximum over
pairs are bootstrapped as a minimum and a maximum, each stitch paired image by image with its
receiver; the MSE statistics of H-T1/H-T2 and H-F6's rank correlation over the images they are
measured on. The controls are :mod:`stitchkit.verdicts.controls`', matched to each claim's kind (issue 46):
the positive control (every network stitched into itself on the diagonal loses at most 1 point
at its worst, one-sided; a gain is reported, not gated) on every stitching claim; the negative
control, which here is the paper's own untrained-sender bound (untrained senders stay low outside
the early corner), on the claims that a stitch *works* only; and the training-length control,
which re-judges every claim, decided or not, with the retrained cells in place of their 1x values.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...data.datasets import DataSpec
from ...stitching.longer import Cells, length_control, replace_cells, retrain
from ...stitching.grid_spec import LONGER, Net
from ...verdicts import controls, noise
from ...verdicts.claims import ClaimSpec
from ...verdicts.noise import Estimate
from ...verdicts.results import Control, Criterion, at_least, at_most
from .all_layers import CORNER, LOWER_MIN, RANDOM_MAX, UPPER_MAX, GridConfig, display_name, triangle

# Intervals. Every judged number of a grid is a function of the stitches' and receivers'
# per-image results on one shared test subset, so it is bootstrapped as a whole
# (:func:`stitchkit.verdicts.noise.bootstrap_table`): the minimum over pairs of a mean over cells is
# recomputed as a minimum on each resample of the test images, stitched and receiver paired
# image by image. A table without per-image results (a committed spot check's summary) is judged
# on its point values, and says so.

ACC = {"correct": "accuracy", "receiver_correct": "receiver_accuracy"}  # per-image column -> accuracy column
DM_ACC = {"dm_correct": "dm_accuracy", "receiver_correct": "receiver_accuracy"}  # the least-squares stitch's
NO_IMAGES = "exact: no interval, the table keeps no per-image results (a spot check's committed summary)"


def _has_images(table: pd.DataFrame, columns=ACC) -> bool:
    """Whether ``table`` keeps the per-image results of ``columns``: False where it has none of
    them (a spot check's CSV); an error where some rows lack them (stitches cached before they
    were kept), which would otherwise leave those accuracies out of the resampling."""
    if not any(c in table for c in columns):
        return False
    lacking = [c for c in columns if c not in table or not all(isinstance(a, np.ndarray) for a in table[c])]
    if lacking:
        raise ValueError(f"column(s) {lacking} lack per-image results in some rows: the stitches were made before "
                         "per-image results were kept; clear their cache entries and re-run")
    return True


def _estimate(table: pd.DataFrame, stat, columns=ACC, **kw) -> Estimate:
    """``stat`` of ``table`` with its 95% paired-bootstrap interval over the test images (exact
    where the table has no per-image results). ``stat(t)`` reads ``t``'s accuracy columns by
    position: the bootstrap's replicate tables keep ``table``'s row order."""
    t = table.reset_index(drop=True)
    if _has_images(t, columns):
        return noise.bootstrap_table(t, stat, columns=columns, **kw)
    return noise.exact(stat(t), why=NO_IMAGES)


def _region(t: pd.DataFrame, region: str) -> np.ndarray:
    i, j = t.i.to_numpy(), t.j.to_numpy()
    if region == "lower":
        return j <= i
    if region == "upper":
        return j > i
    if region == "below":
        return j < i
    if region == "outside":
        return (i > CORNER) | (j > CORNER)
    raise ValueError(f"unknown region {region!r}; valid: lower, upper, below, outside")


def _pair_stat(table: pd.DataFrame, kind: str, region: str, reduce, *, value: str = "accuracy",
               full_only: bool = False):
    """The statistic ``reduce`` (np.min, np.max) over the ordered pairs of ``kind`` of each pair's
    mean ``value`` relative to the receiver's accuracy, in percent of it, over the cells of ``region`` ('lower':
    j ≤ i, 'upper': j > i, 'below': j < i, 'outside': outside the corner). ``full_only``: only
    pairs stitched beyond i = j (a pair stitched on its diagonal alone has no triangle). Returns
    ``stat(t)`` for :func:`_estimate`, or None if no cell qualifies."""
    t = table.reset_index(drop=True)
    keys = list(zip(t.sender, t.receiver, t.kind))
    code = pd.factorize(pd.Series(keys, dtype=object))[0]
    use = (t.kind == kind).to_numpy() & _region(t, region)
    if full_only:
        full = t.assign(code=code)[t.i != t.j].code.unique()
        use &= np.isin(code, full)
    if not use.any():
        return None
    code, n = code[use], int(code.max()) + 1
    counts = np.bincount(code, minlength=n)
    present = counts > 0

    def stat(t: pd.DataFrame) -> float:
        rel = 100 * (t[value].to_numpy(float) / t.receiver_accuracy.to_numpy(float))[use]
        return float(reduce(np.bincount(code, weights=rel, minlength=n)[present] / counts[present]))
    return stat


def self_stitch_rows(table: pd.DataFrame) -> np.ndarray:
    """Rows of a trained network stitched into itself at i = j: an exact stitch exists there."""
    return ((table.kind == "trained") & (table.sender == table.receiver) & (table.i == table.j)).to_numpy()


def diagonal_self_stitch_control(table: pd.DataFrame) -> Control:
    """The positive control on a Hernandez table (:func:`stitchkit.verdicts.controls.self_stitch_control`):
    every trained network stitched into itself at i = j (an exact stitch exists, and direct
    matching starts there) loses at most :data:`stitchkit.verdicts.controls.POSITIVE_BOUND` points,
    judged on the interval's upper end of the largest self-penalty over those stitches
    (bootstrapped as a maximum); a gain is reported, not gated. A table without per-image results
    (a spot check's summary) is judged on its point value; one without self-stitches fails it,
    not run."""
    what = "each network stitched into itself on the diagonal"
    t = table.reset_index(drop=True)
    mask = self_stitch_rows(t)
    if not mask.any():
        return Control(f"{what}: none was stitched, so nothing vouches for the stitch recipe",
                       f"largest self-penalty ≤ {controls.POSITIVE_BOUND:g} points", "not run", False, None,
                       controls.POSITIVE)
    if not _has_images(t):
        return controls.reaches_receiver(noise.exact(controls.largest_self_penalty(mask)(t), why=NO_IMAGES), what=what)
    return controls.self_stitch_control(t, mask, what, columns=ACC)[0]


def self_gain_numbers(table: pd.DataFrame) -> dict[str, float]:
    """The self-stitch gain (:func:`stitchkit.verdicts.controls.gain_numbers`, points): ``self_stitch_gain``
    the largest gain over the networks stitched into themselves on the diagonal, ``self_stitch_worst``
    the largest loss; reported on every page with the positive control, gated nowhere. Empty where
    no network was stitched into itself."""
    t = table.reset_index(drop=True)
    mask = self_stitch_rows(t)
    if not mask.any():
        return {}
    return controls.gain_numbers("self_stitch", 100 * (t.receiver_accuracy - t.accuracy).to_numpy(float)[mask])


def longer_sample(table: pd.DataFrame, cfg: GridConfig, *, device=None, store=None,
                  progress: bool = True) -> pd.DataFrame:
    """The training-length control's stitches, retrained with :data:`LONGER` times the epochs,
    everything else as the grid's, chosen per claim so that each is re-judged on the cells that
    decide it:

    - ``lower_high`` (the minimum over trained pairs of the mean at j <= i): every cell at j <= i
      of the pair with the lowest mean;
    - ``upper_low`` (the maximum over trained pairs of the mean at j > i): every cell at j > i of
      the pair with the highest mean;
    - for every other trained pair of two different networks, its worst cell at j <= i (where a
      stitch that stopped short shows most);
    - ``random_low`` (the untrained senders, outside the corner): the cells at the first, middle
      and last cut of each side outside the corner (a sample: the control's text says so).

    The receivers' own accuracies, the reference of every relative accuracy, do not depend on the
    stitches. Returns one row per cell: sender, receiver, layers i, j, the grid's accuracy, the
    longer stitch's and the gain (points), with the longer stitches' per-image results in
    ``attrs["correct"]`` ((sender, receiver, i, j) -> (n_test,) bool) and, per claim, the cells
    retrained for it in ``attrs["cells"]`` (claim -> text). :func:`grid_summary` re-judges every
    claim on the grid with these cells in place of their 1x values."""
    tri = triangle(table)
    full = tri[(tri.kind == "trained") & tri.full]
    low_pair = tuple(full.loc[full.lower.idxmin(), ["sender", "receiver"]]) if len(full) else None
    up_pair = tuple(full.loc[full.upper.idxmax(), ["sender", "receiver"]]) if full.upper.notna().any() else None
    trained = table[table.kind == "trained"]
    parts, told = [], {}
    for a, b in cfg.pairs():
        sender, receiver = (Net(display_name(n), cfg.model(n)) for n in (a, b))
        grid = trained[(trained.sender == sender.name) & (trained.receiver == receiver.name)]
        if not len(grid):
            continue
        cells = []
        if (sender.name, receiver.name) == low_pair:
            low = grid[grid.j <= grid.i]
            cells += list(zip(low.cut_i, low.cut_j))
            told["lower_high"] = f"all {len(low)} cells at j ≤ i of {sender.name} → {receiver.name}"
        if (sender.name, receiver.name) == up_pair:
            up = grid[grid.j > grid.i]
            cells += [c for c in zip(up.cut_i, up.cut_j) if c not in cells]
            told["upper_low"] = f"all {len(up)} cells at j > i of {sender.name} → {receiver.name}"
        if a != b and not cells:
            low = grid[grid.j <= grid.i]
            if len(low):
                worst = low.loc[low.relative.idxmin()]
                cells.append((worst.cut_i, worst.cut_j))
        if cells:
            parts.append(_retrained(sender, receiver, cells, cfg, grid, device=device, store=store, progress=progress))
    random = table[table.kind == "random sender"]
    n_random = 0
    for a in cfg.controls:
        sender = Net(f"{display_name(a)} (untrained)", cfg.model(a, trained=False))
        receiver = Net(display_name(a), cfg.model(a))
        grid = random[(random.sender == sender.name) & (random.receiver == receiver.name)]
        si, rj = cfg.layers(sender.spec), cfg.layers(receiver.spec)
        cells = [(x, y) for x in _ends(list(si)) for y in _ends(list(rj)) if si[x] > CORNER or rj[y] > CORNER]
        if len(grid) and cells:
            parts.append(_retrained(sender, receiver, cells, cfg, grid, device=device, store=store, progress=progress))
            n_random += len(cells)
    if n_random:
        told["random_low"] = (f"a sample of {n_random} cells outside the corner (the first, middle and last cut of "
                              "each side) of the untrained senders")
    out = pd.concat(parts, ignore_index=True)
    correct = {(s, r, i, j): c for s, r, i, j, c in zip(out.sender, out.receiver, out.i, out.j, out.correct)}
    out = out[["sender", "receiver", "i", "j", "grid (%)", f"{LONGER}x epochs (%)", "gain"]]
    out.attrs["correct"] = correct
    out.attrs["cells"] = told
    return out


def _retrained(sender: Net, receiver: Net, cells, cfg: GridConfig, grid: pd.DataFrame, **kw) -> pd.DataFrame:
    out = retrained_longer(sender, receiver, cells, cfg, grid, **kw)
    si, rj = cfg.layers(sender.spec), cfg.layers(receiver.spec)
    return out.assign(i=[si[c] for c in out.cut_i], j=[rj[c] for c in out.cut_j])


def _ends(cuts: list[str]) -> list[str]:
    """The first, middle and last of ``cuts`` (the training-length control's sample)."""
    return list(dict.fromkeys([cuts[0], cuts[len(cuts) // 2], cuts[-1]]))


def retrained_longer(sender: Net, receiver: Net, cells: list[tuple[str, str]], cfg: GridConfig, grid: pd.DataFrame,
                     *, device=None, store=None, progress: bool = True) -> pd.DataFrame:
    """``cells`` of ``sender`` into ``receiver`` retrained with :data:`LONGER` times the epochs
    (everything else as ``cfg``; :func:`stitchkit.stitching.longer.retrain`), beside their accuracy
    in ``grid`` (rows with cut_i, cut_j and accuracy): columns sender, receiver, cut_i, cut_j, grid
    (%), the longer stitch's (%), gain (points), and correct (the longer stitch's per-image results
    on the test subset)."""
    out = retrain([Cells((sender,), (receiver,), tuple(cells), cfg.recipe(), DataSpec("cifar10"))],
                  device=device, store=store, progress=progress)
    before = grid.set_index(["cut_i", "cut_j"]).accuracy
    return pd.DataFrame({"sender": sender.name, "receiver": receiver.name, "cut_i": out.cut_i, "cut_j": out.cut_j,
                         "grid (%)": [100 * before.loc[(a, b)] for a, b in zip(out.cut_i, out.cut_j)],
                         f"{LONGER}x epochs (%)": 100 * out.accuracy.to_numpy(), "correct": list(out.correct)}).assign(
        gain=lambda d: d[f"{LONGER}x epochs (%)"] - d["grid (%)"])


def with_longer_sample(table: pd.DataFrame, sample: pd.DataFrame) -> pd.DataFrame:
    """``table`` with the cells of ``sample`` (:func:`longer_sample`) in place of their 1x
    stitches (:func:`stitchkit.stitching.longer.replace_cells`): accuracy, penalty, relative and
    per-image results of the stitch retrained at :data:`LONGER` times the epochs, every other cell
    and every receiver as before. The like-for-like table on which the training-length control
    re-judges a claim."""
    keys = list(zip(sample.sender, sample.receiver, sample.i, sample.j))
    new = sample[["sender", "receiver", "i", "j"]].assign(accuracy=sample[f"{LONGER}x epochs (%)"].to_numpy() / 100)
    images = sample.attrs.get("correct", {}) if "correct" in table else None
    columns = ["accuracy"]
    if images is not None:
        new["correct"] = pd.Series([images.get(k) for k in keys], index=new.index, dtype=object)
        columns.append("correct")
    out = replace_cells(table, new, ["sender", "receiver", "i", "j"], columns)
    for s, r, i, j in keys:  # after the swap, which names a cell the grid lacks first
        if images is not None and (s, r, i, j) not in images:
            raise ValueError(f"the longer sample keeps no per-image results for {s} -> {r} at i={i}, j={j}, "
                             "the grid does: re-judging would mix resampled and fixed cells")
    out["penalty"] = out.receiver_accuracy - out.accuracy
    out["relative"] = out.accuracy / out.receiver_accuracy
    return out


def _negative_control(random_outside: Estimate | None) -> Control:
    """The negative control of the claims that a stitch works (kind ``compatible``): the paper's
    own untrained-sender bound, :func:`stitchkit.verdicts.controls.untrained_sender_fails`' counterpart in
    the triangle's terms. An untrained copy stitched into its trained network stays at most
    :data:`RANDOM_MAX` of the receiver's accuracy outside the corner i, j ≤ :data:`CORNER` (the
    maximum over the controls of the mean there, on its whole interval): otherwise the stitch does
    the task by itself and a high triangle says nothing about the networks. None (no untrained
    sender in the grid): a failed control, not run."""
    text = ("an untrained sender stitched into its trained network stays low outside the corner i, j ≤ "
            f"{CORNER} (the stitch cannot do the task alone; the paper's own control)")
    if random_outside is None:
        return Control(f"{text}: not run (no untrained sender in the grid)",
                       f"max mean relative accuracy ≤ {100 * RANDOM_MAX:g} %", "not run", False, None,
                       controls.NEGATIVE)
    crit = at_most(random_outside, 100 * RANDOM_MAX, "max over the controls of the untrained sender's mean "
                   "relative accuracy (%) outside the corner", unit="%", digits=2)
    return Control.of(text, crit, crit.describe_value(2), kind=controls.NEGATIVE)


def grid_summary(table: pd.DataFrame, accuracy: dict,
                 longer: pd.DataFrame | None = None) -> tuple[dict, list[ClaimSpec]]:
    """The numbers and claims of a grid (H-F2, H-F4), each judged on its 95% paired-bootstrap
    interval over the test images (a minimum or maximum over pairs bootstrapped as such).
    ``longer``: the training-length control's stitches (:func:`longer_sample`); every claim is
    re-judged with them in place of their 1x cells and must keep its verdict. Spot checks
    without one are judged without it."""
    tri = triangle(table)
    trained = tri[(tri.kind == "trained") & tri.full]  # a pair stitched only at i = j (a control) has no triangle
    rs = tri[tri.kind == "random sender"]
    n_pairs = len(trained)

    def lower(t: pd.DataFrame) -> Criterion:
        return at_least(_estimate(t, _pair_stat(t, "trained", "lower", np.min, full_only=True)), 100 * LOWER_MIN,
                        f"min over the {n_pairs} trained pairs of the mean accuracy relative to the receiver's "
                        "(% of its accuracy) at j ≤ i", unit="%")

    def upper(t: pd.DataFrame) -> Criterion:
        return at_most(_estimate(t, _pair_stat(t, "trained", "upper", np.max, full_only=True)), 100 * UPPER_MAX,
                       f"max over the {n_pairs} trained pairs of the mean relative accuracy (%) at j > i", unit="%")

    def random_outside(t: pd.DataFrame) -> Estimate:
        return _estimate(t, _pair_stat(t, "random sender", "outside", np.max))

    def random_low(t: pd.DataFrame, e: Estimate | None = None) -> Criterion:
        return at_most(random_outside(t) if e is None else e, 100 * RANDOM_MAX, "max over the controls of the "
                       "untrained sender's mean relative accuracy (%) outside the corner", unit="%")

    converge = diagonal_self_stitch_control(table)
    # relative accuracies in percent of the receiver's accuracy, as the claims judge them
    numbers = {"pairs": n_pairs, "stitches": len(table), "lower_mean": 100 * trained.lower.mean(),
               "upper_mean": 100 * trained.upper.mean()}
    crit = {"lower_high": lower(table), "upper_low": upper(table)}
    rand_e = random_outside(table) if len(rs) else None
    if rand_e is not None:
        crit["random_low"] = random_low(table, rand_e)
    for key, name in (("lower_high", "lower_min"), ("upper_low", "upper_max"),
                      ("random_low", "random_sender_outside_max")):
        if key in crit:
            c = crit[key]
            numbers.update({name: c.value, f"{name}_low": c.low, f"{name}_high": c.high})
    self_rec = converge.record or {}
    numbers.update(self_gain_numbers(table))  # the self-stitch gain, reported and gated nowhere (issue 46)
    numbers.update({"control_max_penalty": self_rec.get("value", float("nan")),
                    "control_max_penalty_low": self_rec.get("low", float("nan")),
                    "control_max_penalty_high": self_rec.get("high", float("nan"))})
    numbers.update({f"accuracy_{k.lower().replace(' ', '_').replace('(', '').replace(')', '')}": 100 * v
                    for k, v in accuracy.items()})
    for row in tri.itertuples():
        tag = f"{row.sender}_{row.receiver}_{row.kind}".lower().replace(" ", "_").replace("(", "").replace(")", "")
        numbers[f"lower_{tag}"], numbers[f"upper_{tag}"] = 100 * row.lower, 100 * row.upper
    negative = _negative_control(rand_e)
    longer_table = None
    if longer is not None:
        longer_table = with_longer_sample(table, longer)
        numbers["longer_gain_mean"] = float(longer.gain.mean())
        numbers["longer_gain_max"] = float(longer.gain.max())
        numbers["longer_cells"] = len(longer)
    judges = {"lower_high": lower, "upper_low": upper, "random_low": random_low}
    # the training-length control: each claim re-judged on the table with its cells retrained in place of their 1x
    # values must give the same decided result (a spot check without longer stitches: no control)
    told = longer.attrs.get("cells", {}) if longer is not None else {}
    length = {k: [] if longer_table is None else [length_control(
        c, judges[k](longer_table), f"re-judged with {told.get(k, f'{len(longer)} sampled cells')} retrained at "
                                    f"{LONGER}x the epochs in place of their 1x values (like for like)")]
              for k, c in crit.items()}
    if longer_table is not None:
        for k, name in (("lower_high", "lower_min"), ("upper_low", "upper_max"),
                        ("random_low", "random_sender_outside_max")):
            if length.get(k):
                numbers[f"{name}_longer"] = length[k][0].record["value"]
    worst_low = trained.loc[trained.lower.idxmin()]
    worst_up = trained.loc[trained.upper.idxmax()]
    lo, up = crit["lower_high"], crit["upper_low"]
    claims = [
        ClaimSpec(key="lower_high", text="Stitching is accurate wherever the receiver's layer is at or before the "
                                         "sender's (j ≤ i): the lower triangle",
                  criterion=lo, paper="high accuracy for j ≤ i for every pair (Fig. 2; >90% networks)",
                  ours=f"min {lo.describe_value(1)} ({worst_low.sender} → {worst_low.receiver}), "
                       f"mean {numbers['lower_mean']:.1f} % of the receiver's accuracy",
                  controls=[converge, negative, *length["lower_high"]], kind="compatible"),
        ClaimSpec(key="upper_low", text="... and low above the diagonal (j > i)", criterion=up,
                  paper="low above the diagonal (Fig. 2)",
                  ours=f"max {up.describe_value(1)} ({worst_up.sender} → {worst_up.receiver}), "
                       f"mean {numbers['upper_mean']:.1f} % of the receiver's accuracy",
                  controls=[converge, *length["upper_low"]], kind="fails"),
    ]
    if len(rs):
        rand = crit["random_low"]
        claims.append(ClaimSpec(
            key="random_low", text=f"Untrained networks stitch with low accuracy except in a corner (i, j ≤ {CORNER})",
            criterion=rand, paper="random controls low except a corner (Fig. 2)",
            ours=f"{rand.describe_value(1)} of the receiver's accuracy",
            controls=[converge, *length["random_low"]], kind="fails"))
    return numbers, claims
