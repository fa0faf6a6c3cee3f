"""X-2, layer identification on every zoo: J-T1's rule on bootstrap replicates, the claims and
their controls on synthetic zoos, the presets."""

from __future__ import annotations

import numpy as np
import pytest
from test_across import synthetic

from stitchkit.experiments import across
from stitchkit.experiments import across_identify as identify
from stitchkit.experiments.balogh.identification import identified
from stitchkit.registry.scales import ParameterValueError, preset
from stitchkit.verdicts import noise
from stitchkit.verdicts.results import Run


def _reps(matrix: np.ndarray, layers: list[str]) -> tuple[list[tuple[str, str]], np.ndarray]:
    pairs = [(a, b) for a in layers for b in layers]
    return pairs, np.array([[matrix[layers.index(a), layers.index(b)] for a, b in pairs]])


def test_identified_reps_follows_j_t1s_rule_on_every_replicate():
    rng = np.random.default_rng(0)
    layers = ["stem", "block1", "block2", "block3"]
    for _ in range(50):
        m = rng.integers(0, 4, size=(4, 4)).astype(float)  # ties are common
        pairs, reps = _reps(m, layers)
        for sign in (1.0, -1.0):  # a similarity, and a distance
            got = identify.identified_reps(pairs, sign * reps, sign)[0]
            assert (got == identified(m, True)).all()


def test_an_undefined_own_pair_is_not_identified_and_an_undefined_rival_is_no_rival():
    layers = ["a", "b", "c"]
    m = np.eye(3) + 0.1
    m[1, 1] = np.nan  # own pair of b undefined
    m[0, 2] = np.nan  # a rival of c undefined
    pairs, reps = _reps(m, layers)
    assert identify.identified_reps(pairs, reps, 1.0)[0].tolist() == [True, False, True]


def test_identification_needs_one_architecture():
    pairs = [(a, b) for a in ("x", "y") for b in ("x", "z")]
    with pytest.raises(ValueError, match="same layers on both sides"):
        identify.identified_reps(pairs, np.zeros((1, 4)), 1.0)


def _zoo(**kw) -> dict:
    r = synthetic(**kw)
    r["identified"] = {s: {m: identify.identified_reps(r[s]["pairs"], v, across.SIGN[m])
                           for m, v in r[s]["reps"].items()} for s in across.SETS}
    return r


def _verdicts(result: dict) -> dict:
    numbers, claims = identify.identification_claims({"toy": result})
    run = Run("X-2", "demo", {})
    run.record(numbers, claims)
    return {c.key: c for c in run.claims}


def _every_layer_of(r: dict, layers: int) -> dict:
    """``r`` with every notion identifying each of ``layers`` layers on every resample, within and
    between (built directly: a synthetic zoo of that many layers takes minutes)."""
    r = {**r, "cuts": [[f"block{i}" for i in range(layers)]] * 2}
    r["identified"] = {s: {m: np.ones((noise.RESAMPLES + 1, layers), dtype=bool) for m in v}
                       for s, v in r["identified"].items()}
    return r


def test_notions_that_pick_out_every_layer_reproduce_the_structural_claim():
    v = _verdicts(_every_layer_of(_zoo(), noise.cases_to_decide(identify.INTRA_MIN / 100)))
    assert v["intra_toy"].verdict == "reproduced" and v["intra_toy"].low > identify.INTRA_MIN
    assert v["struct_inter_toy"].verdict == "reproduced" and v["struct_inter_toy"].value == 100.0
    # every notion identifies every layer: CKA is not ahead of PWCCA and Procrustes
    assert v["cca_inter_toy"].verdict == "not reproduced" and v["cca_inter_toy"].value == 0.0


def test_every_layer_of_too_few_is_within_noise_of_the_bar_and_says_so():
    """Amendment of 2026-12-02 (J-T1's): a count at its limit carries its exact binomial bound, so
    6 of 6 layers, compatible with a rate of 61%, cannot be told from the 90% bar."""
    v = _verdicts(_zoo(layers=6))
    intra = v["intra_toy"]
    assert intra.value == 100.0 and intra.verdict == "inconclusive at this scale"
    assert intra.low == pytest.approx(100 * noise.clopper_pearson(6, 6)[0])
    assert "Clopper-Pearson" in intra.interval and "fewer than the 36" in intra.ours


def test_a_notion_that_fails_identity_makes_the_claims_it_enters_inconclusive():
    v = _verdicts(_zoo(broken="pwcca"))
    assert v["intra_toy"].verdict == "not reproduced"  # the claim itself: PWCCA misses its own layers
    assert v["cca_inter_toy"].verdict == "inconclusive at this scale"
    assert any("PWCCA" in c.text and not c.passed for c in v["cca_inter_toy"].controls)
    assert v["struct_inter_toy"].verdict != "not reproduced"  # PWCCA does not enter it


def test_claims_are_made_only_where_their_notions_were_measured():
    _, claims = identify.identification_claims({"toy": _zoo(measures=("cka", "dm"))})
    assert {c.key for c in claims} == {"intra_toy", "struct_inter_toy"}


def test_percentages_carry_bootstrap_intervals():
    r = _zoo(noise_sd=0.3)
    e = identify.percent(r, "between", "cka")
    assert e.low <= e.high and e.n_test == r["n_test"] and not e.exact
    assert noise.RESAMPLES > 1


def test_presets_and_zoos():
    for scale in ("smoke", "demo", "paper"):
        assert isinstance(preset(identify.PRESETS_X2, scale), identify.IdentificationConfig)
    assert preset(identify.PRESETS_X2, "demo", zoo="hernandez").zoos() == ("hernandez",)
    with pytest.raises(ParameterValueError):
        preset(identify.PRESETS_X2, "demo", zoo="imagenet")
    pair = identify.one_architecture_pair("hernandez", identify.PRESETS_X2["smoke"])
    assert [s.model for s in pair.specs] == ["r2222", "r2222"] and [s.seed for s in pair.specs] == [0, 1]
    assert identify.one_architecture_pair("bansal", identify.PRESETS_X2["smoke"]) == across.zoo_pair("bansal", across.PRESETS_X1["smoke"])
    # X-2's demo settings are X-1's: the notions X-1 computed are read from the store
    x1, x2 = across.PRESETS_X1["demo"], identify.PRESETS_X2["demo"]
    assert (x1.measures, x1.test_images, x1.dm_images) == (x2.measures, x2.test_images, x2.dm_images)


def test_x1_and_x2_share_the_notions_through_the_store(tmp_path, monkeypatch):
    """notions_of keeps each set's replicates in the store: a second page (X-2 after X-1, or a
    rerun) reads them instead of recomputing; the values are the same bit for bit."""
    from conftest import write_cifar_pickles

    from stitchkit.base.store import Store
    from stitchkit.comparing import notions
    from stitchkit.data.datasets import DataSpec
    from stitchkit.networks.network import ModelSpec
    from stitchkit.networks.train import TrainConfig

    root = tmp_path / "data"
    write_cifar_pickles(root, n_train=50, n_test=20)
    monkeypatch.setenv("STITCHKIT_DATA_ROOT", str(root))
    spec = lambda seed: ModelSpec(model="resnet10", width=4, seed=seed, data=DataSpec("cifar10"),  # noqa: E731
                                  train=TrainConfig(epochs=1, batch_size=10, precision="fp32"))
    pair = across.ZooPair("toy", "Toy", "none", ("A", "B"), (spec(0), spec(1)), "cifar10")
    calls = []
    real = notions.notion_replicates

    def counting(*a, **kw):
        calls.append(1)
        return real(*a, **kw)

    monkeypatch.setattr(across, "notion_replicates", counting)
    store = Store(tmp_path / "store")
    cfg = identify.IdentificationConfig(test_images=20, dm_images=10)
    first = across.notions_of(pair, cfg, device="cpu", store=store, progress=False)
    assert len(calls) == 2  # within and between
    again = across.notions_of(pair, cfg, device="cpu", store=store, progress=False)
    assert len(calls) == 2
    for s in across.SETS:
        assert first[s]["pairs"] == again[s]["pairs"]
        for m in cfg.measures:
            assert np.array_equal(first[s]["reps"][m], again[s]["reps"][m], equal_nan=True)


def test_a_percentage_the_images_never_move_gets_the_layers_interval_not_a_zero_width_one():
    # issue 46: struct_inter_bansal read 66.7 [66.7, 66.7] (one pair of networks, no resample moved a layer).
    # A layer-bootstrap interval; at 100% on every resample it is exact, with its reason
    r = _zoo()
    # CKA misses a third of the corresponding layers between networks, on every resample
    L = len(r["cuts"][0])
    r["identified"]["between"]["cka"] = np.tile(np.arange(L) % 3 != 0, (noise.RESAMPLES + 1, 1))
    e = identify.percent(r, "between", "cka")
    assert e.value == pytest.approx(100 * np.mean(np.arange(L) % 3 != 0)) and e.low < e.value < e.high
    assert "target layers" in e.method and "network-to-network variance is not in it" in e.method
    v = _verdicts(r)
    assert v["struct_inter_toy"].low < v["struct_inter_toy"].high
    assert all(k.kind != "noise" for k in v["struct_inter_toy"].controls)
    assert {c.kind for c in v.values()} == {"no_stitch"}
    # every layer identified on every resample: the exact bound of its count, around the reason that
    # says what is not in it
    full = v["intra_toy"]
    assert full.low < full.high == 100 and "exact binomial" in full.interval
    assert "network-to-network variance is not in it" in full.interval


def test_within_a_network_a_rival_ahead_by_noise_is_a_tie():
    layers = ["a", "b", "c"]
    pairs = [(x, y) for x in layers for y in layers]
    rng = np.random.default_rng(0)
    base = np.array([[1.0 if x == y else 0.5 for x, y in pairs]])
    reps = np.repeat(base, noise.RESAMPLES + 1, axis=0) + 0.01 * rng.standard_normal((noise.RESAMPLES + 1, 9))
    ahead = 0.001 + 0.01 * rng.standard_normal(noise.RESAMPLES + 1)
    ahead[0] = 0.001
    reps[:, pairs.index(("b", "a"))] = reps[:, pairs.index(("a", "a"))] + ahead  # ahead of a's own, by noise
    strict = identify.identified_reps(pairs, reps, 1.0)[0]
    tied = identify.identified_reps(pairs, reps, 1.0, ties=True)[0]
    assert not strict[0] and tied[0] and tied.all()
    reps[:, pairs.index(("b", "a"))] += 0.2  # ahead by far more than noise: beaten
    assert not identify.identified_reps(pairs, reps, 1.0, ties=True)[0][0]
