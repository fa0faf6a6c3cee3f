"""The controls fit their claims and can be passed (issue 46): each control's operating
characteristic at the pages' test sizes, the claim-kind table, and the noise model's intervals
(t intervals over few seeds, the basic interval, no unexplained zero-width interval)."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest

from stitchkit.base import environment
from stitchkit.verdicts import controls, noise
from stitchkit.verdicts.claims import ClaimSpec
from stitchkit.verdicts.results import Run, at_least, at_most, check_verdict

# (test images, cuts of the positive control) of the pages that judge it: the Bansal ResNet-18 (10
# cuts), B-F2A's other architectures (4), the pages' grids of receivers (up to 30 self-stitches)
GEOMETRIES = [(10_000, 4), (10_000, 10), (10_000, 30), (10_000, 100)]


@pytest.mark.parametrize("n, k", GEOMETRIES)
def test_a_perfect_recipe_passes_the_positive_control(n, k):
    # a true self-penalty of 0 at every cut, 4% of the images flipping each way: passes >= 95% of runs
    assert controls.operating_characteristic(n, k, flip=0.04, trials=120, seed=k) >= 0.95


@pytest.mark.parametrize("n, k", GEOMETRIES)
def test_a_recipe_that_loses_two_points_at_one_cut_fails_the_positive_control(n, k):
    assert controls.operating_characteristic(n, k, flip=0.04, loss=0.02, trials=60, seed=k) <= 0.05


def test_at_2000_test_images_even_the_one_sided_control_fails_a_perfect_recipe_too_often():
    # why every page judges on all 10,000 test images
    assert controls.operating_characteristic(2_000, 10, flip=0.04, trials=60) < 0.8


def _negative_pass_rate(true_points: float, n: int = 10_000, trials: int = 60) -> float:
    """Simulated negative control: the untrained sender's per-image losses beyond the self-stitch at
    two late cuts, true mean ``true_points``."""
    rng = np.random.default_rng(int(true_points))
    rs = noise.resampler(n, f"negative-oc:{n}")
    passed = 0
    for _ in range(trials):
        lost = (rng.random((n, 2)) < true_points / 100).astype(float)
        reps = 100 * rs.means(lost).mean(axis=1)
        passed += controls.untrained_sender_fails(noise.from_replicates(reps, n_test=n)).passed
    return passed / trials


def test_the_negative_control_passes_an_untrained_sender_that_fails_and_fails_one_that_works():
    assert _negative_pass_rate(40.0) >= 0.95  # the stitch cannot do the task alone
    assert _negative_pass_rate(10.0) <= 0.05  # the stitch does the task by itself


def test_the_kind_table_names_each_claims_controls():
    assert controls.required("compatible") == ("positive", "negative", "training length")
    assert controls.required("fails") == ("positive", "training length")
    assert controls.required("no_stitch") == ()
    with pytest.raises(ValueError, match="unknown claim kind 'works'.*compatible"):
        controls.required("works")
    with pytest.raises(ValueError, match="unknown claim kind"):
        ClaimSpec("k", "t", at_most(1.0, 2.0, "x"), "p", "o", kind="works")


def test_a_self_stitch_gain_is_reported_and_not_gated():
    e = noise.Estimate(-1.7, -2.2, -1.2)  # Smith & Marcu's Digit into itself: +1.7 points
    assert controls.reaches_receiver(e).passed
    assert controls.gain_numbers("self", [-1.7, -0.2, 0.3]) == {"self_gain": 1.7, "self_worst": 0.3}


def _seed_table(accs, n=2000):
    return pd.DataFrame([{"init": k, "correct": np.random.default_rng(k).random(n) < a} for k, a in enumerate(accs)])


def test_few_seeds_give_a_t_interval_wider_than_the_percentile_one():
    t = _seed_table((0.80, 0.85, 0.90))
    e = noise.bootstrap_table(t, lambda u: u.accuracy.mean(), groups="init")
    assert e.method.startswith("t interval over 3 seeds") and e.n_seeds == 3
    # the seeds' spread alone: sd 0.05, se 0.029, t(2) = 4.30: half-width at least 0.12
    assert e.high - e.value > 0.12 and e.value - e.low > 0.12
    many = _seed_table(np.linspace(0.8, 0.9, 12))
    assert noise.bootstrap_table(many, lambda u: u.accuracy.mean(), groups="init").method.startswith("paired bootstrap")


def test_a_t_interval_over_two_seeds_covers_the_truth():
    # two seeds of one recipe (true accuracy 0.8, seed sd 2 points): 40 experiments, the 95% t interval
    # misses about twice; a [min, max] percentile interval would miss about half the time
    misses = 0
    for s in range(40):
        rng = np.random.default_rng(100 + s)
        accs = 0.8 + rng.normal(0, 0.02, size=2)
        t = pd.DataFrame([{"init": k, "correct": rng.random(2000) < a} for k, a in enumerate(accs)])
        e = noise.bootstrap_table(t, lambda u: u.accuracy.mean(), groups="init")
        misses += not (e.low <= 0.8 <= e.high)
    assert misses <= 5


def test_an_interval_that_excludes_its_estimate_becomes_the_basic_interval():
    reps = np.concatenate([[1.0], np.linspace(1.1, 1.5, 200)])  # every resample above the estimate
    e = noise.from_replicates(reps, n_test=100)
    assert "basic interval" in e.method and e.low == pytest.approx(0.5, abs=0.02) and e.high == 1.0
    assert e.low <= e.value <= e.high  # an interval always contains its estimate
    with pytest.raises(ValueError, match="unknown interval 'bca'; valid: percentile, basic"):
        noise.from_replicates(reps, n_test=100, interval="bca")


def test_a_zero_width_interval_needs_a_reason():
    run = Run("S-4.2", "demo", {})
    bare = run.claim("bare", "t", criterion=at_least(66.7, 50.0, "share"), paper="p", ours="o")
    said = run.claim("said", "t", criterion=at_least(noise.exact(3, why="a count of layers (no sampling noise)"), 1,
                                                     "layers"), paper="p", ours="o")
    assert bare.verdict == "inconclusive at this scale" and "zero-width" in bare.reason
    assert said.verdict == "reproduced"
    # a stated reason may say "interval" or "bootstrap" (the pages' own reasons do)
    from stitchkit.experiments.hernandez.judging import NO_IMAGES
    from stitchkit.experiments.smith.config import RANK_NOISE

    for why in (NO_IMAGES, RANK_NOISE):
        c = run.claim(f"r{len(run.claims)}", "t", criterion=at_least(noise.exact(5, why=why), 1, "x"), paper="p",
                      ours="o")
        assert c.verdict == "reproduced", why
    # a resampled interval that collapsed is not a reason
    collapsed = noise.from_replicates(np.full(21, 66.7), n_test=100)
    assert run.claim("collapsed", "t", criterion=at_least(collapsed, 50, "share"), paper="p",
                     ours="o").verdict == "inconclusive at this scale"
    for c in run.to_dict()["claims"]:
        check_verdict(c, "demo")


def test_the_glossary_shows_the_kind_table_of_the_code():
    from stitchkit.base import paths

    text = (paths.BOOK_DIR / "glossary.md").read_text()
    for kind, needs in controls.KINDS.items():
        row = next(line for line in text.splitlines() if line.strip().startswith(f"| {kind} |"))
        cells = [c.strip() for c in row.strip().strip("|").split("|")]
        assert cells[2:] == ["yes" if k in needs else "no" for k in controls.STITCH_CONTROLS], kind


def _claim(kind, holds, control_kind, passed=False):
    from stitchkit.verdicts.results import Claim, Control

    ctl = Control("a control", "c", "v", passed, None, control_kind)
    return Claim("k", "t", "crit", "p", "o", holds, "demo", (ctl,), kind=kind)


@pytest.mark.parametrize("kind, holds, control, verdict", [
    # a recipe that cannot reach the receiver makes stitches worse: it can make 'fails' hold, 'works' fail
    ("fails", False, "positive", "not reproduced"),
    ("fails", True, "positive", "inconclusive at this scale"),
    ("compatible", True, "positive", "reproduced"),
    ("compatible", False, "positive", "inconclusive at this scale"),
    # a stitch that does the task alone makes them better: the reverse
    ("compatible", True, "negative", "inconclusive at this scale"),
    ("compatible", False, "negative", "not reproduced"),
    ("fails", False, "negative", "inconclusive at this scale"),
    ("fails", True, "negative", "reproduced"),
    # both directions where the kind or the control could bias either way
    ("improves", True, "positive", "inconclusive at this scale"),
    ("improves", False, "negative", "inconclusive at this scale"),
    ("stitch_other", False, "positive", "inconclusive at this scale"),
    ("compatible", True, "training length", "inconclusive at this scale"),
    ("fails", False, "", "inconclusive at this scale"),
    ("", False, "positive", "inconclusive at this scale"),
    ("fails", None, "positive", "inconclusive at this scale"),
    # a premise without which the claim holds by construction gates a claim found to hold, of any kind, only
    ("stitch_other", True, "guarantee", "inconclusive at this scale"),
    ("stitch_other", False, "guarantee", "not reproduced"),
    ("compatible", True, "guarantee", "inconclusive at this scale"),
    ("fails", False, "guarantee", "not reproduced"),
])
def test_a_failed_control_gates_only_the_outcome_it_could_have_produced(kind, holds, control, verdict):
    from dataclasses import asdict

    from stitchkit.verdicts.gating import NOT_GATING
    from stitchkit.verdicts.results import check_verdict, claims_html

    claim = _claim(kind, holds, control)
    assert claim.verdict == verdict
    record = {**asdict(claim), "verdict": claim.verdict, "reason": claim.reason}
    check_verdict(record, "demo")  # the recorded form agrees with the rule
    shown = claims_html([record])
    assert "control ✗" in shown  # a failed control is always shown
    assert (NOT_GATING in shown) == (verdict in ("reproduced", "not reproduced"))


def test_a_widened_interval_stays_in_the_statistics_range():
    e = noise.Estimate(0.92, 0.916, 0.924, 2000)
    wide = noise.with_seed_component(e, 0.03, 5, networks=2, bounds=(0.0, 1.0))
    assert wide.high == 1.0 and wide.low < 0.9 and wide.value == 0.92
    assert noise.with_seed_component(e, 0.03, 5, networks=2).high > 1.0  # unbounded, as for points


# --------------------------------------------------------------------------------------------
# Exact binomial bounds of a count at its limit (issue 68, item 4; amendment of 2026-12-02)


def test_the_exact_binomial_interval_matches_its_closed_forms_at_the_limits():
    a = (1 - noise.LEVEL) / 2
    assert noise.clopper_pearson(24, 24) == pytest.approx((a ** (1 / 24), 1.0))  # the referee's 85.8%
    assert noise.clopper_pearson(24, 24)[0] == pytest.approx(0.8575, abs=1e-4)
    assert noise.clopper_pearson(0, 16) == pytest.approx((0.0, 1 - a ** (1 / 16)))
    with pytest.raises(ValueError, match="successes"):
        noise.clopper_pearson(25, 24)
    with pytest.raises(ValueError, match="n >= 1"):
        noise.clopper_pearson(0, 0)


@pytest.mark.parametrize("n", [12, 24, 40])
@pytest.mark.parametrize("rate", [0.5, 0.86, 0.95])
def test_the_exact_binomial_interval_covers_the_true_rate_at_least_at_its_level(n, rate):
    # exact: the coverage over every possible count, weighted by its probability, is >= 95%
    from scipy import stats

    k = np.arange(n + 1)
    covered = np.array([lo <= rate <= hi for lo, hi in (noise.clopper_pearson(int(x), n) for x in k)])
    assert float(stats.binom.pmf(k, n, rate)[covered].sum()) >= noise.LEVEL


def test_a_perfect_measure_can_clear_a_90_percent_bar_from_36_cases_on_and_not_before():
    need = noise.cases_to_decide(0.90)
    assert need == 36
    assert noise.clopper_pearson(need, need)[0] > 0.90 >= noise.clopper_pearson(need - 1, need - 1)[0]
    bar = at_least(noise.with_count_bound(noise.exact(100.0, why="every case"), need), 90.0, "x", unit="%")
    short = at_least(noise.with_count_bound(noise.exact(100.0, why="every case"), need - 1), 90.0, "x",
                             unit="%")
    assert bar.holds is True and short.holds is None  # within noise below 36 cases, never "not reproduced"


def test_a_count_at_its_limit_is_widened_and_one_off_it_is_left_alone():
    at = noise.with_count_bound(noise.exact(100.0, n_seeds=3, why="every case"), 24)
    assert at.high == 100.0 and at.low == pytest.approx(85.75, abs=0.01) and "24 of 24" in at.describe()
    none = noise.with_count_bound(noise.Estimate(0.0, 0.0, 3.0, 100, 1, "paired bootstrap"), 16)
    assert none.low == 0.0 and none.high == pytest.approx(100 * (1 - 0.025 ** (1 / 16))) and "around paired bootstrap" in none.method
    off = noise.Estimate(87.5, 80.0, 95.0, 100, 1, "paired bootstrap")
    assert noise.with_count_bound(off, 24) is off


# --------------------------------------------------------------------------------------------
# Network-to-network variance with both networks varied (issue 68, item 1)


def test_the_crossed_spread_recovers_its_parts_on_a_large_design():
    g = np.random.default_rng(0)
    x = 2.0 * g.normal(size=(60, 1)) + 0.5 * g.normal(size=(1, 60)) + 0.3 * g.normal(size=(60, 60))
    c = noise.crossed_spread(x)
    assert np.sqrt(c.var_receiver) == pytest.approx(2.0, rel=0.25)
    assert np.sqrt(c.var_sender) == pytest.approx(0.5, rel=0.25) and np.sqrt(c.var_pair) == pytest.approx(0.3, rel=0.1)
    assert c.sd == pytest.approx(np.sqrt(4 + 0.25 + 0.09), rel=0.25) and "receivers and senders both varied" in c.text()
    with pytest.raises(ValueError, match="2 receivers x 2 senders"):
        noise.crossed_spread(x[:1])
    with pytest.raises(ValueError, match="finite"):
        noise.crossed_spread(np.array([[1.0, np.nan], [2.0, 3.0]]))


@pytest.mark.parametrize("receivers, senders", [(3, 5), (2, 5)])
@pytest.mark.parametrize("sd_r, sd_s, sd_e", [(2.0, 0.5, 0.3), (0.5, 2.0, 0.3), (0.0, 0.0, 1.0), (3.0, 0.0, 0.1)])
def test_a_new_pairs_interval_from_the_crossed_spread_covers_the_recipes_mean(receivers, senders, sd_r, sd_s, sd_e):
    # the operating characteristic: a page's one pair, widened by t(df) x the spread measured on other
    # pairs, covers the recipe's mean at least 94% of the time (95% within simulation noise), whichever
    # network's seed dominates; a sender-only spread (one fixed receiver) does not where receivers dominate
    from scipy import stats

    g = np.random.default_rng(receivers * 100 + int(10 * sd_r))
    hit, sender_only = [], []
    for _ in range(1500):
        x = sd_r * g.normal(size=(receivers, 1)) + sd_s * g.normal(size=(1, senders)) + sd_e * g.normal(
            size=(receivers, senders))
        c = noise.crossed_spread(x)
        new = sd_r * g.normal() + sd_s * g.normal() + sd_e * g.normal()
        e = noise.with_seed_component(noise.exact(new, why="x"), c.sd, receivers * senders, df=c.df)
        hit.append(e.low <= 0 <= e.high)
        half = stats.t.ppf(0.975, senders - 1) * x[0].std(ddof=1)
        sender_only.append(abs(new) <= half)
    assert np.mean(hit) >= 0.94
    if sd_r >= 4 * sd_s and sd_r > 1:
        assert np.mean(sender_only) < 0.85


def test_the_cluster_bootstrap_over_layer_cases_covers_the_architectures_rate():
    """J-T1's percentages count layer cases of one pair of networks, and which layers an
    architecture offers is a sample too: each layer j is identified with its own probability
    p_j (drawn from a population of layers), so the rate the claim is about is E[p]. Drawing the
    layer cases with replacement, with the expanded percentile interval for their number (the
    exact count bound at a limit), covers it near its level; with the cases fixed (no resample
    moves a count) it almost never does, and the plain percentile interval falls short."""
    from stitchkit.experiments.balogh import identification_verdicts as iv

    noise.use_resamples(400)
    try:
        rng = np.random.default_rng(7)
        for layers, rate, conc in ((12, 0.6, 4.0), (12, 0.3, 4.0), (16, 0.8, 6.0)):
            expanded = plain = fixed = 0
            trials = 300  # the bar: 95% less three standard errors of a coverage over 300 trials (0.91)
            for _ in range(trials):
                y = rng.random(layers) < rng.beta(rate * conc, (1 - rate) * conc, size=layers)
                reps = iv._pct({("A", "B"): np.broadcast_to(y, (noise.RESAMPLES + 1, layers))}, False, networks=False)
                e = noise.with_count_bound(noise.from_replicates(reps, n_test=None, clusters=layers), layers)
                p = noise.from_replicates(reps, n_test=None)
                f = noise.with_count_bound(noise.exact(reps[0]), layers)
                expanded += e.low <= 100 * rate <= e.high
                plain += p.low <= 100 * rate <= p.high
                fixed += f.low <= 100 * rate <= f.high
            assert expanded / trials >= 0.91, (layers, rate, expanded / trials)
            assert expanded >= plain and fixed / trials < 0.3
    finally:
        noise.use_resamples(environment.resamples_from_env(1000))


def test_the_expanded_percentile_tail_shrinks_with_few_units_and_tends_to_the_plain_one():
    assert noise.expanded_tail(12) < noise.expanded_tail(100) < 0.025
    assert abs(noise.expanded_tail(100_000) - 0.025) < 1e-3
    with pytest.raises(ValueError, match="at least 2 clusters"):
        noise.expanded_tail(1)
