"""Bansal et al. 2021: the network-to-network variance of the recipe, measured once for the paper
and added to the interval of every claim that compares networks trained differently (issue 46;
both networks varied since the amendment of 2026-12-02, issue 68).

Every Bansal page trains one network per role (one receiver, one bottom per sample size, width,
label distribution, ...), so the paired bootstrap over the test images says how sure a number is
*for those networks*, not for the recipe the claim is about. Training more networks per role is
out of reach on 2 CPU cores; instead the spread between networks trained alike is measured once,
on the replicate networks of the recipe (seeds 0, 1, 3, 4, 5, 6), in a crossed design: each
sender of :data:`SENDERS` stitched into each receiver of :data:`RECEIVERS` (and every receiver
into itself) at the page's cuts, each penalty judged beyond that receiver's self-stitch. For each
claim its own statistic (:data:`STATISTICS`: a maximum over cuts stays a maximum) is computed per
(receiver, sender) pair, and :func:`stitchkit.verdicts.noise.crossed_spread` gives the spread of one pair's
statistic with both networks varied (receivers' part, senders' part, the pair's own). That is the
*seed-variance component*: :func:`stitchkit.verdicts.noise.with_seed_component` widens the claim's interval
by t(df) times it (times sqrt 2 where the claim is a difference of two networks). Until the
amendment the receiver was seed 0 in every replicate, so only the sender varied, and a per-cut
spread was applied to a maximum over cuts; the cross-paper triangle
(:mod:`stitchkit.experiments.across_conclusions`) had measured the receivers' spread at four times
the senders'. The component is stated on every page that uses it. Which claims of a page take it,
and how, is the page's constant beside its presets (``SEED_CLAIMS_<figure>``, :func:`with_seeds`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace

import numpy as np
import pandas as pd

from ...data.datasets import DataSpec
from ...networks import network
from ...stitching.grid import stitch_grid
from ...stitching.grid_spec import LONGER, Net
from ...verdicts import controls, noise
from ...verdicts.claims import ClaimSpec
from ...verdicts.results import Criterion, criterion
from .common import REPLICATES, SELF, ConnectivityConfig

# The crossed design (amendment of 2026-12-02): the replicate networks split into receivers and
# senders, disjoint, so that each pair is two independently trained networks. Seed 0 (every page's
# receiver) and seed 1 (every page's trained sender) lead their roles; no network is added to the
# six the component trained before. `smoke` takes the first two of each.
RECEIVERS = (0, 3, 4)
SENDERS = (1, 5, 6)
assert set(RECEIVERS[1:]) | set(SENDERS) <= set(REPLICATES) and not set(RECEIVERS) & set(SENDERS)

# How each claim's statistic reads one pair's penalties beyond its receiver's self-stitch over the
# cuts (points): "max" the largest (the claim's maximum over cuts), "gain" the largest gain (minus
# the smallest penalty: a best-cut improvement), "abs" the largest |penalty|, "cut" one cut's value
# (pooled over the cuts: a mean or a difference at given cuts)
STATISTICS = {"max": lambda v: float(np.max(v)), "gain": lambda v: float(-np.min(v)),
              "abs": lambda v: float(np.max(np.abs(v)))}



@dataclass(frozen=True)
class SeedComponent:
    """The recipe's network-to-network spread: ``sd`` (points; per cut, pooled over the cuts) from
    ``k`` replicate networks, and the table it comes from (penalty beyond the receiver's self-stitch
    per receiver, sender and cut). With more than one receiver in ``table`` (the crossed design),
    :meth:`spread` gives the spread of a claim's own statistic with both networks varied."""

    sd: float
    k: int
    table: pd.DataFrame
    unit: str = " points"
    how: str = "stitched into seed 0"
    df: float | None = None  # the degrees of freedom of sd (None: k - 1)

    @property
    def crossed(self) -> bool:
        return "receiver" in self.table and self.table.receiver.nunique() > 1

    def spread(self, statistic: str = "cut") -> noise.CrossedSpread:
        """The crossed spread of ``statistic`` (:data:`STATISTICS`, or "cut": each cut's value,
        the variances pooled over the cuts and the fewest degrees of freedom)."""
        if not self.crossed:
            raise ValueError("a crossed spread needs the crossed design's table (receivers and senders)")
        col = "beyond (points)"
        if statistic == "cut":
            parts = [noise.crossed_spread(g.pivot_table(index="receiver", columns="sender", values=col, sort=False)
                                          .to_numpy()) for _, g in self.table.groupby("cut", sort=False)]
            var = float(np.mean([p.sd ** 2 for p in parts]))
            first = parts[0]
            return noise.CrossedSpread(
                float(np.sqrt(var)), min(p.df for p in parts), first.receivers, first.senders,
                float(np.mean([p.var_receiver for p in parts])), float(np.mean([p.var_sender for p in parts])),
                float(np.mean([p.var_pair for p in parts])))
        if statistic not in STATISTICS:
            raise ValueError(f"unknown statistic {statistic!r}; valid: cut, {', '.join(STATISTICS)}")
        per = self.table.groupby(["receiver", "sender"], sort=False)[col].apply(
            lambda v: STATISTICS[statistic](v.to_numpy(dtype=float)))
        return noise.crossed_spread(per.unstack("sender").to_numpy())

    def text(self, statistic: str | None = None) -> str:
        if self.crossed:
            c = self.spread(statistic or "cut")
            what = {"cut": "each cut's penalty", "max": "the largest penalty over the cuts",
                    "gain": "the largest gain over the cuts", "abs": "the largest |penalty| over the cuts"}
            return (f"{c.text(self.unit)}, of {what[statistic or 'cut']} beyond the receiver's self-stitch: receivers "
                    f"seeds {', '.join(map(str, sorted(self.table.receiver.unique(), key=_seed)))}, senders seeds "
                    f"{', '.join(map(str, sorted(self.table.sender.unique(), key=_seed)))}, over "
                    f"{self.table.cut.nunique()} cuts")
        return (f"sd {self.sd:.{2 if self.unit else 3}f}{self.unit} between {self.k} networks trained alike (seeds "
                f"{', '.join(map(str, REPLICATES[:self.k]))} {self.how}, pooled over "
                f"{self.table.cut.nunique()} cuts)")


def _seed(name) -> int:
    return int(str(name).split()[-1])


def _names(seeds) -> list[str]:
    return [f"seed {s}" for s in seeds]


def seed_component(cfg: ConnectivityConfig, cuts=None, *, device=None, store=None,
                   progress: bool = True) -> SeedComponent:
    """Stitch each of :data:`SENDERS` into each of :data:`RECEIVERS` (the first
    ``cfg.seed_networks`` of each), and each receiver into itself, at ``cuts`` (default:
    ``cfg.seed_cuts``, else every cut) with ``cfg``'s recipe, and measure the crossed spread of the
    penalties beyond the receiver's self-stitch (both networks varied). Cached like any grid: the
    pages share it."""

    n = cfg.seed_networks
    receivers = [Net(f"seed {s}", cfg.model(s)) for s in RECEIVERS[:n]]
    for r in receivers:
        r.model, _ = network.load_or_train(r.spec, device=device, store=store, progress=progress)
    cuts = list(cuts or cfg.seed_cuts or receivers[0].model.cuts)
    senders = [Net(f"seed {s}", cfg.model(s)) for s in SENDERS[:n]]
    frames = []
    for r in receivers:
        t = stitch_grid([Net(SELF, r.spec, r.model), *senders], [r], [(c, c) for c in cuts], cfg.recipe(),
                        DataSpec("cifar10"), device=device, store=store, progress=progress)
        frames.append(t.rename(columns={"cut_i": "cut"}).assign(receiver=r.name))
    return component_of(pd.concat(frames, ignore_index=True))


def component_of(t: pd.DataFrame) -> SeedComponent:
    """The spread from a grid table with, per receiver (a ``receiver`` column; one receiver when
    absent), its self-stitch and ``seed k`` senders: crossed when there are several receivers."""
    t = t if "receiver" in t else t.assign(receiver="seed 0")
    rows = []
    for receiver, g in t.groupby("receiver", sort=False):
        own = g[g.sender == SELF].set_index("cut").penalty
        rows += [{"receiver": receiver, "sender": r.sender, "cut": r.cut,
                  "beyond (points)": 100 * (r.penalty - own[r.cut])} for r in g[g.sender != SELF].itertuples()]
    per = pd.DataFrame(rows)
    k = int(per.sender.nunique())
    if per.receiver.nunique() > 1:
        c = SeedComponent(0.0, k + int(per.receiver.nunique()), per, how="crossed")
        cut = c.spread("cut")
        return replace(c, sd=cut.sd, df=cut.df)
    var = per.groupby("cut", sort=False)["beyond (points)"].var(ddof=1)
    return SeedComponent(float(np.sqrt(var.mean())), k, per)


CKA_COLUMN = "CKA with seed 0"


def cka_seed_component(cfg, n_images: int, cuts=None, *, device=None, store=None,
                       progress: bool = True) -> SeedComponent:
    """The recipe's network-to-network spread of a CKA: the linear CKA between the receiver (seed 0)
    and each of :data:`REPLICATES` at ``cuts`` (default: every cut) on ``n_images`` test images,
    its standard deviation between the replicates pooled over the cuts (CKA units). ``cfg``: any
    config with ``variant(seed)``. The same networks as :func:`seed_component`'s."""
    from .bottoms import cka_per_cut

    receiver = cfg.variant(0)
    model, _ = network.load_or_train(receiver, device=device, store=store, progress=progress)
    cuts = list(cuts or model.cuts)
    rows = [{"sender": f"seed {s}", "cut": cut, CKA_COLUMN: v}
            for s in REPLICATES
            for cut, v in cka_per_cut(receiver, cfg.variant(s), cuts, n_images, device=device, store=store,
                                      progress=progress).items()]
    per = pd.DataFrame(rows)
    var = per.groupby("cut", sort=False)[CKA_COLUMN].var(ddof=1)
    return SeedComponent(float(np.sqrt(var.mean())), int(per.sender.nunique()), per, unit="",
                         how="against seed 0 by linear CKA")


def component_table(c: SeedComponent) -> pd.DataFrame:
    """Per cut (rows) and replicate pair (columns: receiver ← sender, or the sender alone): the
    penalty beyond the self-stitch (points), or the CKA with seed 0 (:func:`cka_seed_component`);
    with the crossed design, each cut's crossed sd, else the standard deviation between senders."""
    column = CKA_COLUMN if CKA_COLUMN in c.table else "beyond (points)"
    if c.crossed:
        t = c.table.assign(pair=[f"{r} ← {s}" for r, s in zip(c.table.receiver, c.table.sender)])
        wide = t.pivot_table(index="cut", columns="pair", values=column, sort=False)
        wide["crossed sd"] = [noise.crossed_spread(g.pivot_table(index="receiver", columns="sender", values=column,
                                                                  sort=False).to_numpy()).sd
                              for _, g in c.table.groupby("cut", sort=False)]
        return wide.round(2)
    wide = c.table.pivot_table(index="cut", columns="sender", values=column, sort=False)
    wide["sd between networks"] = wide.std(axis=1, ddof=1)
    return wide.round(3 if column == CKA_COLUMN else 2)


def widen(claims: list[ClaimSpec], c: SeedComponent, networks: dict[str, "int | tuple[int, str]"],
          bounds: tuple[float, float] | None = None) -> list[ClaimSpec]:
    """``claims`` with the criterion of each key of ``networks`` judged on its interval widened by
    the seed-variance component (``networks[key]``: how many independently trained networks the
    claim's number is a difference of, or that and the claim's statistic, :data:`STATISTICS`, whose
    crossed spread widens it when ``c`` is crossed; a bare count reads each cut's spread). The criterion's text, threshold and direction stay; the
    claim's training-length control is judged again like for like, its longer run's interval
    widened the same way; ``ours`` gains the widened interval. ``bounds``: the range the number
    cannot leave (a CKA's (0, 1)), where a widened interval is cut."""
    out = []
    for claim in claims:
        spec = networks.get(claim.key)
        if spec is None or claim.criterion.value is None or claim.criterion.low is None:
            out.append(claim)
            continue
        n, stat = spec if isinstance(spec, tuple) else (spec, "cut")
        wide = _widened(claim.criterion.fields(), claim.criterion.text, c, n, bounds, stat)
        kept = []
        for k in claim.controls:
            if k.kind == controls.LENGTH and k.record and k.record.get("value") is not None:
                longer = _widened(k.record, claim.criterion.text, c, n, bounds, stat)
                k = controls.training_length(wide, longer, LONGER, what=k.text)
            kept.append(k)
        ours = f"{claim.ours}; with the network-to-network variance {wide.describe_value(2)}"
        out.append(replace(claim, criterion=wide, controls=tuple(kept), ours=ours))
    return out


def _widened(fields, text: str, c: SeedComponent, n: int, bounds: tuple[float, float] | None = None,
             statistic: str = "cut") -> Criterion:
    """The criterion of ``fields`` (a claim's or a length control's record) on its interval widened
    by ``c`` for ``n`` networks (crossed: by the spread of the claim's ``statistic``)."""
    base = noise.Estimate(fields["value"], fields["low"], fields["high"], fields.get("n_test"),
                          fields.get("n_seeds") or 1, _method(fields.get("interval") or ""))
    if c.crossed:
        sp = c.spread(statistic)
        e = noise.with_seed_component(base, sp.sd, c.k, networks=n, what=c.text(statistic), bounds=bounds, df=sp.df)
    else:
        e = noise.with_seed_component(base, c.sd, c.k, networks=n, what=c.text(), bounds=bounds, df=c.df)
    return criterion(e, fields["threshold"], fields["direction"], text, fields.get("unit") or "", fields.get("tolerance"))


def _method(interval: str) -> str:
    """The method named in a criterion's interval text (``95% <method> interval (...)``)."""
    text = interval or "paired bootstrap"
    if text.startswith("95% ") and " interval (" in text:
        return text[4:text.index(" interval (")]
    return text


def with_seeds(seed_claims: dict[str, tuple[int, str]], cfg: ConnectivityConfig, claims: list[ClaimSpec], **kw
               ) -> tuple[dict[str, float], list[ClaimSpec]]:
    """A page's claims judged with the seed-variance component (measured, or read from the cache),
    and the numbers the page states it with (``seed_sd``, ``seed_k``, and per claim its crossed
    spread). ``seed_claims``, the page's constant beside its presets: claim key -> (how many
    independently trained networks the claim's number is a difference of, its statistic over the
    cuts, :data:`STATISTICS`, computed over every cut of the component where some claims read a
    subset). Only claims about networks of the recipe the component was measured on take it: not
    other architectures, nor untrained bottoms, whose intervals cover the test images only."""
    c = seed_component(cfg, **kw)
    numbers = {"seed_sd": c.sd, "seed_k": c.k}
    if c.crossed:
        for key, (_, stat) in seed_claims.items():
            sp = c.spread(stat)
            numbers.update({f"seed_sd_{key}": sp.sd, f"seed_df_{key}": sp.df,
                            f"seed_sd_receivers_{key}": float(np.sqrt(sp.var_receiver)),
                            f"seed_sd_senders_{key}": float(np.sqrt(sp.var_sender))})
    return numbers, widen(claims, c, seed_claims)
