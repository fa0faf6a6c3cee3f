"""Cross-checks (issue 67, item 7): stitchkit's PWCCA and orthogonal Procrustes distances against
independent implementations of the published formulas, and its bootstrap intervals against
``scipy.stats.bootstrap``.

The reference implementations below are written from the papers, not from stitchkit's code:

- PWCCA (Morcos, Raghu & Bengio 2018, "Insights on representational similarity in neural networks
  with canonical correlation"): CCA by QR (Björck & Golub 1973): centred X = Qx Rx, Y = Qy Ry,
  the canonical correlations rho are the singular values of Qx^T Qy = U S V^T, and X's canonical
  variates are the (unit-norm) columns h_i of Qx U. The projection weight of variate i is
  alpha_i = sum_j |<h_i, x_j>| over X's (centred) neurons x_j, normalised to sum 1;
  similarity = sum alpha_i rho_i, distance = 1 - similarity. stitchkit's documented convention
  (similarity.py): ``pwcca_distance(a, b)`` weights by ``a``'s variates; ``pwcca`` by the side
  with fewer neurons. The canonical correlations are also checked against Hotelling's eigenvalue
  form, rho^2 = eig(Sxx^-1 Sxy Syy^-1 Syx). stitchkit keeps no variance-threshold pre-reduction
  (no SVCCA step), so full-rank inputs with fewer neurons than examples compare like with like.
- Orthogonal Procrustes (Ding, Denain & Steinhardt 2021; Williams et al. 2021): centre, divide by
  the Frobenius norm, d = ||X||^2 + ||Y||^2 - 2 ||X^T Y||_* = 2 - 2 ||X^T Y||_* (the *squared*
  distance, in [0, 2]). Checked two ways: the nuclear-norm formula (numpy SVD) and the Procrustes
  problem itself, min over orthogonal R of ||X - Y R||_F^2, solved by
  ``scipy.linalg.orthogonal_procrustes`` on zero-padded inputs when the widths differ.

Tolerances: agreement is asked to 1e-9 absolute in float64. Both sides do O(n p^2) float64
arithmetic on well-conditioned inputs (column scales within 15x, n = 500), whose rounding is
~1e-13 (measured: <= 5e-14); any difference of formula (which side weights, centring, squared or
not, a missing normalisation) moves the distances by 1e-3 or more on these inputs.
"""

from __future__ import annotations

import numpy as np
import pytest
import scipy.linalg
import torch
from scipy import stats

from stitchkit.measures import similarity as sim
from stitchkit.verdicts import noise

TOL = 1e-9
N = 500

# (examples are always N = 500; neurons of the two sides)
SHAPES = [(5, 5), (5, 12), (10, 10), (8, 30), (20, 40), (40, 40), (25, 13)]


def pair(seed: int, p: int, q: int, n: int = N, k: int = 4) -> tuple[np.ndarray, np.ndarray]:
    """Two (n, p), (n, q) float64 representations sharing a k-dimensional latent signal, with
    unequal column scales (so projection weights differ between directions) and non-zero means."""
    rng = np.random.default_rng(seed)
    z = rng.standard_normal((n, k))
    a = z @ rng.standard_normal((k, p)) + rng.standard_normal((n, p))
    b = z @ rng.standard_normal((k, q)) + rng.standard_normal((n, q))
    a *= rng.uniform(0.2, 3.0, p)
    b *= rng.uniform(0.2, 3.0, q)
    return a + rng.standard_normal(p), b + rng.standard_normal(q)


def orthogonal(seed: int, p: int) -> np.ndarray:
    q, r = np.linalg.qr(np.random.default_rng(seed).standard_normal((p, p)))
    return q * np.sign(np.diag(r))  # Haar-distributed


# ----------------------------------------------------------------------------------------------
# Independent reference implementations (from the papers' definitions)


def ref_cca(x: np.ndarray, y: np.ndarray) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """(rho descending (min(p, q),), X's unit-norm canonical variates (n, p), centred X)."""
    x = x - x.mean(axis=0)
    y = y - y.mean(axis=0)
    qx, _ = np.linalg.qr(x)
    qy, _ = np.linalg.qr(y)
    u, s, _ = np.linalg.svd(qx.T @ qy)  # u: (p, p), complete basis of X's column space
    return np.clip(s, 0.0, 1.0), qx @ u, x


def ref_pwcca_distance(x: np.ndarray, y: np.ndarray) -> float:
    """Morcos et al.'s PWCCA distance with the projection weights from x's canonical variates.
    Where x has more neurons than y, its extra variates have no partner: their rho counts as 0
    (stitchkit's documented convention, ``1 - sum(w rho) / sum(w)`` over all of x's directions)."""
    rho, h, xc = ref_cca(x, y)
    alpha = np.abs(h.T @ xc).sum(axis=1)  # (p,): sum_j |<h_i, x_j>|
    alpha = alpha / alpha.sum()
    rho_full = np.zeros_like(alpha)
    rho_full[: len(rho)] = rho
    return float(1.0 - (alpha * rho_full).sum())


def hotelling_rho(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Canonical correlations from the eigenvalues of Sxx^-1 Sxy Syy^-1 Syx (Hotelling 1936)."""
    x = x - x.mean(axis=0)
    y = y - y.mean(axis=0)
    sxx, syy, sxy = x.T @ x, y.T @ y, x.T @ y
    m = np.linalg.solve(sxx, sxy) @ np.linalg.solve(syy, sxy.T)
    ev = np.sort(np.linalg.eigvals(m).real)[::-1][: min(x.shape[1], y.shape[1])]
    return np.sqrt(np.clip(ev, 0.0, 1.0))


def _normalised(x: np.ndarray) -> np.ndarray:
    x = x - x.mean(axis=0)
    return x / np.linalg.norm(x)


def ref_procrustes_nuclear(x: np.ndarray, y: np.ndarray) -> float:
    """||X||^2 + ||Y||^2 - 2 ||X^T Y||_* on centred, unit-Frobenius-norm X, Y."""
    x, y = _normalised(x), _normalised(y)
    nuc = np.linalg.svd(x.T @ y, compute_uv=False).sum()
    return float(np.linalg.norm(x) ** 2 + np.linalg.norm(y) ** 2 - 2 * nuc)


def ref_procrustes_fit(x: np.ndarray, y: np.ndarray) -> float:
    """min over orthogonal R of ||X - Y R||_F^2 (centred, unit norm; the narrower side padded
    with zero columns, Williams et al. 2021), R from scipy's orthogonal Procrustes solver."""
    x, y = _normalised(x), _normalised(y)
    w = max(x.shape[1], y.shape[1])
    x = np.pad(x, ((0, 0), (0, w - x.shape[1])))
    y = np.pad(y, ((0, 0), (0, w - y.shape[1])))
    r, _ = scipy.linalg.orthogonal_procrustes(y, x)  # argmin ||y r - x||_F
    return float(np.linalg.norm(x - y @ r) ** 2)


# ----------------------------------------------------------------------------------------------
# PWCCA


@pytest.mark.parametrize("p,q", [s for s in SHAPES if s[0] <= s[1]])
def test_pwcca_distance_matches_morcos_formula(p, q):
    a, b = pair(100 * p + q, p, q)
    ours = ref_pwcca_distance(a, b)
    assert 0.05 < ours < 0.95  # a case where the weights matter, not a trivial 0 or 1
    assert sim.pwcca_distance(a, b) == pytest.approx(ours, abs=TOL)
    # torch input (float32 is promoted; float64 here) gives the same number
    assert sim.pwcca_distance(torch.from_numpy(a), torch.from_numpy(b)) == pytest.approx(ours, abs=TOL)


@pytest.mark.parametrize("p,q", SHAPES)
def test_cca_correlations_match_qr_and_hotelling(p, q):
    a, b = pair(7 * p + q, p, q)
    rho, variates = sim.cca(a, b)
    rho = rho.numpy()
    ref_rho, _, _ = ref_cca(a, b)
    assert rho.shape == (min(p, q),)
    np.testing.assert_allclose(rho, ref_rho, atol=TOL, rtol=0)
    np.testing.assert_allclose(rho, hotelling_rho(a, b), atol=1e-7, rtol=0)  # eig of a product: looser
    # the library's variates are unit-norm, mutually orthogonal, and span A's centred columns
    v = variates.numpy()
    np.testing.assert_allclose(v.T @ v, np.eye(p), atol=1e-10)
    ac = a - a.mean(axis=0)
    resid = ac - v @ (v.T @ ac)
    assert np.linalg.norm(resid) < 1e-9 * np.linalg.norm(ac)


def test_pwcca_weights_come_from_the_first_argument():
    a, b = pair(3, 10, 10)
    from_a, from_b = ref_pwcca_distance(a, b), ref_pwcca_distance(b, a)
    assert abs(from_a - from_b) > 1e-3  # the two conventions are distinguishable here
    assert sim.pwcca_distance(a, b) == pytest.approx(from_a, abs=TOL)
    assert sim.pwcca_distance(b, a) == pytest.approx(from_b, abs=TOL)


@pytest.mark.parametrize("p,q", [(5, 12), (25, 13), (10, 10)])
def test_pwcca_weights_by_the_narrower_side(p, q):
    """``pwcca(target, source)`` weights by the side with fewer neurons (the target's on a tie),
    as Morcos et al.'s reference code chooses."""
    t, s = pair(11 * p + q, p, q)
    expect = ref_pwcca_distance(t, s) if p <= q else ref_pwcca_distance(s, t)
    got = sim.pwcca(torch.from_numpy(t), torch.from_numpy(s))
    assert got == pytest.approx(expect, abs=TOL)


def test_pwcca_one_unpartnered_direction_counts_as_zero_correlation():
    """p = q + 1 is accepted (rank(A) <= rank(B) + 1): the extra variate has no canonical partner;
    the documented convention gives it rho = 0 while its weight stays in the normaliser."""
    a, b = pair(5, 11, 10)
    assert sim.pwcca_distance(a, b) == pytest.approx(ref_pwcca_distance(a, b), abs=TOL)


def test_pwcca_invariances():
    """Invariant: translation and isotropic scaling of either side, any invertible linear map of
    the side that does not give the weights (CCA depends only on its column space), a signed
    permutation of the weighting side's neurons (the L1 sum over neurons is unchanged).
    Not invariant: a general rotation of the weighting side, because the projection weights sum
    |<h_i, x_j>| over that side's neuron basis (Kornblith et al. 2019, Table 1: PWCCA is not
    invariant to orthogonal transformations)."""
    p, q = 8, 30
    a, b = pair(21, p, q)
    d = sim.pwcca_distance(a, b)
    rng = np.random.default_rng(22)
    m = rng.standard_normal((q, q)) + 3 * np.eye(q)  # invertible, condition ~ 10
    assert np.linalg.cond(m) < 1e3
    perm = rng.permutation(p)
    signs = rng.choice([-1.0, 1.0], p)
    assert sim.pwcca_distance(3.7 * a - 2.0, b) == pytest.approx(d, abs=TOL)
    assert sim.pwcca_distance(a, 0.01 * b + 5.0) == pytest.approx(d, abs=TOL)
    assert sim.pwcca_distance(a, b @ m) == pytest.approx(d, abs=TOL)
    assert sim.pwcca_distance(a, b @ orthogonal(23, q)) == pytest.approx(d, abs=TOL)
    assert sim.pwcca_distance(a[:, perm] * signs, b) == pytest.approx(d, abs=TOL)
    rotated = a @ orthogonal(24, p)
    assert abs(sim.pwcca_distance(rotated, b) - d) > 1e-4
    assert sim.pwcca_distance(rotated, b) == pytest.approx(ref_pwcca_distance(rotated, b), abs=TOL)
    # when the weighting side lies in the other's span every rho is 1, whatever the weights
    wide = np.concatenate([a @ (rng.standard_normal((p, p)) + 3 * np.eye(p)), b[:, :10]], axis=1)
    assert sim.pwcca_distance(a, wide) == pytest.approx(0.0, abs=TOL)
    assert ref_pwcca_distance(a, wide) == pytest.approx(0.0, abs=TOL)


# ----------------------------------------------------------------------------------------------
# Orthogonal Procrustes


@pytest.mark.parametrize("p,q", SHAPES)
def test_procrustes_matches_nuclear_norm_and_procrustes_fit(p, q):
    a, b = pair(13 * p + q, p, q)
    nuclear, fit = ref_procrustes_nuclear(a, b), ref_procrustes_fit(a, b)
    assert nuclear == pytest.approx(fit, abs=TOL)  # the two references agree with each other
    assert 0.05 < nuclear < 1.95
    assert sim.procrustes_distance(a, b) == pytest.approx(nuclear, abs=TOL)
    assert sim.procrustes_distance(b, a) == pytest.approx(nuclear, abs=TOL)  # symmetric


@pytest.mark.parametrize("p,q", [(5, 5), (10, 10), (20, 40), (40, 40)])
def test_procrustes_invariances_and_zero(p, q):
    a, b = pair(17 * p + q, p, q)
    d = sim.procrustes_distance(a, b)
    # rotation of either side, isotropic scaling, translation
    assert sim.procrustes_distance(a @ orthogonal(1, p), b) == pytest.approx(d, abs=TOL)
    assert sim.procrustes_distance(a, b @ orthogonal(2, q)) == pytest.approx(d, abs=TOL)
    assert sim.procrustes_distance(0.003 * a + 7.0, 250.0 * b - 1.0) == pytest.approx(d, abs=TOL)
    # zero for Y = c X Q + t, Q orthogonal, and for an isometric embedding into more neurons
    assert sim.procrustes_distance(a, 2.5 * a @ orthogonal(3, p) + 4.0) == pytest.approx(0.0, abs=TOL)
    embed = np.linalg.qr(np.random.default_rng(4).standard_normal((p + 7, p)))[0].T  # (p, p+7), Q Q^T = I
    assert sim.procrustes_distance(a, a @ embed) == pytest.approx(0.0, abs=TOL)
    # not invariant to a general invertible map (unlike CCA)
    m = np.random.default_rng(5).standard_normal((q, q)) + 3 * np.eye(q)
    assert abs(sim.procrustes_distance(a, b @ m) - d) > 1e-4


def test_procrustes_reaches_two_for_orthogonal_column_spaces():
    """d = 2 when X^T Y = 0 after centring (the nuclear norm vanishes): the upper end of [0, 2]."""
    rng = np.random.default_rng(9)
    x = rng.standard_normal((N, 6))
    x -= x.mean(axis=0)
    y = rng.standard_normal((N, 9))
    basis = np.concatenate([np.ones((N, 1)) / np.sqrt(N), np.linalg.qr(x)[0]], axis=1)
    basis = np.linalg.qr(basis)[0]
    y -= basis @ (basis.T @ y)  # centred and orthogonal to x's columns
    assert ref_procrustes_nuclear(x, y) == pytest.approx(2.0, abs=TOL)
    assert sim.procrustes_distance(x, y) == pytest.approx(2.0, abs=TOL)


def test_sqrt_procrustes_is_a_metric_across_widths():
    """Williams et al. 2021: sqrt(d) is a metric on zero-padded, centred, unit-norm inputs."""
    rng = np.random.default_rng(31)
    z = rng.standard_normal((N, 3))
    reps = [z @ rng.standard_normal((3, p)) + 0.7 * rng.standard_normal((N, p)) for p in (5, 12, 20, 33)]
    for i in range(len(reps)):
        for j in range(len(reps)):
            for k in range(len(reps)):
                dij = np.sqrt(sim.procrustes_distance(reps[i], reps[j]))
                djk = np.sqrt(sim.procrustes_distance(reps[j], reps[k]))
                dik = np.sqrt(sim.procrustes_distance(reps[i], reps[k]))
                assert dik <= dij + djk + 1e-12


# ----------------------------------------------------------------------------------------------
# The measures as layer_matrix computes them (preprocess: positions as examples, or pooled)


def test_layer_matrix_preprocessing_matches_reference_on_conv_maps():
    rng = np.random.default_rng(41)
    z = rng.standard_normal((20, 3, 5, 5))

    def conv(c: int) -> torch.Tensor:  # (20, c, 5, 5): 20 images x 25 positions = 500 examples
        mix = rng.standard_normal((c, 3))
        return torch.from_numpy(np.einsum("ck,nkhw->nchw", mix, z) + rng.standard_normal((20, c, 5, 5)))

    acts_a = {"a6": conv(6), "a8": conv(8)}
    acts_b = {"b10": conv(10), "b12": conv(12)}
    rows = {k: np.moveaxis(v.numpy(), 1, -1).reshape(-1, v.shape[1]) for k, v in {**acts_a, **acts_b}.items()}
    for measure, ref in (("pwcca", ref_pwcca_distance), ("procrustes", ref_procrustes_nuclear)):
        got = sim.layer_matrix(acts_a, acts_b, measure)
        want = np.array([[ref(rows[i], rows[j]) for j in acts_b] for i in acts_a])
        np.testing.assert_allclose(got, want, atol=TOL, rtol=0)

    # spatial sizes differ: both sides are globally average-pooled (500 images as examples)
    big = torch.from_numpy(rng.standard_normal((N, 6, 4, 4)))
    small = torch.from_numpy(rng.standard_normal((N, 9, 2, 2)) + big[:, :1, ::2, ::2].numpy())
    pa, pb = big.numpy().mean(axis=(2, 3)), small.numpy().mean(axis=(2, 3))
    got = sim.layer_matrix({"x": big}, {"y": small}, "procrustes")[0, 0]
    assert got == pytest.approx(ref_procrustes_nuclear(pa, pb), abs=TOL)
    got = sim.layer_matrix({"x": big}, {"y": small}, "pwcca")[0, 0]
    assert got == pytest.approx(ref_pwcca_distance(pa, pb), abs=TOL)


# ----------------------------------------------------------------------------------------------
# Bootstrap intervals against scipy.stats.bootstrap
#
# Both are nonparametric percentile intervals over the same sample, so they differ only by Monte
# Carlo error in the two sets of resamples. The q-quantile of R iid replicates from a distribution
# with density f has standard error sqrt(q (1 - q) / R) / f(F^-1(q)) (asymptotic order statistics);
# the difference of two independent estimates has sqrt(1/R1 + 1/R2) in place of sqrt(1/R). f is
# estimated from the pooled replicates by a difference quotient over quantiles q +- 0.005. The
# endpoints must agree within 4 such standard errors; with R = 40,000 on each side that is about
# 2-2.5% of the interval's width (checked below, so the tolerance cannot silently grow loose).

R_BOOT = 40_000
LEVEL = noise.LEVEL


def _endpoint_tolerance(reps: np.ndarray, q: float, r1: int, r2: int) -> float:
    delta = 0.005
    lo, hi = np.quantile(reps, [q - delta, q + delta])
    density = 2 * delta / (hi - lo)
    return 4.0 * np.sqrt(q * (1 - q) * (1 / r1 + 1 / r2)) / density


def _compare(lib: noise.Estimate, lib_reps: np.ndarray, sample: np.ndarray, statistic) -> None:
    res = stats.bootstrap((sample,), statistic, n_resamples=R_BOOT, method="percentile",
                          confidence_level=LEVEL, vectorized=True, rng=np.random.default_rng(12345))
    ci = res.confidence_interval
    a = (1 - LEVEL) / 2
    pooled = np.concatenate([lib_reps, res.bootstrap_distribution])
    tol_low = _endpoint_tolerance(pooled, a, len(lib_reps), R_BOOT)
    tol_high = _endpoint_tolerance(pooled, 1 - a, len(lib_reps), R_BOOT)
    width = ci.high - ci.low
    assert max(tol_low, tol_high) < 0.03 * width  # the check is tight enough to mean something
    assert "basic" not in lib.method  # a percentile interval, compared like with like
    assert lib.value == pytest.approx(statistic(sample), rel=1e-6)
    assert abs(lib.low - ci.low) < tol_low, (lib.low, ci.low, tol_low)
    assert abs(lib.high - ci.high) < tol_high, (lib.high, ci.high, tol_high)
    # a skewed bootstrap distribution (the lognormal's mean: longer above; the exponential's sd:
    # longer below): both intervals are asymmetric about the estimate, and alike
    up, down = lib.high - lib.value, lib.value - lib.low
    sp_up, sp_down = ci.high - lib.value, lib.value - ci.low
    assert abs(sp_up / sp_down - 1) > 0.05
    assert up / down == pytest.approx(sp_up / sp_down, rel=0.05)


def test_resampler_percentile_interval_of_a_mean_matches_scipy():
    x = np.random.default_rng(7).lognormal(0.0, 1.0, 200)  # skewness ~6: the mean's is ~0.44
    res = noise.Resampler(len(x), "crosscheck lognormal", resamples=R_BOOT)
    reps = res.means(x)
    # the replicates are means over multinomial counts: float32 accumulation, ~1e-7 relative
    exact = np.concatenate([[x.mean()], res.counts.astype(np.float64) @ x / len(x)])
    np.testing.assert_allclose(reps, exact, rtol=1e-6, atol=0)
    assert res.counts.shape == (R_BOOT, len(x)) and np.all(res.counts.sum(axis=1) == len(x))
    est = noise.from_replicates(reps, n_test=len(x))
    # the library's interval is the linear-interpolation percentile of its own replicates
    np.testing.assert_allclose([est.low, est.high],
                               np.percentile(reps[1:], [50 * (1 - LEVEL), 50 * (1 + LEVEL)]), rtol=0, atol=1e-15)
    _compare(est, reps[1:], x, lambda s, axis=-1: np.mean(s, axis=axis))


def test_generic_bootstrap_of_a_standard_deviation_matches_scipy(monkeypatch):
    """noise.bootstrap (statistics that are not means over images) with R_BOOT resamples."""
    monkeypatch.setattr(noise, "RESAMPLES", R_BOOT)
    x = np.random.default_rng(8).exponential(1.0, 200)
    reps: list[float] = []

    def stat(idx: np.ndarray) -> float:
        v = float(x[idx].std())
        reps.append(v)
        return v

    est = noise.bootstrap(stat, len(x), name="crosscheck exponential sd")
    assert len(reps) == R_BOOT + 1
    _compare(est, np.array(reps[1:]), x, lambda s, axis=-1: np.std(s, axis=axis))
