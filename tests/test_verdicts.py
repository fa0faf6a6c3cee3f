"""The noise model and the verdict rule: intervals, the paired bootstrap, controls, and that every
committed verdict follows from its recorded numbers."""

from __future__ import annotations

import json

import numpy as np
import pandas as pd
import pytest
from per_image import correct as _correct  # tests/ is on sys.path (no __init__.py)

from stitchkit.base import paths
from stitchkit.book import changes
from stitchkit.book.catalogue import CATALOGUE, check_results
from stitchkit.verdicts import controls, noise
from stitchkit.verdicts.results import Run, at_least, at_most, check_verdict, decide, within


@pytest.mark.parametrize("direction", ["<=", ">=", "<", ">"])
def test_an_exact_value_is_the_plain_comparison_and_an_interval_across_the_threshold_is_undecided(direction):
    rng = np.random.default_rng(0)
    plain = {"<=": np.less_equal, ">=": np.greater_equal, "<": np.less, ">": np.greater}[direction]
    for x, t in rng.normal(size=(50, 2)):
        assert decide(x, x, t, direction) is bool(plain(x, t))
        lo, hi = t - abs(x) - 0.1, t + abs(x) + 0.1
        assert decide(lo, hi, t, direction) is None
        assert decide(t + 1, t + 2, t, direction) is bool(plain(t + 1, t))  # wholly above
        assert decide(t - 2, t - 1, t, direction) is bool(plain(t - 1, t))  # wholly below


def test_within_needs_the_whole_interval_inside_and_fails_only_when_disjoint():
    assert decide(0.97, 0.99, 0.98, "within", 0.02) is True
    assert decide(0.95, 0.99, 0.98, "within", 0.02) is None
    assert decide(0.90, 0.95, 0.98, "within", 0.02) is False
    assert within(0.97, 0.99, 0.02, "acc").holds  # the bound itself is within


def test_the_paired_bootstrap_cancels_shared_images():
    n = 5000
    receiver = _correct(0.9, n, 0)
    flip = np.random.default_rng(1).random(n) < 0.02  # a stitch that differs on 2% of images
    stitched = receiver ^ flip
    table = pd.DataFrame({"cut": ["a"], "correct": [stitched], "receiver_correct": [receiver]})
    paired = noise.bootstrap_table(table, lambda t: 100 * t.penalty.iloc[0])
    # resampling the two models' images independently (unpaired) sees the accuracies' own noise
    unpaired = noise.bootstrap_table(table.assign(a="x", b="y"), lambda t: 100 * t.penalty.iloc[0],
                                     column_samples={"correct": "a", "receiver_correct": "b"})
    assert paired.high - paired.low < 0.5 * (unpaired.high - unpaired.low)
    assert paired.low <= paired.value <= paired.high
    # the receiver into itself, image by image: an exact zero with no spread
    same = noise.bootstrap_table(table.assign(correct=[receiver]), lambda t: 100 * t.penalty.iloc[0])
    assert same.value == same.low == same.high == 0


def test_the_interval_covers_the_truth_about_as_often_as_it_says():
    # 60 synthetic experiments of 2000 images, true accuracy 0.8: a 95% interval should miss ~3 times
    misses = 0
    for seed in range(60):
        c = np.random.default_rng(seed).random(2000) < 0.8
        e = noise.accuracy(c, name=f"coverage {seed}")
        misses += not (e.low <= 0.8 <= e.high)
    assert misses <= 9


def test_a_maximum_is_bootstrapped_as_a_maximum():
    n = 2000
    rx = _correct(0.9, n, 0)
    # ten cuts with the same true penalty 0: the max over cuts of the noisy penalties is biased up
    rows = [{"cut": k, "correct": rx ^ (np.random.default_rng(k + 1).random(n) < 0.03), "receiver_correct": rx}
            for k in range(10)]
    e = noise.bootstrap_table(pd.DataFrame(rows), lambda t: 100 * t.penalty.max())
    assert e.value > 0 and e.high > e.value  # a verdict reading "max <= 0" could not pass on noise


def test_groups_resample_seeds_and_widen_the_interval():
    n = 2000
    rows = []
    for k, acc in enumerate((0.80, 0.85, 0.90)):  # three seeds that disagree by 5 points
        rows.append({"init": k, "correct": _correct(acc, n, k)})
    t = pd.DataFrame(rows)
    images_only = noise.bootstrap_table(t, lambda u: u.accuracy.mean())
    with_seeds = noise.bootstrap_table(t, lambda u: u.accuracy.mean(), groups="init")
    assert with_seeds.n_seeds == 3 and with_seeds.high - with_seeds.low > 2 * (images_only.high - images_only.low)


def test_bad_inputs_name_what_is_wrong():
    with pytest.raises(ValueError, match="cover 10 images"):
        noise.resampler(20, "t").means(np.ones(10))
    with pytest.raises(ValueError, match="per-image"):
        noise.bootstrap_table(pd.DataFrame({"accuracy": [0.5]}), lambda t: 0.0)
    with pytest.raises(ValueError, match="lacks per-image"):
        noise.bootstrap_table(pd.DataFrame({"correct": [np.ones(4, bool), None]}), lambda t: 0.0)
    with pytest.raises(ValueError, match="finite"):
        noise.Estimate(float("nan"), 0, 1)
    with pytest.raises(ValueError, match="unknown direction"):
        decide(0, 1, 0, "=<")


def test_the_positive_control_is_one_sided():
    assert controls.reaches_receiver(noise.Estimate(0.1, -0.2, 0.3)).passed
    assert controls.reaches_receiver(noise.Estimate(-3.0, -3.4, -2.6)).passed  # a gain is reported, not gated
    assert not controls.reaches_receiver(noise.Estimate(1.5, 1.2, 1.8)).passed  # the recipe cannot reach the receiver
    assert not controls.reaches_receiver(noise.Estimate(0.8, 0.5, 1.1)).passed  # not shown within the bound
    assert controls.largest([0.2, -3.0, 1.0]) == 1.0


def test_the_training_length_control_passes_only_when_the_longer_run_gives_the_same_result():
    base = at_most(noise.Estimate(2.0, 1.5, 2.5), 1.0, "penalty")  # not reproduced at 1x
    assert controls.training_length(base, at_most(noise.Estimate(1.8, 1.4, 2.2), 1.0, "penalty"), 4).passed
    assert not controls.training_length(base, at_most(noise.Estimate(0.5, 0.2, 0.8), 1.0, "penalty"), 4).passed
    assert not controls.training_length(base, at_most(noise.Estimate(1.0, 0.6, 1.4), 1.0, "penalty"), 4).passed
    # every verdict gets it, decided or not: a claim within noise at 1x that a longer run decides was
    # undecided because its stitches stopped short
    undecided = at_most(noise.Estimate(1.0, 0.5, 1.5), 1.0, "penalty")
    assert not controls.training_length(undecided, at_most(noise.Estimate(0.5, 0.2, 0.8), 1.0, "penalty"), 4).passed
    assert controls.training_length(undecided, at_most(noise.Estimate(0.9, 0.6, 1.3), 1.0, "penalty"), 4).passed


def test_a_claim_records_its_numbers_and_its_verdict_follows_from_them(tmp_path):
    run = Run("S-4.2", "demo", {})
    ok = run.claim("a", "t", criterion=at_least(noise.Estimate(1.0, 0.5, 1.5), 0.0, "m"), paper="p", ours="o")
    close = run.claim("b", "t", criterion=at_least(noise.Estimate(0.2, -0.3, 0.7), 0.0, "m"), paper="p", ours="o")
    failed = run.claim("c", "t", criterion=at_least(noise.Estimate(1.0, 0.5, 1.5), 0.0, "m"), paper="p", ours="o",
                       controls=[controls.reaches_receiver(noise.Estimate(2.0, 1.5, 2.5))])
    assert (ok.verdict, close.verdict, failed.verdict) == ("reproduced", "inconclusive at this scale",
                                                           "inconclusive at this scale")
    assert "within noise" in close.reason and "control failed" in failed.reason
    saved = json.loads(run.save(tmp_path / "r.json").read_text())
    for c in saved["claims"]:
        assert {"value", "low", "high", "threshold", "direction", "unit", "n_seeds", "n_test"} <= set(c)
        check_verdict(c, "demo")
    tampered = {**saved["claims"][1], "verdict": "reproduced"}
    with pytest.raises(ValueError, match="does not follow"):
        check_verdict(tampered, "demo")
    with pytest.raises(ValueError, match="gives"):
        check_verdict({**saved["claims"][0], "low": -1.0}, "demo")  # the interval no longer supports holds


def test_every_committed_verdict_follows_from_its_record():
    files = sorted(paths.BOOK_DIR.glob("*/*.results.json"))
    assert files
    for path in files:
        results = json.loads(path.read_text())
        check_results(results, path)  # the numeric record where present, the controls and holds everywhere
        for c in results["claims"]:
            check_verdict(c, results["scale"], str(path))


def test_every_change_names_catalogue_pages_and_renders():
    ids = {i for i, _ in CATALOGUE}
    for c in changes.CHANGES:
        assert set(c.pages) <= ids, c.pages
        assert c.what and c.why and c.commit and len(c.date) == 10
    text = changes.markdown("S-4.2")
    assert text.startswith(changes.HEADING) and "two-sided" in text
    assert "No recipe" in changes.markdown("B-T1")


def test_a_claim_without_a_measured_value_is_inconclusive_and_saves(tmp_path):
    """A criterion with no value (nothing to measure at this scale) saves at demo scale with the
    reason 'not measured', and its verdict passes the check (review, 2026-11-24)."""
    from stitchkit.verdicts.results import Criterion

    run = Run("J-F2", "demo", {})
    c = run.claim("none", "t", criterion=Criterion("median AUROC of the high-accuracy stitches (not measured: none)",
                                                   None), paper="p", ours="o")
    assert c.verdict == "inconclusive at this scale" and c.reason == "not measured"
    saved = json.loads(run.save(tmp_path / "r.json").read_text())
    check_verdict(saved["claims"][0], "demo")


def test_every_change_names_commits_of_this_history():
    """A change's commit hashes must exist here (a hash written before a rebase would not): the
    reader follows them to see what changed."""
    import re
    import subprocess

    shallow = subprocess.run(["git", "rev-parse", "--is-shallow-repository"], cwd=paths.REPO_ROOT,
                             capture_output=True, text=True)
    if shallow.returncode or shallow.stdout.strip() != "false":
        pytest.skip("not a git checkout with its whole history")
    hashes = {h for c in changes.CHANGES for h in re.findall(r"\b[0-9a-f]{7,40}\b", c.commit)}
    assert hashes
    missing = [h for h in sorted(hashes) if subprocess.run(["git", "cat-file", "-e", f"{h}^{{commit}}"],
                                                          cwd=paths.REPO_ROOT, capture_output=True).returncode]
    assert not missing, f"changes name commits not in this history: {missing}"


def test_columns_derived_from_a_resampled_accuracy_follow_it():
    """Review (2026-11-24): when only one of the accuracies is resampled, ``penalty`` and
    ``relative`` are recomputed from the resampled values, never left at the full sample's."""
    t = pd.DataFrame({"accuracy": [0.5], "receiver_accuracy": [0.8], "penalty": [0.3], "relative": [0.625],
                      "correct": [_correct(0.5, 2000, seed=1)]})
    seen = []

    def stat(x):
        seen.append((float(x.penalty.iloc[0]), float(x.receiver_accuracy.iloc[0] - x.accuracy.iloc[0]),
                     float(x.relative.iloc[0]), float(x.accuracy.iloc[0] / x.receiver_accuracy.iloc[0])))
        return seen[-1][0]

    noise.bootstrap_table(t, stat, columns={"correct": "accuracy"})
    assert all(p == pytest.approx(q) and r == pytest.approx(s) for p, q, r, s in seen)
    assert len({p for p, *_ in seen}) > 1  # the penalty moved with the resample


def test_a_change_made_after_the_shown_run_is_marked_as_not_yet_applied():
    text = changes.markdown("B-F2A", "2026-11-25")
    line = next(ln for ln in text.splitlines() if ln.startswith("- **2026-11-27**"))
    assert "Not yet in the results shown" in line and "last run on 2026-11-25" in line
    earlier = next(ln for ln in text.splitlines() if ln.startswith("- **2026-11-22**"))
    assert "Not yet" not in earlier
    after = changes.markdown("B-F2A", "2026-11-27")  # run after the change (later changes are marked)
    assert "Not yet" not in next(ln for ln in after.splitlines() if ln.startswith("- **2026-11-27**"))
