"""X-1, rank agreement between similarity notions: Kendall's tau, the notions on bootstrap
resamples (equal to stitchkit.compare on all images, exact on a resample), the identity control,
and the claims following from their intervals."""

import dataclasses

import numpy as np
import pytest
import torch
from scipy import stats
from torch import nn

import stitchkit
from stitchkit.comparing import notions
from stitchkit.comparing.notions import identity_failures, kendall_tau, notion_replicates
from stitchkit.experiments import across
from stitchkit.experiments.bansal import common
from stitchkit.measures import similarity as sim
from stitchkit.registry import papers
from stitchkit.registry.figures import REQUIRED_SCALES
from stitchkit.registry.scales import ParameterValueError, preset
from stitchkit.verdicts import noise
from stitchkit.verdicts.results import Run, check_verdict

# --------------------------------------------------------------------------------------------
# Kendall's tau


@pytest.mark.parametrize("seed", range(4))
def test_kendall_tau_is_scipys_tau_b_and_rank_invariant(seed):
    rng = np.random.default_rng(seed)
    x = rng.normal(size=(5, 30))
    y = x + rng.normal(scale=1.0, size=x.shape)
    y[:, :6] = np.round(y[:, :6])  # ties
    ours = kendall_tau(x, y)
    assert ours.shape == (5,)
    for r in range(5):
        assert ours[r] == pytest.approx(stats.kendalltau(x[r], y[r]).statistic, abs=1e-12)
    assert np.allclose(kendall_tau(x, x), 1.0) and np.allclose(kendall_tau(x, -x), -1.0)
    assert np.allclose(kendall_tau(np.exp(x), y ** 3), ours)  # strictly increasing transforms change nothing
    assert np.allclose(kendall_tau(x, y), kendall_tau(y, x))
    assert np.isnan(kendall_tau(np.ones(8), x[0, :8]))  # a constant notion ranks nothing


def test_kendall_tau_broadcasts_a_reference_row():
    rng = np.random.default_rng(0)
    x = rng.normal(size=(7, 12))
    ref = x[0]
    assert np.allclose(kendall_tau(x, ref[None]), [stats.kendalltau(r, ref).statistic for r in x])


# --------------------------------------------------------------------------------------------
# The notions on resamples


def small_cnn(width: int, seed: int) -> nn.Module:
    torch.manual_seed(seed)
    return nn.Sequential(nn.Conv2d(3, width, 3, padding=1), nn.ReLU(),
                         nn.Conv2d(width, 2 * width, 3, stride=2, padding=1), nn.ReLU(),
                         nn.Conv2d(2 * width, 2 * width, 3, padding=1), nn.ReLU(),
                         nn.AdaptiveAvgPool2d(1), nn.Flatten(), nn.Linear(2 * width, 10)).eval()


@pytest.fixture(scope="module")
def images():
    g = torch.Generator().manual_seed(0)
    return torch.randn(160, 3, 8, 8, generator=g), torch.randint(0, 10, (160,), generator=g), \
        torch.randn(60, 3, 8, 8, generator=g)


@pytest.fixture(scope="module")
def replicates(images):
    x, y, fit = images
    a, b = small_cnn(4, 1), small_cnn(6, 2)
    cuts_a, cuts_b = ["1", "3", "5"], ["1", "5"]
    pairs, reps, own = notion_replicates(a, b, cuts_a, cuts_b, x, y, fit, sample="test_across")
    return a, b, cuts_a, cuts_b, pairs, reps, own


def test_replicate_zero_is_what_compare_gives(images, replicates):
    """Every notion but CKA: the X pages' CKA is the full-sample estimator (as every paper page's),
    compare's the minibatch one that bounds its memory (tests/test_minibatch.py)."""
    x, y, fit = images
    a, b, cuts_a, cuts_b, pairs, reps, own = replicates
    table = stitchkit.compare(a, b, cuts_a, cuts_b, x, y, fit_images=fit, measures=notions.NOTIONS).set_index(
        ["layer_a", "layer_b", "measure"])
    for p, (la, lb) in enumerate(pairs):
        for m, v in reps.items():
            assert v.shape == (noise.RESAMPLES + 1, len(pairs))
            if m == "cka":
                continue
            if m == "dm_accuracy" and "at or below chance" in table.loc[(la, lb, m), "note"]:
                # compare leaves a ratio to an accuracy at chance undefined (issue 66, finding 3): the
                # untrained B of this fixture is at chance on its labels
                assert np.isnan(table.loc[(la, lb, m), "value"])
                continue
            assert v[0, p] == pytest.approx(table.loc[(la, lb, m), "value"], rel=1e-7, abs=1e-9), (la, lb, m)
    assert own.shape == (len(x),)


def test_each_notion_is_exact_on_a_resample(images, replicates):
    """Replicate r equals the measure recomputed on the images repeated by resample r's counts
    (CKA aside: its bootstrap leaves out the pairs of an image with its copy, see similarity)."""
    x, y, fit = images
    a, b, cuts_a, cuts_b, pairs, reps, own = replicates
    counts = noise.resampler(len(x), "test_across").counts
    acts_a = stitchkit.comparing.compare.hooked_activations(a, x, cuts_a)
    acts_b = stitchkit.comparing.compare.hooked_activations(b, x, cuts_b)
    for r in (1, 7):
        idx = torch.from_numpy(np.repeat(np.arange(len(x)), counts[r - 1].astype(int)))
        for p, (la, lb) in enumerate(pairs):
            ha, hb = acts_a[la][idx], acts_b[lb][idx]
            px, py = sim.preprocess(ha, hb, "procrustes")
            assert reps["procrustes"][r, p] == pytest.approx(sim.procrustes_distance(px, py), abs=1e-9)
            if np.isfinite(reps["pwcca"][r, p]):
                assert reps["pwcca"][r, p] == pytest.approx(sim.pwcca(px, py), abs=1e-7)
            stitch = stitchkit.comparing.compare.dm_map(
                stitchkit.comparing.compare.hooked_activations(a, fit, [la])[la],
                stitchkit.comparing.compare.hooked_activations(b, fit, [lb])[lb])
            est = stitch(ha)
            resid = float(((est - hb).double() ** 2).sum() / (hb.double() ** 2).sum())
            assert reps["dm"][r, p] == pytest.approx(resid, rel=1e-9)
            ok = stitchkit.comparing.compare.stitched_correct(b, lb, stitch, ha, x[idx], y[idx])
            assert reps["dm_accuracy"][r, p] == pytest.approx(ok.mean() / own[idx.numpy()].mean(), rel=1e-12)


# --------------------------------------------------------------------------------------------
# Synthetic zoos: the controls and the claims


def synthetic(measures=notions.NOTIONS, layers=6, noise_sd=0.001, seed=0, broken=None, flip=None, n=500):
    """A raw agreement() result from made-up notions: every similarity falls with the distance
    between the two layers (plus noise per resample); DM (func.) also favours a later layer
    stitched into an earlier one. ``broken``: a notion whose own layer is not its most similar;
    ``flip``: a notion ranking the pairs the other way round."""
    rng = np.random.default_rng(seed)
    cuts = [f"block{i}" for i in range(layers)]
    pairs = [(a, b) for a in cuts for b in cuts]
    i = np.array([cuts.index(a) for a, _ in pairs])
    j = np.array([cuts.index(b) for _, b in pairs])
    base = np.exp(-np.abs(i - j) / 2.0) + 0.02 * i + 0.005 * j  # no two pairs alike
    raw = {"zoo": "toy", "title": f"Toy zoo {seed}", "page": "none", "names": ("A", "B"), "cuts": [cuts, cuts],
           "measures": list(measures), "n_test": n}
    for s in across.SETS:
        reps = {}
        for m in measures:
            sim_ = base + (0.1 * (i > j) if m == "dm_accuracy" else 0.0)
            if m == broken:
                sim_ = base * (i != j)  # its own layer the least similar
            if m == flip:
                sim_ = -base
            v = sim_[None] + rng.normal(scale=noise_sd, size=(noise.RESAMPLES + 1, len(pairs)))
            v[0] = sim_
            if s == "within":
                v[:, i == j] = sim_[i == j] if m == broken else sim_.max() + 0.5  # exact, unbeaten
            reps[m] = across.SIGN[m] * v
        raw[s] = {"pairs": pairs, "reps": reps, "accuracy_b": 0.9}
    return across.rank_agreement(raw)


def test_identity_control_counts_layers_whose_own_pair_is_beaten():
    pairs = [(a, b) for a in "xyz" for b in "xyz"]
    good = np.array([1.0, 0.5, 0.2, 0.5, 1.0, 0.5, 0.2, 0.5, 1.0])
    assert identity_failures(pairs, good) == 0
    assert identity_failures(pairs, 1 - good, sign=-1.0) == 0  # a distance, negated
    bad = good.copy()
    bad[1] = 1.2  # (x, y) beats (x, x) and is (y)'s column rival too
    assert identity_failures(pairs, bad) == 2
    r = synthetic(broken="pwcca")
    assert r["identity_failures"]["pwcca"] == 6 and r["identity_failures"]["cka"] == 0


def test_a_broken_notion_fails_its_identity_control_and_makes_its_claims_inconclusive():
    numbers, claims = across.agreement_claims({"toy": synthetic(broken="pwcca")})
    run = Run("X-1", "demo", {})
    run.record(numbers, claims)
    by = {c.key: c for c in run.claims}
    failed = [k.text for k in by["structural_cohere_toy"].failed_controls]
    assert failed and all("PWCCA" in t for t in failed)
    assert by["structural_cohere_toy"].verdict == "inconclusive at this scale"
    assert by["cka_dm_func_toy"].verdict == "reproduced"  # no PWCCA in it


def test_claims_follow_from_their_intervals():
    numbers, claims = across.agreement_claims({"toy": synthetic()})
    assert {c.key for c in claims} == {"cka_dm_func_toy", "dm_faces_toy", "structural_cohere_toy", "triangle_toy"}
    run = Run("X-1", "demo", {})
    run.record(numbers, claims)
    for c in run.to_dict()["claims"]:
        check_verdict(c, "demo", "test")
        assert c["low"] <= c["high"] and c["n_test"] == 500
    by = {c.key: c for c in run.claims}
    assert by["cka_dm_func_toy"].verdict == "reproduced" and by["cka_dm_func_toy"].value > across.TAU_ALIKE
    # 0.1, and 0.015 per layer apart (35 / 15 layers apart on average)
    assert by["triangle_toy"].verdict == "reproduced" and by["triangle_toy"].value == pytest.approx(10 + 1.5 * 35 / 15)
    # the structural measures rank alike here, DM (func.) not quite: the difference is positive
    assert by["structural_cohere_toy"].holds is True
    # a notion ranking the pairs the other way: the claim is not reproduced, its controls pass
    numbers, claims = across.agreement_claims({"toy": synthetic(flip="dm_accuracy")})
    run = Run("X-1", "demo", {})
    run.record(numbers, claims)
    flipped = {c.key: c for c in run.claims}["cka_dm_func_toy"]
    assert flipped.holds is False and not flipped.failed_controls and flipped.verdict == "not reproduced"
    # noisy notions: the stability control fails, the verdict is inconclusive whatever the interval
    numbers, claims = across.agreement_claims({"toy": synthetic(noise_sd=0.5)})
    run = Run("X-1", "demo", {})
    run.record(numbers, claims)
    assert all(c.verdict == "inconclusive at this scale" for c in run.claims)
    assert any("noise" in k.text for k in run.claims[0].failed_controls)


def test_claims_are_made_only_for_the_notions_measured():
    _, claims = across.agreement_claims({"toy": synthetic(measures=("cka", "dm_accuracy"))})
    assert {c.key for c in claims} == {"cka_dm_func_toy", "triangle_toy"}
    _, claims = across.agreement_claims({"toy": synthetic(measures=("cka", "pwcca"))})
    assert claims == []


def test_tables_and_heat_map(tmp_path):
    results = {"toy": synthetic(), "other": synthetic(seed=1, flip="dm")}
    table = across.summary_table(results)
    assert table.shape == (10, 4) and "CKA – DM func." in table.index
    parts = across.partings(results)
    assert len(parts) == 4 and "DM struct." in parts.loc[("Toy zoo 1", "between"), "notions"]
    fig = across.plot_agreement(results)
    assert fig.axes[-1].get_ylabel() == "Kendall τ" and len(fig.axes) == 3
    fig.savefig(tmp_path / "x1.png")


# --------------------------------------------------------------------------------------------
# The config and the zoos


def test_presets_and_parameters():
    for scale in REQUIRED_SCALES:
        assert isinstance(preset(across.PRESETS_X1, scale), across.AgreementConfig)
    assert preset(across.PRESETS_X1, "demo", zoo="smith").zoos() == ("smith",)
    assert preset(across.PRESETS_X1, "demo").zoos() == papers.ZOOS
    with pytest.raises(ParameterValueError, match="at least 2 notions"):
        preset(across.PRESETS_X1, "demo", measures=("cka",))
    with pytest.raises(ParameterValueError, match="parameter 'zoo'"):
        preset(across.PRESETS_X1, "demo", zoo="imagenet")
    with pytest.raises(ParameterValueError, match="parameter 'measures'"):
        preset(across.PRESETS_X1, "demo", measures=("cka", "tlm"))
    # the page's rerun box offers the sweep over the zoos
    from stitchkit.book import pages

    box = pages.rerun_box({"id": "X-1", "scale": "demo", "params": dataclasses.asdict(across.PRESETS_X1["demo"]),
                           "provenance": {}, "claims": []})
    assert "stitchkit sweep X-1 --scale demo -p zoo bansal hernandez smith balogh\n" in box


@pytest.mark.parametrize("scale", ["smoke", "demo"])
def test_zoos_are_the_networks_their_pages_trained(scale):
    """Same specs, so the same cache entries: X-1 reads the pages' models, trains none."""
    from stitchkit.experiments.balogh import identification as balogh_identification
    from stitchkit.experiments.hernandez import all_layers
    from stitchkit.experiments.smith import config

    c = common.PRESETS[scale]
    assert across.zoo_pair("bansal", across.PRESETS_X1[scale]).specs == (c.model(0), c.model(1))
    h = all_layers.PRESETS_F2[scale]
    assert across.zoo_pair("hernandez", across.PRESETS_X1[scale]).specs == (h.model("r2222"), h.model("r1111"))
    s = config.PRESETS[scale]
    assert across.zoo_pair("smith", across.PRESETS_X1[scale]).specs == (s.model("Digit", 0), s.model("Digit", 1))
    nets = balogh_identification.PRESETS_T1[scale].nets("resnet18")
    assert across.zoo_pair("balogh", across.PRESETS_X1[scale]).specs == (nets[0].spec, nets[1].spec)
    assert dataclasses.is_dataclass(across.zoo_pair("smith", across.PRESETS_X1[scale]))


def test_an_svd_that_does_not_converge_is_done_again_by_the_robust_driver(monkeypatch):
    """LAPACK's divide-and-conquer SVD failed on one bootstrap resample of the first demo run of
    X-1 (an ill-conditioned matrix); the batch is then decomposed element by element, a failing
    element by the QR-iteration driver, with the same result."""
    import torch

    from stitchkit.comparing import notions

    g = torch.Generator().manual_seed(0)
    m = torch.randn(4, 5, 3, generator=g, dtype=torch.float64)
    u, s = notions._svd(m)
    real = torch.linalg.svd
    calls = []

    def failing(x, *a, **kw):
        calls.append(x.shape)
        if x.dim() == 3 or len(calls) == 3:  # the batch, and its second element alone
            raise torch.linalg.LinAlgError("linalg.svd: The algorithm failed to converge")
        return real(x, *a, **kw)

    monkeypatch.setattr(torch.linalg, "svd", failing)
    u2, s2 = notions._svd(m)
    assert torch.allclose(s, s2) and torch.allclose(u.abs(), u2.abs())  # singular vectors up to sign


def test_claims_have_no_stitch_kind_and_taus_stay_in_their_range():
    """Issue 46: every X-1 claim has no trained stitch in it (no stitching control); a basic
    interval (where the percentile one excludes the estimate) is cut to tau's range; the stability
    control reads the resamples' taus, not a basic interval around the value 1 on all images."""
    numbers, claims = across.agreement_claims({"toy": synthetic(noise_sd=0.5)})
    assert {c.kind for c in claims} == {"no_stitch"}
    for c in claims:
        assert not any(k.kind in ("positive", "negative", "training length") for k in c.controls)
        if c.key != "triangle_toy":
            lim = 2.0 if c.key.startswith("structural_cohere") else 1.0
            assert -lim <= c.criterion.low <= c.criterion.high <= lim
    stab = [k for k in claims[0].controls if k.text.startswith("noise:")]
    assert stab and not any(k.passed for k in stab)


def test_the_notions_set_against_each_other_are_the_five_that_need_no_training():
    """compare's task-loss stitch (tlm_accuracy) trains per pair; the X pages' notions stay the five
    their runs used, so the pages' parameters do not change with compare's measures."""
    from stitchkit.comparing import compare

    assert notions.NOTIONS == ("cka", "pwcca", "procrustes", "dm", "dm_accuracy")
    assert set(notions.NOTIONS) < set(compare.MEASURES)
