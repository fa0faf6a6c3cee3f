"""Every sender stitched into the Digit receiver, trained and tested on the Correlated set:
S-F1B (every sender beats the Digit baseline at every layer), S-F1C (the rank after the stitch)
and S-FC5 (with the Colour-only and Clustered-Noise senders), with the training-length control's
retrained cells and the negative control's untrained sender (:func:`untrained_into_digit`).

Claim kinds (:data:`stitchkit.verdicts.controls.KINDS`): the compatibility claims (``compatible``,
``noise_compatible``) are *compatible*: the positive control (Digit into itself), the negative
control (an untrained ResNet-18 into Digit at the last two cuts) and the training-length
control; the rank claims (``rank_differs``, ``noise_rank_differs``) are *no_stitch*: a rank is
not a stitching verdict, and they carry no stitching control."""

from __future__ import annotations

import numpy as np
import pandas as pd

from ...base.hardware import as_device
from ...base.store import Store
from ...data.datasets import DataSpec
from ...stitching.grid import stitch_grid
from ...stitching.longer import Cells, replace_cells, retrain
from ...verdicts import controls, noise
from ...verdicts.claims import ClaimSpec
from ...verdicts.results import Control, at_least, more_than
from .config import CUT_LABELS, CUTS, FC5_SENDERS, LONGER, LONGER_CELLS, NOISE, RECEIVER, SETS, StitchConfig
from .measured import ACC, baseline_rank, noise_sender, per_layer, recipe_net, stitched_rank
from .stitch_controls import late_rows, negative_control_over_inits, not_run


def into_digit(cfg: StitchConfig, senders=FC5_SENDERS, *, with_rank: bool = True,
               store: Store | None = None, device=None) -> pd.DataFrame:
    """Every sender stitched into the Digit receiver at every cut, trained and tested on the
    Correlated set, per initialisation. Columns: init, sender, cut, layer, accuracy, baseline (the
    Digit model's own accuracy on Correlated), rank (and baseline_rank: the unstitched Digit
    model's), and the per-image results behind accuracy and baseline (correct, baseline_correct)."""
    store = store or Store()
    data = DataSpec(SETS["Correlated"])
    frames = []
    for k in range(cfg.inits):
        receiver = recipe_net(cfg, RECEIVER, k)
        nets = [recipe_net(cfg, s, k) for s in senders if s != NOISE]
        pairs = [(c, c) for c in CUTS]
        parts = []
        if nets:
            parts.append(stitch_grid(nets, [receiver], pairs, cfg.recipe(k), data, store=store, device=device))
        if NOISE in senders:
            parts.append(stitch_grid([noise_sender(cfg, k)], [receiver], pairs, cfg.noise_recipe(k), data,
                                     store=store, device=device))
        t = pd.concat(parts, ignore_index=True)
        t.insert(0, "init", k)
        if with_rank:
            rx = receiver.load(as_device(device), store, None, True)
            base = {c: baseline_rank(rx, c, data, receiver.spec.normalisation, cfg.test_size, device) for c in CUTS}
            by_name = {n.name: n for n in nets}
            t["rank"] = [stitched_rank(by_name.get(s) or noise_sender(cfg, k), receiver, c,
                                       cfg.noise_recipe(k) if s == NOISE else cfg.recipe(k), data, store=store,
                                       device=device)
                         for s, c in zip(t.sender, t.cut_i)]
            t["baseline_rank"] = [base[c] for c in t.cut_i]
        frames.append(t)
    table = pd.concat(frames, ignore_index=True).rename(columns={"cut_i": "cut", "receiver_accuracy": "baseline",
                                                                 "receiver_correct": "baseline_correct"})
    table["layer"] = table.cut.map(CUT_LABELS)
    order = {s: i for i, s in enumerate(senders)}
    cols = (["init", "sender", "cut", "layer", "accuracy", "baseline"] + (["rank", "baseline_rank"] if with_rank else [])
            + ["correct", "baseline_correct"])  # per-image results on the Correlated test set (the bootstrap's)
    return (table.sort_values(["sender", "init"], key=lambda s: s.map(order) if s.name == "sender" else s,
                              kind="stable")[cols].reset_index(drop=True))


def untrained_into_digit(cfg: StitchConfig, *, store: Store | None = None, device=None) -> pd.DataFrame:
    """The negative control's stitches for the Digit receiver: an untrained ResNet-18 and Digit
    itself stitched into Digit at the last two cuts, trained and tested on Correlated with the
    page's recipe, every initialisation (:func:`.stitch_controls.late_rows`; the self-stitches
    are the ones :func:`into_digit` makes, read from the cache)."""
    return late_rows(cfg, RECEIVER, "Correlated", store=store, device=device)


def deciding_cells(table: pd.DataFrame, senders, k: int = LONGER_CELLS) -> list[tuple[str, str]]:
    """The ``k`` (sender, cut) cells with the lowest mean stitched accuracy among ``senders``:
    those that decide a 'beats the baseline at every layer' claim."""
    judged = [s for s in senders if s != RECEIVER]
    mean = table[table.sender.isin(judged)].groupby(["sender", "cut"]).accuracy.mean().sort_values()
    return list(mean.index[:k])


def into_digit_longer(cfg: StitchConfig, table: pd.DataFrame, cells, *, factor: int = LONGER,
                      store: Store | None = None, device=None) -> pd.DataFrame:
    """``table`` with the rows of ``cells`` ((sender, cut) pairs) and of the Digit self-stitch at
    their cuts retrained at ``factor``x the stitch epochs (every initialisation;
    :func:`stitchkit.stitching.longer.retrain`, swapped in by
    :func:`stitchkit.stitching.longer.replace_cells`): the like-for-like table a claim is re-judged
    on by the training-length control."""
    store = store or Store()
    data = DataSpec(SETS["Correlated"])
    cells = set(cells) | {(RECEIVER, c) for _, c in cells}
    todo = []
    for k in range(cfg.inits):
        receiver = recipe_net(cfg, RECEIVER, k)
        for sender, cut in sorted(cells):
            src = noise_sender(cfg, k) if sender == NOISE else recipe_net(cfg, sender, k)
            recipe = cfg.noise_recipe(k) if sender == NOISE else cfg.recipe(k)
            todo.append(Cells((src,), (receiver,), ((cut, cut),), recipe, data, tags={"init": k, "sender": sender}))
    longer = retrain(todo, factor, store=store, device=device, progress=False).rename(columns={"cut_i": "cut"})
    return replace_cells(table, longer, ("init", "sender", "cut"), ("accuracy", "correct"), many=True)


# --------------------------------------------------------------------------------------------
# The paired-bootstrap statistics and the self-stitch control


def _boot(table: pd.DataFrame, stat) -> noise.Estimate:
    """The paired bootstrap of ``stat`` over the Correlated test images and the initialisations
    (a noise sender's rows are tested on its own noise test set, one per initialisation and cut,
    resampled on its own)."""
    sets = table.assign(stitch_set=[f"noise seed {k} at {c}" if s == NOISE else "Correlated"
                                    for k, s, c in zip(table.init, table.sender, table.cut)], base_set="Correlated")
    return noise.bootstrap_table(sets, stat, groups="init", columns=ACC,
                                 column_samples={"correct": "stitch_set", "baseline_correct": "base_set"})


def _self_penalty(t: pd.DataFrame) -> float:
    """Largest mean over initialisations of (Digit - Digit stitched into itself) over cuts, in
    points (positive: the self-stitch loses accuracy)."""
    own = t[t.sender == RECEIVER]
    g = own.groupby("cut")
    return controls.largest(100 * (g.baseline.mean() - g.accuracy.mean()))


def _self_control(table: pd.DataFrame) -> Control:
    """The positive control (:func:`stitchkit.verdicts.controls.reaches_receiver`): the Digit receiver
    stitched into itself loses at most 1 point at its worst cut (its interval's upper end), else
    the stitch recipe is too weak to judge. A gain (Smith & Marcu report +1.7 points) is reported,
    not gated."""
    sets = table.assign(stitch_set="Correlated", base_set="Correlated")  # the Digit rows: one test set
    own = sets[sets.sender == RECEIVER]
    # over the test images (the control is about these networks, not the recipe's seeds), bias-corrected
    e = noise.bootstrap_table(own, _self_penalty, columns=ACC, interval="basic",
                              column_samples={"correct": "stitch_set", "baseline_correct": "base_set"})
    return controls.reaches_receiver(e, what="Digit stitched into itself at every cut")


def _worst_margin(senders) -> callable:
    def stat(t: pd.DataFrame) -> float:
        sub = t[t.sender.isin(senders)]
        mean = sub.groupby(["sender", "cut"]).accuracy.mean()
        return 100 * float(mean.min() - t.groupby("init").baseline.first().mean())
    return stat


def _like_for_like(senders) -> callable:
    """Lowest (mean stitched accuracy minus the mean Digit self-stitch at the same cut) over
    ``senders`` and cuts, in points: the comparison with a stitch of the same recipe, which
    absorbs what a stitch adds by itself."""
    def stat(t: pd.DataFrame) -> float:
        own = t[t.sender == RECEIVER].groupby("cut").accuracy.mean()
        mean = t[t.sender.isin(senders)].groupby(["sender", "cut"]).accuracy.mean()
        return 100 * float((mean - own.reindex(mean.index.get_level_values("cut")).to_numpy()).min())
    return stat


# --------------------------------------------------------------------------------------------
# The claims: S-F1B (compatibility_summary), S-F1C (rank_summary), S-FC5 (noise_summary)


def compatibility_summary(table: pd.DataFrame, senders, key: str, text: str, paper: str,
                          longer: pd.DataFrame | None = None,
                          negative: pd.DataFrame | None = None) -> tuple[dict, ClaimSpec]:
    """Numbers and the claim 'every sender in ``senders`` beats the Digit baseline at every
    layer' (mean over initialisations), judged on the interval of the worst margin (test images
    and initialisations: a t interval over few). Kind *compatible*: the positive control (Digit
    into itself), the negative control on ``negative`` (:func:`untrained_into_digit`) and the
    training-length control re-judging it on ``longer`` (:func:`into_digit_longer`); a control
    that was not run fails."""
    # the receiver's own stitches are the positive control, so the claim is judged on the other senders
    senders = [s for s in senders if s != RECEIVER]
    stats = per_layer(table[table.sender.isin(senders)])
    baseline = float(table.groupby(["init"]).baseline.first().mean())
    worst = stats.loc[stats["mean"].idxmin()]
    margin = _boot(table, _worst_margin(senders))
    like = _boot(table, _like_for_like(senders))
    what = f"lowest mean stitched accuracy minus the Digit baseline, over {len(senders)} senders x {len(CUTS)} layers"
    criterion = at_least(margin, 0.0, what, digits=2)
    own = table[table.sender == RECEIVER].groupby("cut", sort=False)
    self_pens = 100 * (own.baseline.mean() - own.accuracy.mean())
    numbers = {"digit_baseline": baseline, f"{key}_worst_accuracy": float(worst["mean"]),
               f"{key}_worst_margin": margin.value, f"{key}_worst_margin_low": margin.low,
               f"{key}_worst_margin_high": margin.high, "longer_factor": LONGER,
               f"{key}_vs_self": like.value, f"{key}_vs_self_low": like.low, f"{key}_vs_self_high": like.high,
               "self_penalty": _self_penalty(table), **controls.gain_numbers("self_stitch", self_pens.to_numpy()),
               "n_seeds": int(table.init.nunique())}
    ctrl = [_self_control(table)]
    if negative is not None:
        neg, neg_numbers = negative_control_over_inits(negative, [RECEIVER])
        ctrl.append(neg)
        numbers.update(neg_numbers)
    else:
        ctrl.append(not_run(controls.NEGATIVE, "an untrained sender stitched into Digit at the last two cuts"))
    if longer is not None:
        long_margin = _boot(longer, _worst_margin(senders))
        numbers[f"{key}_worst_margin_longer"] = long_margin.value
        ctrl.append(controls.training_length(criterion, at_least(long_margin, 0.0, what, digits=2), LONGER))
    else:
        ctrl.append(not_run(controls.LENGTH, f"the verdict re-judged at {LONGER}x the stitch epochs"))
    claim = ClaimSpec(key=key, text=text, criterion=criterion, paper=paper,
                      ours=f"baseline {100 * baseline:.2f}%; lowest {100 * worst['mean']:.2f}% "
                           f"({worst['sender']}, {worst['layer']}); margin {margin.text(2, 'points')}",
                      controls=ctrl, n=int(table.init.nunique()), kind="compatible")
    return numbers, claim


def paired_gap(table: pd.DataFrame, sender: str, other: str, cut: str) -> tuple[noise.Estimate, float]:
    """The rank gap between ``sender`` and ``other`` stitched into the receiver at ``cut``, paired
    by initialisation (initialisation k: its networks and stitches, one draw of the recipe), as
    |mean gap| with its t interval over the k initialisations (k − 1 degrees of freedom; a rank on
    the whole test set varies with the seed far more than with the images, so the images are not
    resampled), and |t| (the gap in units of its standard error; inf when every initialisation
    gives the same gap). Amendment of 2026-12-02 (issue 68): before it the gap was judged without
    an interval, against the sum of the two senders' sds."""
    from scipy import stats

    rank = table[table.cut == cut].set_index(["sender", "init"])["rank"].astype(float)
    d = (rank.loc[sender] - rank.loc[other]).dropna().to_numpy()
    k = len(d)
    mean = float(d.mean())
    sign = 1.0 if mean >= 0 else -1.0
    se = float(d.std(ddof=1)) / np.sqrt(k) if k > 1 else 0.0
    if se == 0.0:
        why = (f"the same gap in each of the {k} initialisations: no spread over them to carry" if k > 1
               else "one initialisation: its spread over initialisations is not measured")
        return noise.exact(abs(mean), n_seeds=k, why=why), float("inf") if mean else 0.0
    half = float(stats.t.ppf(0.5 + noise.LEVEL / 2, k - 1)) * se
    e = noise.Estimate(abs(mean), sign * mean - half, sign * mean + half, None, k,
                       f"t interval over the {k} initialisations (paired by initialisation)")
    return e, abs(mean) / se


def rank_summary(table: pd.DataFrame) -> tuple[dict, ClaimSpec]:
    """S-F1C: at layers 2 and 3 the rank with the Colour and the Correlated sender differs
    significantly from the rank with the Digit sender: each of the four gaps, paired by
    initialisation (:func:`paired_gap`), has its t interval above 0; the claim is judged on the
    least significant of them (the smallest |t|: it clears 0 exactly when all four do)."""
    gaps = {(s, c): paired_gap(table, s, RECEIVER, c) for s in ("Colour", "Correlated") for c in ("layer1", "layer2")}
    worst = min(gaps, key=lambda k: gaps[k][1])
    est = gaps[worst][0]
    stats = per_layer(table, "rank").set_index(["sender", "cut"])
    numbers = {f"rank_gap_{s.lower()}_{CUT_LABELS[c].replace(' ', '').lower()}":
               float(stats.loc[(s, c), "mean"] - stats.loc[(RECEIVER, c), "mean"]) for (s, c) in gaps}
    numbers.update(rank_gap_least=est.value, rank_gap_least_low=est.low, rank_gap_least_high=est.high)
    claim = ClaimSpec(
                key="rank_differs",
                text="At layers 2 and 3 the rank with the Colour and the Correlated sender clearly differs from "
                     "the Digit sender's",
                criterion=more_than(est, 0.0, "|mean rank gap| (paired by initialisation) of the least significant "
                                    "of {Colour, Correlated} x {Layer 2, Layer 3}", unit="", digits=2),
                paper="a clear gap at layers 2 and 3 (Fig. 1c)",
                ours=f"least significant gap {est.text(2)} ({worst[0]} vs {RECEIVER}, {CUT_LABELS[worst[1]]}; "
                     f"|t| {min(gaps[worst][1], 1e6):.2f})",
                n=int(table.init.nunique()), kind="no_stitch")  # a rank: no stitching control (issue 46)
    return numbers, claim


NOISE_RANK_LAYERS = 3  # "at most layers": of the 5 (fixed before any run)


def _outside(t: pd.DataFrame) -> int:
    """Layers where the noise sender's rank (mean ± sd over initialisations) lies outside every
    learned sender's mean ± sd."""
    stats = per_layer(t, "rank").set_index(["sender", "cut"])
    learned = [s for s in t.sender.unique() if s != NOISE]
    outside = 0
    for c in CUTS:
        lo = min(stats.loc[(s, c), "mean"] - stats.loc[(s, c), "sd"] for s in learned)
        hi = max(stats.loc[(s, c), "mean"] + stats.loc[(s, c), "sd"] for s in learned)
        n = stats.loc[(NOISE, c)]
        outside += int(n["mean"] + n["sd"] < lo or n["mean"] - n["sd"] > hi)
    return outside


def noise_summary(table: pd.DataFrame, longer: pd.DataFrame | None = None,
                  negative: pd.DataFrame | None = None) -> tuple[dict, list[ClaimSpec]]:
    """S-FC5: the Colour-only and the Noise senders reach the Digit baseline at every layer
    (*compatible*: the controls of :func:`compatibility_summary`), and the Noise sender's rank
    lies outside the learned senders' range at most layers (*no_stitch*: no stitching control)."""
    numbers_c, claim_c = compatibility_summary(table, ("Colour-only", NOISE), "noise_compatible",
                                               "Colour-only and clustered-noise senders are stitching-compatible "
                                               "with the Digit receiver at every layer",
                                               "full compatibility (Fig. C5a)", longer=longer, negative=negative)
    outside = _outside(table)
    learned = [s for s in table.sender.unique() if s != NOISE]
    # per layer, the noise sender against its least different learned sender (paired by initialisation);
    # "at most layers" (3 of 5): the layer that ranks third by that |t| must be significant
    per = {c: min((paired_gap(table, NOISE, s, c) for s in learned), key=lambda g: g[1]) for c in CUTS}
    third = sorted(CUTS, key=lambda c: per[c][1], reverse=True)[NOISE_RANK_LAYERS - 1]
    est = per[third][0]
    significant = sum(1 for c in CUTS if per[c][0].low > 0)
    claim_r = ClaimSpec(key="noise_rank_differs", text="The noise sender's rank differs from the learned senders'",
                        criterion=more_than(est, 0.0, f"|mean rank gap| (paired by initialisation) between the noise "
                                            f"sender and its nearest learned sender at the layer ranking "
                                            f"{NOISE_RANK_LAYERS}rd of {len(CUTS)} by significance", unit="",
                                            digits=2),
                        paper="rank differs from the learned ones (Fig. C5b)",
                        ours=f"significant at {significant} of {len(CUTS)} layers; the {NOISE_RANK_LAYERS}rd: "
                             f"{CUT_LABELS[third]}, {est.text(2)} (mean ± sd bands apart at {outside} of "
                             f"{len(CUTS)})",
                        n=int(table.init.nunique()),
                        kind="no_stitch")  # a rank: no stitching control (issue 46)
    self_gain = table[(table.sender == RECEIVER) & (table.cut == "stem")]
    numbers = {**numbers_c, "noise_rank_outside_layers": outside,
               "self_stitch_layer1": float(self_gain.accuracy.mean())}
    return numbers, [claim_c, claim_r]
