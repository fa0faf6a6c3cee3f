"""Balogh & Jelasity: model recipes, layer identification and the specificity test's pieces."""

import dataclasses

import numpy as np
import pandas as pd
import pytest
import torch

from stitchkit.experiments.balogh import common
from stitchkit.experiments.balogh import detectors as balogh_ood
from stitchkit.experiments.balogh import ding, identification, identification_display, identification_verdicts
from stitchkit.measures import probes, similarity
from stitchkit.networks import zoo
from stitchkit.verdicts import noise


def test_recipes():
    rn, vit = zoo.balogh_model(zoo.BALOGH_RESNET18["paper"], 3), zoo.balogh_model(zoo.BALOGH_VIT["paper"], 3)
    for spec in (rn, vit):
        t = spec.train
        assert (spec.normalisation, t.optimizer, t.lr, t.weight_decay, t.batch_size, t.epochs, t.augment) == (
            "none", "adam", 1e-3, 1e-5, 64, 100, True)
        assert spec.seed == 3
    assert (rn.model, rn.width) == ("resnet18", 64)
    assert (vit.model, vit.width, dict(vit.options)) == ("vit_ti", 192, {"depth": 12, "heads": 3})
    with pytest.raises(ValueError, match="balogh_resnet18 or balogh_vit recipe"):
        zoo.balogh_model(zoo.BANSAL_RESNET18["demo"])
    cfg = identification.PRESETS_T1["paper"]
    rec = cfg.recipe(tlm=True)
    assert (rec.kind, rec.init, rec.dm_images, rec.train.optimizer, rec.train.lr, rec.train.weight_decay,
            rec.train.batch_size, rec.train.epochs) == ("resize_conv", "dm", 100, "adam", 1e-3, 1e-5, 256, 30)
    assert cfg.recipe(tlm=False).train.epochs == 0  # direct matching alone
    nets = cfg.nets("resnet18")
    assert len(nets) == 10 and cfg.layers(nets[0]) == [f"block{k}" for k in range(1, 9)]
    assert nets[3].spec == zoo.balogh_model(zoo.BALOGH_RESNET18["paper"], 3)  # the recipe the preset holds
    assert identification.PRESETS_T1["demo"].inter_pairs() == [(0, 1), (1, 0)]
    assert len(common.IdentConfig(networks=3).inter_pairs()) == 6


def test_identified_counts_ties_for_the_layer_itself():
    sim_matrix = np.array([[1.0, 0.2, 0.9], [0.5, 0.8, 0.9], [0.1, 0.9, 0.7]])
    # column 0: row 0 best; column 1: row 2 beats the diagonal; column 2: rows 0, 1 beat row 2
    assert identification.identified(sim_matrix, True).tolist() == [True, False, False]
    tie = np.array([[1.0, 0.0], [1.0, 1.0]])
    assert identification.identified(tie, True).tolist() == [True, True]
    # a distance: smaller is more similar
    assert identification.identified(np.array([[0.0, 0.3], [0.2, 0.1]]), False).tolist() == [True, True]
    assert identification.identified(np.array([[0.5, 0.0], [0.2, 0.1]]), False).tolist() == [False, False]


def test_identification_table_counts_cases_and_keeps_the_papers_numbers():
    eye = np.eye(3)
    bad = np.ones((3, 3)) - np.eye(3)  # every other layer more similar than the layer itself
    higher = identification.HIGHER_IS_SIMILAR
    mats = {("a", "a"): {m: (eye if higher[m] else bad) for m in identification.MEASURES},
            ("a", "b"): {m: (bad if higher[m] else eye) for m in identification.MEASURES if m != "tlm"}}
    res = identification.IdentResult(arch="resnet18", layers=["block1", "block2", "block3"], matrices=mats,
                                     dm=pd.DataFrame(), tlm=pd.DataFrame(), accuracy={})
    table = identification.identification_table(res)
    assert table.loc["LCKA", "intra (%)"] == 100 and table.loc["LCKA", "inter (%)"] == 0
    assert table.loc["OPD", "intra (%)"] == 100 and table.loc["OPD", "inter (%)"] == 0
    assert table.loc["TLM", "inter cases"] == 0 and np.isnan(table.loc["TLM", "inter (%)"])
    assert table.loc["LCKA", "intra cases"] == 3
    assert table.loc["TLM", "paper intra (%)"] == 63.75
    same = identification.identification_table(res, same_cases_as_tlm=True)
    assert same.loc["LCKA", "inter cases"] == 0  # TLM was not run between a and b


def test_pwcca_takes_its_weights_from_the_narrower_side():
    g = torch.Generator().manual_seed(0)
    wide, narrow = torch.randn(500, 8, generator=g), torch.randn(500, 4, generator=g)
    d = similarity.pwcca(wide, narrow)  # would be refused with the wide side's weights
    assert 0 <= d <= 1 and d == similarity.pwcca(narrow, wide)
    same = torch.randn(500, 6, generator=g)
    assert similarity.pwcca(same, same) == pytest.approx(0, abs=1e-9)


def test_probe_features_and_probe():
    assert probes.probe_features(torch.zeros(5, 8, 32, 32)).shape == (5, 8 * 16)
    assert probes.probe_features(torch.zeros(5, 8, 2, 2)).shape == (5, 8 * 4)
    assert probes.probe_features(torch.zeros(5, 65, 12)).shape == (5, 24)
    g = torch.Generator().manual_seed(0)
    y = torch.randint(0, 3, (600,), generator=g)
    x = torch.nn.functional.one_hot(y, 3).float() * 3 + 0.1 * torch.randn(600, 3, generator=g)
    assert probes.probe_accuracy(x[:400], y[:400], x[400:], y[400:], epochs=100) > 0.95




def test_low_rank_approximation_keeps_full_rank_and_reduces_the_rest():
    g = torch.Generator().manual_seed(0)
    h = torch.randn(20, 6, 4, 4, generator=g)
    lra = similarity.LowRank(h)
    assert lra.full == 6
    assert torch.allclose(lra(h, 6), h, atol=1e-5)
    rows = similarity.to_feature_rows(lra(h, 2))
    centred = rows - rows.mean(0)
    assert torch.linalg.matrix_rank(centred.double(), rtol=1e-6) == 2
    tokens = torch.randn(10, 5, 8, generator=g)
    assert torch.allclose(similarity.LowRank(tokens)(tokens, 8), tokens, atol=1e-5)
    assert similarity.rank_list(64, 14)[0] == 64 and similarity.rank_list(64, 14)[-1] == 1
    assert similarity.rank_list(4, 14) == [4, 3, 2, 1]


N_TEST = 400
_BASE = np.random.default_rng(0).random(N_TEST)  # one "difficulty" per test image: nested per-image results


def _correct(p: float) -> np.ndarray:
    """Per-image results of accuracy ~p; a higher p gets every image a lower one gets (paired)."""
    return _BASE < p


def _grid(cells: dict, recv: float = 0.8, dm: dict | None = None) -> pd.DataFrame:
    """A grid table from {(sender, receiver, cut_i, cut_j): accuracy} with per-image results."""
    rows = []
    for (a, b, i, j), p in cells.items():
        d = (dm or {}).get((a, b, i, j), p)
        c, dc = _correct(p), _correct(d)
        rows.append({"sender": a, "receiver": b, "cut_i": i, "cut_j": j, "accuracy": c.mean(),
                     "receiver_accuracy": _correct(recv).mean(), "dm_accuracy": dc.mean(),
                     "penalty": _correct(recv).mean() - c.mean(), "correct": c, "receiver_correct": _correct(recv),
                     "dm_correct": dc, "dm_residual": 0.1})
    return pd.DataFrame(rows)


LAYERS = [f"block{k}" for k in range(1, 5)]


def _ident_result(tlm_intra: np.ndarray, tlm_inter: np.ndarray,
                  dm_intra: np.ndarray | None = None) -> identification.IdentResult:
    """A J-T1 result for networks 'R #0', 'R #1': TLM (relative-to-0.8 accuracy matrices, rows:
    source i) within #0 and from #0 into #1; DM within both and between both ways; the structural
    measures identify everything within and nothing between."""
    n = len(LAYERS)
    dm_intra = np.eye(n) * 0.8 + (1 - np.eye(n)) * 0.5 if dm_intra is None else dm_intra
    tlm_cells, dm_cells, tlm_dm = {}, {}, {}
    for i in range(n):
        for j in range(n):
            c = (LAYERS[i], LAYERS[j])
            tlm_cells[("R #0", "R #0", *c)] = tlm_intra[i, j]
            tlm_cells[("R #0", "R #1", *c)] = tlm_inter[i, j]
            tlm_dm[("R #0", "R #0", *c)] = tlm_dm[("R #0", "R #1", *c)] = 0.3
            for a, b in (("R #0", "R #0"), ("R #1", "R #1")):
                dm_cells[(a, b, *c)] = dm_intra[i, j]
            for a, b in (("R #0", "R #1"), ("R #1", "R #0")):
                dm_cells[(a, b, *c)] = 0.7 if i == j else 0.4
    tlm, dm = _grid(tlm_cells, dm=tlm_dm), _grid(dm_cells)
    good, bad = np.eye(n), 1 - np.eye(n)
    mats = {}
    for a in ("R #0", "R #1"):
        for b in ("R #0", "R #1"):
            m = {k: (good if identification.HIGHER_IS_SIMILAR[k] else bad) if a == b else
                 (bad if identification.HIGHER_IS_SIMILAR[k] else good) for k in ("pwcca", "opd", "lcka", "dm_struct")}
            rows = dm[(dm.sender == a) & (dm.receiver == b)]
            m["dm_func"] = identification._matrix(rows.assign(rel=rows.dm_accuracy / rows.receiver_accuracy), "rel",
                                                  LAYERS, LAYERS)
            t = tlm[(tlm.sender == a) & (tlm.receiver == b)]
            if len(t):
                m["tlm"] = identification._matrix(t.assign(rel=t.accuracy / t.receiver_accuracy), "rel", LAYERS, LAYERS)
            mats[(a, b)] = m
    return identification.IdentResult(arch="resnet18", layers=LAYERS, matrices=mats, dm=dm, tlm=tlm, accuracy={})


def _by_key(claims):
    return {c.key: c for c in claims}


def test_tlm_identification_is_judged_on_its_bootstrap_interval():
    n = len(LAYERS)
    # within: TLM identifies every layer by wide margins (100% > 90%: "TLM fails" not reproduced)
    intra = np.eye(n) * 0.8 + (1 - np.eye(n)) * 0.4
    # between: layer 1's rival beats its own stitch by 0.5 points, within noise; the rest far apart
    inter = np.eye(n) * 0.6 + (1 - np.eye(n)) * 0.2
    inter[1, 0] = 0.605
    res = _ident_result(intra, inter)
    numbers, claims = identification_verdicts.identification_claims(res)
    c = _by_key(claims)
    # 4 of 4 cases at the limit: the exact binomial bound [52.7, 100] straddles 90 (within noise; from 36
    # cases on, n of n would be "not reproduced")
    t = c["tlm_intra_rn"].criterion
    assert t.holds is None and "4 of 4 cases" in t.interval
    assert (t.value, t.high, t.threshold, t.direction) == (100.0, 100.0, 90.0, "<=")
    assert t.low == pytest.approx(100 * 0.025 ** (1 / 4))
    assert numbers["rn_intra_cases_to_decide"] == 36 and "fewer than the 36" in c["tlm_intra_rn"].ours
    # between: 75% on the grid (3 of 4 layers), the rival's lead within noise: the interval reaches 100%;
    # the layer cases are drawn with replacement too (the cluster bootstrap), so it reaches far below 75
    assert numbers["rn_tlm_inter"] == 75.0 and numbers["rn_tlm_inter_low"] <= 50.0
    assert numbers["rn_tlm_inter_high"] == 100.0
    assert "target layers (drawn with replacement" in c["tlm_inter_rn"].criterion.interval
    # the one-sided positive control: the TLM self-stitches (0.8 each, the receiver's 0.8) pass
    ctrl = c["tlm_intra_rn"].controls
    assert ctrl[0].passed and ctrl[0].kind == "positive" and "loses at most" in ctrl[0].text
    assert ctrl[1].passed  # TLM moved 10+ points over DM
    # without the longer stitches the training-length control is there, and fails (not run)
    assert ctrl[-1].kind == "training length" and not ctrl[-1].passed and "not run" in ctrl[-1].text
    assert {c[k].kind for k in ("tlm_intra_rn", "tlm_inter_rn", "dm_func_inter_rn")} == {"stitch_other"}
    assert {c[k].kind for k in ("others_intra_rn", "cca_inter_rn")} == {"no_stitch"}
    assert not c["others_intra_rn"].controls and not c["cca_inter_rn"].controls
    # a self-stitch that *adds* 3 points passes (the gain is reported, not gated); one that loses 3 fails
    cell = ((res.tlm.sender == "R #0") & (res.tlm.receiver == "R #0") & (res.tlm.cut_i == "block2")
            & (res.tlm.cut_j == "block2"))
    res.tlm.loc[cell, "correct"] = pd.Series([_correct(0.83)], dtype=object).values
    res.tlm.loc[cell, "accuracy"] = _correct(0.83).mean()
    assert common.tlm_controls(res.tlm)[0].passed
    assert common.tlm_gain_numbers(res.tlm, "g")["g_gain"] == pytest.approx(100 * (_correct(0.83).mean() - _correct(0.8).mean()))
    res.tlm.loc[cell, "correct"] = pd.Series([_correct(0.77)], dtype=object).values
    assert not common.tlm_controls(res.tlm)[0].passed


def test_others_intra_counts_a_rival_dm_stitch_as_beating_only_beyond_noise():
    n = len(LAYERS)
    dm = np.eye(n) * 0.8 + (1 - np.eye(n)) * 0.5
    dm[1, 0] = 0.8025  # one rival above the self-map by one image in 400: within noise
    res = _ident_result(np.eye(n), np.eye(n), dm_intra=dm)
    numbers, claims = identification_verdicts.identification_claims(res)
    crit = _by_key(claims)["others_intra_rn"].criterion
    # the tie rule: a rival ahead by less than noise is a tie, and a tie is identified (before: inconclusive)
    # (8 cases, 2 networks x 4 layers: at 100% the exact bound [63.1, 100] keeps it within noise of the 90% bar)
    assert crit.holds is None and crit.value == 100 and numbers["rn_dm_func_intra"] == 75.0  # the strict rule
    assert numbers["rn_dm_func_intra_ties"] == 100.0 and numbers["rn_dm_func_intra_rivals_point"] == 2
    assert numbers["rn_dm_func_intra_rivals_beat"] == 0
    # every network at 100% and no resample moving a case: the count's exact bound, with the reason
    assert numbers["rn_intra_cases"] == 8 and crit.high == 100 and crit.low == pytest.approx(100 * 0.025 ** (1 / 8))
    assert "8 of 8 cases" in crit.interval and "no sampling noise left" in crit.interval
    dm[1, 0] = 0.9  # beyond noise: one layer is shown beaten (6 of 8 cases), but the layer cases are
    res = _ident_result(np.eye(n), np.eye(n), dm_intra=dm)  # resampled too: 4 layers cannot tell 75 from 90
    crit = _by_key(identification_verdicts.identification_claims(res)[1])["others_intra_rn"].criterion
    assert crit.value == 75.0 and crit.holds is None and crit.high >= 90
    dm[2, 1] = dm[3, 2] = 0.9  # three of the four shown beaten: 25%, but 4 layer cases still cannot rule out 90
    res = _ident_result(np.eye(n), np.eye(n), dm_intra=dm)
    crit = _by_key(identification_verdicts.identification_claims(res)[1])["others_intra_rn"].criterion
    assert crit.value == 25.0 and crit.holds is None and crit.high >= 90
    res = _ident_result(np.eye(n), np.eye(n))  # every rival clearly below: 4 of 4, within noise of the bar
    assert _by_key(identification_verdicts.identification_claims(res)[1])["others_intra_rn"].criterion.holds is None


def test_tlm_length_control_retrains_every_cases_rival_and_its_own_stitch(monkeypatch):
    n = len(LAYERS)
    intra = np.eye(n) * 0.8 + (1 - np.eye(n)) * 0.4
    inter = np.eye(n) * 0.6 + (1 - np.eye(n)) * 0.2
    inter[3, 1] = 0.5  # layer 2's strongest rival between networks is layer 4
    res = _ident_result(intra, inter)
    asked = []

    def retrained(cfg, arch, cells, **kw):  # 4x: between networks, the rivals overtake every own stitch
        asked.extend(cells)
        acc = [0.9 if (c[1] == "R #1" and c[2] != c[3]) else 0.8 if c[2] == c[3] else 0.3 for c in cells]
        return pd.DataFrame({"sender": [c[0] for c in cells], "receiver": [c[1] for c in cells],
                             "cut_i": [c[2] for c in cells], "cut_j": [c[3] for c in cells],
                             "relative": [a / 0.8 for a in acc], "accuracy": [_correct(a).mean() for a in acc],
                             "correct": [_correct(a) for a in acc]})

    monkeypatch.setattr(identification, "tlm_retrained", retrained)
    rivals = identification.identification_longer(identification.PRESETS_T1["smoke"], res)
    # every case, identified or not: its own stitch and its strongest rival (2 pairs x 4 layers)
    assert len(rivals) == 8 and len(set(asked)) == 16
    assert ("R #0", "R #1", "block4", "block2") in asked and ("R #0", "R #0", "block3", "block3") in asked
    assert rivals[rivals.receiver == "R #1"].identified_longer.sum() == 0
    numbers, claims = identification_verdicts.identification_claims(res, rivals)
    c = _by_key(claims)
    assert numbers["rn_tlm_inter"] == 100.0 and numbers["rn_tlm_inter_longer"] == 0.0
    length = c["dm_func_inter_rn"].controls[-1]
    # "DM (func.) beats TLM between networks" fails on the grid (100% each) and holds at 4x: the control fails
    assert c["dm_func_inter_rn"].criterion.holds is False and not length.passed
    assert length.record["rule"] == "same" and length.record["base_holds"] is False
    assert c["tlm_inter_rn"].controls[-1].passed  # LCKA 0% between: fails at 1x and at 4x
    # within: still 100% at 4x, the same verdict
    assert c["tlm_intra_rn"].controls[-1].passed
    assert not any("longer" in k.text for k in c["others_intra_rn"].controls)
    table = identification_display.rivals_table({"resnet18": rivals})
    assert list(table.columns)[-1] == "still identified" and len(table) == 8


def _far_result(rel: np.ndarray) -> balogh_ood.OODResult:
    n = rel.shape[0]
    layers = [f"block{k}" for k in range(1, n + 1)]
    cells = {("R #0", "R #0", layers[i], layers[j]): 0.8 * rel[i, j] for i in range(n) for j in range(n)}
    tlm = _grid(cells, dm={k: 0.3 for k in cells})
    rows = [{"method": "TLM", "kind": "intra", "i": i + 1, "j": j + 1, "cut_i": layers[i], "cut_j": layers[j],
             "relative": rel[i, j], "auroc": 0.5} for i in range(n) for j in range(n)]
    table = pd.DataFrame(rows)
    reps = np.full((noise.RESAMPLES + 1, len(rows)), 0.5)
    det = {k: np.full((noise.RESAMPLES + 1, n), v) for k, v in (("near", 0.9), ("far", 1.0), ("held", 0.5))}
    return balogh_ood.OODResult(arch="resnet18", layers=layers, names=("R #0", "R #1"), table=table, auroc_reps=reps,
                                detectors=pd.DataFrame(), detector_reps=det, n_test=N_TEST, energies={}, tlm=tlm)


def test_far_layers_length_control_retrains_the_far_pairs_and_their_self_stitches(monkeypatch):
    n = 5
    rel = np.array([[1.0 if i == j else 0.9 - 0.01 * abs(i - j) - 0.001 * i for j in range(n)] for i in range(n)])
    res = _far_result(rel)
    asked = []

    def retrained(cfg, arch, cells, **kw):  # 4x: the far stitches reach their self-stitches
        asked.extend(cells)
        return pd.DataFrame({"sender": [c[0] for c in cells], "receiver": [c[1] for c in cells],
                             "cut_i": [c[2] for c in cells], "cut_j": [c[3] for c in cells],
                             "relative": [1.0] * len(cells), "accuracy": [_correct(0.8).mean()] * len(cells),
                             "correct": [_correct(0.8)] * len(cells)})

    monkeypatch.setattr(balogh_ood, "tlm_retrained", retrained)
    longer = balogh_ood.far_longer(balogh_ood.PRESETS_OOD["smoke"], res)
    assert len(longer.pairs) == balogh_ood.FAR_SAMPLE and len(longer.cells) == len(asked)
    far = [c for c in asked if c[2] != c[3]]
    own = [c for c in asked if c[2] == c[3]]
    # the deciding pairs, every other far pair into their targets (like for like), and their references
    assert len(far) >= balogh_ood.FAR_SAMPLE and {c[3] for c in own} == {c[3] for c in far}
    numbers, claims = balogh_ood.intra_claims(res, longer)
    claim = _by_key(claims)["far_as_similar"]
    assert claim.criterion.holds is False and not claim.controls[-1].passed
    assert abs(numbers["far_gap_longer"]) < 1e-9
    # the detector controls gate the OOD claim only, and include the sensitivity control
    texts = [k.text for k in _by_key(claims)["most_ood"].controls]
    assert any("near outliers" in t for t in texts)
    assert not any("near outliers" in k.text for k in claim.controls)


def test_ood_verdicts_need_a_sensitive_detector_and_a_difference_beyond_noise():
    n = 4
    rel = np.full((n, n), 0.95)
    res = _far_result(rel)
    t = res.table
    R = noise.RESAMPLES + 1
    g = np.random.default_rng(1)
    tlm = 0.9 + 0.01 * g.standard_normal((R, len(t)))
    dm = 0.5 + 0.01 * g.standard_normal((R, len(t)))
    res = dataclasses.replace(res, table=pd.concat([t, t.assign(method="DM")], ignore_index=True),
                              auroc_reps=np.concatenate([tlm, dm], axis=1))
    res.table["auroc"] = res.auroc_reps[0]
    _, claims = balogh_ood.ood_claims(res)
    c = _by_key(claims)
    assert c["dm_less_ood_rn"].criterion.holds is True and c["tlm_ood_rn"].criterion.holds is True
    assert all(k.passed for k in c["dm_less_ood_rn"].controls[:3])
    # DM as far out as TLM, up to noise: the difference's interval contains 0
    near_tlm = tlm[:, ::-1] + 0.001 * g.standard_normal((R, len(t)))
    res = dataclasses.replace(res, auroc_reps=np.concatenate([tlm, near_tlm], axis=1))
    assert _by_key(balogh_ood.ood_claims(res)[1])["dm_less_ood_rn"].criterion.holds is None
    # a detector blind to near outliers (AUROC 0.6 at one layer): the control fails before any verdict
    res.detector_reps["near"][:, 2] = 0.6
    ctrl = balogh_ood._detector_controls(res)
    assert not ctrl[0].passed and "near outliers" in ctrl[0].text and ctrl[1].passed and ctrl[2].passed
    # no DM stitch reaches high accuracy: the premise fails, the verdict is inconclusive
    res.table.loc[res.table.method == "DM", "relative"] = 0.5
    dm_id = _by_key(balogh_ood.ood_claims(res)[1])["dm_id_rn"]
    assert not dm_id.controls[0].passed


def _tau_table(gap: float, k: int = 30, seed: int = 0) -> pd.DataFrame:
    g = np.random.default_rng(seed)
    df = np.sort(g.random(k)) * 30
    t = pd.DataFrame({"network": ["n"] * k, "layer": [f"block{1 + i % 2}" for i in range(k)], "F (%)": 70 - df,
                      "|ΔF| (points)": df})
    t["dm_func"] = df + 3 * g.standard_normal(k)
    t["lcka"] = df + (3 + gap) * g.standard_normal(k)
    t["pwcca"] = g.standard_normal(k)  # unrelated to |ΔF|
    t["opd"] = df + 5 * g.standard_normal(k)
    t["dm_struct"] = df + 5 * g.standard_normal(k)
    return t


def _specificity_result(t: pd.DataFrame, networks: int) -> tuple[dict, dict]:
    """J-T3's result for the table ``t``: seven representations of one network "n" whose probe
    accuracies span 30 points, the reference its block7."""
    correct = {("n", f"block{i}"): _correct(0.4 + 0.05 * i) for i in range(1, 8)}
    res = {"arch": "resnet18", "table": t, "probe": {k: 100 * v.mean() for k, v in correct.items()},
           "probe_correct": correct, "reference": ("n", "block7"), "networks": networks,
           "correlations": pd.DataFrame([{"measure": common.NAMES[m], "rho": 0.5} for m in ding.DING_MEASURES])
           .set_index("measure")}
    return correct, res


def test_specificity_claims_need_the_difference_of_taus_to_exclude_zero():
    t = _tau_table(0.0)
    correct, res = _specificity_result(t, 2)
    numbers, claims = ding.specificity_claims(res)
    c = _by_key(claims)
    assert c["pwcca_below_lcka_rn"].criterion.holds is True  # PWCCA unrelated to |ΔF|: far below
    assert c["dm_func_high_rn"].criterion.holds is True and c["dm_func_high_rn"].controls[0].passed
    assert c["pwcca_below_lcka_rn"].criterion.low > 0 and numbers["rn_f_range"] == pytest.approx(30, abs=1)
    t["pwcca"] = t["lcka"] + 2 * np.random.default_rng(3).standard_normal(len(t))  # as good as LCKA, up to noise
    assert _by_key(ding.specificity_claims(res)[1])["pwcca_below_lcka_rn"].criterion.holds is None
    res["probe_correct"] = {k: _correct(0.7) for k in correct}  # the probe cannot tell them apart
    assert not ding.specificity_claims(res)[1][0].controls[0].passed


def test_specificity_intervals_carry_the_networks_jackknife():
    """With the test re-run with each network's representations left out, every tau's interval
    is a t interval over the networks (k - 1 degrees of freedom) and the representations: wider
    than the representations' alone, its value the same, each statistic's jackknife shown."""
    t = _tau_table(0.0)
    correct, res = _specificity_result(t, 3)
    fixed = _by_key(ding.specificity_claims(res)[1])
    res["leave_one_out"] = {f"n{k}": (("n", "block7"), t.drop(index=range(10 * k, 10 * k + 10)).reset_index(drop=True))
                            for k in range(3)}
    jack = ding.leave_one_out(res)
    assert list(jack["B's"]) == [20, 20, 20] and list(jack["network left out"]) == ["n0", "n1", "n2"]
    wide = _by_key(ding.specificity_claims(res)[1])
    assert set(wide) == set(fixed)
    for key, c in wide.items():
        a, b = fixed[key].criterion, c.criterion
        assert b.value == a.value and b.high - b.low > a.high - a.low
        assert "t interval over the 3 networks (k - 1 degrees of freedom)" in b.interval and b.n_seeds == 3
        assert -2 <= b.low and b.high <= 2
    assert wide["dm_func_near_best_rn"].criterion.high <= 0  # DM (func.) minus the best cannot exceed 0
    # one network whose representations rank differently: leaving it out moves every tau, widening more
    t2 = t.copy()
    t2.loc[:9, "dm_func"] = -t2.loc[:9, "|ΔF| (points)"]
    res2 = {**res, "table": t2, "leave_one_out": {
        f"n{k}": (("n", "block7"), t2.drop(index=range(10 * k, 10 * k + 10)).reset_index(drop=True)) for k in range(3)}}
    spread = _by_key(ding.specificity_claims(res2)[1])["dm_func_high_rn"].criterion
    same = _by_key(ding.specificity_claims({**res2, "leave_one_out": None})[1])["dm_func_high_rn"].criterion
    assert spread.high - spread.low > 1.5 * (same.high - same.low)


def test_sensitivity_claims_bootstrap_within_each_layer():
    t = _tau_table(0.0, k=40)
    t["lcka"] = t["dm_func"] + 2 * np.random.default_rng(5).standard_normal(len(t))  # tied with DM up to noise
    per_layer = pd.DataFrame([{"layer": layer, "measure": m} for layer in ("block1", "block2")
                              for m in ding.DING_MEASURES])
    correct = {("n", layer, r): _correct(0.3 + 0.1 * r) for layer in ("block1", "block2") for r in range(1, 5)}
    res = {"arch": "vit", "table": t, "per_layer": per_layer, "probe_correct": correct, "networks": ["a", "b"],
           "correlations": pd.DataFrame([{"measure": common.NAMES[m], "tau": 0.5, "rho": 0.5}
                                         for m in ding.DING_MEASURES]).set_index("measure")}
    numbers, claims = ding.sensitivity_claims(res)
    c = _by_key(claims)
    assert c["lcka_below_dm_vit"].criterion.holds is None  # within noise: neither below nor above
    assert numbers["vit_networks"] == 2 and numbers["vit_f_range_min"] == pytest.approx(100 * (_correct(0.7).mean() - _correct(0.4).mean()))
    assert "within each layer" in c["dm_func_high_vit"].criterion.interval
    assert ding.PRESETS_T2["demo"].sensitivity_networks == 3 and ding.PRESETS_T2["smoke"].sensitivity_networks == 2


# --- the reading review's fixes (networks resampled, CKA bootstrapped, one rule for every %, ...)


def _nets_result(tlm: dict, dm: dict, nets=("R #0", "R #1", "R #2"), layers=LAYERS) -> identification.IdentResult:
    """A J-T1 result from per-pair accuracy matrices (rows: source i), ``tlm`` and ``dm`` mapping
    (sender, receiver) to (L, L) arrays; every structural measure identifies every layer within
    a network and none between."""
    n = len(layers)
    tlm_cells = {(a, b, layers[i], layers[j]): m[i, j] for (a, b), m in tlm.items() for i in range(n) for j in range(n)}
    dm_cells = {(a, b, layers[i], layers[j]): m[i, j] for (a, b), m in dm.items() for i in range(n) for j in range(n)}
    t, d = _grid(tlm_cells, dm={k: 0.3 for k in tlm_cells}), _grid(dm_cells)
    good, bad = np.eye(n), 1 - np.eye(n)
    mats = {}
    for a in nets:
        for b in nets:
            m = {k: (good if identification.HIGHER_IS_SIMILAR[k] else bad) if a == b else
                 (bad if identification.HIGHER_IS_SIMILAR[k] else good) for k in ("pwcca", "opd", "lcka", "dm_struct")}
            rows = d[(d.sender == a) & (d.receiver == b)]
            m["dm_func"] = identification._matrix(rows.assign(rel=rows.dm_accuracy / rows.receiver_accuracy), "rel",
                                                  layers, layers)
            if (a, b) in tlm:
                r = t[(t.sender == a) & (t.receiver == b)]
                m["tlm"] = identification._matrix(r.assign(rel=r.accuracy / r.receiver_accuracy), "rel", layers, layers)
            mats[(a, b)] = m
    return identification.IdentResult(arch="resnet18", layers=list(layers), matrices=mats, dm=d, tlm=t, accuracy={})


def test_identification_percentages_resample_the_networks_too():
    n = len(LAYERS)
    nets = ("R #0", "R #1", "R #2")
    sure = np.eye(n) * 0.8 + (1 - np.eye(n)) * 0.3  # every layer identified, by far more than image noise
    never = np.eye(n) * 0.5 + (1 - np.eye(n)) * 0.9  # no layer identified
    tlm = {("R #0", "R #0"): sure, ("R #1", "R #1"): sure, ("R #2", "R #2"): never, ("R #0", "R #1"): sure}
    dm = {(a, b): np.eye(n) * 0.8 + (1 - np.eye(n)) * 0.4 for a in nets for b in nets}
    res = _nets_result(tlm, dm, nets)
    _, claims = identification_verdicts.identification_claims(res)
    crit = _by_key(claims)["tlm_intra_rn"].criterion
    # no image noise at all: the interval is the networks' (before: [66.67, 66.67], one seed), a t interval
    # over 3 networks (a percentile one over 3 is far too narrow), cut to [0, 100]
    assert crit.value == pytest.approx(200 / 3) and crit.low == 0 and crit.high == 100 and crit.holds is None
    assert crit.n_seeds == 3 and "t interval over the 3 networks" in crit.interval
    # a percentage over the same pairs is drawn the same way: a difference is paired over networks too
    w1, k = identification_verdicts._network_weights([("R #0", "R #1"), ("R #1", "R #0")], within=False)
    w2, _ = identification_verdicts._network_weights([("R #1", "R #0"), ("R #0", "R #1")], within=False)
    assert k == 2 and np.array_equal(w1, w2[:, ::-1]) and (w1.sum(1) > 0).all()


def test_linear_cka_is_bootstrapped_over_the_measure_images_and_pwcca_says_it_is_not():
    from stitchkit.measures import similarity as sim
    from stitchkit.measures.similarity import CKABootstrap

    g = torch.Generator().manual_seed(0)
    acts_a = {"block1": torch.randn(60, 4, 2, 2, generator=g), "block2": torch.randn(60, 3, 2, 2, generator=g)}
    acts_b = {k: v + 0.5 * torch.randn(v.shape, generator=g) for k, v in acts_a.items()}
    m = identification.structural(acts_a, acts_b, boot=CKABootstrap(60, "a test"))
    assert m["lcka_reps"].shape == (noise.RESAMPLES + 1, 2, 2)
    assert m["lcka"][0, 1] == pytest.approx(sim.linear_cka_gram(sim.flat(acts_a["block1"]), sim.flat(acts_b["block2"])))
    assert np.ptp(m["lcka_reps"][1:, 0, 0]) > 0  # the resamples move it
    # J-T1's cca claim: LCKA's identification between networks within image noise gives an interval
    n = len(LAYERS)
    res = _ident_result(np.eye(n) * 0.8 + 0.1, np.eye(n) * 0.6 + 0.1)
    rng = np.random.default_rng(0)
    lcka_reps = {}
    for pair in res.matrices:
        reps = np.tile(np.eye(n) * 0.5 + 0.4, (noise.RESAMPLES + 1, 1, 1))
        if pair[0] != pair[1]:  # layer 1's rival as similar as the layer itself, up to noise
            reps[:, 1, 0] = 0.9 + 0.01 * rng.standard_normal(len(reps))
            reps[0, 1, 0] = 0.905
        lcka_reps[pair] = reps
        res.matrices[pair]["lcka"] = reps[0]
    res = dataclasses.replace(res, lcka_reps=lcka_reps, measure_images=1000)
    crit = _by_key(identification_verdicts.identification_claims(res)[1])["cca_inter_rn"].criterion
    assert crit.value == 75 and crit.low < crit.high == 100  # before: exact 75, "structural measures ... exact"
    assert "image noise not included" in crit.interval and "linear CKA's measure images" in crit.interval


def test_others_intra_counts_noise_level_rivals_as_ties_by_the_same_rule_as_tlm():
    # 8 layers; every DM rival beats its self-map by one test image, a different image per layer
    layers = [f"block{k}" for k in range(1, 9)]
    n = len(layers)
    b = np.sort(_BASE)
    dm = np.full((n, n), 0.3)
    for j in range(n):
        m = 200 + 20 * j
        dm[j, j] = (b[m - 1] + b[m]) / 2  # m images right
        dm[(j + 1) % n, j] = (b[m] + b[m + 1]) / 2  # the same m and one more
    nets = ("R #0", "R #1")
    sure = np.eye(n) * 0.8 + 0.05
    res = _nets_result({("R #0", "R #0"): sure, ("R #1", "R #1"): sure, ("R #0", "R #1"): sure},
                       {(a, c): dm for a in nets for c in nets}, nets, layers)
    others, counts = identification_verdicts._others_intra(res)
    # the tie rule: one image ahead is within noise (its paired interval contains 0), a tie, identified.
    # Before it: 0% (each layer identified only on resamples that miss its one image), "not reproduced"
    assert others.value == 100 and counts["rivals_point"] == 2 * n and counts["rivals_beat"] == 0
    crit = _by_key(identification_verdicts.identification_claims(res)[1])["others_intra_rn"].criterion
    assert crit.holds is None and "16 of 16 cases" in crit.interval  # at its limit: within noise below 36 cases
    # one rule, TLM's % and the others': both by the tie rule, over the same networks
    tlm = identification_verdicts._tlm_criteria(res, res.tlm)["est"]["intra"]
    assert tlm.value == 100 and "tie rule" in others.method and "tie rule" in tlm.method
    assert others.n_seeds == tlm.n_seeds == 2
    # a rival ahead by 10 points at one layer is beyond noise: that layer is not identified
    dm[1, 0] = dm[0, 0] + 0.1
    res = _nets_result({("R #0", "R #0"): sure, ("R #1", "R #1"): sure, ("R #0", "R #1"): sure},
                       {(a, c): dm for a in nets for c in nets}, nets, layers)
    others, counts = identification_verdicts._others_intra(res)
    assert others.value == pytest.approx(100 * 7 / 8) and counts["rivals_beat"] == 2
    # 87.5% of 8 layer cases cannot be told from the 90% bar once the layers are resampled too
    assert _by_key(identification_verdicts.identification_claims(res)[1])["others_intra_rn"].criterion.holds is None
    for j in range(1, 6):  # rivals ahead by 10 points at six of the eight layers: 25%, shown below the bar
        dm[(j + 1) % n, j] = dm[j, j] + 0.1
    res = _nets_result({("R #0", "R #0"): sure, ("R #1", "R #1"): sure, ("R #0", "R #1"): sure},
                       {(a, c): dm for a in nets for c in nets}, nets, layers)
    crit = _by_key(identification_verdicts.identification_claims(res)[1])["others_intra_rn"].criterion
    assert crit.value == 25.0 and crit.holds is False and "8 layer clusters" in crit.interval


def test_a_median_claim_without_stitches_records_no_value():
    n = 4
    res = _far_result(np.full((n, n), 0.95))
    t = res.table
    res = dataclasses.replace(res, table=pd.concat([t, t.assign(method="DM", relative=0.5)], ignore_index=True),
                              auroc_reps=np.concatenate([res.auroc_reps, res.auroc_reps], axis=1))
    numbers, claims = balogh_ood.ood_claims(res)
    dm_id = _by_key(claims)["dm_id_rn"]
    crit = dm_id.criterion
    # before: exact(threshold), so the criterion held (True) and the record kept 0.7 as if measured
    assert crit.holds is None and crit.value is None and crit.low is None and crit.direction is None
    assert "not measured" in crit.text and np.isnan(numbers["rn_dm_high_auroc"])
    assert not dm_id.controls[0].passed
    from stitchkit.verdicts.results import verdict_of
    assert verdict_of("demo", all(c.passed for c in dm_id.controls), crit.holds) == "inconclusive at this scale"


def test_far_gap_divides_each_resample_by_its_own_receiver_accuracy():
    n = 5
    rel = np.array([[1.0 if i == j else 0.75 for j in range(n)] for i in range(n)])
    res = _far_result(rel)
    grid = balogh_ood._intra_tlm(res)
    reps, _ = balogh_ood._far_gap_reps(grid, res.layers)
    rs = noise.resampler(N_TEST, "test")
    acc, recv = rs.means(_correct(0.8 * 0.75)), rs.means(_correct(0.8))
    own = rs.means(_correct(0.8))
    # before: every resample divided by the full sample's receiver accuracy
    assert np.allclose(reps, 100 * (acc - own) / recv)
    assert not np.allclose(reps, 100 * (acc - own) / recv[0])


def test_tlm_with_longer_names_a_missing_cell():
    res = _far_result(np.eye(3) + 0.5)
    longer = pd.DataFrame({"sender": ["R #0"], "receiver": ["R #9"], "cut_i": ["block1"], "cut_j": ["block2"],
                           "accuracy": [0.5], "correct": [_correct(0.5)]})
    with pytest.raises(ValueError, match=r"'R #9'.*not a cell of the TLM grid.*\('R #0', 'R #0', 'block1', 'block1'\)"):
        common.tlm_with_longer(res.tlm, longer)


# --- issue 46: claim kinds, the controls each kind needs, the length control for every verdict


def test_ood_claims_carry_their_kinds_and_a_length_control_decided_or_not(monkeypatch):
    n = 4
    res = _far_result(np.full((n, n), 0.95))
    t = res.table
    g = np.random.default_rng(0)
    res = dataclasses.replace(res, table=pd.concat([t, t.assign(method="DM")], ignore_index=True),
                              auroc_reps=0.5 + 0.01 * g.standard_normal((noise.RESAMPLES + 1, 2 * len(t))))
    res.table["auroc"] = res.auroc_reps[0]
    numbers, claims = balogh_ood.ood_claims(res)
    c = _by_key(claims)
    assert (c["tlm_ood_rn"].kind, c["dm_less_ood_rn"].kind, c["dm_id_rn"].kind) == ("stitch_other", "stitch_other",
                                                                                    "no_stitch")
    # DM's claim has no trained stitch: no TLM (stitching) control, but the detector's sensitivity stays
    assert not any(k.kind for k in c["dm_id_rn"].controls)
    assert any("near outliers" in k.text for k in c["dm_id_rn"].controls)
    assert any(k.kind == "positive" for k in c["tlm_ood_rn"].controls)
    assert "rn_tlm_self_stitch_gain" in numbers and "rn_tlm_self_stitch_worst" in numbers
    assert c["dm_less_ood_rn"].criterion.holds is None  # undecided: it gets the length control all the same

    monkeypatch.setattr(balogh_ood, "_retrained_aurocs", _far_out_of_distribution)
    table = balogh_ood.ood_longer(balogh_ood.PRESETS_OOD["smoke"], res, claims)
    assert len(table) == balogh_ood.OOD_SAMPLE
    c = _by_key(claims)
    for key in ("tlm_ood_rn", "dm_less_ood_rn"):
        assert c[key].controls[-1].kind == "training length"
    assert not c["dm_less_ood_rn"].controls[-1].passed  # undecided at 1x, decided at 4x: not the same result
    assert not any(k.kind == "training length" for k in c["dm_id_rn"].controls)


def test_j_f1_claims_kinds_and_most_ood_length_control(monkeypatch):
    n = 5
    rel = np.array([[1.0 if i == j else 0.9 for j in range(n)] for i in range(n)])
    res = _far_result(rel)
    numbers, claims = balogh_ood.intra_claims(res)
    c = _by_key(claims)
    assert c["far_as_similar"].kind == c["most_ood"].kind == "stitch_other"
    # without the longer stitches the length control is there and fails (not run)
    assert c["far_as_similar"].controls[-1].kind == "training length" and not c["far_as_similar"].controls[-1].passed
    assert "tlm_self_stitch_gain" in numbers

    monkeypatch.setattr(balogh_ood, "_retrained_aurocs", _far_out_of_distribution)
    table = balogh_ood.most_ood_longer(balogh_ood.PRESETS_OOD["smoke"], res, claims)
    assert len(table) == balogh_ood.OOD_SAMPLE and (table.i != table.j).all()
    most = _by_key(claims)["most_ood"]
    # 0% OOD at 1x, 8 of 20 at 4x: both below half, the same result: the control passes
    assert most.controls[-1].kind == "training length" and most.controls[-1].passed


def test_demo_judges_every_accuracy_on_all_test_images():
    for presets in (identification.PRESETS_T1, balogh_ood.PRESETS_OOD, ding.PRESETS_T3, ding.PRESETS_T2):
        assert presets["demo"].test_size is None


def test_every_preset_holds_both_architectures_recipes_at_its_scale():
    for presets in (identification.PRESETS_T1, balogh_ood.PRESETS_OOD, ding.PRESETS_T3, ding.PRESETS_T2):
        for scale, cfg in presets.items():
            assert (cfg.resnet18, cfg.vit) == (zoo.BALOGH_RESNET18[scale], zoo.BALOGH_VIT[scale])
            assert cfg.net_recipe("vit") is cfg.vit and "Recipe(family='balogh_vit'" in repr(cfg)
    cfg = identification.PRESETS_T1["demo"]
    assert common.title(cfg.resnet18) == "ResNet-18 (width 16) on CIFAR-10"
    assert common.title(cfg.net_recipe("vit")) == "ViT-Ti (dim 64, depth 6) on CIFAR-10"
    with pytest.raises(ValueError, match="unknown architecture 'vgg'"):
        cfg.net_recipe("vgg")


def _far_out_of_distribution(cfg, result, rows, **kw):
    """A stand-in for the 4x retraining: the retrained stitches' AUROCs far out of distribution."""
    new_t, new_reps = result.table.copy(), result.auroc_reps.copy()
    new_reps[:, rows] = 0.99
    new_t.loc[new_t.index[rows], "auroc"] = 0.99
    return new_t, new_reps


def test_sensitivity_intervals_carry_the_networks_jackknife():
    """J-T2 with each network's representations left out (per layer, the reference re-chosen):
    the mean taus' jackknife over three networks widens every interval; the value stays."""
    t = _tau_table(0.0, k=42)
    t["network"] = [f"n{k % 3}" for k in range(len(t))]
    per_layer = pd.DataFrame([{"layer": layer, "measure": m} for layer in ("block1", "block2")
                              for m in ding.DING_MEASURES])
    correct = {("n0", layer, r): _correct(0.3 + 0.1 * r) for layer in ("block1", "block2") for r in range(1, 5)}
    res = {"arch": "resnet18", "table": t, "per_layer": per_layer, "probe_correct": correct,
           "networks": ["n0", "n1", "n2"],
           "correlations": pd.DataFrame([{"measure": common.NAMES[m], "tau": 0.5, "rho": 0.5}
                                         for m in ding.DING_MEASURES]).set_index("measure")}
    fixed = _by_key(ding.sensitivity_claims(res)[1])
    res["leave_one_out"] = {n: t[t.network != n].reset_index(drop=True) for n in res["networks"]}
    jack = ding.sensitivity_leave_one_out(res)
    assert list(jack["network left out"]) == ["n0", "n1", "n2"] and list(jack["B's"]) == [28, 28, 28]
    wide = _by_key(ding.sensitivity_claims(res)[1])
    for key, c in wide.items():
        a, b = fixed[key].criterion, c.criterion
        assert b.value == a.value and b.high - b.low > a.high - a.low and b.n_seeds == 3
        assert "t interval over the 3 networks (k - 1 degrees of freedom)" in b.interval


def test_an_undefined_jackknife_falls_back_to_the_representations_and_says_so():
    reps = np.r_[0.6, np.random.default_rng(0).normal(0.6, 0.05, 200)]
    e = ding._tau_estimate(reps, 2, loo=np.array([0.5, np.nan]))
    assert "jackknife is undefined" in e.method and e.n_seeds == 1
    assert (e.low, e.high) == (ding._tau_estimate(reps, 2).low, ding._tau_estimate(reps, 2).high)
