"""Property tests of the similarity measures on small float64 matrices over several seeds."""

import numpy as np
import pytest
import torch

from stitchkit.measures import similarity as sim

SEEDS = range(5)


def rand(seed, n=60, p=8, dtype=torch.float64):
    return torch.randn(n, p, generator=torch.Generator().manual_seed(seed), dtype=dtype)


def rotation(seed, p):
    q, _ = torch.linalg.qr(torch.randn(p, p, generator=torch.Generator().manual_seed(1000 + seed), dtype=torch.float64))
    return q


@pytest.mark.parametrize("seed", SEEDS)
def test_cka_invariances(seed):
    a, b = rand(seed), rand(seed + 100, p=5)
    base = sim.linear_cka(a, b)
    assert 0 <= base <= 1
    assert sim.linear_cka(a, a) == pytest.approx(1.0, abs=1e-12)
    assert sim.linear_cka(a @ rotation(seed, 8), b) == pytest.approx(base, abs=1e-10)
    assert sim.linear_cka(3.7 * a, b) == pytest.approx(base, abs=1e-10)
    assert sim.linear_cka(a + 5.0, b) == pytest.approx(base, abs=1e-10)  # centring
    assert sim.linear_cka(a, b) == pytest.approx(sim.linear_cka(b, a), abs=1e-12)


@pytest.mark.parametrize("seed", SEEDS)
def test_cka_gram_and_feature_forms_agree(seed):
    a, b = rand(seed, n=30, p=50), rand(seed + 1, n=30, p=7)
    assert sim.linear_cka_gram(a, b) == pytest.approx(sim.linear_cka(a, b), abs=1e-10)
    ka = sim.centered_gram(a, chunk=7)  # chunked accumulation gives the same Gram
    assert torch.allclose(ka, sim.centered_gram(a), atol=1e-10)


def test_minibatch_cka_estimates_full_cka():
    g = torch.Generator().manual_seed(0)
    z = torch.randn(4000, 3, generator=g, dtype=torch.float64)
    a = z @ torch.randn(3, 20, generator=g, dtype=torch.float64) + 0.5 * torch.randn(4000, 20, generator=g, dtype=torch.float64)
    b = z @ torch.randn(3, 10, generator=g, dtype=torch.float64) + 0.5 * torch.randn(4000, 10, generator=g, dtype=torch.float64)
    assert sim.linear_cka_minibatch(a, b, batch_size=500) == pytest.approx(sim.linear_cka(a, b), abs=0.02)
    with pytest.raises(sim.SimilarityInputError, match=">= 4"):
        sim.linear_cka_minibatch(a, b, batch_size=3)


@pytest.mark.parametrize("seed", SEEDS)
def test_procrustes_properties(seed):
    a, b, c = rand(seed), rand(seed + 10), rand(seed + 20)
    assert sim.procrustes_distance(a, a @ rotation(seed, 8)) == pytest.approx(0.0, abs=1e-10)
    assert sim.procrustes_distance(a, 2.5 * a + 1.0) == pytest.approx(0.0, abs=1e-10)
    assert 0 <= sim.procrustes_distance(a, b) <= 2
    # sqrt of the Procrustes distance is a metric: triangle inequality
    d = lambda x, y: sim.procrustes_distance(x, y) ** 0.5  # noqa: E731
    assert d(a, c) <= d(a, b) + d(b, c) + 1e-12


@pytest.mark.parametrize("seed", SEEDS)
def test_pwcca_distance_zero_under_invertible_map(seed):
    a = rand(seed, n=200, p=6)
    m = torch.randn(6, 6, generator=torch.Generator().manual_seed(seed), dtype=torch.float64) + 3 * torch.eye(6, dtype=torch.float64)
    assert sim.pwcca_distance(a, a @ m + 2.0) == pytest.approx(0.0, abs=1e-8)
    d = sim.pwcca_distance(a, rand(seed + 50, n=200, p=6))
    assert 0 < d <= 1


def test_pwcca_refuses_what_it_cannot_define():
    with pytest.raises(sim.SimilarityInputError, match="more examples than features"):
        sim.pwcca_distance(rand(0, n=10, p=20), rand(1, n=10, p=3))
    low = rand(0, n=100, p=2) @ torch.randn(2, 8, generator=torch.Generator().manual_seed(0), dtype=torch.float64)
    with pytest.raises(sim.SimilarityInputError, match=r"rank\(A\) > rank\(B\) \+ 1"):
        sim.pwcca_distance(rand(0, n=100, p=8), low)


@pytest.mark.parametrize("seed", SEEDS)
def test_dm_distance(seed):
    x = rand(seed, n=100, p=6)
    w = torch.randn(6, 4, generator=torch.Generator().manual_seed(seed), dtype=torch.float64)
    assert sim.dm_distance(x, x @ w + 1.5) == pytest.approx(0.0, abs=1e-12)
    y = rand(seed + 5, n=100, p=4) + 3.0
    rel, r2 = sim.dm_distance(x, y), sim.dm_distance(x, y, mode="1-r2")
    assert 0 < rel < r2 <= 1  # uncentred norm (the paper's) is larger, so the distance is smaller


@pytest.mark.parametrize("seed", SEEDS)
def test_numerical_rank_of_planted_low_rank(seed):
    g = torch.Generator().manual_seed(seed)
    k = 3 + seed
    x = torch.randn(200, k, generator=g, dtype=torch.float64) @ torch.randn(k, 30, generator=g, dtype=torch.float64)
    assert sim.numerical_rank(x) == k
    assert sim.numerical_rank(x + 1e-6 * torch.randn(200, 30, generator=g, dtype=torch.float64)) == k
    assert sim.numerical_rank(x.T) == k  # p > n path


def test_float64_path_stays_accurate_on_near_identical_float32_pair():
    g = torch.Generator().manual_seed(0)
    a32 = (torch.randn(2000, 64, generator=g) * 10 + 100).float()
    b32 = (a32 + 1e-3 * torch.randn(2000, 64, generator=g)).float()
    ref_cka = sim.linear_cka(a32.double(), b32.double())
    assert sim.linear_cka(a32, b32) == pytest.approx(ref_cka, abs=1e-12)
    assert sim.linear_cka_gram(a32, b32) == pytest.approx(ref_cka, abs=1e-9)
    assert sim.procrustes_distance(a32, b32) == pytest.approx(sim.procrustes_distance(a32.double(), b32.double()), abs=1e-12)


def test_input_refusals():
    with pytest.raises(sim.SimilarityInputError, match="same number of examples"):
        sim.linear_cka(rand(0, n=10), rand(0, n=11))
    bad = rand(0)
    bad[3, 2] = float("nan")
    with pytest.raises(sim.SimilarityInputError, match="NaN or inf"):
        sim.procrustes_distance(bad, rand(1))
    with pytest.raises(sim.SimilarityInputError, match="2-D"):
        sim.linear_cka(torch.zeros(3, 4, 5), torch.zeros(3, 4))


def test_preprocessing_rules():
    ha, hb = torch.randn(4, 3, 5, 5), torch.randn(4, 6, 5, 5)
    pa, pb = sim.preprocess(ha, hb, "pwcca")
    assert pa.shape == (100, 3) and pb.shape == (100, 6)  # positions are examples
    pa, pb = sim.preprocess(ha, torch.randn(4, 6, 2, 2), "procrustes")
    assert pa.shape == (4, 3) and pb.shape == (4, 6)  # unequal shapes: pooled
    pa, _ = sim.preprocess(ha, hb, "cka")
    assert pa.shape == (4, 75)  # CKA: fully flattened
    assert sim.positions_as_examples(torch.randn(2, 17, 8)).shape == (34, 8)  # ViT tokens


def test_layer_matrix_with_and_without_gram_cache():
    acts = {f"l{i}": torch.randn(40, 3, 4, 4, generator=torch.Generator().manual_seed(i)) for i in range(3)}
    cached = sim.layer_matrix(acts, acts, "cka")
    uncached = sim.layer_matrix(acts, acts, "cka", cache_grams=False)
    assert np.allclose(cached, uncached, atol=1e-12) and np.allclose(np.diag(cached), 1)
    assert np.allclose(cached, cached.T)
    proc = sim.layer_matrix(acts, acts, "procrustes")
    assert np.allclose(np.diag(proc), 0, atol=1e-10)


def test_model_layer_matrix_runs_on_a_model():
    from stitchkit.networks.models import build_model

    model = build_model("resnet10", seed=0, width=4)
    images = torch.randint(0, 256, (20, 3, 32, 32), dtype=torch.uint8)
    m, rows, cols = sim.model_layer_matrix(model, model, images, "cka", normalisation="cifar", device="cpu")
    assert m.shape == (len(model.cuts), len(model.cuts)) and rows == list(model.cuts)
    assert np.allclose(np.diag(m), 1)


def test_heatmap_and_penalty_plots_are_labelled():
    import matplotlib

    matplotlib.use("Agg")
    from stitchkit.pagekit import plotting

    ax = plotting.layer_heatmap(np.eye(3), ["a", "b", "c"], ["x", "y", "z"], cbar_label="CKA", xlabel="B", ylabel="A")
    assert ax.get_xlabel() == "B" and len(ax.figure.axes) == 2  # heatmap + colour bar
    assert ax.figure.axes[1].get_ylabel() == "CKA"
    with pytest.raises(ValueError, match="does not match labels"):
        plotting.layer_heatmap(np.eye(2), ["a"], ["x", "y"])
    import pandas as pd

    table = pd.DataFrame({"cut": ["stem", "pool"], "sender": ["s", "s"], "penalty": [0.0, 0.1],
                          "dm_penalty": [0.1, 0.2], "accuracy": [0.9, 0.8], "receiver_accuracy": [0.9, 0.9]})
    fig = plotting.penalty_per_layer(table)
    assert "penalty" in fig.axes[0].get_ylabel() and "%" in fig.axes[1].get_ylabel()


def test_model_grams_give_the_same_cka_as_the_activations():
    from stitchkit.networks.models import build_model

    a, b = build_model("resnet10", seed=0, width=4), build_model("resnet10", seed=1, width=4)
    images = torch.randint(0, 256, (24, 3, 32, 32), dtype=torch.uint8, generator=torch.Generator().manual_seed(0))
    cuts = ["stem", "block2"]
    ga = sim.model_grams(a, images, cuts, normalisation="cifar", device="cpu")
    gb = sim.model_grams(b, images, cuts, normalisation="cifar", device="cpu")
    acts_a = sim.model_activations(a, images, cuts, normalisation="cifar", device="cpu")
    acts_b = sim.model_activations(b, images, cuts, normalisation="cifar", device="cpu")
    assert set(ga) == set(cuts) and ga["stem"].dtype == torch.float64 and ga["stem"].shape == (24, 24)
    for ca in cuts:
        for cb in cuts:
            assert sim.cka_from_grams(ga[ca], gb[cb]) == pytest.approx(
                sim.linear_cka(sim.flat(acts_a[ca]), sim.flat(acts_b[cb])), abs=1e-9)
