"""Hernandez et al.: model recipes, the triangle numbers and the verdict logic on synthetic grids."""

import numpy as np
import pandas as pd
import pytest

from stitchkit.experiments.hernandez import judging as hernandez_verdicts
from stitchkit.experiments.hernandez import mse as hernandez_mse
from stitchkit.experiments.hernandez import sim_trained as hernandez_similarity
from stitchkit.experiments.hernandez.all_layers import (ARCHS, LOWER_MIN, PAPER_STITCH_LR, PRESETS_F2, PRESETS_F4,
                                                        RANDOM_MAX, GridConfig, display_name, title, triangle)
from stitchkit.experiments.hernandez.images import PRESETS_F6, LayerScores, images_summary
from stitchkit.experiments.hernandez.judging import grid_summary, longer_sample, with_longer_sample
from stitchkit.experiments.hernandez.mse import PRESETS_T1, PRESETS_T2, mse_longer, mse_summary
from stitchkit.experiments.hernandez.sim_trained import PRESETS_F5, similarity_recipe, similarity_summary
from stitchkit.experiments.hernandez.spot import load_spot, spot_claims, spot_diagnosis
from stitchkit.networks import zoo
from stitchkit.stitching.grid_spec import LONGER

N_TEST = 1000  # synthetic test images: margins of 0.05 in relative accuracy are several standard errors wide


def _images(rel: float, rx_acc: float = 0.8, n: int = N_TEST, shift: int = 0) -> tuple[np.ndarray, np.ndarray]:
    """Per-image results of a receiver (the first rx_acc * n images right) and of a stitch that
    gets ``rel`` of those right (and none of the others), rotated by ``shift`` images so that
    cells do not all fail on the same images."""
    rx = np.zeros(n, bool)
    rx[: round(rx_acc * n)] = True
    right = np.flatnonzero(rx)
    st = np.zeros(n, bool)
    st[np.roll(right, shift)[: round(rel * len(right))]] = True
    return st, rx


def _grid(sender, receiver, kind, n_i, n_j, low, up, rx_acc=0.8, layers_i=None, layers_j=None):
    """A synthetic grid with per-image results: relative accuracy ``low`` at j <= i, ``up`` above."""
    rows = []
    layers_i, layers_j = layers_i or list(range(n_i)), layers_j or list(range(n_j))
    for i in layers_i:
        for j in layers_j:
            rel = low if j <= i else up
            st, rx = _images(rel, rx_acc, shift=7 * i + 3 * j)
            acc, racc = st.mean(), rx.mean()
            rows.append({"sender": sender, "receiver": receiver, "kind": kind, "i": i, "j": j,
                         "cut_i": f"c{i}", "cut_j": f"c{j}", "accuracy": acc, "receiver_accuracy": racc,
                         "penalty": racc - acc, "relative": acc / racc, "correct": st, "receiver_correct": rx,
                         "dm_correct": st, "dm_accuracy": acc})
    return pd.DataFrame(rows)


def _exact_self(table, sender="A"):
    """The self pair's diagonal scores exactly its receiver (per image too)."""
    t = table.copy()
    at = np.flatnonzero(((t.sender == sender) & (t.receiver == sender) & (t.i == t.j)).to_numpy())
    correct = list(t.correct)
    for n in at:
        correct[n] = t.receiver_correct.iloc[n].copy()
    t["correct"] = correct
    t.loc[at, "accuracy"] = t.loc[at, "receiver_accuracy"]
    return t.assign(penalty=t.receiver_accuracy - t.accuracy, relative=t.accuracy / t.receiver_accuracy)


def _set_cells(table, where, rel):
    """Cells where ``where`` holds get relative accuracy ``rel`` (per-image results too)."""
    t = table.copy()
    correct = list(t.correct)
    for n in np.flatnonzero(np.asarray(where)):
        st, _ = _images(rel, shift=n)
        correct[n] = st
        t.loc[n, "accuracy"] = st.mean()
    t["correct"] = correct
    return t.assign(penalty=t.receiver_accuracy - t.accuracy, relative=t.accuracy / t.receiver_accuracy)


def _verdicts(claims):
    from stitchkit.verdicts.results import verdict_of

    return {c.key: verdict_of("demo", all(k.passed for k in c.controls), c.criterion.holds) for c in claims}


def test_recipe_and_architectures():
    spec = zoo.hernandez_resnet(zoo.HERNANDEZ_RESNET["paper"], "r1212", 0)
    t = spec.train
    assert (spec.model, spec.width, t.epochs, t.lr, t.weight_decay, t.batch_size, t.schedule) == (
        "r1212", 64, 40, 0.01, 0.01, 256, "warmup_cosine")
    assert zoo.hernandez_resnet(zoo.HERNANDEZ_RESNET["demo"], "r2222", trained=False).calibrate_bn > 0
    assert len(zoo.HERNANDEZ_ARCHS) == 17
    with pytest.raises(ValueError, match="r3333"):
        zoo.hernandez_resnet(zoo.HERNANDEZ_RESNET["demo"], "r3333")
    with pytest.raises(ValueError, match=r"parameter .controls. = \[.r2222.\] is invalid: architecture.s. 'r2222' not in archs"):
        GridConfig(archs=("r1111",), controls=("r2222",)).check()
    rec = PRESETS_F2["paper"].recipe()
    assert (rec.kind, rec.train.optimizer, rec.train.lr, rec.train.weight_decay, rec.train.epochs) == (
        "strided_or_upsample", "sgd", PAPER_STITCH_LR, 0.01, 4.0)  # the paper's 0.01 fails the control
    assert PRESETS_F2["demo"].recipe().train.lr == 0.01  # width 8 holds the control at 4 epochs
    # H-T1 reads H-F2's diagonal below paper scale (the same stitches, so the same cache keys); the
    # paper's random start at paper scale
    for scale in ("smoke", "demo"):
        assert PRESETS_T1[scale].recipe() == PRESETS_F2[scale].recipe()
    assert PRESETS_T1["paper"].recipe().init == "default"
    # each preset holds its scale's recipe, and builds its networks by it
    for scale in zoo.HERNANDEZ_RESNET:
        assert PRESETS_F2[scale].net == PRESETS_F4[scale].net == zoo.HERNANDEZ_RESNET[scale]
    assert PRESETS_F2["demo"].model("r2222") == zoo.hernandez_resnet(zoo.HERNANDEZ_RESNET["demo"], "r2222")
    assert PRESETS_F2["paper"].networks() == [zoo.hernandez_resnet(zoo.HERNANDEZ_RESNET["paper"], a) for a in ARCHS]
    assert title(PRESETS_F2["demo"]) == "Small ResNets (width 16) on CIFAR-10"  # the recipe's width
    # every sender cut into every receiver cut: stem + blocks
    cfg = PRESETS_F2["smoke"]
    assert cfg.cuts(cfg.model("r1111")) == ["stem", "block1", "block2", "block3", "block4"]
    from dataclasses import replace
    every2 = replace(cfg, cut_every=2)
    assert every2.cuts(cfg.model("resnet34")) == ["stem", *[f"block{k}" for k in range(2, 17, 2)]]
    assert every2.cuts(cfg.model("r1112")) == ["stem", "block2", "block4", "block5"]
    # stage cuts: the stem and each stage's last block, keeping their block numbers (the paper's indexing)
    stages = replace(cfg, cut_at="stages")
    assert stages.layers(cfg.model("resnet34")) == {
        "stem": 0, "block3": 3, "block7": 7, "block13": 13, "block16": 16}
    assert stages.layers(cfg.model("r1211")) == {
        "stem": 0, "block1": 1, "block3": 3, "block4": 4, "block5": 5}
    assert every2.layers(cfg.model("r1112"))["block5"] == 5  # blocks keep their numbers
    assert (stages.layer_name, cfg.layer_name) == ("block", "block")
    with pytest.raises(ValueError, match="parameter .cut_every. = 2 is invalid"):
        replace(stages, cut_every=2).check()
    assert PRESETS_F6["demo"].cut_at == "blocks"  # H-F6 stitches blocks 1-5 whatever H-F2 does
    assert replace(cfg, archs=("r1111", "r2222"), self_pairs=("r2222",)).pairs() == [
        ("r1111", "r2222"), ("r2222", "r1111"), ("r2222", "r2222")]


def _table():
    """A → A (exact on its diagonal), A → B, and the untrained A's control, all clearly on the claims' side."""
    trained = pd.concat([_exact_self(_grid("A", "A", "trained", 5, 5, 0.99, 0.2)),
                         _grid("A", "B", "trained", 5, 9, 0.95, 0.3)], ignore_index=True)
    control = _grid("A (untrained)", "A", "random sender", 5, 5, 0.4, 0.35)
    return pd.concat([trained, control], ignore_index=True)


def _longer(table, cells: dict) -> pd.DataFrame:
    """A training-length sample as :func:`hernandez.verdicts.longer_sample` returns it: ``cells`` maps
    (sender, receiver, i, j) to the relative accuracy of the longer stitch."""
    rows, correct = [], {}
    for n, ((s, r, i, j), rel) in enumerate(cells.items()):
        grid = table[(table.sender == s) & (table.receiver == r) & (table.i == i) & (table.j == j)].iloc[0]
        st, _ = _images(rel, shift=11 * n)
        correct[(s, r, i, j)] = st
        rows.append({"sender": s, "receiver": r, "i": i, "j": j, "grid (%)": 100 * grid.accuracy,
                     "4x epochs (%)": 100 * st.mean(), "gain": 100 * (st.mean() - grid.accuracy)})
    out = pd.DataFrame(rows)
    out.attrs["correct"] = correct
    return out


def test_triangle_claims_are_judged_on_bootstrap_intervals():
    table = _table()
    tri = triangle(table)
    ab = tri[(tri.sender == "A") & (tri.receiver == "B")].iloc[0]
    assert ab.lower == pytest.approx(0.95) and ab.upper == pytest.approx(0.3)
    numbers, claims = grid_summary(table, {"A": 0.8})
    assert _verdicts(claims) == {"lower_high": "reproduced", "upper_low": "reproduced", "random_low": "reproduced"}
    # each judged number is a bootstrapped statistic: the minimum over pairs, with a real interval
    lower = claims[0].criterion
    # in percent of the receiver's accuracy, as every claim of the book states accuracies
    assert lower.value == pytest.approx(numbers["lower_min"]) == pytest.approx(95.0) and lower.unit == "%"
    assert lower.low < 95 < lower.high and lower.high - lower.low < 5 and lower.n_test == N_TEST
    assert claims[0].ours.startswith("min 95.0 [") and "% of the receiver's accuracy" in claims[0].ours
    assert "paired bootstrap" in lower.interval
    # the exact self-stitch has no noise at all: its control's interval is [0, 0]
    assert [numbers[f"control_max_penalty{e}"] for e in ("", "_low", "_high")] == [0, 0, 0]
    assert all(k.passed for c in claims for k in c.controls)


def test_a_lower_triangle_at_its_threshold_is_within_noise():
    table = _table()
    near = _set_cells(table, (table.sender == "A") & (table.receiver == "B") & (table.j <= table.i), 0.9)
    _, claims = grid_summary(near, {"A": 0.8})
    lower = claims[0].criterion
    assert lower.low < 100 * LOWER_MIN < lower.high and lower.holds is None
    assert _verdicts(claims)["lower_high"] == "inconclusive at this scale"


def test_claim_kinds_and_the_controls_each_needs():
    """Issue 46: the lower triangle (stitches work) is 'compatible': positive, negative (the
    paper's untrained-sender bound) and training length; the upper triangle and the untrained
    senders' claim (stitches fail) are 'fails': positive and training length, no negative."""
    from stitchkit.verdicts import controls

    table = _table()
    longer = _longer(table, {("A", "B", 4, 0): 0.95, ("A", "B", 0, 8): 0.3})
    _, claims = grid_summary(table, {"A": 0.8}, longer)
    kinds = {c.key: (c.kind, tuple(k.kind for k in c.controls)) for c in claims}
    assert kinds == {"lower_high": ("compatible", (controls.POSITIVE, controls.NEGATIVE, controls.LENGTH)),
                     "upper_low": ("fails", (controls.POSITIVE, controls.LENGTH)),
                     "random_low": ("fails", (controls.POSITIVE, controls.LENGTH))}
    for c in claims:
        assert {k.kind for k in c.controls} == set(controls.required(c.kind))


def test_the_negative_and_the_one_sided_positive_controls():
    table = _table()
    # a stitch that does the task from random features fails the negative control: the lower
    # triangle (stitches work) is inconclusive; the claims that stitches fail do not need it
    strong = _set_cells(table, table.kind == "random sender", 0.9)
    _, claims = grid_summary(strong, {"A": 0.8})
    assert _verdicts(claims) == {"lower_high": "inconclusive at this scale", "upper_low": "reproduced",
                                 "random_low": "not reproduced"}
    # a self-stitch that adds 3 points by itself passes the one-sided control; its gain is reported
    gains = table.copy()
    diag = np.flatnonzero(((gains.sender == "A") & (gains.receiver == "A") & (gains.i == gains.j)).to_numpy())
    correct = list(gains.correct)
    for n in diag:
        c = gains.receiver_correct.iloc[n].copy()
        c[np.flatnonzero(~c)[:30]] = True  # 30 of 1,000 images the receiver gets wrong
        correct[n] = c
        gains.loc[n, "accuracy"] = c.mean()
    gains["correct"] = correct
    gains = gains.assign(penalty=gains.receiver_accuracy - gains.accuracy)
    numbers, claims = grid_summary(gains, {"A": 0.8})
    assert numbers["control_max_penalty"] == pytest.approx(-3.0)
    assert numbers["self_stitch_gain"] == pytest.approx(3.0)
    assert claims[0].controls[0].passed and "at most 1 points" in claims[0].controls[0].text
    # one that loses 3 points fails it: every claim is inconclusive
    loses = table.copy()
    correct = list(loses.correct)
    for n in diag:
        c = loses.receiver_correct.iloc[n].copy()
        c[np.flatnonzero(c)[:30]] = False
        correct[n] = c
        loses.loc[n, "accuracy"] = c.mean()
    loses["correct"] = correct
    loses = loses.assign(penalty=loses.receiver_accuracy - loses.accuracy)
    _, claims = grid_summary(loses, {"A": 0.8})
    assert set(_verdicts(claims).values()) == {"inconclusive at this scale"}
    # no network stitched into itself: nothing vouches for the recipe
    _, claims = grid_summary(table[~((table.sender == "A") & (table.receiver == "A"))], {"A": 0.8})
    assert "none was stitched" in claims[0].controls[0].text and not claims[0].controls[0].passed
    # no untrained sender: the negative control was not run, and fails
    _, claims = grid_summary(table[table.kind == "trained"], {"A": 0.8})
    assert "not run" in claims[0].controls[1].text and not claims[0].controls[1].passed


def test_training_length_control_rejudges_each_claim_like_for_like():
    table = _table()
    outside = [("A (untrained)", "A", i, j) for i in (0, 2, 4) for j in (0, 2, 4) if i > 1 or j > 1]
    cells = {("A", "B", 4, 0): 0.97, ("A", "B", 0, 8): 0.35, **{c: 0.95 for c in outside}}
    longer = _longer(table, cells)
    swapped = with_longer_sample(table, longer)
    # like for like: exactly the retrained cells change, accuracy and per-image results together
    changed = np.flatnonzero((swapped.accuracy != table.accuracy).to_numpy())
    assert len(changed) == len(cells)
    for n in changed:
        key = tuple(swapped.loc[n, ["sender", "receiver", "i", "j"]])
        assert swapped.correct.iloc[n] is longer.attrs["correct"][key]
        assert swapped.accuracy.iloc[n] == pytest.approx(swapped.correct.iloc[n].mean())
    numbers, claims = grid_summary(table, {"A": 0.8}, longer)
    by_key = {c.key: c for c in claims}
    # the untrained sender's cells, retrained 4x, rise above 0.5 on average: random_low would turn
    length = by_key["random_low"].controls[-1]
    assert "like for like" in length.text and not length.passed
    assert numbers["random_sender_outside_max_longer"] > 100 * RANDOM_MAX
    # the trained cells keep both triangle claims where they were
    for key in ("lower_high", "upper_low"):
        assert by_key[key].controls[-1].passed, key
    assert _verdicts(claims) == {"lower_high": "reproduced", "upper_low": "reproduced",
                                 "random_low": "inconclusive at this scale"}
    assert numbers["longer_cells"] == len(cells)
    with pytest.raises(ValueError, match="0 rows of the table"):
        with_longer_sample(table, _longer(table, {("A", "B", 4, 0): 0.9}).assign(i=7))


def test_a_table_without_per_image_results_is_judged_on_its_point_values():
    table = _table().drop(columns=["correct", "receiver_correct", "dm_correct"])
    numbers, claims = grid_summary(table, {"A": 0.8})
    lower = claims[0].criterion
    assert lower.low == lower.high == lower.value == pytest.approx(95.0) and "no per-image" in lower.interval
    assert _verdicts(claims)["lower_high"] == "reproduced"


def test_stage_cuts_keep_the_papers_block_indexing():
    """Review finding 7: at stage cuts R1111's block 2 into R2222's block 4 lies above the
    diagonal (j = 4 > i = 2), as in the paper's block-indexed grid, not on it (stage 2 = stage 2)."""
    from dataclasses import replace

    stages = replace(PRESETS_F2["smoke"], cut_at="stages")
    si = stages.layers(stages.model("r1111"))
    rj = stages.layers(stages.model("r2222"))
    assert list(si.values()) == [0, 1, 2, 3, 4] and list(rj.values()) == [0, 2, 4, 6, 8]
    assert rj["block4"] > si["block2"]
    # the triangle sorts each cell by those numbers: R1111 -> R2222 has 9 of its 25 cells at j <= i
    table = _grid("R1111", "R2222", "trained", 0, 0, 0.95, 0.3, layers_i=list(si.values()),
                  layers_j=list(rj.values()))
    assert int((table.j <= table.i).sum()) == 9
    row = triangle(table).iloc[0]
    assert row.lower == pytest.approx(0.95) and row.upper == pytest.approx(0.3)


def test_paper_stitch_schedule_is_the_authors_effective_one():
    """The authors' scheduler warms up over 10 epochs while the stitch trains 4: the lr rises
    linearly to 0.4 x lr and never decays. The paper preset copies that (warmup = 2.5)."""
    from stitchkit.networks.train import lr_factor

    t = PRESETS_F2["paper"].recipe().train
    total = 100
    factors = [lr_factor(t, s, total) for s in range(total)]
    assert all(b > a for a, b in zip(factors, factors[1:]))  # never leaves the warmup
    assert factors[-1] == pytest.approx(0.4)
    assert PRESETS_F2["demo"].warmup == 0.05  # demo keeps warmup + cosine


def test_spot_check_is_judged_with_the_page_criteria(tmp_path):
    """A committed spot check: diagonal-only self pairs feed the convergence control, not the
    triangle; a self-stitch that falls during training fails the control and is listed."""
    inter = pd.concat([_grid("A", "B", "trained", 3, 3, 0.95, 0.2), _grid("B", "A", "trained", 3, 3, 0.95, 0.2)])
    inter = inter.assign(dm_accuracy=inter.accuracy, train_loss=0.1)
    selfs = pd.DataFrame([{"sender": n, "receiver": n, "kind": "trained", "i": i, "j": i, "receiver_accuracy": 0.8,
                           "accuracy": 0.8 if (n, i) != ("B", 2) else 0.3, "dm_accuracy": 0.8, "train_loss": 0.1}
                          for n in "AB" for i in range(3)])
    selfs = selfs.assign(penalty=selfs.receiver_accuracy - selfs.accuracy, relative=selfs.accuracy / 0.8)
    table = pd.concat([inter, selfs], ignore_index=True)
    table.to_csv(tmp_path / "spot.csv", index=False)
    (tmp_path / "spot.json").write_text('{"accuracy": {"A": 0.8, "B": 0.8}}')
    table, meta = load_spot("spot", tmp_path)
    claims = spot_claims(table, meta)
    assert claims.verdict.tolist() == ["inconclusive at this scale"] * 2
    assert "2 trained pairs" in claims.criterion[0] and "FAILED" in claims.controls[0]
    diag = spot_diagnosis(table)
    assert diag[["network", "layer i = j"]].values.tolist() == [["B", 2]]
    assert load_spot("missing", tmp_path) is None
    ok = table.assign(accuracy=np.where(table.sender == table.receiver, 0.8, table.accuracy))
    ok = ok.assign(penalty=ok.receiver_accuracy - ok.accuracy)
    # the spot checks ran no untrained sender: the lower triangle's negative control was not run
    # (issue 46), so only the claim that stitches fail above the diagonal is decided
    judged = spot_claims(ok, meta)
    assert judged.verdict.tolist() == ["inconclusive at this scale", "reproduced"]
    assert "not run" in judged.controls[0] and "not run" not in judged.controls[1]


def _sim(table, rel_of_receiver):
    """Similarity-trained stitches (as :func:`hernandez.similarity.similarity_stitches` returns them) at the
    cells H-F5 judges, each at ``rel_of_receiver`` of the receiver (exact on a self diagonal)."""
    cells = hernandez_similarity._similarity_cells(table)
    rows = []
    for n, r in enumerate(cells.itertuples()):
        if r.sender == r.receiver and r.i == r.j:
            st = r.receiver_correct.copy()
        else:
            st, _ = _images(rel_of_receiver, shift=5 * n)
        rows.append({"sender": r.sender, "receiver": r.receiver, "i": r.i, "j": r.j, "cut_i": r.cut_i,
                     "cut_j": r.cut_j, "sim_accuracy": st.mean(), "sim_correct": st, "sim_loss": 0.1})
    return pd.DataFrame(rows)


def test_similarity_claim_compares_with_the_vanilla_stitch():
    """H-F5 (issue 46): the SGD-trained similarity stitch against the vanilla stitch of the same
    cells, kind 'fails': both recipes' positive controls and the training-length control."""
    from stitchkit.verdicts import controls

    table = pd.concat([_exact_self(_grid("A", "A", "trained", 5, 5, 0.95, 0.3)),
                       _grid("A", "B", "trained", 5, 5, 0.95, 0.3)], ignore_index=True)
    sim = _sim(table, 0.2)  # 0.2 of the receiver where the vanilla stitch has 0.95: a ratio near 21%
    numbers, claims = similarity_summary(table, sim)
    c = claims[0]
    # without its longer stitches the training-length control is there, "not run", and fails
    assert c.kind == "fails" and [k.kind for k in c.controls] == [controls.POSITIVE, controls.POSITIVE, controls.LENGTH]
    assert not c.controls[-1].passed
    assert numbers["similarity_below_max"] == pytest.approx(100 * 0.2 / 0.95, abs=0.5)
    assert c.criterion.holds and c.criterion.low < numbers["similarity_below_max"] < c.criterion.high
    assert c.criterion.unit == "%" and "paired bootstrap" in c.criterion.interval
    assert all(k.passed for k in c.controls[:-1])  # both positive controls pass
    # a similarity-trained stitch as good as the vanilla one: not reproduced
    _, claims = similarity_summary(table, _sim(table, 0.95))
    assert claims[0].criterion.holds is False
    # a similarity recipe that cannot reproduce a network from itself fails its positive control
    bad = sim.copy()
    own = np.flatnonzero(((bad.sender == bad.receiver) & (bad.i == bad.j)).to_numpy())
    for n in own:
        st, _ = _images(0.9, shift=n)
        bad.at[n, "sim_correct"], bad.at[n, "sim_accuracy"] = st, st.mean()
    _, claims = similarity_summary(table, bad)
    assert not claims[0].controls[1].passed and claims[0].controls[0].passed
    # the training-length control: the deciding pair's cells, both stitches retrained, swapped in
    below = sim[(sim.j < sim.i) & (sim.sender == "A") & (sim.receiver == "B")]
    longer = below.assign(sim_accuracy=0.8 * 0.95, sim_correct=[_images(0.95, shift=k)[0] for k in range(len(below))],
                          accuracy=below.sim_accuracy, correct=[_images(0.95, shift=k)[0] for k in range(len(below))])
    longer = longer.assign(sim_accuracy=[c.mean() for c in longer.sim_correct])
    _, claims = similarity_summary(table, sim, longer)
    assert claims[0].controls[-1].kind == controls.LENGTH and not claims[0].controls[-1].passed
    _, claims = similarity_summary(table, sim, below.assign(
        accuracy=[table.set_index(["sender", "receiver", "i", "j"]).accuracy.loc[k] for k in
                  zip(below.sender, below.receiver, below.i, below.j)],
        correct=[table.set_index(["sender", "receiver", "i", "j"]).correct.loc[k] for k in
                 zip(below.sender, below.receiver, below.i, below.j)]))
    assert claims[0].controls[-1].passed


def test_similarity_recipe_is_the_grids_from_a_random_start():
    cfg = PRESETS_F5["demo"]
    r = similarity_recipe(cfg)
    assert r.init == "default" and r.train.epochs == cfg.similarity_epochs == 10
    assert (r.kind, r.train.lr, r.train.batch_size, r.train_size) == (
        cfg.recipe().kind, cfg.recipe().train.lr, cfg.recipe().train.batch_size, cfg.recipe().train_size)
    assert similarity_recipe(cfg, 4).train.epochs == 40
    assert similarity_recipe(PRESETS_F5["paper"]).train.epochs == 30
    assert PRESETS_F5["smoke"].similarity_epochs == 1
    # H-F5 reads H-F2's grid: the same stitches and networks at every scale
    for scale, f2 in PRESETS_F2.items():
        assert PRESETS_F5[scale].recipe() == f2.recipe() and PRESETS_F5[scale].networks() == f2.networks()
    # gpu: the paper's lr 0.01 with a 5% warm-up (the grid's stitch: lr 0.001, the authors' warm-up)
    gpu = similarity_recipe(PRESETS_F5["gpu"]).train
    assert (gpu.lr, gpu.warmup, gpu.epochs) == (0.01, 0.05, 30.0)


def _per(ev, es, sv, n=400, seed=0):
    """Per-stitch means and per-image values (attrs) around the given means: a stitch's per-image
    MSE is its mean times a shared per-image factor (mean 1) plus a little noise."""
    rng = np.random.default_rng(seed)
    k = len(ev)
    per = pd.DataFrame({"sender": ["A"] * (k - 1) + ["B"], "receiver": ["B"] * k, "i": list(range(k - 1)) + [1],
                        "j": list(range(k - 1)) + [1]})
    images = {}
    for name, means in (("EV", ev), ("ES", es), ("SV", sv)):
        x = np.asarray(means, float)[:, None] * rng.gamma(20, 1 / 20, size=(k, n))
        images[name] = x
        per[name] = x.mean(1)
    per.attrs["per_image"] = images
    return per


def _many(ev, es, sv, copies=5):
    """``copies`` stitches of each judged pattern, then the exact self-stitch (the lists' last)."""
    return [x for x in ev[:-1] for _ in range(copies)] + [ev[-1]], \
        [x for x in es[:-1] for _ in range(copies)] + [es[-1]], [x for x in sv[:-1] for _ in range(copies)] + [sv[-1]]


def test_mse_claims_closer_can_fail_and_carry_intervals():
    stats = pd.DataFrame({k: {"minimum": 0.0, "mean": 1.0, "maximum": 2.0, "standard deviation": 0.5}
                          for k in ("EV", "ES", "SV")})
    grid = _exact_self(_grid("B", "B", "trained", 3, 3, 1.0, 0.3))
    pattern = ([1.0, 2.0, 3.0, 1e-3, 0.5], [0.1, 0.5, 0.01, 1e-2, 1e-30], [0.9, 1.5, 3.0, 0.5, 0.5])
    # ES the smallest of the three in 3 of 4 judged stitches (B into B at i = j is left out): with
    # only 4 stitches the share is that uncertain (issue 46: the stitches are resampled too, not
    # only the test images, which left H-T1's 'closer' at 50 [50, 50])
    numbers, claims = mse_summary(_per(*pattern), stats, grid, "test")
    c = claims[0].criterion
    assert numbers["closer_percent"] == 75 and c.low < 75 < c.high and c.high - c.low > 20 and c.holds is None
    assert "stitches" in c.interval and [k.kind for k in claims] == ["stitch_other", "stitch_other"]
    # 20 stitches of the same patterns: decided
    numbers, claims = mse_summary(_per(*_many(*pattern)), stats, grid, "test")
    assert numbers["closer_percent"] == 75 and claims[0].criterion.unit == "%"
    assert numbers["median_ratio"] == pytest.approx((4 + 10) / 2, rel=0.05)
    assert [c.criterion.holds for c in claims] == [True, True]
    assert claims[1].criterion.low < claims[1].criterion.value < claims[1].criterion.high
    assert all(k.passed for k in claims[0].controls)
    # V close to the least-squares S: ES < EV everywhere (S is the optimum), but ES above SV, so
    # EV < 2 ES: the prediction that ES is the smallest fails (it could not with ES < EV alone);
    # a share of 0 on every resample gets the exact binomial interval over the stitches
    near = _per(*_many([1.2, 2.4, 3.3, 1.1, 0.5], [1.0, 2.0, 3.0, 1.0, 1e-30], [0.2, 0.4, 0.3, 0.1, 0.5]))
    numbers, claims = mse_summary(near, stats, grid, "test")
    assert numbers["es_below_ev_percent"] == 100 and numbers["closer_percent"] == 0
    assert claims[0].criterion.holds is False and claims[1].criterion.holds is True
    assert 0 == claims[0].criterion.low < claims[0].criterion.high < 50 and "Clopper" in claims[0].criterion.interval
    # a task-trained stitch that never left the least-squares one: the control fails, inconclusive
    still = near.assign(SV=1e-6)
    still.attrs = {}  # judged on its point values, as a spot check's summary
    _, claims = mse_summary(still, stats, grid, "test")
    assert not all(k.passed for k in claims[0].controls)
    # only exact self-stitches (one network's diagonal, as at smoke): nothing to judge, a failed control says so
    per = _per(*pattern)
    _, claims = mse_summary(per.iloc[[4]], stats, grid, "test")
    assert claims[0].criterion.holds is None and not claims[0].controls[-1].passed


def test_images_verdict_and_its_training_length_control():
    table = pd.DataFrame({"i": [0, 1, 2], "accuracy": [0.5, 0.45, 0.4], "receiver_accuracy": [0.6] * 3})
    rng = np.random.default_rng(0)
    per_image = {k: np.clip(m + 0.2 * rng.standard_normal(500), -1, 1) for k, m in ((0, 0.8), (1, 0.6), (2, 0.4))}
    corr = LayerScores({k: float(v.mean()) for k, v in per_image.items()}, per_image)
    numbers, claims = images_summary(table, corr)
    c = claims[0].criterion
    assert numbers["granularity_rho"] == pytest.approx(-1.0) and c.holds and c.high == pytest.approx(-1.0)
    assert "bootstrap" in c.interval and claims[0].kind == "stitch_other"
    # no self-stitch given: the positive control was not run, and fails
    assert [k.kind for k in claims[0].controls] == ["positive"] and not claims[0].controls[0].passed
    self_table = _exact_self(_grid("A", "A", "trained", 3, 3, 1.0, 0.3)).pipe(lambda t: t[t.i == t.j])
    numbers, claims = images_summary(table, corr, self_table=self_table)
    assert claims[0].controls[0].passed and numbers["self_stitch_gain"] == 0
    # layers whose images barely differ: the ranks swap from resample to resample, within noise
    flat = {k: np.clip(0.5 + 0.01 * k + 0.3 * rng.standard_normal(500), -1, 1) for k in range(3)}
    _, claims = images_summary(table, LayerScores({k: float(v.mean()) for k, v in flat.items()},
                                                                      flat))
    assert claims[0].criterion.holds is None
    # with every stitch trained 4x longer the images no longer lose detail with depth: the control fails
    longer = pd.DataFrame({"i": [0, 1, 2], "gain": [0.0, 1.0, 8.0], "correlation (4x)": [0.4, 0.6, 0.8]})
    numbers, claims = images_summary(table, corr, longer)
    assert not claims[0].controls[-1].passed and numbers["granularity_rho_longer"] == pytest.approx(1.0)
    _, claims = images_summary(table, corr, longer.assign(**{"correlation (4x)": [0.7, 0.5, 0.3]}))
    assert claims[0].controls[-1].passed and claims[0].controls[-1].kind == "training length"
    with pytest.raises(ValueError, match="2 layers"):
        images_summary(table.iloc[:2], {0: 0.8, 1: 0.6})



def test_stitches_cached_without_per_image_results_are_an_error_not_a_narrower_interval():
    table = _table()
    table["correct"] = [None] * len(table)  # entries stored before per-image results were kept
    with pytest.raises(ValueError, match="clear their cache entries"):
        grid_summary(table, {"A": 0.8})
    longer = _longer(_table(), {("A", "B", 4, 0): 0.97})
    longer.attrs = {}
    with pytest.raises(ValueError, match="keeps no per-image results"):
        with_longer_sample(_table(), longer)


def test_longer_sample_retrains_the_whole_triangle_of_each_deciding_pair(monkeypatch):
    """Review (2026-11-24): the pair that decides ``lower_high`` (lowest mean at j <= i) has every
    such cell retrained, the pair that decides ``upper_low`` (highest mean at j > i) every cell
    above the diagonal, whichever pairs they are; each claim's control names its cells."""
    from dataclasses import replace

    cfg = replace(PRESETS_F2["smoke"], archs=("r1111", "r2222"), controls=("r1111",))
    names = {n: display_name(n) for n in cfg.archs}
    r1, r2 = names["r1111"], names["r2222"]
    table = pd.concat([_exact_self(_grid(r1, r1, "trained", 3, 3, 0.99, 0.2), r1),
                       _exact_self(_grid(r2, r2, "trained", 3, 3, 0.99, 0.2), r2),
                       _grid(r1, r2, "trained", 3, 3, 0.97, 0.6),   # the highest mean above the diagonal
                       _grid(r2, r1, "trained", 3, 3, 0.90, 0.3)], ignore_index=True)  # the lowest below
    seen = {}

    def retrained(sender, receiver, cells, cfg_, grid, **kw):
        seen[(sender.name, receiver.name)] = sorted(cells)
        return pd.DataFrame(columns=["sender", "receiver", "i", "j", "grid (%)", "4x epochs (%)", "gain", "correct"])

    monkeypatch.setattr(hernandez_verdicts, "_retrained", retrained)
    monkeypatch.setattr(pd, "concat", lambda parts, **kw: parts[0])
    out = longer_sample(table, cfg)
    below = sorted((f"c{i}", f"c{j}") for i in range(3) for j in range(3) if j <= i)
    above = sorted((f"c{i}", f"c{j}") for i in range(3) for j in range(3) if j > i)
    assert seen[(r2, r1)] == below and seen[(r1, r2)] == above
    assert (r1, r1) not in seen and (r2, r2) not in seen  # exact self pairs decide nothing here
    assert out.attrs["cells"]["lower_high"] == f"all 6 cells at j ≤ i of {r2} → {r1}"
    assert out.attrs["cells"]["upper_low"] == f"all 3 cells at j > i of {r1} → {r2}"


def test_mse_length_control_retrains_the_stitches_nearest_the_decision(monkeypatch):
    import torch

    from stitchkit.stitching import grid as grid_mod
    from stitchkit.stitching import longer as longer_mod

    stats = pd.DataFrame({k: {"minimum": 0.0, "mean": 1.0, "maximum": 2.0, "standard deviation": 0.5}
                          for k in ("EV", "ES", "SV")})
    per = _per(*_many([1.0, 2.0, 3.0, 1e-3, 0.5], [0.1, 0.5, 0.01, 1e-2, 1e-30], [0.9, 1.5, 3.0, 0.5, 0.5], copies=2))
    table = per[["sender", "receiver", "i", "j"]].assign(
        kind="trained", cut_i=[f"c{i}" for i in per.i], cut_j=[f"c{j}" for j in per.j], accuracy=0.6,
        receiver_accuracy=0.6)
    _, claims = mse_summary(per, stats, table, "test")
    assert all(k.passed for k in claims[0].controls)
    cfg = PRESETS_T2["demo"]
    monkeypatch.setattr(hernandez_mse, "trained_nets", lambda cfg: {"A": "net A", "B": "net B"})
    trained = []
    monkeypatch.setattr(longer_mod, "stitch_grid", lambda s, r, pairs, recipe, data, **kw: trained.append(
        (s[0], r[0], pairs[0], recipe.train.epochs)) or pd.DataFrame())
    n = per.attrs["per_image"]["EV"].shape[1]

    def longer_mse(sender, receiver, cut_i, cut_j, recipe, data, *, n_images, **kw):
        # at 4x the task-trained stitch lands on the least-squares one's neighbourhood: EV and SV tiny
        return {"EV": torch.full((n,), 1e-4, dtype=torch.float64), "ES": torch.full((n,), 0.1, dtype=torch.float64),
                "SV": torch.full((n,), 1e-4, dtype=torch.float64)}

    monkeypatch.setattr(grid_mod, "stitch_mse", longer_mse)
    out = mse_longer(table, per, stats, cfg, claims, "test", diagonal=False, n_images=n)
    # every claim gets the control, decided or not (issue 46)
    assert len(out) == 8 and len(trained) == 8  # every judged stitch (8 = MSE_SAMPLE); the exact self-stitch not
    assert all(e == LONGER * cfg.recipe().train.epochs for *_, e in trained)
    assert [k.kind for k in claims[0].controls][-1] == "training length" and len(claims[1].controls) == 3
    assert not claims[0].controls[-1].passed  # ES is now nowhere the smallest: 'closer' turns
    assert np.allclose(out["EV 4x"], 1e-4) and np.allclose(sorted(out.EV), sorted(per.EV.iloc[:8]))


def test_h_f6_rho_that_no_resample_moves_is_exact_with_its_reason():
    """A rank over well-separated layers gives the same ρ on every resample: stated as exact, with
    what is not in it (between-network variance), not a collapsed interval the noise control fails."""
    import numpy as np

    from stitchkit.experiments.hernandez import images
    from stitchkit.verdicts.results import unexplained_zero_width

    class Corr(dict):
        pass

    corr = Corr({k: 0.9 - 0.1 * k for k in range(5)})
    rng = np.random.default_rng(0)
    corr.per_image = {k: 0.9 - 0.1 * k + 0.001 * rng.standard_normal(200) for k in range(5)}
    e = images._rho_estimate(corr)
    assert e.value == e.low == e.high == pytest.approx(-1.0) and e.method == images.RANK_STABLE
    assert not unexplained_zero_width({"low": e.low, "high": e.high, "interval": e.describe()})
    corr.per_image = {k: 0.9 - 0.01 * k + 0.2 * rng.standard_normal(200) for k in range(5)}  # noisy: an interval
    e = images._rho_estimate(corr)
    assert e.low < e.high
