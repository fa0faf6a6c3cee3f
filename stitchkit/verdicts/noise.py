"""How sure a measured number is: intervals from a paired bootstrap over test images (and seeds).

Every quantity a verdict judges (a stitching penalty, its maximum over cuts, a difference between
two measures, an AUROC) is a function of per-image results on a finite test set, often of a few
seeds. Its uncertainty is estimated by resampling, the same way for every page:

- **Images.** A :class:`Resampler` draws ``resamples`` bootstrap resamples of the ``n`` test
  images once (a fixed seed per test set), and *every* quantity measured on those images is
  recomputed on the *same* resamples. A stitched model and its receiver are therefore compared
  image by image (a paired bootstrap): their shared easy and hard images cancel, and the
  interval of a penalty is that of the difference, not of two accuracies.
- **Whole statistics.** :func:`bootstrap_table` recomputes a page's own summary (a maximum over
  cuts, a spread, a mean over initialisations minus a baseline) on each resampled table, so a
  maximum is bootstrapped as a maximum (with its upward bias from noise), not cut by cut.
- **Seeds.** Where a table holds several seeds (initialisations), ``groups=`` names them. With
  :data:`SEED_T_BELOW` (10) seeds or more they are resampled with replacement in each replicate
  (a two-level bootstrap); with fewer, a percentile interval over them is far too narrow (with 2
  seeds it is their [min, max]), so the interval is a t interval (:func:`seed_t_interval`): the
  images' variance (the paired bootstrap, seeds fixed) plus the seeds' (jackknife), with
  ``n_seeds - 1`` degrees of freedom. The pages say how many seeds stand behind each interval.

Intervals are two-sided at :data:`LEVEL` (95%) from :data:`RESAMPLES` resamples: percentile
intervals, or the basic interval (2 x estimate minus the percentiles) where the percentile
interval excludes its own estimate (a biased statistic, such as a maximum over noisy cuts). An
:class:`Estimate` carries the point value (the full sample), the interval, and what it was
computed from. A quantity that carries no sampling noise (a count of layers, a property of the
recipe) is an ``Estimate`` with ``low == high == value`` (:func:`exact`) *with its reason*:
a claim judged on a zero-width interval without one gets a failed control
(:func:`stitchkit.verdicts.results.Run.claim`).
"""

from __future__ import annotations

import functools
import zlib
from dataclasses import dataclass
from typing import Any, Callable, Mapping

import numpy as np
import pandas as pd

from ..base.environment import resamples_from_env

LEVEL = 0.95  # two-sided interval
# bootstrap resamples (the 2.5th and 97.5th percentiles move by ~0.05 SE between runs); at
# `smoke`, whose verdicts are not assessed, a run uses SMOKE_RESAMPLES (see use_resamples)
RESAMPLES = resamples_from_env(1000)  # STITCHKIT_RESAMPLES (the CLI checks it at start-up)
SMOKE_RESAMPLES = 100
# below this many seeds an interval over them is a t interval (seed_t_interval), not a percentile
# interval: with 2-3 seeds a percentile interval is about 2.7x too narrow
SEED_T_BELOW = 10


def use_resamples(n: int) -> None:
    """Set the number of bootstrap resamples for this process (a run at `smoke` uses fewer)."""
    global RESAMPLES
    if not isinstance(n, int) or n < 20:
        raise ValueError(f"resamples must be a whole number >= 20, got {n!r}")
    RESAMPLES = n


@dataclass(frozen=True)
class Estimate:
    """A measured value with its interval (``low`` ≤ ``value`` ≤ ``high`` need not hold for a
    maximum, whose bootstrap is biased; the interval is what a verdict reads)."""

    value: float
    low: float
    high: float
    n_test: int | None = None  # test images behind it (None: not measured on images)
    n_seeds: int = 1  # independent seeds (initialisations) behind it
    method: str = "exact"  # "paired bootstrap", "paired bootstrap over images and seeds", "exact"

    def __post_init__(self) -> None:
        for name in ("value", "low", "high"):
            v = getattr(self, name)
            if not isinstance(v, (int, float, np.floating, np.integer)) or not np.isfinite(v):
                raise ValueError(f"Estimate.{name} must be a finite number, got {v!r}")
        if self.low > self.high:
            raise ValueError(f"Estimate interval is reversed: low {self.low} > high {self.high}")

    def scaled(self, k: float, offset: float = 0.0) -> "Estimate":
        """``k * x + offset`` (e.g. a fraction as points: ``scaled(100)``); k < 0 swaps the ends."""
        lo, hi = sorted((k * self.low + offset, k * self.high + offset))
        return Estimate(float(k * self.value + offset), float(lo), float(hi), self.n_test, self.n_seeds, self.method)

    @property
    def exact(self) -> bool:
        return self.low == self.high == self.value

    def text(self, digits: int = 2, unit: str = "") -> str:
        """``1.23 [0.80, 1.70] points`` (the interval in brackets; none for an exact value)."""
        u = f" {unit}" if unit else ""
        if self.exact:
            return f"{self.value:.{digits}f}{u}"
        return f"{self.value:.{digits}f} [{self.low:.{digits}f}, {self.high:.{digits}f}]{u}"

    def describe(self) -> str:
        """What the interval is, in words (for a claim's record and the page)."""
        if self.exact:
            return "exact (no sampling noise)" if self.method == "exact" else self.method
        if self.method.startswith("exact binomial"):
            return f"{LEVEL:.0%} {self.method}"
        what = f"{self.n_test:,} test images" if self.n_test else "its sample"
        if self.n_seeds > 1:
            what += f" and {self.n_seeds} seeds"
        return f"{LEVEL:.0%} {self.method} interval ({RESAMPLES} resamples of {what})"


# the reasons pages have stated for a number that carries no sampling noise (noise.exact(why=...)):
# a zero-width interval with one of them is explained; any other (a bare number, a resampled
# interval that collapsed) gets a failed control (stitchkit.verdicts.results.unexplained_zero_width)
STATED_REASONS: set[str] = set()


def exact(value: float, *, n_test: int | None = None, n_seeds: int = 1, why: str = "exact") -> Estimate:
    """A value judged without an interval: a count, a property of the recipe, or a statistic
    that is already in units of its own noise (``why`` says which, for the page; without one the
    claim judged on it gets the zero-width control)."""
    v = float(value)
    if why != "exact":
        STATED_REASONS.add(why)
    return Estimate(v, v, v, n_test, n_seeds, why)


def as_estimate(value: "float | Estimate") -> Estimate:
    return value if isinstance(value, Estimate) else exact(value)


INTERVALS = ("percentile", "basic")


def expanded_tail(clusters: int, level: float | None = None) -> float:
    """The tail probability on each side that the *expanded* percentile interval reads for a
    bootstrap over ``clusters`` independent units (Hesterberg 2015, "What teachers should know
    about the bootstrap"): Φ(−sqrt(n/(n−1))·t_{n−1}(1 − α/2)). The plain percentile interval is too
    narrow with few units (it is about sqrt((n−1)/n) narrow and uses z for t): over 12 layer cases
    it covered about 90% for a nominal 95% (tests/test_controls.py)."""
    from scipy import stats

    if not (isinstance(clusters, (int, np.integer)) and clusters >= 2):
        raise ValueError(f"an expanded percentile interval needs at least 2 clusters, got {clusters!r}")
    a = (1 - (LEVEL if level is None else level)) / 2
    n = int(clusters)
    return float(stats.norm.cdf(-np.sqrt(n / (n - 1)) * stats.t.ppf(1 - a, n - 1)))


def from_replicates(reps: np.ndarray, *, n_test: int | None, n_seeds: int = 1,
                    method: str = "paired bootstrap", interval: str = "percentile",
                    clusters: int | None = None) -> Estimate:
    """An Estimate from ``reps`` (R+1,): element 0 is the statistic on the full sample, the rest
    on the resamples; the interval is their percentile interval, or with ``interval="basic"`` the
    basic interval (2 x estimate minus the percentiles: the bootstrap's bias removed, for a
    maximum over noisy values such as the largest self-penalty over cuts). A percentile interval
    that excludes its own estimate becomes the basic interval; an interval is always widened to
    contain its estimate. ``clusters``: the number of independent units the bootstrap draws (layer
    cases, networks), where few: the expanded percentile interval (:func:`expanded_tail`)."""
    if interval not in INTERVALS:
        raise ValueError(f"unknown interval {interval!r}; valid: {', '.join(INTERVALS)}")
    reps = np.asarray(reps, dtype=np.float64)
    if reps.ndim != 1 or len(reps) < 2:
        raise ValueError(f"replicates must be 1-d with the full sample first, got shape {reps.shape}")
    boot = reps[1:]
    if not np.all(np.isfinite(boot)) or not np.isfinite(reps[0]):
        raise ValueError("a bootstrap replicate is not finite: the statistic is undefined on some resample")
    a = (1 - LEVEL) / 2
    if clusters is not None:
        a = expanded_tail(clusters)
        method += f" (expanded percentile interval for {clusters} clusters)"
    low, high = np.quantile(boot, [a, 1 - a])
    value = float(reps[0])
    if interval == "basic":
        low, high = 2 * value - high, 2 * value - low
        method += " (basic interval)"
    elif not low <= value <= high:
        # the percentile interval excludes its own estimate (a biased statistic): the basic
        # interval, 2 x estimate minus the quantiles, corrects the bias
        low, high = 2 * value - high, 2 * value - low
        method += " (basic interval: the percentile interval excluded the estimate)"
    low, high = min(low, high, value), max(low, high, value)
    return Estimate(value, float(low), float(high), n_test, n_seeds, method)


def from_defined_replicates(reps: np.ndarray, *, n_test: int | None, n_seeds: int = 1,
                            method: str = "paired bootstrap", min_share: float = 0.5) -> Estimate:
    """:func:`from_replicates` for a statistic that some resamples leave undefined (a rank
    correlation over values that all tie): those resamples are dropped and counted in the
    method's text. The full sample, and at least ``min_share`` of the resamples, must be defined."""
    reps = np.asarray(reps, dtype=np.float64)
    keep = np.isfinite(reps)
    if not keep[0] or keep[1:].mean() < min_share:
        raise ValueError(f"the statistic is undefined on the full sample or on {int((~keep[1:]).sum())} of "
                         f"{len(reps) - 1} resamples (more than {1 - min_share:.0%})")
    dropped = int((~keep[1:]).sum())
    if dropped:
        method += f" ({dropped} of {len(reps) - 1} resamples undefined, dropped)"
    return from_replicates(reps[keep], n_test=n_test, n_seeds=n_seeds, method=method)


def _seed_of(name: str) -> int:
    return zlib.crc32(name.encode())


class Resampler:
    """Bootstrap resamples of ``n`` test images, drawn once and shared by every quantity measured
    on them. ``means(per_image)``: the mean over images of the full sample and of every resample.

    ``name`` (the test set's identity) seeds the draw, so one test set always gets the same
    resamples and two different test sets independent ones."""

    def __init__(self, n: int, name: str = "test", resamples: int | None = None) -> None:
        resamples = resamples or RESAMPLES
        if n < 2:
            raise ValueError(f"a bootstrap needs at least 2 test images, got {n}")
        self.n, self.name, self.resamples = int(n), name, int(resamples)
        rng = np.random.default_rng(_seed_of(f"{name}:{n}"))
        idx = rng.integers(0, n, size=(resamples, n))
        # (R, n) how often each image is drawn: means over a resample are one matrix product
        self.counts = np.stack([np.bincount(row, minlength=n) for row in idx]).astype(np.float32)

    def means(self, per_image: np.ndarray) -> np.ndarray:
        """(n,) or (n, k) per-image values -> (R+1,) or (R+1, k): the full-sample mean first."""
        x = np.asarray(per_image, dtype=np.float64)
        if x.shape[0] != self.n:
            raise ValueError(f"per-image values cover {x.shape[0]} images, the resampler {self.n} "
                             f"({self.name!r}): a quantity must be measured on the test set it is resampled on")
        full = x.mean(0, keepdims=True)
        # float32 product: a sum of <= n whole counts times 0/1 values is exact below 2**24
        sums = self.counts @ x.reshape(self.n, -1).astype(np.float32)
        boot = sums.astype(np.float64).reshape((self.resamples, *x.shape[1:])) / self.n
        return np.concatenate([full, boot])


_RESAMPLERS: dict[tuple[str, int, int], Resampler] = {}


def resampler(n: int, name: str = "test", resamples: int | None = None) -> Resampler:
    """The shared :class:`Resampler` of a test set (built once per process)."""
    resamples = resamples or RESAMPLES
    key = (name, int(n), int(resamples))
    if key not in _RESAMPLERS:
        _RESAMPLERS[key] = Resampler(n, name, resamples)
    return _RESAMPLERS[key]


def accuracy(correct: np.ndarray, name: str = "test") -> Estimate:
    """The accuracy (a fraction) of one model from its per-image correctness (n,) bool."""
    c = np.asarray(correct, dtype=bool)
    return from_replicates(resampler(len(c), name).means(c), n_test=len(c))


# Columns of a stitch table that hold per-image correctness (numpy bool arrays, one per row) and
# the accuracies recomputed from them in each replicate.
PER_IMAGE = {"correct": "accuracy", "receiver_correct": "receiver_accuracy", "dm_correct": "dm_accuracy"}


def _replicate_columns(table: pd.DataFrame, sample_col: str | None, columns: Mapping[str, str],
                       column_samples: Mapping[str, str] | None = None) -> dict[str, np.ndarray]:
    """For each per-image column present: (R+1, rows) accuracies, rows resampled by their test set."""
    out: dict[str, np.ndarray] = {}
    for col, acc in columns.items():
        if col not in table or table[col].isna().all():
            continue
        where = (column_samples or {}).get(col, sample_col)
        samples = table[where].astype(str).to_numpy() if where else np.array(["test"] * len(table))
        vals = np.full((RESAMPLES + 1, len(table)), np.nan)  # (R+1, rows)
        for s in np.unique(samples):
            rows = np.flatnonzero(samples == s)
            arrays = [table[col].iloc[r] for r in rows]
            if any(a is None for a in arrays):
                raise ValueError(f"column {col!r} lacks per-image results in some rows: the stitches were made "
                                 "before per-image results were kept; clear their cache entries and re-run")
            lengths = {len(a) for a in arrays}
            if len(lengths) != 1:
                raise ValueError(f"rows of test set {s!r} cover different numbers of images {sorted(lengths)}")
            m = np.stack([np.asarray(a, dtype=np.float64) for a in arrays], axis=1)  # (n, rows)
            vals[:, rows] = resampler(m.shape[0], s).means(m)
        out[acc] = vals
    return out


def n_test_of(table: pd.DataFrame, columns: Mapping[str, str] | None = None) -> int:
    for col in columns or PER_IMAGE:
        if col in table and not table[col].isna().all():
            return int(len(next(a for a in table[col] if a is not None)))
    raise ValueError(f"the table has no per-image column ({', '.join(PER_IMAGE)})")


def _derive(t: pd.DataFrame, reps: Mapping[str, np.ndarray]) -> None:
    """The columns derived from resampled accuracies follow them (never a full-sample value left
    beside a resampled one): ``penalty``, ``relative`` and ``dm_penalty``, in place."""
    if "receiver_accuracy" in t:
        if "accuracy" in t and {"accuracy", "receiver_accuracy"} & set(reps):
            t["penalty"] = t["receiver_accuracy"] - t["accuracy"]
            if "relative" in t:
                t["relative"] = t["accuracy"] / t["receiver_accuracy"]
        if "dm_accuracy" in t and {"dm_accuracy", "receiver_accuracy"} & set(reps):
            t["dm_penalty"] = t["receiver_accuracy"] - t["dm_accuracy"]


def bootstrap_table(table: pd.DataFrame, stat: Callable[[pd.DataFrame], float], *, groups: str | None = None,
                    sample: str | None = None, columns: Mapping[str, str] | None = None,
                    column_samples: Mapping[str, str] | None = None, interval: str = "percentile") -> Estimate:
    """The interval of ``stat(table)``, a page's own summary of a stitch table (e.g. the largest
    mean penalty over cuts), from the paired bootstrap: in each replicate the accuracy columns
    (``accuracy``, ``receiver_accuracy``, ``dm_accuracy``, and ``penalty`` / ``dm_penalty`` derived
    from them) are recomputed from the rows' per-image results on one shared resample of the
    test images, and ``stat`` is applied to the resampled table.

    ``groups``: a column of seeds (e.g. ``"init"``) resampled with replacement too in each
    replicate. ``sample``: a column naming each row's test set, where rows are measured on
    different test sets (resampled independently); default: one shared test set. ``columns``:
    per-image column -> the accuracy column recomputed from it (default :data:`PER_IMAGE`).
    ``column_samples``: per-image column -> a column naming, row by row, the test set that
    column is measured on, where columns of one row come from different test sets (a stitched
    model on one data set, a baseline on another): each test set is resampled on its own.
    ``interval``: ``"percentile"`` or ``"basic"`` (:func:`from_replicates`)."""
    columns = dict(columns or PER_IMAGE)
    reps = _replicate_columns(table, sample, columns, column_samples)
    if not reps:
        raise ValueError(f"the table has no per-image column ({', '.join(columns)}) to resample")
    base = table.drop(columns=[c for c in columns if c in table]).reset_index(drop=True)
    for col in (column_samples or {}).values():
        if col not in table:
            raise ValueError(f"column_samples names {col!r}, not a column of the table ({', '.join(map(str, table))})")
    group_ids = base[groups].unique() if groups else None
    members = [np.flatnonzero(base[groups].to_numpy() == g) for g in group_ids] if groups else None
    n_seeds = len(group_ids) if groups else 1
    n_test = n_test_of(table, columns)
    # too few seeds for a percentile interval over them (with 2 seeds it is [min, max]): a t
    # interval whose variance adds the images' (the paired bootstrap with the seeds fixed) and
    # the seeds' (jackknife over seeds), with n_seeds - 1 degrees of freedom
    seed_t = bool(groups) and 1 < n_seeds < SEED_T_BELOW
    rng = np.random.default_rng(_seed_of(f"groups:{groups}:{len(base)}"))
    out = np.empty(RESAMPLES + 1)
    t = base.copy()  # one frame whose accuracy columns are overwritten in each replicate
    for r in range(RESAMPLES + 1):
        for acc, vals in reps.items():
            t[acc] = vals[r]
        _derive(t, reps)
        if groups and not seed_t and r > 0 and len(group_ids) > 1:
            drawn = rng.choice(len(group_ids), size=len(group_ids), replace=True)
            # each drawn seed keeps its rows, relabelled so that a seed drawn twice counts twice
            rows = np.concatenate([members[g] for g in drawn])
            u = t.iloc[rows].reset_index(drop=True)
            u[groups] = np.repeat(np.arange(len(drawn)), [len(members[g]) for g in drawn])
            out[r] = float(stat(u))
        else:
            out[r] = float(stat(t))
    if seed_t:
        if interval != "percentile":
            raise ValueError(f"interval={interval!r} does not apply over {n_seeds} seeds: the interval is a t "
                             "interval (seed_t_interval); judge a maximum over cuts without groups=")
        for acc, vals in reps.items():
            t[acc] = vals[0]
        _derive(t, reps)
        loo = np.array([float(stat(t.drop(index=members[g]).reset_index(drop=True))) for g in range(n_seeds)])
        return seed_t_interval(out, loo, n_test=n_test)
    method = "paired bootstrap over images and seeds" if groups and n_seeds > 1 else "paired bootstrap"
    return from_replicates(out, n_test=n_test, n_seeds=n_seeds, method=method, interval=interval)


def seed_t_interval(image_reps: np.ndarray, leave_one_out: np.ndarray, *, n_test: int | None,
                    image_clusters: int | None = None) -> Estimate:
    """A t interval for a statistic of k < :data:`SEED_T_BELOW` seeds: ``image_reps`` (R+1,) the
    statistic on the full sample (first) and on each resample of the test images with the seeds
    fixed; ``leave_one_out`` (k,) the statistic with each seed left out. Half-width
    t(k-1) * sqrt(SE_images² + SE_seeds²), SE_seeds the jackknife's. With ``image_clusters`` (the
    resamples also draw that few units, a percentage's layer cases), each part gets its own
    degrees of freedom: sqrt((c·SE_images)² + (t(k-1)·SE_seeds)²), c = sqrt(n/(n−1))·t(n−1) for n
    clusters (the expanded percentile's factor, :func:`expanded_tail`)."""
    from scipy import stats

    image_reps = np.asarray(image_reps, dtype=np.float64)
    loo = np.asarray(leave_one_out, dtype=np.float64)
    k = len(loo)
    if k < 2:
        raise ValueError(f"a t interval over seeds needs at least 2 seeds, got {k}")
    if not (np.all(np.isfinite(image_reps)) and np.all(np.isfinite(loo))):
        raise ValueError("a replicate is not finite: the statistic is undefined on some resample or seed subset")
    se_img = float(image_reps[1:].std(ddof=1))
    se_seed = float(np.sqrt((k - 1) / k * ((loo - loo.mean()) ** 2).sum()))
    t_seed = float(stats.t.ppf(0.5 + LEVEL / 2, k - 1))
    value = float(image_reps[0])
    if image_clusters is None:
        half = t_seed * float(np.hypot(se_img, se_seed))
        return Estimate(value, value - half, value + half, n_test, k,
                        f"t interval over {k} seeds (jackknife) and the test images (paired bootstrap)")
    n = int(image_clusters)
    if n < 2:
        raise ValueError(f"image_clusters must be at least 2, got {image_clusters!r}")
    c = float(np.sqrt(n / (n - 1)) * stats.t.ppf(0.5 + LEVEL / 2, n - 1))
    half = float(np.hypot(c * se_img, t_seed * se_seed))
    return Estimate(value, value - half, value + half, n_test, k,
                    f"t interval over {k} seeds (jackknife, t with {k - 1} df) and the resamples ({n} clusters, "
                    f"t with {n - 1} df), each part on its own degrees of freedom")


@dataclass(frozen=True)
class CrossedSpread:
    """The spread of a statistic of one pair of networks (a receiver and a sender, each trained
    by its recipe with its own seed) about the recipe's mean, both networks varied
    (:func:`crossed_spread`): ``sd``, the degrees of freedom ``df`` of its estimate, and its
    parts (variances: receivers', senders', and the pair's own with the interaction)."""

    sd: float
    df: float
    receivers: int
    senders: int
    var_receiver: float
    var_sender: float
    var_pair: float

    def text(self, unit: str = " points") -> str:
        parts = (f"receivers' sd {np.sqrt(self.var_receiver):.2f}, senders' {np.sqrt(self.var_sender):.2f}, "
                 f"the pair's own {np.sqrt(self.var_pair):.2f}")
        return (f"sd {self.sd:.2f}{unit} between pairs of networks trained alike, receivers and senders both "
                f"varied ({self.receivers} receivers x {self.senders} senders; {parts}; {self.df:.1f} df)")


def crossed_spread(values: np.ndarray) -> CrossedSpread:
    """The sd of a statistic of one (receiver, sender) pair about the recipe's mean, from
    ``values`` (R, S): the statistic for every receiver r (rows) and sender s (columns), R >= 2
    receivers and S >= 2 senders, each trained alike but for its seed. A statistic of one pair
    varies with its receiver, its sender and the pair itself: var = σ²_R + σ²_S + σ²_e, estimated
    by the two-way random-effects analysis of variance without replication (method of moments:
    MS_R/S + MS_S/R + MS_E·(1 − 1/R − 1/S), each part kept at least 0), with Satterthwaite's
    degrees of freedom capped at those of each part in it (R − 1, S − 1). The statistic is the claim's own (a maximum over cuts stays a maximum,
    computed per pair). A sender-only spread (one fixed receiver) leaves σ²_R out: X-3 measured
    the receivers' spread at four times the senders'."""
    x = np.asarray(values, dtype=np.float64)
    if x.ndim != 2 or x.shape[0] < 2 or x.shape[1] < 2:
        raise ValueError(f"a crossed spread needs at least 2 receivers x 2 senders, got shape {x.shape}")
    if not np.all(np.isfinite(x)):
        raise ValueError("a crossed spread needs finite values for every (receiver, sender) pair")
    r, s = x.shape
    g = x.mean()
    rows, cols = x.mean(axis=1), x.mean(axis=0)
    ms_r = s * float(((rows - g) ** 2).sum()) / (r - 1)
    ms_s = r * float(((cols - g) ** 2).sum()) / (s - 1)
    resid = x - rows[:, None] - cols[None, :] + g
    df_e = (r - 1) * (s - 1)
    ms_e = float((resid ** 2).sum()) / df_e
    var_e = ms_e
    var_r = max(0.0, (ms_r - ms_e) / s)
    var_s = max(0.0, (ms_s - ms_e) / r)
    total = var_r + var_s + var_e
    # Satterthwaite on the parts as kept (a part cut at 0 contributes neither variance nor df)
    terms = [(ms_e, df_e, 1.0)]
    if var_r > 0:
        terms += [(ms_r, r - 1, 1 / s), (ms_e, df_e, -1 / s)]
    if var_s > 0:
        terms += [(ms_s, s - 1, 1 / r), (ms_e, df_e, -1 / r)]
    coef: dict[tuple[float, int], float] = {}
    for ms, df, c in terms:
        coef[(ms, df)] = coef.get((ms, df), 0.0) + c
    denom = sum((c * ms) ** 2 / df for (ms, df), c in coef.items())
    df = float(total ** 2 / denom) if denom > 0 else float(df_e)
    # capped at the df of each part that is in it: Satterthwaite alone covered 90-93% where the
    # receivers dominate with 2-3 of them (tests/test_controls.py); capped, 95% or more
    if var_r > 0:
        df = min(df, r - 1)
    if var_s > 0:
        df = min(df, s - 1)
    return CrossedSpread(float(np.sqrt(total)), max(1.0, df), r, s, var_r, var_s, var_e)


def with_seed_component(e: Estimate, sd: float, k: int, *, networks: int = 1, what: str = "",
                        bounds: tuple[float, float] | None = None, df: float | None = None) -> Estimate:
    """``e`` (an interval over the test images of one set of networks) widened by the
    network-to-network variance of the recipe: ``sd`` the standard deviation of the statistic
    between networks trained alike (points, measured from ``k`` replicate networks), ``networks``
    the number of independently trained networks whose difference the statistic is (1: one
    network against fixed references; 2: a difference of two such networks, variance 2 sd²).
    Each side's half-width becomes sqrt(half² + (t(k-1) · sd · sqrt(networks))²); ``bounds``: the
    range the statistic cannot leave (a CKA's [0, 1]), where the widened interval is cut. ``df``:
    the degrees of freedom of ``sd`` where they are not k − 1 (a :class:`CrossedSpread`'s)."""
    from scipy import stats

    if k < 2 or not np.isfinite(sd) or sd < 0:
        raise ValueError(f"a seed-variance component needs k >= 2 replicates and a finite sd >= 0, got k={k}, sd={sd}")
    extra = float(stats.t.ppf(0.5 + LEVEL / 2, k - 1 if df is None else df)) * sd * float(np.sqrt(networks))
    lo = e.value - float(np.hypot(e.value - e.low, extra))
    hi = e.value + float(np.hypot(e.high - e.value, extra))
    if bounds is not None:
        lo, hi = max(lo, bounds[0]), min(hi, bounds[1])
    why = what or f"sd {sd:.2f} between networks from {k} replicates"
    return Estimate(e.value, lo, hi, e.n_test, e.n_seeds, f"{e.method}, widened by the seed-variance component ({why})")


def clopper_pearson(successes: int, n: int, level: float | None = None) -> tuple[float, float]:
    """The exact (Clopper-Pearson) two-sided ``level`` interval of a binomial proportion, as
    fractions: ``successes`` of ``n`` independent cases. At a limit it is one-sided in effect:
    n of n gives [(α/2)^(1/n), 1], 0 of n gives [0, 1 − (α/2)^(1/n)] (α = 1 − level)."""
    from scipy import stats

    if not (isinstance(n, (int, np.integer)) and n >= 1):
        raise ValueError(f"a binomial bound needs n >= 1 cases, got {n!r}")
    if not (isinstance(successes, (int, np.integer)) and 0 <= successes <= n):
        raise ValueError(f"successes must be a whole number in [0, {n}], got {successes!r}")
    a = (1 - (LEVEL if level is None else level)) / 2
    low = 0.0 if successes == 0 else float(stats.beta.ppf(a, successes, n - successes + 1))
    high = 1.0 if successes == n else float(stats.beta.ppf(1 - a, successes + 1, n - successes))
    return low, high


def cases_to_decide(bar: float, level: float | None = None) -> int:
    """The fewest cases for which n of n (or 0 of n) has an exact interval clear of ``bar`` (a
    fraction in (0, 1)): below it a count at its limit cannot be told from the bar, whatever the
    measure does. 36 for a 90% bar at the 95% level."""
    if not 0 < bar < 1:
        raise ValueError(f"bar must be a fraction in (0, 1), got {bar!r}")
    a = (1 - (LEVEL if level is None else level)) / 2
    n = int(np.ceil(np.log(a) / np.log(max(bar, 1 - bar))))
    while clopper_pearson(n, n, level)[0] <= max(bar, 1 - bar):
        n += 1
    return n


@functools.lru_cache(maxsize=64)
def case_draws(n_cases: int, rows: int, key: str) -> np.ndarray:
    """(rows, n_cases) indices of counted cases (layers) drawn with replacement, one draw per
    bootstrap replicate, row 0 every case once (the full sample): the cluster bootstrap over the
    cases a percentage counts. The draws depend only on ``key``, ``n_cases`` and ``rows``, so every
    percentage drawn with the same key is resampled alike (a difference of two is paired)."""
    rng = np.random.default_rng(zlib.crc32(f"{key}:{n_cases}:{rows}".encode()))
    out = np.concatenate([np.arange(n_cases)[None], rng.integers(0, n_cases, size=(rows - 1, n_cases))])
    out.setflags(write=False)  # shared by every caller (memoised)
    return out


@functools.lru_cache(maxsize=64)
def case_weights(n_cases: int, rows: int, key: str) -> np.ndarray:
    """(rows, n_cases) float64: how often each case is drawn in each replicate of :func:`case_draws`
    (row 0 ones), for a weighted count."""
    draws = case_draws(n_cases, rows, key)
    out = np.zeros((rows, n_cases))
    np.add.at(out, (np.repeat(np.arange(rows), n_cases), draws.ravel()), 1.0)
    out.setflags(write=False)  # shared by every caller (memoised)
    return out


def with_count_bound(e: Estimate, cases: int, *, scale: float = 100.0) -> Estimate:
    """``e``, a percentage of ``cases`` counted cases (``scale`` 100) or a fraction (1), widened
    to contain the exact binomial (Clopper-Pearson) interval of its count where the value sits at
    a limit (every case, or none): there no resample of the images or networks can move it, but
    which cases were drawn can (24 of 24 is compatible with a rate of 86%). Off its limits ``e``
    is returned as it is (its bootstrap already moves the count)."""
    if not (e.value == 0 or e.value == scale):
        return e
    k = cases if e.value == scale else 0
    lo, hi = (scale * x for x in clopper_pearson(k, cases))
    how = f"exact binomial (Clopper-Pearson) bound of {k} of {cases} cases"
    method = how if e.method == "exact" else f"{how}, around {e.method}"
    return Estimate(e.value, min(e.low, lo), max(e.high, hi), e.n_test, e.n_seeds, method)


def bootstrap(stat: Callable[[np.ndarray], float], n: int, *, name: str = "sample") -> Estimate:
    """The interval of a statistic that is not a mean of per-image values (an AUROC, a CKA):
    ``stat(idx)`` evaluated on the indices ``arange(n)`` and on each resample's indices."""
    rng = np.random.default_rng(_seed_of(f"{name}:{n}"))
    out = [float(stat(np.arange(n)))]
    out += [float(stat(rng.integers(0, n, size=n))) for _ in range(RESAMPLES)]
    return from_replicates(np.array(out), n_test=n)


def record(e: Estimate) -> Mapping[str, Any]:
    """The estimate as a claim's numeric fields."""
    return {"value": e.value, "low": e.low, "high": e.high, "n_test": e.n_test, "n_seeds": e.n_seeds,
            "interval": e.describe()}
