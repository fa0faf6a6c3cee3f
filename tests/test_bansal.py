"""Bansal et al. Figure 2A: the connectivity verdicts, judged beyond the receiver stitched into itself."""

from dataclasses import replace

import pandas as pd
import pytest

from stitchkit.experiments import bansal

CUTS = ["stem", "block1", "block3", "block5", "pool"]


def _rows(sender, penalties, arch=None):
    return [{"sender": sender, "cut": c, "penalty": p / 100, "dm_penalty": p / 100, "accuracy": 0.5 - p / 100,
             "receiver_accuracy": 0.5, **({"arch": arch} if arch else {})} for c, p in zip(CUTS, penalties)]


MODELS = {"receiver_accuracy_full_test": 0.5, "sender_accuracy_full_test": 0.5, "receiver_train_seconds": 60.0,
          "receiver_images_per_second": 100.0}


def test_connectivity_is_judged_beyond_the_self_stitch():
    # an under-trained receiver: the stitch alone gains 5 points at every cut; the second seed's raw
    # penalty (-1) looks connected, but beyond the self-stitch it is 4 points: not connected
    table = pd.DataFrame(_rows(bansal.SELF, [-5] * 5) + _rows(bansal.TRAINED, [-1] * 5)
                         + _rows(bansal.RANDOM, [-4, 5, 20, 40, 45]))
    numbers, claims = bansal.connectivity_summary(table, MODELS)
    by = {c["key"]: c for c in claims}
    assert numbers["trained_max_penalty"] == pytest.approx(-1) and numbers["trained_max_penalty_beyond"] == pytest.approx(4)
    assert not by["connected"]["criterion"].holds and "beyond the receiver" in by["connected"]["criterion"].text
    assert by["connected"]["controls"][0].passed  # a negative self-stitch is not a weak recipe
    assert numbers["random_first_penalty_beyond"] == pytest.approx(1) and by["random_early"]["criterion"].holds
    assert numbers["random_late_penalty_beyond"] == pytest.approx(47.5) and by["random_late"]["criterion"].holds


def test_every_architecture_is_judged_beyond_its_own_self_stitch():
    table = pd.DataFrame(_rows(bansal.SELF, [-5] * 5, "vit") + _rows(bansal.TRAINED, [-3, -2.5, -2.5, -3, -4], "vit")
                         + _rows(bansal.SELF, [0.2] * 5, "myrtle") + _rows(bansal.TRAINED, [1, 2, 2, 1, 0], "myrtle"))
    models = {a: {"sender_accuracy_full_test": 0.5} for a in ("vit", "myrtle")}
    numbers, claims = bansal.architectures_summary(table, models)
    assert numbers["vit_max_penalty_beyond"] == pytest.approx(2.5) and numbers["myrtle_max_penalty_beyond"] == pytest.approx(1.8)
    assert [c["criterion"].holds for c in claims] == [True, True]
    assert "self-stitch -5.00 to -5.00" in claims[0]["ours"]


def test_kernel_size_spread_and_worst_kernel():
    rows = []
    for k, pens in ((1, [1, 2, 4, 1]), (3, [0, 0.5, 0, 0]), (5, [0, 0, 0.5, 0.5])):
        rows += [{"sender": bansal.TRAINED, "cut": c, "penalty": p / 100, "kernel_size": k}
                 for c, p in zip(CUTS[:4], pens)]
        rows += [{"sender": bansal.SELF, "cut": c, "penalty": 0.001, "kernel_size": k} for c in CUTS[:4]]
    numbers, claims = bansal.kernel_sizes_summary(pd.DataFrame(rows))
    assert numbers["max_spread"] == pytest.approx(4) and not claims[0]["criterion"].holds
    assert numbers["worst_kernel"] == 1 and numbers["worst_kernel_mean_penalty"] == pytest.approx(2)
    assert numbers["other_kernels_mean_penalty"] == pytest.approx(0.1875)


def test_kernel_lr_rules_scale_only_the_larger_kernels():
    cfg = bansal.PRESETS_F4["demo"]
    base = cfg.recipe().train.lr
    assert replace(cfg, kernel_lr="same").kernel_recipe(9).train.lr == base
    assert replace(cfg, kernel_lr="over_k").kernel_recipe(3).train.lr == pytest.approx(base / 3)
    over_k2 = replace(cfg, kernel_lr="over_k2")
    assert over_k2.kernel_recipe(9).train.lr == pytest.approx(base / 81) and over_k2.kernel_recipe(9).kernel_size == 9
    # the 1x1 stitch is B-F2A's under every rule (read from its cache)
    assert over_k2.kernel_recipe(1) == replace(cfg.recipe(), kernel_size=1)


def test_kernel_length_control_retrains_the_two_kernels_that_set_the_spread(monkeypatch):
    rows = []
    for k, pens in ((1, [0, 4, 1]), (3, [0, 1, 0.5]), (9, [0.5, 2, 0])):
        rows += [{"sender": bansal.TRAINED, "cut": c, "penalty": p / 100, "kernel_size": k}
                 for c, p in zip(CUTS[:3], pens)]
        rows += [{"sender": bansal.SELF, "cut": c, "penalty": 0.001, "kernel_size": k} for c in CUTS[:3]]
    table = pd.DataFrame(rows)
    numbers, claims = bansal.kernel_sizes_summary(table)
    assert not claims[0]["criterion"].holds  # 3 points at block1 (kernel 1 vs 3)
    cfg = bansal.PRESETS_F4["demo"]
    seen = []

    def longer_grid(senders, receivers, pairs, recipe, data, **kw):
        assert recipe.train.epochs == bansal.LONGER * cfg.recipe().train.epochs
        seen.append((pairs, recipe.kernel_size))
        return pd.DataFrame([{"cut_i": pairs[0][0], "penalty": {1: 0.025, 3: 0.01}[recipe.kernel_size]}])

    monkeypatch.setattr(bansal, "stitch_grid", longer_grid)
    out = bansal.kernel_length_control(cfg, "demo", table, claims)
    assert seen == [([("block1", "block1")], 1), ([("block1", "block1")], 3)]
    assert not claims[0]["controls"][-1].passed  # 1.5 points at 4x: within 2, the stitches were short
    assert list(out["4x epochs (points)"].round(2)) == [2.5, 1.0]


def test_finetune_control_needs_every_cut_fine_tuned_long_enough():
    from stitchkit.experiments import bansal_finetune as ft

    def table(trained_ft):
        rows = [{"bottom": ft.TOP, "cut": c, "penalty": 0.0, "fine-tuned": float("nan")} for c in ("b1", "b2")]
        rows += [{"bottom": ft.TRAINED, "cut": c, "penalty": 0.01, "fine-tuned": a} for c, a in zip(("b1", "b2"), trained_ft)]
        rows += [{"bottom": ft.RANDOM, "cut": c, "penalty": 0.3, "fine-tuned": 0.4} for c in ("b1", "b2")]
        return pd.DataFrame(rows)

    numbers, claims = ft.finetune_summary(table([0.70, 0.62]), {"trained top": 0.70})
    assert numbers["finetune_shortfall"] == pytest.approx(8.0)  # the worse cut counts, not the better
    assert not claims[0]["controls"][1].passed
    numbers, claims = ft.finetune_summary(table([0.70, 0.68]), {"trained top": 0.70})
    assert claims[0]["controls"][1].passed and numbers["finetune_gap"] == pytest.approx(29.0)


def test_training_length_control_checks_only_the_verdicts_more_training_could_turn(monkeypatch):
    # connected fails (4 points at block3); the random bottom is low at the stem and high late: of
    # these, more training (which only lowers penalties) could turn "not connected" and "high late"
    table = pd.DataFrame(_rows(bansal.SELF, [0] * 5) + _rows(bansal.TRAINED, [1, 2, 4, 3, 0])
                         + _rows(bansal.RANDOM, [1, 5, 20, 40, 45]))
    _, claims = bansal.connectivity_summary(table, MODELS)
    checks = bansal._length_checks(table, claims, "resnet18")
    assert [(c["claim"], c["sender"], c["cuts"]) for c in checks] == [
        ("connected", bansal.TRAINED, ["block3"]), ("random_late", bansal.RANDOM, ["block5", "pool"])]
    cfg = bansal.PRESETS_F2A["demo"]

    def longer_grid(senders, receivers, pairs, recipe, data, **kw):  # the stitches, retrained longer
        assert recipe.train.epochs == bansal.LONGER * cfg.recipe().train.epochs
        penalty = {"block3": 0.025, "block5": 0.39, "pool": 0.44}
        return pd.DataFrame([{"cut_i": a, "penalty": penalty[a]} for a, _ in pairs])

    monkeypatch.setattr(bansal, "stitch_grid", longer_grid)
    out = bansal.training_length_control(cfg, "demo", (table, claims))
    by = {c["key"]: c for c in claims}
    assert not by["connected"]["controls"][-1].passed  # 2.5 points at 4x: the stitch was short, inconclusive
    assert by["random_late"]["controls"][-1].passed  # 41.5 points at 4x: still high
    assert len(by["random_early"]["controls"]) == 1  # only the self-stitch control
    assert list(out["change"].round(2)) == [-1.5, -1.0]
