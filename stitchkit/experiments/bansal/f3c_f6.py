"""Bansal et al. 2021, Sections 5-6: networks stitched into each other both ways (one table
with several tops), in catalogue order:

- B-F3C, width: x0.25, x1 and x2 widths, every ordered pair;
- B-F6, SimCLR vs end-to-end: a SimCLR network (linear probe on top) and supervised ones,
  stitched both ways, with CKA; and the committed GPU diagnosis of its SimCLR control
  (:func:`simclr_length_section`).

Each with the cells that decide its claims for the training-length control. The grid, claim
helpers and recipe are the sweeps' (:mod:`.bottoms`).
"""

from __future__ import annotations

from dataclasses import dataclass, replace
from typing import Sequence

import pandas as pd

from ...base.provenance import load_spot_json
from ...networks import network, zoo
from ...pagekit.display import Section, plain
from ...registry.scales import param
from ...verdicts import controls
from ...verdicts.claims import ClaimSpec
from ...verdicts.results import at_least, at_most
from .bottoms import (IMPROVE_MIN, BeyondSelf, BottomsConfig, accuracy_gap, bottoms_into_top, claim_rejudger,
                      gain_estimate, grid_bootstrap, judged_beyond_self, penalty_beyond_self, premise_stronger,
                      short_numbers, sweep_presets, top_self_stitch_control, untrained_bottom_control)
from .common import (CONNECTED_MAX_PENALTY, SELF, cka_estimate, cka_reps_of, estimate_numbers, positions,
                     replicate_networks)
from .length import LengthCheck, LengthPart

# --------------------------------------------------------------------------------------------
# B-F3C: width


@dataclass(frozen=True)
class WidthConfig(BottomsConfig):
    """B-F3C: networks of several widths (seed 0) stitched into each other, every ordered pair."""

    width_factors: tuple[float, ...] = param((0.25, 1.0, 2.0), "widths relative to the base width "
                                             "(paper x0.25, x1, x2)", items={"gt": 0, "le": 16})

    def networks(self) -> list[network.ModelSpec]:
        """Every width's network and the seed-variance component's (at the base width)."""
        return [*(self.variant(self.seeds[0], width_factor=f) for f in self.width_factors),
                *replicate_networks(self)]

    def summary(self, table: pd.DataFrame, accuracy: dict) -> tuple[dict, list[ClaimSpec]]:
        return widths_summary(table, accuracy, self)

    def length_checks(self, table: pd.DataFrame, claims: list[ClaimSpec]) -> list[LengthCheck]:
        return _width_checks(table, claims, self)


PRESETS_F3C = sweep_presets(WidthConfig, smoke={"width_factors": (0.5, 1.0)})
# gpu: the paper's ratios x0.25, x1, x2 around a base width of 32, not 64 (widths 8, 32 and 64): at
# base 64 the x2 network is 13.3 GFLOP an image, ~210 s to train, and its stitches the slowest; and
# four cuts (an early, two middle, the last), not six: every ordered pair of widths with its self-stitch
# and random bottom is 12 stitches a cut.
PRESETS_F3C["gpu"] = replace(PRESETS_F3C["gpu"], width=32, cuts=("stem", "block3", "block5", "pool"))
# B-F3C's claims judged with the seed-variance component (.seeds.with_seeds): claim key -> (how many
# independently trained networks its number is a difference of, its statistic over the cuts)
SEED_CLAIMS_F3C: dict[str, tuple[int, str]] = {"wider_improves": (1, "gain"), "not_vice_versa": (1, "gain")}


def width_name(f: float) -> str:
    return f"x{f:g} width"


def widths(cfg: WidthConfig, **kw) -> tuple[pd.DataFrame, dict]:
    """Every width into every other (and itself, the control); one table with a receiver column."""
    if len(cfg.width_factors) < 2 or any(f <= 0 for f in cfg.width_factors):
        raise ValueError(f"width_factors needs at least two positive factors, got {cfg.width_factors}")
    specs = {width_name(f): cfg.variant(cfg.seeds[0], width_factor=f) for f in cfg.width_factors}
    tables, accuracy = [], {}
    for rx_name, rx in specs.items():
        others = {name: spec for name, spec in specs.items() if name != rx_name}
        t, acc = bottoms_into_top(cfg, rx, others, receiver_name=rx_name, **kw)
        tables.append(t)
        accuracy.update({k: v for k, v in acc.items() if k != SELF})
    return pd.concat(tables, ignore_index=True), accuracy


def _width_checks(table: pd.DataFrame, claims: list[ClaimSpec], cfg: WidthConfig) -> list[LengthCheck]:
    """B-F3C's claims, decided or not (issue 46), each decided by one cell: the gain of the wider bottom into the
    thinnest top ("wider_improves") or of the thinnest bottom into the widest top
    ("not_vice_versa") at its best block cut, measured beyond that top's self-stitch there."""
    names = [width_name(f) for f in sorted(cfg.width_factors)]
    thin, wide = names[0], names[-1]
    specs = {width_name(f): cfg.variant(cfg.seeds[0], width_factor=f) for f in cfg.width_factors}
    pairs = {"wider_improves": (wide, thin), "not_vice_versa": (thin, wide)}
    checks = []
    for c in claims:
        if c.key not in pairs:
            continue
        sender, top = pairs[c.key]
        _, where = gain_estimate(table, sender, top)
        part = LengthPart(receiver=specs[top], receiver_name=top, cells=((sender, (where,)),),
                          sender_specs={sender: specs[sender]})
        checks.append(LengthCheck(claim=c.key, recipe=cfg.recipe(), table=table, rejudge=claim_rejudger(cfg, c.key),
                                  bound=IMPROVE_MIN if c.key == "not_vice_versa" else -IMPROVE_MIN, parts=(part,),
                                  panel=f"top {top}"))
    return checks


def widths_summary(table: pd.DataFrame, accuracy: dict, cfg: WidthConfig) -> tuple[dict, list[ClaimSpec]]:
    t = table.reset_index(drop=True)
    names = [width_name(f) for f in sorted(cfg.width_factors)]
    keys = {SELF: "self", **{n: n.split()[0].replace(".", "_") for n in names}}
    numbers = short_numbers(t, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = top_self_stitch_control(t)
    thin, wide = names[0], names[-1]
    negative, neg = untrained_bottom_control(t, [thin])  # "wider improves" is judged in the thinnest top
    if neg is not None:
        numbers.update(estimate_numbers("random_late_penalty_beyond_thin", neg))
    down = penalty_beyond_self(t, thin, wide)  # thinnest bottom into the widest top
    gain_up, where_up = gain_estimate(t, wide, thin)  # wider bottom into the thinnest top
    gain_down, _ = gain_estimate(t, thin, wide)
    premise, gap = premise_stronger(t, wide, receiver=thin, top_name=f"the {thin} network")
    cka = t[(t.sender == thin) & (t.receiver == wide)].set_index("cut").cka
    numbers.update(thin_into_wide_max_penalty=down.max(), cka_thin_wide_min=cka.min(), cka_thin_wide_max=cka.max(),
                   **estimate_numbers("wide_into_thin_gain", gain_up),
                   **estimate_numbers("thin_into_wide_gain", gain_down),
                   **estimate_numbers("wider_premise_gap", gap))
    claims = [
        ClaimSpec(key="wider_improves", text="A wider bottom stitched into a thinner top improves its performance",
                  criterion=at_least(gain_up, IMPROVE_MIN, f"gain of the {wide} bottom into the {thin} top at its best "
                                     "block cut ('pool' left out)"),
                  paper="wider into thinner improves (Fig. 3C)",
                  ours=f"gain {gain_up.text(2, 'points')} (at {where_up}); the {wide} network's own accuracy minus the "
                       f"{thin} network's {gap.text(2, 'points')}",
                  controls=[control, negative, premise], kind="improves"),
        ClaimSpec(
            key="not_vice_versa", text="... but not vice versa: a thinner bottom does not improve a wider top",
            criterion=at_most(gain_down, IMPROVE_MIN, f"gain of the {thin} bottom into the {wide} top at its best "
                              "block cut (below the 'improves' bound)"),
            paper="not vice versa (Fig. 3C)", ours=f"best gain {gain_down.text(2, 'points')}, worst penalty "
            f"{down.max():.2f}", controls=[control], kind="fails"),
    ]
    return numbers, judged_beyond_self(claims, ('wider_improves', 'not_vice_versa'))


# --------------------------------------------------------------------------------------------
# B-F6: SimCLR vs end-to-end (supervised), both directions, with CKA


@dataclass(frozen=True)
class SimCLRConfig(BottomsConfig):
    """B-F6: a SimCLR-trained ResNet-18 (linear probe on top) and supervised ones, stitched both ways."""

    simclr_epochs: float | None = param(None, "SimCLR pre-training epochs; None: the recipe's", gt=0)
    simclr: zoo.Recipe = zoo.recipe_field("the SimCLR network's recipe (zoo.BANSAL_SIMCLR at the preset's scale)")

    # the recipes the page's width and length parameters override (pagekit.page.held_recipes), as models passes them
    RECIPE_OVERRIDES = {"width": ("net", "simclr"), "model_epochs": ("net",), "simclr_epochs": ("simclr",)}

    def networks(self) -> list[network.ModelSpec]:
        """The supervised top, the SimCLR network and the seed-variance component's (seed 1 the
        supervised network the SimCLR one is set beside)."""
        return [*self.models(), *replicate_networks(self)]

    def models(self) -> tuple[network.ModelSpec, network.ModelSpec]:
        """The supervised top (seed 0) and the SimCLR network (seed 1)."""
        return self.variant(self.seeds[0]), zoo.bansal_simclr(self.simclr, self.seeds[1], width=self.width,
                                                                      epochs=self.simclr_epochs, final_bn=self.final_bn)

    def summary(self, table: pd.DataFrame, accuracy: dict) -> tuple[dict, list[ClaimSpec]]:
        return simclr_summary(table, accuracy, self)

    def length_checks(self, table: pd.DataFrame, claims: list[ClaimSpec]) -> list[LengthCheck]:
        return _simclr_checks(self, table, claims)


PRESETS_F6 = zoo.at_scale(sweep_presets(SimCLRConfig), simclr=zoo.BANSAL_SIMCLR)
# B-F6's claims judged with the seed-variance component, as B-F3C's
SEED_CLAIMS_F6: dict[str, tuple[int, str]] = {"connected": (1, "max")}
E2E_TOP, SIMCLR = "supervised top (seed 0)", "SimCLR (seed 1, linear probe)"
E2E_SEED = "supervised (seed 1)"
CKA_MARGIN = 0.05  # "further apart by CKA": the mean CKA differs by at least this
PAPER_SIMCLR_CKA = (0.35, 0.9, "paper: SimCLR vs supervised CKA 0.35-0.9 (Fig. 6a)")
PROBE_MAX_GAP = 10.0  # points: the SimCLR network counts as "well-performing" within this of the supervised one


def simclr_length_table(spot: dict) -> pd.DataFrame:
    """The GPU diagnosis of the SimCLR control (``benchmarks/spot_simclr.py``): the linear probe
    after each SimCLR length at the diagnosis's width (demo's 8 of 2026-11-23, or the paper's 64),
    and its gap to the supervised network."""
    sup = 100 * spot["supervised"]["accuracy"]
    rows = []
    for r in spot["simclr"]:
        probe = 100 * r["probe_accuracy"]
        gap = probe - sup
        rows.append({"SimCLR epochs": f"{r['epochs']:g}", "width": r["width"], "linear probe (%)": round(probe, 2),
                     "supervised (%)": round(sup, 2), "gap (points)": round(gap, 2),
                     "control": "passes" if gap >= -PROBE_MAX_GAP else "fails", "GPU seconds": round(r["seconds"])})
    return pd.DataFrame(rows)


def simclr_length_section(stems: Sequence[str], spot_dir=None) -> Section:
    """Per committed diagnosis of ``stems`` (``benchmarks/spot/<stem>.json``): where and when it
    ran and the supervised network's accuracy, :func:`simclr_length_table`, and from which
    length on the control passes, or that it fails at every length (with the best gap)."""
    parts: list = []
    for stem in stems:
        spot = load_spot_json(stem, spot_dir)
        if spot is None:
            parts.append(f"No diagnosis committed (`benchmarks/spot/{stem}.json`).")
            continue
        sup = spot["supervised"]
        parts.append(f"**Width {sup['width']}** (`benchmarks/spot/{stem}.json`): run on {spot['device']} "
                     f"({spot['precision']}), commit `{spot['commit']}`, {spot['date'][:10]}; the supervised "
                     f"network (seed {sup['seed']}): {100 * sup['accuracy']:.2f}%."
                     + (f" {spot['note']}." if spot.get("note") else ""))
        length = simclr_length_table(spot)
        passing = length[length.control == "passes"]
        verdict = (f"The control passes from {passing['SimCLR epochs'].iloc[0]} SimCLR epochs on at this width."
                   if len(passing) else f"The control fails at every length up to {length['SimCLR epochs'].iloc[-1]} "
                   f"epochs (best gap {length['gap (points)'].max():.2f} points): at this width more SimCLR epochs "
                   "alone do not close it.")
        parts += [plain(length), verdict]
    return Section(tuple(parts))


def simclr_vs_e2e(cfg: SimCLRConfig, **kw) -> tuple[pd.DataFrame, dict]:
    """The SimCLR network and a second supervised seed stitched into the supervised top, and the
    supervised network stitched into the SimCLR network (each top also into itself); the CKA
    with its bootstrap replicates (the CKA claim is judged on them)."""
    e2e, ssl = cfg.models()
    kw = {"cka_replicates": True, **kw}
    into_e2e, acc = bottoms_into_top(cfg, e2e, {SIMCLR: ssl, E2E_SEED: cfg.variant(cfg.seeds[1])},
                                     receiver_name=E2E_TOP, **kw)
    into_ssl, _ = bottoms_into_top(cfg, ssl, {E2E_BOTTOM: e2e}, receiver_name="SimCLR top "
                                   "(seed 1, linear probe)", **kw)
    return pd.concat([into_e2e, into_ssl], ignore_index=True), acc  # each network once: top, SimCLR, seed 1


E2E_BOTTOM = "supervised (seed 0)"


def _simclr_checks(cfg: SimCLRConfig, table: pd.DataFrame, claims: list[ClaimSpec]) -> list[LengthCheck]:
    """B-F6's "connected" (the largest penalty over both directions, beyond each top's
    self-stitch), decided or not (issue 46): the cells past the bound in either direction (SimCLR into the
    supervised top, the supervised network into the SimCLR top), or the one closest to it, each
    retrained with its top's self-stitch there, both directions swapped in together."""
    claim = next((c for c in claims if c.key == "connected"), None)
    if claim is None:
        return []
    t = table.reset_index(drop=True)
    receivers = list(dict.fromkeys(t.receiver))
    e2e, ssl = cfg.models()
    dirs = [(SIMCLR, receivers[0], e2e, ssl), (E2E_BOTTOM, receivers[1], ssl, e2e)]
    bound = 100 * CONNECTED_MAX_PENALTY
    pens = {(s, r): penalty_beyond_self(t, s, r) for s, r, _, _ in dirs}
    past = {k: [str(c) for c in p.index[p > bound]] for k, p in pens.items()}
    if not any(past.values()):  # none past the bound: the one cell closest to it decides
        k = max(pens, key=lambda k: pens[k].max())
        past = {k: [str(pens[k].idxmax())]}
    parts = tuple(LengthPart(receiver=rx_spec, receiver_name=rx, cells=((s, tuple(past[(s, rx)])),),
                             sender_specs={s: s_spec}, panel=f"into {rx}")
                  for s, rx, rx_spec, s_spec in dirs if past.get((s, rx)))
    return [LengthCheck(claim="connected", recipe=cfg.recipe(), table=t, rejudge=claim_rejudger(cfg, "connected"),
                        bound=bound, parts=parts)]


def simclr_summary(table: pd.DataFrame, accuracy: dict, cfg: SimCLRConfig) -> tuple[dict, list[ClaimSpec]]:
    t = table.reset_index(drop=True)
    receivers = list(dict.fromkeys(t.receiver))
    keys = {SELF: "self", SIMCLR: "simclr", E2E_SEED: "seed1", "supervised (seed 0)": "e2e",
            receivers[0]: "e2e_top", receivers[1]: "simclr_top"}
    numbers = short_numbers(t, accuracy, keys, cfg)
    control, numbers["control_max_penalty"] = top_self_stitch_control(t)
    negative, neg = untrained_bottom_control(t)  # both tops: the claim is judged in both directions
    if neg is not None:
        numbers.update(estimate_numbers("random_late_penalty_beyond", neg))
    ssl_acc = 100 * accuracy.get(SIMCLR, float("nan"))  # (a re-judged table comes without accuracies)
    probe_gap = accuracy_gap(t, SIMCLR, receiver=receivers[0])  # SimCLR's own accuracy minus the top's
    good = controls.premise(probe_gap, -PROBE_MAX_GAP, f"the SimCLR network's linear probe is within "
                            f"{PROBE_MAX_GAP:g} points of the supervised network (the paper compares networks of "
                            "similar accuracy)", what="linear-probe accuracy minus the supervised network's, same "
                            "images")
    cuts = list(dict.fromkeys(t.cut))
    up = penalty_beyond_self(t, SIMCLR, receivers[0])
    down = penalty_beyond_self(t, "supervised (seed 0)", receivers[1])
    seed = penalty_beyond_self(t, E2E_SEED, receivers[0])
    b_up, b_down = BeyondSelf(t, SIMCLR, cuts, receivers[0]), BeyondSelf(t, "supervised (seed 0)", cuts, receivers[1])
    worst = grid_bootstrap(t, lambda x: float(max(b_up.of(x).max(), b_down.of(x).max())))
    cka_ssl = t[(t.sender == SIMCLR)].cka
    cka_seed = t[(t.sender == E2E_SEED)].cka
    n_cka = int(t.cka_n.iloc[0])
    diff_reps = (cka_reps_of(t, positions(t, E2E_SEED, cuts, receivers[0])).mean(axis=1)
                 - cka_reps_of(t, positions(t, SIMCLR, cuts, receivers[0])).mean(axis=1))
    cka_diff = cka_estimate(diff_reps, n_cka)
    numbers.update(simclr_into_e2e_max=up.max(), e2e_into_simclr_max=down.max(), seed_into_e2e_max=seed.max(),
                   both_ways_max=worst.value, cka_min=cka_ssl.min(), cka_max=cka_ssl.max(), cka_mean=cka_ssl.mean(),
                   seed_cka_mean=cka_seed.mean(), probe_accuracy=ssl_acc, **estimate_numbers("max_penalty", worst),
                   **estimate_numbers("cka_difference", cka_diff), **estimate_numbers("probe_gap", probe_gap))
    claims = [
        ClaimSpec(key="connected", text="SimCLR and supervised networks are stitching connected in both directions",
                  criterion=at_most(worst, 100 * CONNECTED_MAX_PENALTY, "max penalty over the cuts of both directions"),
                  paper="connected both ways, penalty like a different seed's (App. B.2.2, Fig. 6b)",
                  ours=f"max {worst.text(2, 'points')}: SimCLR into supervised max {up.max():.2f}, supervised into "
                       f"SimCLR max {down.max():.2f} points (another supervised seed: max {seed.max():.2f})",
                  controls=[control, negative, good], kind="compatible"),
        ClaimSpec(key="cka_differs", text="CKA finds SimCLR and supervised representations further apart than two "
                                          "supervised seeds",
                  criterion=at_least(cka_diff, CKA_MARGIN, "mean CKA with the supervised top over the cuts: another "
                                     "supervised seed minus SimCLR", unit="", digits=3),
                  paper="CKA 0.35-0.9; differs more than two initialisations (Table 1, Fig. 6a)",
                  ours=f"SimCLR {cka_ssl.min():.2f}-{cka_ssl.max():.2f} (mean {cka_ssl.mean():.3f}); another seed mean "
                       f"{cka_seed.mean():.3f}; difference {cka_diff.text(3)}", controls=[good], kind="no_stitch"),
    ]
    return numbers, judged_beyond_self(claims, ('connected',))
