"""Representational similarity measures, exact (float64) and fast (Gram caching).

Conventions (rows are examples, columns are features; inputs (n, p) arrays or tensors of any
float dtype, on any device; all arithmetic in float64):

- ``linear_cka``: Kornblith et al. 2019, ||B^T A||_F^2 / (||A^T A||_F ||B^T B||_F) on
  column-centred A, B, reported as a *similarity* in [0, 1]. ``linear_cka_gram`` is the same
  number from n x n Gram matrices (use it when p >> n, and cache each layer's centred Gram);
  ``linear_cka_minibatch`` is Nguyen et al.'s unbiased minibatch estimator for large n.
- ``pwcca_distance``: projection-weighted CCA (Morcos et al. 2018) in Ding et al.'s 2021
  convention: centre, whiten each side by the eigendecomposition of its covariance, canonical
  correlations rho from the SVD; weights from the *first* argument's canonical variates
  (``sum over its neurons of |<variate, neuron>|``); distance = 1 - sum(w rho) / sum(w). Asymmetric.
  ``pwcca`` takes the weights from the side with fewer features (Balogh & Jelasity, as Morcos et
  al.'s reference code).
- ``procrustes_distance``: Ding et al.: centre, scale to unit Frobenius norm, 2 - 2 ||A^T B||_*.
- ``dm_distance``: direct-matching structural distance of Balogh & Jelasity: relative squared
  residual ||XW + b - Y||_F^2 / ||Y||_F^2 of the least-squares affine map, with the *uncentred*
  target norm (the paper's number); ``mode="1-r2"`` divides by the centred norm instead.
- ``numerical_rank``: eigenvalues of the sample covariance above ``rel`` x the largest
  (Smith & Marcu, after the Tunnel Effect paper; rel = 1e-3 on eigenvalues).
- ``LowRank``: principal-component projection of a layer's features to a given rank (every
  position or token a row), the representations of Ding et al.'s sensitivity test; ``rank_list``
  spaces the ranks geometrically.
"""

from __future__ import annotations

from typing import Callable, Iterable, Mapping, Sequence

import numpy as np
import torch

from ..base.linalg import least_squares, to_rows
from ..verdicts import noise

MEASURES = ("cka", "pwcca", "procrustes", "dm")


class SimilarityInputError(ValueError):
    """The inputs do not meet a condition the measure needs; the message says what to do."""


def as_float64(x, name: str = "input") -> torch.Tensor:
    """(n, p) float64 tensor on the input's device; refuses NaN/inf and non-2D input."""
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))
    if t.ndim != 2:
        raise SimilarityInputError(f"{name} must be 2-D (examples, features), got shape {tuple(t.shape)}; "
                                   "flatten or pool activations first (see preprocess)")
    t = t.detach().to(torch.float64)
    if not torch.isfinite(t).all():
        raise SimilarityInputError(f"{name} contains NaN or inf values")
    return t


def _pair(a, b) -> tuple[torch.Tensor, torch.Tensor]:
    a, b = as_float64(a, "A"), as_float64(b, "B")
    if a.shape[0] != b.shape[0]:
        raise SimilarityInputError(f"A and B must have the same number of examples (rows), got {a.shape[0]} "
                                   f"and {b.shape[0]}")
    if b.device != a.device:
        b = b.to(a.device)
    return a, b


def center(x: torch.Tensor) -> torch.Tensor:
    """Subtract each column's mean."""
    return x - x.mean(dim=0, keepdim=True)


# --------------------------------------------------------------------------------------------
# CKA


def linear_cka(a, b) -> float:
    """Linear CKA similarity in [0, 1] (feature form, cost O(n p q))."""
    a, b = _pair(a, b)
    a, b = center(a), center(b)
    num = torch.linalg.matrix_norm(b.T @ a) ** 2
    den = torch.linalg.matrix_norm(a.T @ a) * torch.linalg.matrix_norm(b.T @ b)
    return float(num / den) if den > 0 else 0.0


def centered_gram(x, chunk: int = 4096) -> torch.Tensor:
    """Doubly centred linear Gram matrix H X X^T H (n, n) in float64.

    Centring the columns of X first gives the same matrix; the product is accumulated in float64
    over column chunks so a wide input never needs a full float64 copy.
    """
    t = x if isinstance(x, torch.Tensor) else torch.as_tensor(np.asarray(x))
    if t.ndim != 2:
        raise SimilarityInputError(f"input must be 2-D (examples, features), got shape {tuple(t.shape)}")
    n = t.shape[0]
    gram = torch.zeros(n, n, dtype=torch.float64, device=t.device)
    for s in range(0, t.shape[1], chunk):
        block = as_float64(t[:, s:s + chunk])
        block = center(block)
        gram += block @ block.T
    return gram


def cka_from_grams(ka: torch.Tensor, kb: torch.Tensor) -> float:
    """Linear CKA from two centred Gram matrices: <Ka, Kb>_F / (||Ka||_F ||Kb||_F)."""
    if ka.shape != kb.shape:
        raise SimilarityInputError(f"Gram matrices differ in size: {tuple(ka.shape)} vs {tuple(kb.shape)}")
    kb = kb.to(ka.device)
    den = torch.linalg.matrix_norm(ka) * torch.linalg.matrix_norm(kb)
    return float((ka * kb).sum() / den) if den > 0 else 0.0


def linear_cka_gram(a, b) -> float:
    """Linear CKA similarity via n x n centred Grams (equal to ``linear_cka``; faster when p >> n)."""
    a, b = _pair(a, b)
    return cka_from_grams(centered_gram(a), centered_gram(b))


def _hsic_unbiased(k: torch.Tensor, l: torch.Tensor) -> torch.Tensor:
    """Unbiased HSIC estimator (Song et al. 2012) of two uncentred Gram matrices (n >= 4)."""
    n = k.shape[0]
    k = k - torch.diag(torch.diag(k))
    l = l - torch.diag(torch.diag(l))
    ones = torch.ones(n, dtype=k.dtype, device=k.device)
    term = (k * l).sum() + (ones @ k @ ones) * (ones @ l @ ones) / ((n - 1) * (n - 2)) \
        - 2.0 / (n - 2) * (ones @ k @ (l @ ones))
    return term / (n * (n - 3))


def linear_cka_minibatch(a, b, batch_size: int = 1000, seed: int = 0) -> float:
    """Nguyen et al. 2021's minibatch CKA: mean unbiased HSIC over random batches, then CKA.

    Unbiased per batch, so the mean over batches estimates the population value without the
    bias of CKA on a small batch. ``batch_size`` >= 4.
    """
    a, b = _pair(a, b)
    if batch_size < 4:
        raise SimilarityInputError(f"batch_size must be >= 4 for the unbiased estimator, got {batch_size}")
    n = a.shape[0]
    order = torch.randperm(n, generator=torch.Generator().manual_seed(seed)).to(a.device)
    xy = xx = yy = torch.zeros((), dtype=torch.float64, device=a.device)
    batches = [order[s:s + batch_size] for s in range(0, n - batch_size + 1, batch_size)]
    if not batches:
        raise SimilarityInputError(f"need at least batch_size={batch_size} examples, got {n}")
    for idx in batches:
        ka, kb = a[idx] @ a[idx].T, b[idx] @ b[idx].T
        xy, xx, yy = xy + _hsic_unbiased(ka, kb), xx + _hsic_unbiased(ka, ka), yy + _hsic_unbiased(kb, kb)
    return float(xy / torch.sqrt(xx * yy))


# --------------------------------------------------------------------------------------------
# CCA family and Procrustes


def _rank(x: torch.Tensor, rtol: float = 1e-10) -> int:
    s = torch.linalg.svdvals(x)
    return int((s > rtol * s.max()).sum()) if s.numel() and s.max() > 0 else 0


def _inv_sqrt(cov: torch.Tensor) -> torch.Tensor:
    evals, evecs = torch.linalg.eigh(cov)
    evals = evals.clamp_min(0)
    keep = evals > 1e-12 * evals.max()
    inv = torch.where(keep, 1.0 / torch.sqrt(torch.where(keep, evals, torch.ones_like(evals))), torch.zeros_like(evals))
    return evecs @ torch.diag(inv) @ evecs.T


def _check_cca_size(a: torch.Tensor, b: torch.Tensor) -> None:
    n, p, q = a.shape[0], a.shape[1], b.shape[1]
    if n <= max(p, q):
        raise SimilarityInputError(
            f"CCA needs more examples than features on each side: n={n}, p={p}, q={q}. Use more examples, "
            "or reduce features (positions as examples for conv maps, or global average pooling)")


def cca(a, b) -> tuple[torch.Tensor, torch.Tensor]:
    """Canonical correlations rho (descending, length min(p, q)) and A's canonical variates (n, p)."""
    a, b = _pair(a, b)
    _check_cca_size(a, b)
    a, b = center(a), center(b)
    wa, wb = _inv_sqrt(a.T @ a), _inv_sqrt(b.T @ b)
    u, rho, _ = torch.linalg.svd(wa @ (a.T @ b) @ wb, full_matrices=True)
    variates_a = a @ wa @ u  # (n, p): whitened A rotated onto the canonical directions
    return rho.clamp(0, 1), variates_a


def pwcca_distance(a, b) -> float:
    """PWCCA *distance* (Ding et al. convention, weights from ``a``); asymmetric.

    Refuses n <= p or q (CCA is meaningless there) and rank(A) > rank(B) + 1, where the weights
    put mass on directions that have no canonical partner.
    """
    a64, b64 = _pair(a, b)
    _check_cca_size(a64, b64)
    ra, rb = _rank(center(a64)), _rank(center(b64))
    if ra > rb + 1:
        raise SimilarityInputError(
            f"PWCCA is ill-defined when rank(A) > rank(B) + 1 (got {ra} and {rb}): the weights come from "
            "A's directions, more than B can match. Swap the arguments or reduce A's features")
    rho, variates = cca(a64, b64)
    weights = (variates.T @ center(a64)).abs().sum(dim=1)  # (p,) sum over A's neurons
    dim = min(weights.numel(), rho.numel())
    w = weights[:dim] / weights.sum()
    return float(1.0 - (w * rho[:dim]).sum())


def pwcca(target: torch.Tensor, source: torch.Tensor) -> float:
    """PWCCA distance with the projection weights from the side with fewer features (the
    target's when they tie), as Morcos et al.'s reference code chooses: weights from the wider
    side are ill-defined (it has directions the other cannot match)."""
    if source.shape[1] < target.shape[1]:
        return pwcca_distance(source, target)
    return pwcca_distance(target, source)


def procrustes_distance(a, b) -> float:
    """Orthogonal Procrustes distance: centred, unit Frobenius norm, 2 - 2 ||A^T B||_* in [0, 2]."""
    a, b = _pair(a, b)
    a, b = center(a), center(b)
    na, nb = torch.linalg.matrix_norm(a), torch.linalg.matrix_norm(b)
    if na == 0 or nb == 0:
        raise SimilarityInputError("Procrustes distance is undefined for a constant input (zero norm after centring)")
    nuc = torch.linalg.matrix_norm((a / na).T @ (b / nb), ord="nuc")
    return float((2.0 - 2.0 * nuc).clamp_min(0.0))


# --------------------------------------------------------------------------------------------
# Direct matching and rank


def dm_distance(x, y, *, mode: str = "relative", rtol: float = 1e-6) -> float:
    """Direct-matching structural distance of X (n, p) -> Y (n, q).

    ``relative`` (the paper's): ||XW + b - Y||_F^2 / ||Y||_F^2 with the uncentred Y.
    ``1-r2``: the same residual over ||Y - mean(Y)||_F^2. W, b are the least-squares fit solved
    from float64 normal equations with a relative singular-value cut-off ``rtol``.
    """
    if mode not in ("relative", "1-r2"):
        raise ValueError(f"unknown mode {mode!r}; valid: relative, 1-r2")
    x, y = _pair(x, y)
    w, bias = least_squares(x, y, bias=True, rtol=rtol)
    resid = torch.linalg.matrix_norm(x @ w + bias - y) ** 2
    den = torch.linalg.matrix_norm(y if mode == "relative" else center(y)) ** 2
    if den == 0:
        raise SimilarityInputError("target has zero norm; the DM distance is undefined")
    return float(resid / den)


def numerical_rank(x, rel: float = 1e-3) -> int:
    """Number of eigenvalues of the sample covariance of X (n, p) above ``rel`` x the largest."""
    x = center(as_float64(x))
    n, p = x.shape
    # the non-zero eigenvalues of X^T X and X X^T coincide: use the smaller one
    m = x.T @ x if p <= n else x @ x.T
    evals = torch.linalg.eigvalsh(m / max(n - 1, 1))
    if evals.max() <= 0:
        return 0
    return int((evals > rel * evals.max()).sum())


# --------------------------------------------------------------------------------------------
# Layer preprocessing (Balogh & Jelasity) and whole layer-by-layer matrices


def positions_as_examples(h: torch.Tensor) -> torch.Tensor:
    """(N, C, H, W) -> (N*H*W, C); (N, T, D) tokens -> (N*T, D); (N, D) unchanged."""
    try:
        return to_rows(h)
    except ValueError as exc:
        raise SimilarityInputError(str(exc)) from None


def pooled(h: torch.Tensor) -> torch.Tensor:
    """Global average pool: (N, C, H, W) -> (N, C); tokens (N, T, D) -> (N, D)."""
    if h.ndim == 4:
        return h.mean(dim=(2, 3))
    if h.ndim == 3:
        return h.mean(dim=1)
    return h


def flat(h: torch.Tensor) -> torch.Tensor:
    """(N, ...) -> (N, prod(...))."""
    return h.reshape(h.shape[0], -1)


def preprocess(ha: torch.Tensor, hb: torch.Tensor, measure: str) -> tuple[torch.Tensor, torch.Tensor]:
    """Balogh & Jelasity's preprocessing for ``measure``: CKA on fully flattened activations;
    PWCCA/Procrustes/DM on positions-as-examples when the shapes agree, else on pooled vectors."""
    if measure not in MEASURES:
        raise ValueError(f"unknown measure {measure!r}; valid: {', '.join(MEASURES)}")
    if measure == "cka":
        return flat(ha), flat(hb)
    if ha.shape[2:] == hb.shape[2:]:
        return positions_as_examples(ha), positions_as_examples(hb)
    return pooled(ha), pooled(hb)


_PAIR_MEASURES: dict[str, Callable[..., float]] = {
    "cka": linear_cka_gram, "pwcca": pwcca_distance, "procrustes": procrustes_distance, "dm": dm_distance,
}


def layer_matrix(acts_a: Mapping[str, torch.Tensor], acts_b: Mapping[str, torch.Tensor], measure: str = "cka",
                 *, cache_grams: bool = True) -> np.ndarray:
    """Measure between every layer of A (rows) and every layer of B (columns).

    ``acts_*`` map layer names to activations (N, ...) on the same N examples. For CKA each
    layer's centred Gram is computed once and reused for every pair (``cache_grams=False``
    recomputes both Grams per pair, for benchmarking).
    """
    if measure not in _PAIR_MEASURES:
        raise ValueError(f"unknown measure {measure!r}; valid: {', '.join(MEASURES)}")
    names_a, names_b = list(acts_a), list(acts_b)
    out = np.zeros((len(names_a), len(names_b)))
    if measure == "cka" and cache_grams:
        grams_a = {k: centered_gram(flat(v)) for k, v in acts_a.items()}
        grams_b = grams_a if acts_b is acts_a else {k: centered_gram(flat(v)) for k, v in acts_b.items()}
        for i, ka in enumerate(names_a):
            for j, kb in enumerate(names_b):
                out[i, j] = cka_from_grams(grams_a[ka], grams_b[kb])
        return out
    fn = _PAIR_MEASURES[measure]
    for i, ka in enumerate(names_a):
        for j, kb in enumerate(names_b):
            out[i, j] = fn(*preprocess(acts_a[ka], acts_b[kb], measure))
    return out


@torch.no_grad()
def model_activations(model, images: torch.Tensor, cuts: Sequence[str] | None = None, *, normalisation: str,
                      batch_size: int = 500, device: torch.device | str | None = None) -> dict[str, torch.Tensor]:
    """Activations (N, ...) float32 at each of ``cuts`` (default: all) of a CutModel, computed in
    one forward pass per batch (eval mode)."""
    from ..data.batches import normalise

    cuts = list(cuts or model.cuts)
    device = torch.device(device or next(model.parameters()).device)
    model.eval()
    out: dict[str, list[torch.Tensor]] = {c: [] for c in cuts}
    for s in range(0, images.shape[0], batch_size):
        x = normalise(images[s:s + batch_size].to(device), normalisation)
        for name, h in model.forward_intermediates(x, cuts).items():
            out[name].append(h.float())
    return {c: torch.cat(v) for c, v in out.items()}


def model_grams(model, images: torch.Tensor, cuts: Sequence[str] | None = None, *, normalisation: str,
                device: torch.device | str | None = None) -> dict[str, torch.Tensor]:
    """Each cut's centred Gram matrix (float64, n x n) of a CutModel on ``images``: what linear
    CKA between any two models at any two cuts needs (:func:`cka_from_grams`), computed once."""
    acts = model_activations(model, images, cuts, normalisation=normalisation, device=device)
    return {cut: centered_gram(flat(h)) for cut, h in acts.items()}


def model_layer_matrix(model_a, model_b, images: torch.Tensor, measure: str = "cka", *, normalisation: str,
                       cuts_a: Iterable[str] | None = None, cuts_b: Iterable[str] | None = None,
                       device: torch.device | str | None = None) -> tuple[np.ndarray, list[str], list[str]]:
    """Layer-by-layer matrix of ``measure`` between two models (or one, passing it twice) on
    ``images`` (N, C, H, W) uint8: each layer's activations are computed once."""
    acts_a = model_activations(model_a, images, list(cuts_a) if cuts_a else None, normalisation=normalisation,
                               device=device)
    acts_b = acts_a if (model_b is model_a and cuts_b is None and cuts_a is None) else model_activations(
        model_b, images, list(cuts_b) if cuts_b else None, normalisation=normalisation, device=device)
    return layer_matrix(acts_a, acts_b, measure), list(acts_a), list(acts_b)


# --------------------------------------------------------------------------------------------
# Low-rank approximations of a layer (Ding et al.'s sensitivity test, Balogh & Jelasity's J-T2)


def to_feature_rows(h: torch.Tensor) -> torch.Tensor:
    """(N, C, H, W) -> (N*H*W, C); (N, T, D) -> (N*T, D)."""
    if h.ndim == 4:
        return h.permute(0, 2, 3, 1).reshape(-1, h.shape[1])
    return h.reshape(-1, h.shape[-1])


def from_feature_rows(rows: torch.Tensor, shape) -> torch.Tensor:
    if len(shape) == 4:
        n, c, hh, ww = shape
        return rows.reshape(n, hh, ww, c).permute(0, 3, 1, 2).contiguous()
    return rows.reshape(shape)


class LowRank:
    """Principal-component projection of a layer's features: fitted on rows (every position or
    token of every image), applied to (N, C, H, W) maps or (N, T, D) tokens."""

    def __init__(self, h: torch.Tensor) -> None:
        rows = to_feature_rows(h).double()
        self.mean = rows.mean(0)
        c = rows - self.mean
        evals, evecs = torch.linalg.eigh(c.T @ c)
        self.basis = evecs.flip(1)  # columns by decreasing variance
        self.full = rows.shape[1]

    def __call__(self, h: torch.Tensor, rank: int) -> torch.Tensor:
        rows = to_feature_rows(h).double()
        v = self.basis[:, :rank]
        out = (rows - self.mean) @ v @ v.T + self.mean
        return from_feature_rows(out.float(), h.shape)


def rank_list(full: int, n: int) -> list[int]:
    """Up to ``n`` distinct ranks from ``full`` down to 1, geometrically spaced."""
    return sorted({int(round(r)) for r in np.geomspace(full, 1, n)}, reverse=True)


# --------------------------------------------------------------------------------------------
# Linear CKA with its bootstrap over images. The Gram matrices the CKA is computed from are at
# hand (n x n, centred, float64: similarity.model_grams), so each bootstrap replicate is the
# CKA of the resampled images without gathering a resampled matrix: with w the draw counts of the
# n images (sum n), the biased HSIC of the resampled Grams is
#   w'(K∘L)w - 2/n Σ_i w_i (Kw)_i (Lw)_i + (w'Kw)(w'Lw)/n²,
# so all replicates of all cuts cost a few (n x n) @ (n x R) products. One change to the plain
# resample: the pairs of two copies of one image (w_i(w_i - 1) of them) are left out of the first
# sum. Kept, they count an image's similarity with itself as that of two images, which distinct
# test images never have, and shift every replicate up (measured at n = 2000: by up to 1.3 bootstrap
# standard deviations for a random network's activations, 25 for wide Gaussian features); left
# out, the replicates centre on the full-sample CKA (within 0.1 sd in the same cases). The
# resamples are noise.resampler's for the CKA images, shared by every CKA on those images: a
# difference or a minimum over cuts and pairs is resampled jointly.

CKA_SAMPLE = "CKA images"  # the resampler's name for the CKA test images (independent of the stitches')
CKA_METHOD = "paired bootstrap over the CKA images"


class CKABootstrap:
    """Linear CKA of Gram-matrix pairs on one set of ``n`` images: the full-sample value and one
    per bootstrap resample of the images (:meth:`replicates`, (R+1,))."""

    def __init__(self, n: int, name: str = CKA_SAMPLE) -> None:
        counts = noise.resampler(n, name).counts  # (R, n)
        self.n = int(n)
        self.w = np.concatenate([np.ones((n, 1)), counts.T.astype(np.float64)], axis=1)  # (n, R+1)
        self._own: dict[int, tuple[object, np.ndarray, np.ndarray, np.ndarray]] = {}

    @staticmethod
    def _array(g) -> np.ndarray:
        g = g.detach().cpu().numpy() if isinstance(g, torch.Tensor) else np.asarray(g)
        return np.asarray(g, dtype=np.float64)

    def _hsic(self, a: np.ndarray, aw: np.ndarray, b: np.ndarray, bw: np.ndarray) -> np.ndarray:
        """(R+1,) biased HSIC (times n²) of the resampled Grams, less the pairs of two copies of
        one image (see the section's comment); element 0 (all counts 1) is the plain one."""
        w, n = self.w, self.n
        copies = (w * (w - 1)).T @ (np.diag(a) * np.diag(b))
        return ((w * ((a * b) @ w)).sum(0) - 2 * (w * aw * bw).sum(0) / n
                + (w * aw).sum(0) * (w * bw).sum(0) / n ** 2 - copies)

    def _stats(self, g) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        key = id(g)
        if key not in self._own:
            a = self._array(g)
            if a.shape != (self.n, self.n):
                raise ValueError(f"a Gram matrix of shape {a.shape} on {self.n} images")
            aw = a @ self.w
            self._own[key] = (g, a, aw, self._hsic(a, aw, a, aw))  # g kept: its id stays its own
        return self._own[key][1:]

    def replicates(self, ga, gb) -> np.ndarray:
        """(R+1,) CKA(ga, gb): on all images (element 0) and on each resample."""
        a, aw, haa = self._stats(ga)
        b, bw, hbb = self._stats(gb)
        hab = haa if ga is gb else self._hsic(a, aw, b, bw)
        den = np.sqrt(np.clip(haa, 0, None) * np.clip(hbb, 0, None))
        return np.where(den > 0, hab / np.where(den > 0, den, 1), 0.0)

    def forget(self) -> None:
        """Drop the cached products (each an n x (R+1) array per Gram matrix)."""
        self._own.clear()
