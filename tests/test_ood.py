"""OOD detectors: AUROC, energies, the energy loss and detectors for maps and tokens."""

import dataclasses

import numpy as np
import pytest
import torch

from stitchkit.data import splits
from stitchkit.measures import ood


def test_auroc_properties():
    rng = np.random.default_rng(0)
    a = rng.normal(size=300)
    assert ood.auroc(a, a) == pytest.approx(0.5)
    assert ood.auroc(a, a + 100) == 1.0 and ood.auroc(a + 100, a) == 0.0
    b = rng.normal(1.0, 1.0, size=200)
    # symmetric: swapping the sides gives 1 - AUROC; invariant to a monotone transform
    assert ood.auroc(b, a) == pytest.approx(1 - ood.auroc(a, b))
    assert ood.auroc(np.exp(a), np.exp(b)) == pytest.approx(ood.auroc(a, b))
    # equals the fraction of (in, out) pairs ordered correctly
    brute = np.mean([[(y > x) + 0.5 * (y == x) for y in b] for x in a])
    assert ood.auroc(a, b) == pytest.approx(brute)
    with pytest.raises(ValueError, match="NaN"):
        ood.auroc([0.0, np.nan], [1.0])
    with pytest.raises(ValueError, match="both sides"):
        ood.auroc([], [1.0])


def test_energy_and_loss():
    logits = torch.tensor([[0.0, 0.0], [10.0, -10.0]])
    assert torch.allclose(ood.energy(logits), -torch.logsumexp(logits, 1))
    r = ood.DetectorRecipe()
    y = torch.tensor([0, 0])
    # logits far below the in-margin and outliers far above the out-margin: only cross-entropy is left
    confident_in = torch.tensor([[40.0, 0.0], [40.0, 0.0]])
    flat_out = torch.zeros(4, 2)
    loss = ood.energy_loss(confident_in, y, flat_out, r)
    assert float(loss) == pytest.approx(float(torch.nn.functional.cross_entropy(confident_in, y)), abs=1e-6)
    # an outlier with confident logits (low energy) is penalised
    assert float(ood.energy_loss(confident_in, y, confident_in, r)) > float(loss) + 1


def test_detectors_for_maps_and_tokens():
    r = ood.DetectorRecipe(conv_model="r1111", conv_width=4, vit_blocks=1)
    maps = ood.build_detector((16, 8, 8), r)
    assert maps(torch.zeros(3, 16, 8, 8)).shape == (3, 10)
    tokens = ood.build_detector((65, 32), r)
    assert tokens(torch.zeros(3, 65, 32)).shape == (3, 10)
    assert ood.scores(tokens, torch.zeros(7, 65, 32), batch_size=3).shape == (7,)
    with pytest.raises(ValueError, match="shape"):
        ood.build_detector((10,), r)


def test_finetune_passes_inliers_and_outliers_through_batchnorm_together():
    r = ood.DetectorRecipe(conv_model="r1111", conv_width=4)
    det = ood.build_detector((8, 8, 8), r).train()
    g = torch.Generator().manual_seed(0)
    a_in, a_out = torch.randn(6, 8, 8, 8, generator=g), 5 + 3 * torch.randn(12, 8, 8, 8, generator=g)
    with torch.no_grad():
        j_in, j_out = ood.finetune_logits(det, a_in, a_out)
        both = det(torch.cat([a_in, a_out]))
        s_in, s_out = ood.finetune_logits(det, a_in, a_out, joint=False)
    assert j_in.shape == (6, 10) and j_out.shape == (12, 10)
    assert torch.equal(j_in, both[:6]) and torch.equal(j_out, both[6:])
    # one pass each: the outliers are normalised by their own batch statistics, so they look different
    assert not torch.allclose(j_out, s_out, atol=1e-4)
    # the choice is in every detector's cache key, also at its default: detectors trained by the
    # two-pass version (whose recipes lack the field) are never found under the new keys
    from stitchkit.base.store import canonical, config_key
    assert canonical(r)["joint_batch"] is True
    assert config_key(r) != config_key(dataclasses.replace(r, joint_batch=False))


def test_near_outliers_are_made_offline_and_paired_with_their_images():
    g = torch.Generator().manual_seed(0)
    x = torch.randint(0, 256, (12, 3, 32, 32), generator=g, dtype=torch.uint8)
    y = torch.arange(12) % 3
    shuffled = ood.corrupt(x, "patch_shuffle")  # the same pixels, patches moved
    assert torch.equal(shuffled.flatten(1).sort(1).values, x.flatten(1).sort(1).values) and not torch.equal(shuffled, x)
    noisy = ood.corrupt(x, "gaussian_noise", severity=5)
    assert 0 < (noisy.float() - x.float()).abs().mean() < 0.2 * 255
    blurred = ood.corrupt(x, "gaussian_blur", severity=1)
    assert blurred.float().std() < x.float().std()  # blur removes variance
    mixed = ood.corrupt(x, "class_mix", labels=y)
    assert mixed.shape == x.shape and mixed.dtype == torch.uint8
    assert torch.equal(ood.corrupt(x, "smooth_noise", seed=3), ood.corrupt(x, "smooth_noise", seed=3))
    with pytest.raises(ValueError, match="labels"):
        ood.corrupt(x, "class_mix")
    with pytest.raises(ValueError, match="severity"):
        ood.corrupt(x, "gaussian_noise", severity=6)
    split = splits.Split(x, y, tuple("abc"))
    near = ood.near_outliers(split, ("gaussian_noise", "gaussian_blur"), 4)
    # image k is image k corrupted: even ones noisy, odd ones blurred
    assert torch.equal(near.images[0::2], ood.corrupt(x[0::2], "gaussian_noise", severity=4, seed=0))
    assert torch.equal(near.images[1::2], ood.corrupt(x[1::2], "gaussian_blur", severity=4, seed=1))
    assert torch.equal(near.labels, y)


def test_auroc_replicates_score_each_bootstrap_resample():
    from stitchkit.verdicts import noise

    rng = np.random.default_rng(0)
    a, b = rng.normal(size=200), rng.normal(0.7, 1.0, size=200)
    rs = noise.Resampler(200, "t", resamples=50)
    reps = ood.auroc_replicates(a, b, rs.counts)  # paired: one resample for both sides
    assert reps.shape == (51,) and reps[0] == pytest.approx(ood.auroc(a, b))
    c = rs.counts[7].astype(int)
    assert reps[8] == pytest.approx(ood.auroc(np.repeat(a, c), np.repeat(b, c)))
    other = noise.Resampler(150, "u", resamples=50)
    two = ood.auroc_replicates(a, b[:150], rs.counts, other.counts)  # independent samples
    c2 = other.counts[3].astype(int)
    assert two[4] == pytest.approx(ood.auroc(np.repeat(a, rs.counts[3].astype(int)), np.repeat(b[:150], c2)))
    with pytest.raises(ValueError, match="paired"):
        ood.auroc_replicates(a, b[:150], rs.counts)


def test_the_outlier_exposure_set_is_a_key_of_the_detector():
    from stitchkit.base.store import config_key

    r = ood.DetectorRecipe()
    assert r.exposure == "mnist"  # the default keeps the keys of detectors trained before the field
    assert config_key(r) != config_key(dataclasses.replace(r, exposure="cifar_generated"))
    with pytest.raises(ValueError, match="outlier exposure"):
        ood.outlier_exposure(dataclasses.replace(r, exposure="imagenet"))
