"""Bansal et al. Figure 2A, 4, 5, 8, 9: the verdicts, judged beyond the receiver stitched into itself on
paired-bootstrap intervals, with the two-sided self-stitch control and like-for-like length controls."""

from dataclasses import replace

import numpy as np
import pandas as pd
import pytest
from per_image import BASE, N, stitched  # tests/ is on sys.path (no __init__.py)

from stitchkit.experiments.bansal import common, f2a, f4_f5, f8, f9, length, seeds
from stitchkit.measures.similarity import CKABootstrap
from stitchkit.networks import network, zoo
from stitchkit.stitching import grid_spec
from stitchkit.stitching import longer as longer_mod
from stitchkit.stitching.grid_spec import LONGER
from stitchkit.verdicts import noise
from stitchkit.verdicts.results import Run

CUTS = ["stem", "block1", "block3", "block5", "pool"]


def row(sender, cut, p, **extra):
    c = stitched(p)
    return {"sender": sender, "receiver": "receiver", "cut": cut, "accuracy": c.mean(), "receiver_accuracy": 0.5,
            "penalty": 0.5 - c.mean(), "dm_penalty": 0.5 - c.mean(), "correct": c, "receiver_correct": BASE,
            "dm_correct": c, **extra}


def _rows(sender, penalties, arch=None, cuts=CUTS):
    return [row(sender, c, p, **({"arch": arch} if arch else {})) for c, p in zip(cuts, penalties)]


MODELS = {"receiver_accuracy_full_test": 0.5, "sender_accuracy_full_test": 0.5, "receiver_train_seconds": 60.0,
          "receiver_images_per_second": 100.0}


def test_connectivity_is_judged_beyond_the_self_stitch_and_a_self_stitch_gain_is_not_gated():
    # an under-trained receiver: the stitch alone gains 5 points at every cut; the second seed's raw
    # penalty (-1) looks connected, but beyond the self-stitch it is 4 points: not connected. The
    # gain is subtracted (beyond the self-stitch), reported, and not gated a second time (issue 46)
    table = pd.DataFrame(_rows(common.SELF, [-5] * 5) + _rows(common.TRAINED, [-1] * 5)
                         + _rows(common.RANDOM, [-4, 5, 20, 40, 45]))
    numbers, claims = common.connectivity_summary(table, MODELS)
    by = {c.key: c for c in claims}
    assert numbers["trained_max_penalty"] == pytest.approx(-1) and numbers["trained_max_penalty_beyond"] == pytest.approx(4)
    assert by["connected"].criterion.holds is False and "beyond the receiver" in by["connected"].criterion.text
    assert numbers["trained_max_penalty_beyond_low"] > 3  # the interval lies above the bound
    assert by["connected"].controls[0].passed and by["connected"].controls[0].kind == "positive"
    assert "loses at most 1 points" in by["connected"].controls[0].text
    assert numbers["random_first_penalty_beyond"] == pytest.approx(1) and by["random_early"].criterion.holds
    assert numbers["random_late_penalty_beyond"] == pytest.approx(47.5) and by["random_late"].criterion.holds
    assert numbers["control_largest_penalty"] == pytest.approx(-5)
    assert numbers["self_stitch_gain"] == pytest.approx(5)


def test_b_f2a_plots_what_its_claims_judge_with_bands_and_one_sided_bounds():
    """Issue 64, item 2: B-F2A plotted the raw penalty, while its verdicts judge the penalty beyond
    the self-stitch; its first figure now plots that, each series with its 95% band (the claims'
    bootstrap), and each bound one-sided, the failing side shaded."""
    import matplotlib

    matplotlib.use("Agg")
    table = pd.DataFrame(_rows(common.SELF, [-5] * 5) + _rows(common.TRAINED, [-1] * 5)
                         + _rows(common.RANDOM, [-4, 5, 20, 40, 45]))
    fig = f2a.plot_judged(table, {"width": 8})
    ax = fig.axes[0]
    lines = {l.get_label(): l for l in ax.get_lines()}
    trained = lines["trained sender (seed 1) (95% band)"]
    assert np.allclose(trained.get_ydata(), 4.0)  # -1 raw, beyond a self-stitch at -5: 4 points at every cut
    assert np.allclose(lines["untrained bottom (95% band)"].get_ydata(), [1, 10, 25, 45, 50])
    assert len(ax.collections) == 2 + 3  # a band per series, a shaded failing side per bound
    bound = lines["connected (paper: Table 1) (<= 3)"]
    assert np.allclose(bound.get_ydata(), 3.0) and "penalty beyond the self-stitch" in ax.get_ylabel()
    import matplotlib.pyplot as plt

    plt.close(fig)


@pytest.mark.parametrize("self_pen, passes", [(0, True), (0.5, True), (-3, True), (2, False), (0.95, False)])
def test_the_positive_control_passes_only_below_its_bound_one_sided(self_pen, passes):
    # 0.95 points lies inside the 1-point bound, but its interval reaches past it: not shown; a gain passes
    table = pd.DataFrame(_rows(common.SELF, [0, 0, self_pen, 0, 0]) + _rows(common.TRAINED, [1] * 5)
                         + _rows(common.RANDOM, [1, 5, 20, 40, 45]))
    _, claims = common.connectivity_summary(table, MODELS)
    assert claims[0].controls[0].passed is passes


def test_a_maximum_near_its_bound_is_within_noise():
    # 2.9 points beyond the self-stitch at two cuts: the maximum's interval contains the 3-point bound
    table = pd.DataFrame(_rows(common.SELF, [0] * 5) + _rows(common.TRAINED, [1, 2.9, 2.9, 1, 0])
                         + _rows(common.RANDOM, [1, 5, 20, 40, 45]))
    numbers, claims = common.connectivity_summary(table, MODELS)
    assert claims[0].criterion.holds is None
    assert numbers["trained_max_penalty_beyond_low"] < 3 < numbers["trained_max_penalty_beyond_high"]
    # bootstrapped as a maximum: resampling noise pushes it up, so the interval sits above a cut's own
    assert numbers["trained_max_penalty_beyond_high"] - 2.9 > 2.9 - numbers["trained_max_penalty_beyond_low"]


def test_every_architecture_is_judged_beyond_its_own_self_stitch():
    table = pd.DataFrame(_rows(common.SELF, [-5] * 5, "vit") + _rows(common.TRAINED, [-3, -2.5, -2.5, -3, -4], "vit")
                         + _rows(common.SELF, [0.2] * 5, "myrtle") + _rows(common.TRAINED, [1, 2, 2, 1, 0], "myrtle"))
    models = {a: {"sender_accuracy_full_test": 0.5} for a in ("vit", "myrtle")}
    numbers, claims = f2a.architectures_summary(table, models)
    assert numbers["vit_max_penalty_beyond"] == pytest.approx(2.5) and numbers["myrtle_max_penalty_beyond"] == pytest.approx(1.8)
    assert [c.criterion.holds for c in claims] == [True, True]
    assert "self-stitch -5.00 to -5.00" in claims[0].ours
    # the ViT's self-stitch gains 5 points by itself: reported (the gain), not gated (issue 46)
    assert [c.controls[0].passed for c in claims] == [True, True]
    assert numbers["vit_self_stitch_gain"] == pytest.approx(5)
    # no untrained network was stitched into these receivers: the negative control says so and fails
    assert [c.controls[1].kind for c in claims] == ["negative", "negative"] and not claims[0].controls[1].passed


def _kernel_table(pens_by_kernel, self_pen=0.0, cuts=CUTS):
    rows = []
    for k, pens in pens_by_kernel:
        rows += [row(common.TRAINED, c, p, kernel_size=k) for c, p in zip(cuts, pens)]
        rows += [row(common.SELF, c, self_pen, kernel_size=k) for c in cuts[:len(pens)]]
    return pd.DataFrame(rows)


def test_kernel_size_spread_and_worst_kernel():
    table = _kernel_table(((1, [1, 2, 4, 1]), (3, [0, 0.5, 0, 0]), (5, [0, 0, 0.5, 0.5])))
    numbers, claims = f4_f5.kernel_sizes_summary(table)
    assert numbers["max_spread"] == pytest.approx(4) and claims[0].criterion.holds is False
    assert numbers["max_spread_low"] > 2
    assert numbers["worst_kernel"] == 1 and numbers["worst_kernel_mean_penalty"] == pytest.approx(2)
    assert numbers["other_kernels_mean_penalty"] == pytest.approx(0.1875)
    assert claims[0].controls[0].passed
    _, claims = f4_f5.kernel_sizes_summary(_kernel_table(((1, [1, 2, 4, 1]), (3, [0, 0.5, 0, 0])), self_pen=-0.8))
    assert claims[0].controls[0].passed  # a k x k self-stitch that gains 0.8 points: a gain, not gated


def test_kernel_lr_rules_scale_only_the_larger_kernels():
    cfg = f4_f5.PRESETS_F4["demo"]
    base = cfg.recipe().train.lr
    assert replace(cfg, kernel_lr="same").kernel_recipe(9).train.lr == base
    assert replace(cfg, kernel_lr="over_k").kernel_recipe(3).train.lr == pytest.approx(base / 3)
    over_k2 = replace(cfg, kernel_lr="over_k2")
    assert over_k2.kernel_recipe(9).train.lr == pytest.approx(base / 81) and over_k2.kernel_recipe(9).kernel_size == 9
    # the 1x1 stitch is B-F2A's under every rule (read from its cache)
    assert over_k2.kernel_recipe(1) == replace(cfg.recipe(), kernel_size=1)


def _grid_rows(senders_pens: dict, pairs) -> pd.DataFrame:
    """What a (monkeypatched) stitch grid returns: one row per sender and cut pair."""
    return pd.DataFrame([{**row(s, a, senders_pens[s][a]), "cut_i": a, "cut_j": a} for s in senders_pens
                         for a, _ in pairs]).drop(columns=["cut"])


def test_kernel_length_control_retrains_the_two_kernels_that_set_the_spread(monkeypatch):
    table = _kernel_table(((1, [0, 4, 1]), (3, [0, 1, 0.5]), (9, [0.5, 2, 0])))
    numbers, claims = f4_f5.kernel_sizes_summary(table)
    assert claims[0].criterion.holds is False  # 3 points at block1 (kernel 1 vs 3)
    cfg = f4_f5.PRESETS_F4["demo"]
    seen = []

    def longer_grid(senders, receivers, pairs, recipe, data, **kw):
        assert recipe.train.epochs == LONGER * cfg.recipe().train.epochs
        seen.append((pairs, recipe.kernel_size))
        return _grid_rows({common.TRAINED: {"block1": {1: 2.5, 3: 1.0}[recipe.kernel_size]}}, pairs)

    monkeypatch.setattr(longer_mod, "stitch_grid", longer_grid)
    out = f4_f5.kernel_length_control(cfg, table, claims)
    assert seen == [([("block1", "block1")], 1), ([("block1", "block1")], 3)]
    # at 4x: kernels 1, 3 and (1x) 9 at block1 give 2.5, 1.0, 2.0: a spread of 1.5, within 2: the
    # claim turns, the stitches were short, and the control fails
    assert not claims[0].controls[-1].passed and "re-judged" in claims[0].controls[-1].text
    assert list(out["4x epochs (points)"].round(2)) == [2.5, 1.0]


def _ft_table(trained_ft, top=0.70, n=N):
    """B-F8's table: top into itself, trained and random bottoms at two cuts, with per-image results."""
    top_c = np.arange(n) < int(top * n)

    def acc(a):
        return np.arange(n) < int(round(a * n))

    rows = [{"bottom": "trained top into itself (control)", "cut": c, "penalty": 0.0, "fine-tuned": float("nan"),
             "stitched": top, "top accuracy": top, "correct": top_c, "receiver_correct": top_c,
             "finetuned_correct": None} for c in ("b1", "b2")]
    rows += [{"bottom": "trained bottom", "cut": c, "penalty": 0.01, "fine-tuned": a, "stitched": top - 0.01,
              "top accuracy": top, "correct": acc(top - 0.01), "receiver_correct": top_c, "finetuned_correct": acc(a)}
             for c, a in zip(("b1", "b2"), trained_ft)]
    rows += [{"bottom": "random bottom", "cut": c, "penalty": 0.3, "fine-tuned": 0.4, "stitched": top - 0.3,
              "top accuracy": top, "correct": acc(top - 0.3), "receiver_correct": top_c, "finetuned_correct": acc(0.4)}
             for c in ("b1", "b2")]
    return pd.DataFrame(rows)


def test_finetune_control_needs_every_cut_fine_tuned_long_enough():

    numbers, claims = f8.finetune_summary(_ft_table([0.70, 0.62]), {"trained top": 0.70})
    assert numbers["finetune_shortfall"] == pytest.approx(8.0)  # the worse cut counts, not the better
    assert not claims[0].controls[1].passed and claims[0].controls[0].passed
    numbers, claims = f8.finetune_summary(_ft_table([0.70, 0.68]), {"trained top": 0.70})
    assert claims[0].controls[1].passed and numbers["finetune_gap"] == pytest.approx(29.0)
    assert numbers["stitch_gap"] == pytest.approx(29.0) and claims[1].criterion.holds
    assert numbers["finetune_gap_low"] > 5 and claims[0].criterion.holds is False


def test_training_length_control_retrains_the_deciding_cells_and_their_self_stitches(monkeypatch):
    # connected fails (4 points at block3); the random bottom is low at the stem and high late: every
    # decided claim is re-judged (the self-stitch, the reference, is retrained too and may move either way)
    table = pd.DataFrame(_rows(common.SELF, [0] * 5) + _rows(common.TRAINED, [1, 2, 4, 3, 0])
                         + _rows(common.RANDOM, [1, 5, 20, 40, 45]))
    _, claims = common.connectivity_summary(table, MODELS)
    cfg = f2a.PRESETS_F2A["demo"]
    checks = f2a._length_checks(cfg, table, claims)
    assert [(c.claim, c.parts[0].cells) for c in checks] == [
        ("connected", ((common.TRAINED, ("block3", "block5")),)), ("random_early", ((common.RANDOM, ("stem",)),)),
        ("random_late", ((common.RANDOM, ("block5", "pool")),))]
    seen = []

    def longer_grid(senders, receivers, pairs, recipe, data, **kw):  # the stitches, retrained longer
        assert recipe.train.epochs == LONGER * cfg.recipe().train.epochs
        seen.append([s.name for s in senders])
        # at 4x the self-stitch gains 1 point at block3 (was 0): beyond it the sender costs 2.5 + 1 = 3.5 there
        pen = {common.TRAINED: {"block3": 2.5, "block5": 2.5}, common.RANDOM: {"stem": 1.0, "block5": 39, "pool": 44},
               common.SELF: {"stem": 0.0, "block3": -1.0, "block5": 0.0, "pool": 0.0}}
        return _grid_rows({s.name: pen[s.name] for s in senders}, pairs)

    monkeypatch.setattr(longer_mod, "stitch_grid", longer_grid)
    out = f2a.training_length_control(cfg, (table, claims))
    # the reference retrained too, at the same cuts
    assert seen == [[common.SELF], [common.TRAINED], [common.SELF], [common.RANDOM], [common.SELF], [common.RANDOM]]
    by = {c.key: c for c in claims}
    # like for like: 2.5 points at 4x alone would turn the claim, but beyond the 4x self-stitch it is
    # 3.5: still not connected, and the verdict survives
    assert by["connected"].controls[-1].passed
    assert by["random_late"].controls[-1].passed  # 41.5 points at 4x: still high
    assert len(by["random_early"].controls) == 3 and by["random_early"].controls[-1].passed  # still low
    assert list(out["4x epochs (points)"].round(2)) == [3.0, 1.0, 41.5]  # block3 and block5 (both past 2), mean
    assert list(out["self-stitch 4x (points)"].round(2)) == [-0.5, 0.0, 0.0]


def test_the_length_control_replaces_each_claim_in_the_list_that_holds_it(monkeypatch):
    """B-F2A hands its own claims and its other architectures' as two lists and records both: each
    claim's copy with its control takes its place in its own list; the claims themselves never
    change (they are frozen)."""
    table = pd.DataFrame(_rows(common.SELF, [0] * 5) + _rows(common.TRAINED, [1, 2, 4, 3, 0])
                         + _rows(common.RANDOM, [1, 5, 20, 40, 45]))
    _, claims = common.connectivity_summary(table, MODELS)
    checks = f2a._length_checks(f2a.PRESETS_F2A["demo"], table, claims)
    monkeypatch.setattr(longer_mod, "stitch_grid", lambda senders, receivers, pairs, *a, **kw: _grid_rows(
        {s.name: {c: 0.0 for c, _ in pairs} for s in senders}, pairs))
    before = list(claims)
    base, others = claims[:1], claims[1:]
    length.retrain_longer(checks, base, others)
    assert [c.key for c in base] == ["connected"] and [c.key for c in others] == ["random_early", "random_late"]
    assert [len(c.controls) for c in base + others] == [3, 3, 2]
    assert [len(c.controls) for c in before] == [2, 2, 1] and claims == before


def test_a_claim_already_inconclusive_still_gets_its_length_control():
    # the recipe cannot reach the receiver (2 points lost at every cut): every claim is undecided, and
    # still every stitching verdict gets its training-length control (issue 46)
    table = pd.DataFrame(_rows(common.SELF, [2] * 5) + _rows(common.TRAINED, [1, 2, 4, 3, 0])
                         + _rows(common.RANDOM, [1, 5, 20, 40, 45]))
    _, claims = common.connectivity_summary(table, MODELS)
    assert not claims[0].controls[0].passed
    assert [c.claim for c in f2a._length_checks(f2a.PRESETS_F2A["demo"], table, claims)] == [
        "connected", "random_early", "random_late"]


def test_swap_grid_rows_swaps_one_stitch_and_keeps_the_rest():
    table = pd.DataFrame(_rows(common.SELF, [0] * 5) + _rows(common.TRAINED, [1, 2, 4, 3, 0]))
    new = _grid_rows({common.TRAINED: {"block3": 2.0}}, [("block3", "block3")])
    out = length.swap_grid_rows(table, new)
    pen = out.set_index(["sender", "cut"]).penalty
    assert pen[(common.TRAINED, "block3")] == pytest.approx(0.02) and pen[(common.TRAINED, "block5")] == pytest.approx(0.03)
    assert out.correct[7].sum() == stitched(2.0).sum() and len(out) == len(table)


def test_swap_grid_rows_matches_the_receiver_when_the_table_has_several():
    a = [{**r, "receiver": "x1"} for r in _rows(common.SELF, [0] * 5) + _rows("other", [1, 2, 4, 3, 0])]
    b = [{**r, "receiver": "x2"} for r in _rows(common.SELF, [0] * 5) + _rows("other", [5, 5, 5, 5, 5])]
    table = pd.DataFrame(a + b)
    new = _grid_rows({"other": {"block3": 9.0}}, [("block3", "block3")]).assign(receiver="x2")
    pen = length.swap_grid_rows(table, new).set_index(["receiver", "sender", "cut"]).penalty
    assert pen[("x2", "other", "block3")] == pytest.approx(0.09)
    assert pen[("x1", "other", "block3")] == pytest.approx(0.04)  # the other top's cell untouched
    with pytest.raises(ValueError, match="receiver='x3'"):
        length.swap_grid_rows(table, new.assign(receiver="x3"))


def test_cka_bootstrap_is_the_cka_of_resampled_images_without_pairs_of_copies():
    from stitchkit.measures import similarity

    g = np.random.default_rng(0)
    x, y = g.normal(size=(60, 5)), g.normal(size=(60, 7))
    y[:, :3] += x[:, :3]
    ka, kb = similarity.centered_gram(x), similarity.centered_gram(y)
    boot = CKABootstrap(60, name="test-cka")
    reps = boot.replicates(ka, kb)
    assert len(reps) == noise.RESAMPLES + 1 and reps[0] == pytest.approx(similarity.cka_from_grams(ka, kb))
    counts = noise.resampler(60, "test-cka").counts
    K, L = ka.numpy(), kb.numpy()

    def hsic(A, B, idx):  # the resample's biased HSIC, less the pairs of two copies of one image
        a, b = A[np.ix_(idx, idx)], B[np.ix_(idx, idx)]
        h = np.eye(len(idx)) - 1 / len(idx)
        copies = (idx[:, None] == idx[None, :]) & ~np.eye(len(idx), dtype=bool)
        return (h @ a @ h * b).sum() - (a * b)[copies].sum()

    for r in (0, 7, 99):
        idx = np.repeat(np.arange(60), counts[r].astype(int))
        want = hsic(K, L, idx) / np.sqrt(hsic(K, K, idx) * hsic(L, L, idx))
        assert reps[r + 1] == pytest.approx(want, rel=1e-9)
    assert np.allclose(boot.replicates(ka, ka), 1.0)
    # wide, nearly orthogonal features: pairs of copies would push every replicate far above the CKA
    x, y = g.normal(size=(400, 256)), g.normal(size=(400, 256))
    y += x
    boot = CKABootstrap(400, name="test-cka-wide")
    reps = boot.replicates(similarity.centered_gram(x), similarity.centered_gram(y))
    assert abs(reps[1:].mean() - reps[0]) < 0.3 * reps[1:].std()


def test_random_vs_trained_judges_cka_on_its_bootstrap():
    cuts = CUTS
    rows = (_rows(common.SELF, [0] * 5) + _rows(common.TRAINED, [1, 1, 2, 2, 1])
            + _rows(common.RANDOM, [1, 5, 20, 40, 45]))
    table = pd.DataFrame(rows)
    cka = {common.SELF: [1] * 5, common.TRAINED: [0.9] * 5, common.RANDOM: [0.9, 0.7, 0.4, 0.2, 0.1]}
    g = np.random.default_rng(1)
    table["cka"] = [cka[s][cuts.index(c)] for s, c in zip(table.sender, table.cut)]
    table["cka_reps"] = [np.r_[v, v + 0.01 * g.normal(size=noise.RESAMPLES)] for v in table.cka]
    table["cka_n"] = 2000
    numbers, claims = f4_f5.random_vs_trained_summary(table, MODELS)
    by = {c.key: c for c in claims}
    assert by["random_early_cka"].criterion.holds and numbers["random_cka_first_low"] > 0.85
    assert by["same_trend"].criterion.holds and numbers["random_rho_penalty_cka"] == pytest.approx(-1)


def _freeze_metrics(full, few, frz, n=N):

    def acc(a):
        return np.arange(n) < int(round(a * n))

    rows = []
    for sender, receiver in ((f9.SELF, full), (f9.A, full), (f9.B, few)):
        for c in CUTS:
            rc = acc(receiver)
            rows.append({"sender": sender, "cut": c, "accuracy": receiver, "receiver_accuracy": receiver,
                         "penalty": 0.0, "correct": rc, "receiver_correct": rc, "dm_correct": rc})
    metrics = {"full network": {"test": {"accuracy": full}}, "few-sample network": {"test": {"accuracy": few}},
               "freeze-trained": {"test": {"accuracy": frz}, "correct": acc(frz)}}
    return pd.DataFrame(rows), metrics


def test_freeze_claim_is_inconclusive_while_the_freeze_trained_net_is_below_the_few_sample_one():

    cfg = f9.PRESETS_F9["demo"]
    table, metrics = _freeze_metrics(0.664, 0.632, 0.514)  # the committed demo run's networks
    numbers, claims = f9.freeze_summary(table, ("stem", "head"), metrics, cfg)
    c = claims[0]
    assert c.criterion.holds is False and numbers["gap_judged"] == pytest.approx(15.0)
    assert [k.passed for k in c.controls][:3] == [True, True, False]  # the anomaly: no verdict
    table, metrics = _freeze_metrics(0.664, 0.600, 0.650)
    numbers, claims = f9.freeze_summary(table, ("stem", "head"), metrics, cfg)
    assert all(k.passed for k in claims[0].controls) and claims[0].criterion.holds
    assert numbers["freeze_minus_few_low"] > 0 and numbers["full_minus_few_low"] > f9.WITHIN_MAX


def test_freeze_claim_needs_a_few_sample_network_beyond_the_bound_or_it_holds_by_construction():
    # the referee's case: the 5k network alone within 1.49 points of the full one, under the 3-point bound
    cfg = f9.PRESETS_F9["demo"]
    table, metrics = _freeze_metrics(0.664, 0.649, 0.655)
    numbers, claims = f9.freeze_summary(table, ("stem", "head"), metrics, cfg)
    c = claims[0]
    premise = c.controls[-1]
    assert c.criterion.holds and not premise.passed and premise.kind == "guarantee"
    run = Run("B-F9", "demo", {})
    assert run.claim(c.key, c.text, criterion=c.criterion, paper=c.paper, ours=c.ours, controls=c.controls,
                     kind=c.kind).verdict == "inconclusive at this scale"
    # a claim found not to hold is not gated by it (the premise cannot have produced that outcome)
    table, metrics = _freeze_metrics(0.664, 0.649, 0.60)
    c = f9.freeze_summary(table, ("stem", "head"), metrics, cfg)[1][0]
    assert c.criterion.holds is False and not c.controls[-1].passed
    assert run.claim("again", c.text, criterion=c.criterion, paper=c.paper, ours=c.ours, controls=c.controls[-1:],
                     kind=c.kind).verdict == "not reproduced"


def _freeze_curves(a_points, b_points, full=0.664, few=0.600, frz=0.650):
    """A B-F9 table whose (a) penalties and (b) gaps to the full network are the given points per cut."""

    table, metrics = _freeze_metrics(full, few, frz)
    for sender, values in ((f9.A, a_points), (f9.B, b_points)):
        for c, v in zip(CUTS, values):
            row = (table.sender == sender) & (table.cut == c)
            if sender == f9.A:
                table.loc[row, "penalty"] = v / 100
            else:
                table.loc[row, "accuracy"] = full - v / 100
    return table, metrics


def test_freeze_length_control_retrains_the_cells_that_choose_the_frozen_pieces(monkeypatch):

    cfg = f9.PRESETS_F9["demo"]
    # (a) within 3 points at stem, block1; (b) within at block5, pool: stem, block1 and pool (+ head) frozen
    table, metrics = _freeze_curves([0.5, 1.0, 5.0, 8.0, 9.0], [9.0, 8.0, 6.0, 2.0, 1.0])
    frozen = f9.choose_frozen(table, CUTS, 0.664, cfg.threshold)
    assert frozen == ("stem", "block1", "pool", "head")
    assert f9.deciding_cells(table, CUTS, 0.664, cfg.threshold) == {f9.A: ["stem", "block1", "block3"],
                                                                     f9.B: ["block3", "block5", "pool"]}
    _, claims = f9.freeze_summary(table, frozen, metrics, cfg)
    assert claims[0].decided and claims[0].criterion.holds
    calls = []

    def longer_grid(senders, receivers, pairs, recipe, data, **kw):
        assert recipe.train.epochs == grid_spec.LONGER * cfg.recipe().train.epochs
        calls.append((senders[0].name, [a for a, _ in pairs]))
        new = {"stem": 0.4, "block1": 0.8, "block3": 2.5} if senders[0].name == f9.A else {"block3": 5.0}
        rows = []
        for a, _ in pairs:
            v = new.get(a, 1.0)
            pen, acc = (v / 100, 0.664 - v / 100) if senders[0].name == f9.A else (0.0, 0.664 - v / 100)
            rows.append({"sender": senders[0].name, "cut_i": a, "accuracy": acc, "penalty": pen,
                         "correct": table.correct.iloc[0]})
        return pd.DataFrame(rows)

    trained = []

    def freeze_train(spec, **kw):
        trained.append(spec.frozen)
        return object(), {"test": {"accuracy": 0.60}}

    monkeypatch.setattr(longer_mod, "stitch_grid", longer_grid)
    monkeypatch.setattr(f9, "freeze_train", freeze_train)
    monkeypatch.setattr(f9, "own_correct", lambda *a: np.arange(N) < int(0.60 * N))
    out = f9.training_length_control(cfg, table, frozen, metrics, claims)
    assert calls == [(f9.A, ["stem", "block1", "block3"]), (f9.B, ["block3", "block5", "pool"])]
    # at 4x (a) comes within the bound at block3 too: one more piece frozen, and the network freeze-trained on
    # them is 6.4 points below the full one: the verdict turns, so the control fails
    assert trained == [("stem", "block1", "block3", "pool", "head")]
    assert not claims[0].controls[-1].passed and "survives" in claims[0].controls[-1].text
    assert list(out["within the bound at 4x"]) == [True, True, True, False, True, True]
    assert list(out["1x (points)"].round(2)) == [0.5, 1.0, 5.0, 6.0, 2.0, 1.0]


def test_freeze_length_control_keeps_the_verdict_when_the_same_pieces_are_chosen(monkeypatch):

    cfg = f9.PRESETS_F9["demo"]
    table, metrics = _freeze_curves([0.5, 1.0, 5.0, 8.0, 9.0], [9.0, 8.0, 6.0, 2.0, 1.0])
    frozen = f9.choose_frozen(table, CUTS, 0.664, cfg.threshold)
    _, claims = f9.freeze_summary(table, frozen, metrics, cfg)

    def same_grid(senders, receivers, pairs, recipe, data, **kw):  # every cell keeps its side of the bound
        rows = [table[(table.sender == senders[0].name) & (table.cut == a)].iloc[0] for a, _ in pairs]
        return pd.DataFrame(rows).rename(columns={"cut": "cut_i"})

    def never(*a, **kw):
        raise AssertionError("the same pieces: nothing to freeze-train again")

    monkeypatch.setattr(longer_mod, "stitch_grid", same_grid)
    monkeypatch.setattr(f9, "freeze_train", never)
    out = f9.training_length_control(cfg, table, frozen, metrics, claims)
    assert claims[0].controls[-1].passed and len(out) == 6
    # a claim not decided gets its check too (issue 46)
    _, undecided = f9.freeze_summary(table, frozen, {**metrics, "freeze-trained": metrics["few-sample network"]
                                                     | {"correct": np.arange(N) < int(0.632 * N)}}, cfg)
    n = len(undecided[0].controls)
    assert not f9.training_length_control(cfg, table, frozen, metrics, undecided).empty
    assert len(undecided[0].controls) == n + 1 and undecided[0].controls[-1].kind == "training length"


def test_freeze_training_re_estimates_the_frozen_top_statistics_and_keeps_old_keys():
    import torch

    from stitchkit.base.store import canonical, config_key
    from stitchkit.networks import zoo
    from stitchkit.networks.models import build_model

    few, full = zoo.bansal_resnet18(zoo.BANSAL_RESNET18["demo"], 1, train_size=5000), zoo.bansal_resnet18(zoo.BANSAL_RESNET18["demo"], 0)
    old = f9.FreezeSpec(few, full, ("stem", "block1", "pool", "head"))
    assert "frozen_above_bn" not in canonical(old)  # networks trained before the fix keep their keys
    new = f9.FreezeSpec(few, full, ("stem", "block1", "pool", "head"), frozen_above_bn="train")
    assert config_key(new) != config_key(old)
    with pytest.raises(ValueError, match="frozen_above_bn"):
        f9.FreezeSpec(few, full, ("stem",), frozen_above_bn="frozen")
    model = build_model("preact_resnet18", width=2)
    wrapped = f9.PartlyFrozen(model, ("stem", "block1", "pool", "head"), "train")
    wrapped.train()
    bns = {name: [m.training for m in model.pieces[name].modules() if isinstance(m, torch.nn.BatchNorm2d)]
           for name in ("stem", "block1", "block2", "pool")}
    # below the trained middle: eval (its input, the images, is unchanged); the middle and the frozen
    # top above it: train mode (the top's statistics follow the new middle); no gradient to frozen pieces
    assert not any(bns["stem"] + bns["block1"]) and all(bns["block2"]) and all(bns["pool"])
    assert not any(p.requires_grad for p in model.pieces["pool"].parameters())
    f9.PartlyFrozen(model, ("stem", "block1", "pool", "head"), "eval").train()
    assert not any(m.training for m in model.pieces["pool"].modules() if isinstance(m, torch.nn.BatchNorm2d))
    wrapped.eval()
    assert not any(m.training for m in model.modules())


def test_kernel_length_control_retrains_every_spread_past_the_bound(monkeypatch):
    """Two cuts past the 2-point bound: both are retrained (the kernels that set each spread), so a
    verdict cannot survive on a cut left at 1x."""
    table = _kernel_table(((1, [0, 4, 4]), (3, [0, 1, 1]), (9, [0.5, 2, 0])))
    _, claims = f4_f5.kernel_sizes_summary(table)
    cfg = f4_f5.PRESETS_F4["demo"]
    seen = {}

    def longer_grid(senders, receivers, pairs, recipe, data, **kw):
        seen[recipe.kernel_size] = [a for a, _ in pairs]
        return _grid_rows({common.TRAINED: {a: 1.0 for a, _ in pairs}}, pairs)

    monkeypatch.setattr(longer_mod, "stitch_grid", longer_grid)
    f4_f5.kernel_length_control(cfg, table, claims)
    assert seen == {1: [CUTS[1], CUTS[2]], 3: [CUTS[1]], 9: [CUTS[2]]}


def test_b_f5_copy_of_the_random_bottom_claim_keeps_its_length_control():
    """Review (2026-11-24): B-F5 records B-F2A's random-bottom claim as 'random_early_stitch'; it
    is checked like B-F2A's, at the random bottom's first cut, and re-judged by B-F2A's rule."""
    table = pd.DataFrame(_rows(common.SELF, [0] * 5) + _rows(common.TRAINED, [1, 2, 4, 3, 0])
                         + _rows(common.RANDOM, [1, 5, 20, 40, 45]))
    _, claims = common.connectivity_summary(table, MODELS)
    copy = replace(next(c for c in claims if c.key == "random_early"), key="random_early_stitch")
    checks = f2a._length_checks(f2a.PRESETS_F2A["demo"], table, [copy])
    assert [(c.claim, c.parts[0].cells) for c in checks] == [("random_early_stitch", ((common.RANDOM, ("stem",)),))]
    assert checks[0].rejudge(table) == next(c for c in claims if c.key == "random_early").criterion


def test_the_seed_component_is_the_pooled_spread_between_replicate_senders_and_widens_intervals():

    # three senders trained alike: beyond the self-stitch 1, 2, 3 points at one cut and 0, 0, 0 at another
    rows = _rows(common.SELF, [0, 0]) + _rows("seed 1", [1, 0]) + _rows("seed 3", [2, 0]) + _rows("seed 4", [3, 0])
    c = seeds.component_of(pd.DataFrame(rows))
    assert c.k == 3 and c.sd == pytest.approx(np.sqrt((1.0 + 0.0) / 2))  # the variances 1 and 0, pooled
    table = pd.DataFrame(_rows(common.SELF, [0] * 5) + _rows(common.TRAINED, [1, 2, 2.5, 1, 0])
                         + _rows(common.RANDOM, [1, 5, 20, 40, 45]))
    _, claims = common.connectivity_summary(table, MODELS)
    assert claims[0].criterion.holds is True  # 2.5 points on the test images alone: connected
    wide = seeds.widen(claims, c, {"connected": 1})
    e = wide[0].criterion
    # t(2) x 0.71 = 3.0 points more on each side: now within noise of the 3-point bound
    assert e.holds is None and e.high - e.value > 3.0 and "seed-variance component" in e.interval
    assert wide[1] is claims[1] and wide[0].controls == claims[0].controls  # the others untouched


def test_the_crossed_seed_component_varies_both_networks_and_reads_each_claims_own_statistic():
    # three receivers x three senders at two cuts; the receiver moves every penalty (0, 2, 4 points at cut
    # a), the senders barely (0, 0.2, 0.4): a sender-only spread into seed 0 would see 0.2 of it
    rows = []
    for i, r in enumerate(seeds.RECEIVERS):
        rows += [{**x, "receiver": f"seed {r}"} for x in _rows(common.SELF, [0, 0], cuts=["a", "b"])]
        for j, s_ in enumerate(seeds.SENDERS):
            rows += [{**x, "receiver": f"seed {r}"} for x in _rows(f"seed {s_}", [2 * i + 0.2 * j, 0.5 * j],
                                                                     cuts=["a", "b"])]
    c = seeds.component_of(pd.DataFrame(rows))
    assert c.crossed and c.k == 6
    top = c.spread("max")  # per pair: max(2i + 0.2j, 0.5j)
    assert np.sqrt(top.var_receiver) > 1.5 and top.receivers == 3 and top.senders == 3 and top.df <= 2
    assert c.spread("cut").sd == pytest.approx(c.sd) and c.df == c.spread("cut").df
    with pytest.raises(ValueError, match="unknown statistic"):
        c.spread("median")
    table = pd.DataFrame(_rows(common.SELF, [0] * 5) + _rows(common.TRAINED, [1, 2, 2.5, 1, 0])
                         + _rows(common.RANDOM, [1, 5, 20, 40, 45]))
    _, claims = common.connectivity_summary(table, MODELS)
    wide = seeds.widen(claims, c, f2a.SEED_CLAIMS_F2A)[0].criterion
    assert f2a.SEED_CLAIMS_F2A["connected"] == (1, "max")
    assert "receivers and senders both varied" in wide.interval and "largest penalty over the cuts" in wide.interval
    assert wide.holds is None  # 2.5 points, widened by t(2) x the receivers' spread: within noise of 3
    assert list(seeds.component_table(c).columns)[-1] == "crossed sd"


def test_widening_rejudges_the_length_control_like_for_like():
    from stitchkit.verdicts import controls
    from stitchkit.verdicts.results import at_most

    c = seeds.SeedComponent(0.7, 3, pd.DataFrame({"cut": ["a"]}))
    table = pd.DataFrame(_rows(common.SELF, [0] * 5) + _rows(common.TRAINED, [1, 2, 2.5, 1, 0])
                         + _rows(common.RANDOM, [1, 5, 20, 40, 45]))
    _, claims = common.connectivity_summary(table, MODELS)
    base = claims[0].criterion
    # at 4x on the test images alone: 1.0 [0.6, 1.4] points, connected as at 1x: the control passes
    longer = at_most(noise.Estimate(1.0, 0.6, 1.4, 10_000), 3.0, base.text)
    claims[0] = claims[0].with_controls(controls.training_length(base, longer, 4, what="length"))
    assert claims[0].controls[-1].passed
    wide = seeds.widen(claims, c, {"connected": 1})[0]
    # widened (t(2) x 0.7 = 3.0 points more each side), both are within noise of the 3-point bound: the
    # control compares the two widened results, like for like
    length = wide.controls[-1]
    assert length.kind == "training length" and length.record["base_holds"] == wide.criterion.holds
    assert "seed-variance component" in length.record["interval"]
    assert "with the network-to-network variance" in wide.ours


def _classifies_two_images(spec) -> bool:
    import torch

    model = network.build(spec, num_classes=10, in_channels=3).eval()
    with torch.no_grad():
        return model(torch.rand(2, 3, 32, 32)).shape == (2, 10)


def test_the_bansal_gpu_presets_name_the_papers_networks_and_each_builds():
    """Issue 47: B-F2A, B-F2C, B-F3A, B-F3C, B-F6 and B-F8 at gpu validate, name networks at the
    paper's width on all 50k images in the zoo's gpu recipes, and each network classifies a
    two-image batch on the CPU (a lent GPU must not meet a bad preset)."""
    from stitchkit.experiments.bansal import bottoms, f2a, f3c_f6, f8
    from stitchkit.registry.figures import presets
    from stitchkit.registry.scales import preset

    a = preset(presets("B-F2A"), "gpu")
    nets = [a.model(0), a.model(1), a.arch_model("myrtle", 0)]
    assert a.other_archs == ("myrtle",) and a.arch_cuts is None and a.test_size is None
    assert [(n.width, n.data.train_size, n.train.batch_size) for n in nets] == [(64, None, 512)] * 3
    assert nets[2].train.schedule == "warmup_linear" and nets[2].train.label_smoothing == 0.2
    top, samples = preset(presets("B-F2C"), "gpu").models()
    assert top.width == 64 and sorted(b.data.train_size or 50_000 for b in samples.values()) == [5_000, 25_000, 50_000]
    assert len({b.train.steps for b in samples.values() if b.data.train_size}) == 1  # the full set's steps each
    labels = preset(presets("B-F3A"), "gpu")
    assert labels.variants == ("objects vs animals", "100% random labels") and labels.cuts == bottoms.DEMO_CUTS
    widths = preset(presets("B-F3C"), "gpu")
    assert [widths.variant(0, width_factor=f).width for f in widths.width_factors] == [8, 32, 64]
    sup, simclr = preset(presets("B-F6"), "gpu").models()
    assert (sup.width, simclr.width, simclr.method, simclr.train.epochs) == (64, 64, "simclr", 30)
    ft = preset(presets("B-F8"), "gpu")
    deep = ft.resnet(0)
    assert (deep.width, dict(deep.options)["depth"], ft.finetune_epochs) == (16, 164, 5.0)
    assert f3c_f6.PRESETS_F3C["demo"].width is None and f8.PRESETS_F8["demo"].finetune_epochs == 2.0  # demo as it was
    assert f2a.PRESETS_F2A["demo"].other_archs == tuple(f2a.ARCHS)
    for spec in (*nets, top, widths.variant(0, width_factor=0.25), sup, simclr, deep):
        assert _classifies_two_images(spec)


def test_the_remaining_bansal_gpu_presets_read_the_gpu_pages_networks():
    """Issue 47: B-F3B, B-F4, B-F7 and B-F9 at gpu validate and read the networks of the gpu pages they
    build on (the paper's width 64 on all 50k images, or B-F2C's sample sizes and B-F3C's widths), each
    classifying a two-image batch; B-F2B and B-T1 read the book's results at gpu as at demo; demo as it was."""
    from stitchkit.experiments.bansal import bottoms, f2a, f2c_f3ab, f3c_f6, f4_f5, f7, f9, tables
    from stitchkit.registry.scales import preset

    receiver = preset(f2a.PRESETS_F2A, "gpu").model(0)
    sender = preset(f2a.PRESETS_F2A, "gpu").model(1)
    assert (receiver.width, receiver.data.train_size, receiver.train.epochs, receiver.train.batch_size) == \
        (64, None, 40, 512)
    _, samples = preset(f2c_f3ab.PRESETS_F2C, "gpu").models()
    widths = preset(f3c_f6.PRESETS_F3C, "gpu")
    # B-F3B: one run of B-F2A's receiver, its snapshots at a quarter, half and all of it, demo's six cuts
    epochs = preset(f2c_f3ab.PRESETS_F3B, "gpu")
    top, snaps = epochs.models()
    assert epochs.cuts == bottoms.DEMO_CUTS and epochs.test_size is None
    assert [s.train.stop for s in (top, *snaps.values())] == [0.5, 0.25, 1.0]
    assert all(replace(s, train=replace(s.train, stop=1.0)) == receiver for s in (top, *snaps.values()))
    # B-F4: B-F2A's gpu pair, every kernel of the paper at three map cuts, demo's lr rule for larger kernels
    kernels = preset(f4_f5.PRESETS_F4, "gpu")
    assert (kernels.kernel_sizes, kernels.cuts, kernels.kernel_lr) == ((1, 3, 5, 7, 9), ("stem", "block3", "block6"),
                                                                     "over_k2")
    assert kernels.model(0) == receiver and kernels.model(1) == sender
    assert kernels.kernel_recipe(1) == preset(f2a.PRESETS_F2A, "gpu").recipe()  # kernel 1: B-F2A's stitches
    assert kernels.kernel_recipe(9).train.lr == pytest.approx(kernels.stitch_lr / 81)
    # B-F7: B-F2C's 5k and 25k bottoms, B-F3C's widths 8 and 64, B-F3B's half and full run
    more = preset(f7.PRESETS_F7, "gpu")
    pairs = list(more.pairs().values())
    assert pairs[0] == (samples["5k samples"], samples["25k samples"])
    assert pairs[1] == (widths.variant(0, width_factor=0.25), widths.variant(0, width_factor=2.0))
    assert [s.width for s in pairs[1]] == [8, 64] and pairs[1][1] == receiver
    assert pairs[2] == (top, snaps["1 of the run (epoch 160 of 160 in the paper)"])
    assert more.variant(3) == preset(f2a.PRESETS_F2A, "gpu").model(3)  # the seed component's networks
    # B-F9: B-F2C's 5k bottom frozen in part, B-F2A's receiver as the full network
    freeze = preset(f9.PRESETS_F9, "gpu")
    assert f9._specs(freeze) == (samples["5k samples"], receiver) and freeze.test_size is None
    # B-F2B and B-T1: the book's results, as at demo
    assert preset(tables.PRESETS_F2B, "gpu") == tables.StandInConfig()
    assert preset(tables.PRESETS_T1, "gpu") == tables.TableConfig()
    # demo as it was
    assert (f4_f5.PRESETS_F4["demo"].cuts, f4_f5.PRESETS_F4["demo"].kernel_lr) == (("stem", "block3", "block7"),
                                                                                 "over_k2")
    assert f7.PRESETS_F7["demo"] == f7.MoreCKAConfig(net=zoo.BANSAL_RESNET18["demo"]) and f7.PRESETS_F7["demo"].width_pair == (0.25, 2.0)
    assert f2c_f3ab.PRESETS_F3B["demo"].cuts == bottoms.DEMO_CUTS and f9.PRESETS_F9["demo"].width is None
    assert tables.PRESETS_T1["demo"] == tables.TableConfig() and tables.PRESETS_F2B["demo"] == tables.StandInConfig()
    for spec in (top, pairs[0][0], pairs[1][0]):
        assert _classifies_two_images(spec)
