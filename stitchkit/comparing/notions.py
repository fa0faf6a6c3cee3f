"""Every notion of :func:`stitchkit.compare <stitchkit.comparing.compare.compare>` on every layer pair of two networks, on all test
images and on each bootstrap resample of them, and Kendall's tau between notions.

:func:`compare` gives each notion's value and, for CKA and DM's accuracy, an interval. To compare
*notions* with one another (how alike do they rank layer pairs?) every notion must be recomputed on
the *same* resamples of the images, so that a rank correlation between two notions, or a
difference of two such correlations, is bootstrapped jointly. :func:`notion_replicates` does that
without drawing new images: each notion is a function of per-image quantities whose sums,
weighted by a resample's draw counts (:func:`stitchkit.verdicts.noise.resampler`), give it exactly on that
resample:

- ``cka``: the centred Gram matrices (:class:`stitchkit.measures.similarity.CKABootstrap`);
- ``pwcca``, ``procrustes``: the two layers' centred second moments, from each image's sums of its
  rows and of their outer products (rows are positions, or the pooled vector where the two maps
  differ in size, as :func:`stitchkit.measures.similarity.preprocess`); PWCCA's weights from the narrower
  side, as :func:`compare`;
- ``dm``: each image's squared error of the direct-matching map (fitted once, on the fit images)
  and its squared norm;
- ``dm_accuracy``: each image's result with the stitch and without it.

On all images (replicate 0) each equals :func:`compare`'s number (a test checks it). Memory: the
per-image cross moments of a pair of layers, n x p x q float64 (33 MB for 1,000 images and 64
channels each side), and each layer's resampled covariance, (R+1) x p x p.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import torch

from ..base.progress import progress_bar
from ..measures import similarity as sim
from ..verdicts import noise
from . import compare

# the notions set against each other: stitchkit.compare's measures that need no
# training (its task-loss stitch, tlm_accuracy, trains per pair and is not one of them)
NOTIONS = ("cka", "pwcca", "procrustes", "dm", "dm_accuracy")
SAMPLE = "compared images"  # the resampler's default name: one draw for every notion
IDENTITY_TOL = 1e-6  # identity_failures: the same layer may fall short of another by rounding only


def _image_rows(h: torch.Tensor, pooled: bool) -> torch.Tensor:
    """(n, k, C) float64: each image's rows as the measures see them (positions, or the pooled vector)."""
    if pooled or h.ndim == 2:
        return sim.pooled(h).double()[:, None, :]
    if h.ndim == 4:
        return h.double().permute(0, 2, 3, 1).reshape(h.shape[0], -1, h.shape[1])
    return h.double()


def _weighted_cov(xa: torch.Tensor, xb: torch.Tensor, w: torch.Tensor) -> torch.Tensor:
    """(R+1, p, q) centred cross-moment sum of the rows of ``xa`` (n, k, p) and ``xb`` (n, k, q),
    each image weighted by its draw count in each resample (``w`` (R+1, n))."""
    n, k, p = xa.shape
    m = torch.einsum("nkp,nkq->npq", xa, xb).reshape(n, -1)
    rows = (w.sum(1) * k)[:, None, None]
    sa, sb = w @ xa.sum(1), w @ xb.sum(1)
    return (w @ m).reshape(len(w), p, -1) - sa[:, :, None] * sb[:, None, :] / rows


def _inv_sqrt(c: torch.Tensor) -> torch.Tensor:
    """Batched :func:`stitchkit.measures.similarity._inv_sqrt` (eigenvalues below 1e-12 of the largest dropped)."""
    evals, evecs = torch.linalg.eigh(c)
    evals = evals.clamp_min(0)
    keep = evals > 1e-12 * evals.amax(-1, keepdim=True)
    inv = torch.where(keep, 1.0 / torch.sqrt(torch.where(keep, evals, torch.ones_like(evals))), 0.0)
    return evecs @ torch.diag_embed(inv) @ evecs.transpose(-1, -2)


def procrustes_from_moments(caa, cbb, cab) -> np.ndarray:
    """Procrustes distance 2 - 2 ||C_ab||_* / sqrt(tr C_aa tr C_bb) per batch element (centred moments)."""
    try:
        nuc = torch.linalg.svdvals(cab).sum(-1)
    except torch.linalg.LinAlgError:  # see _svd
        nuc = _svd(cab)[1].sum(-1)
    den = torch.sqrt(torch.diagonal(caa, dim1=-2, dim2=-1).sum(-1) * torch.diagonal(cbb, dim1=-2, dim2=-1).sum(-1))
    return (2.0 - 2.0 * nuc / den).clamp_min(0.0).numpy()


def _svd(m: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(U, singular values) of each matrix of the batch ``m`` (float64). LAPACK's divide-and-
    conquer SVD, which torch uses, can fail to converge on an ill-conditioned matrix (a bootstrap
    resample that repeats few images makes some); such an element is decomposed again by the
    slower QR-iteration driver (``gesvd``), which converges where ``gesdd`` does not."""
    try:
        u, s, _ = torch.linalg.svd(m, full_matrices=True)
        return u, s
    except torch.linalg.LinAlgError:
        us, ss = [], []
        for x in m:
            try:
                u, s, _ = torch.linalg.svd(x, full_matrices=True)
            except torch.linalg.LinAlgError:
                u, s, _ = (torch.from_numpy(a) for a in scipy.linalg.svd(x.numpy(), full_matrices=True,
                                                                        lapack_driver="gesvd"))
            us.append(u)
            ss.append(s)
        return torch.stack(us), torch.stack(ss)


def pwcca_from_moments(caa, cbb, cab, wa=None, wb=None) -> np.ndarray:
    """:func:`stitchkit.measures.similarity.pwcca_distance` (weights from A) per batch element, from the
    centred moments: the variates' inner products with A's neurons are U^T C_aa^-1/2 C_aa."""
    wa = _inv_sqrt(caa) if wa is None else wa
    wb = _inv_sqrt(cbb) if wb is None else wb
    u, rho = _svd(wa @ cab @ wb)
    weights = (u.transpose(-1, -2) @ wa @ caa).abs().sum(-1)  # (B, p)
    dim = min(weights.shape[-1], rho.shape[-1])
    w = weights[:, :dim] / weights.sum(-1, keepdim=True)
    return (1.0 - (w * rho.clamp(0, 1)[:, :dim]).sum(-1)).numpy()


def notion_replicates(model_a, model_b, cuts_a, cuts_b, images, labels, fit_images, measures=NOTIONS, *,
                      sample: str = SAMPLE, batch_size: int = 250, device=None, progress: bool = False
                      ) -> tuple[list[tuple[str, str]], dict[str, np.ndarray], np.ndarray | None]:
    """Every (module of A in ``cuts_a``, module of B in ``cuts_b``) by each of ``measures``, as
    :func:`stitchkit.compare <stitchkit.comparing.compare.compare>` measures it (``images`` preprocessed, the DM maps fitted on
    ``fit_images``), on all images and on each bootstrap resample of them (:data:`SAMPLE`'s
    draw). Returns the pairs, measure -> (R+1, pairs) values (row 0: all images; a column is NaN
    where the measure is undefined, e.g. PWCCA with too few rows) and B's own per-image results."""
    kw = {"batch_size": batch_size, "device": device}
    acts_a = compare.hooked_activations(model_a, images, cuts_a, which="A", **kw)
    same = model_b is model_a and list(cuts_b) == list(cuts_a)
    acts_b = acts_a if same else compare.hooked_activations(model_b, images, cuts_b, which="B", **kw)
    dm = any(m.startswith("dm") for m in measures)
    fit_a = compare.hooked_activations(model_a, fit_images, cuts_a, which="A", **kw) if dm else {}
    fit_b = (fit_a if same else compare.hooked_activations(model_b, fit_images, cuts_b, which="B", **kw)) if dm else {}
    n = len(images)
    counts = noise.resampler(n, sample).counts.astype(np.float64)
    w = torch.from_numpy(np.concatenate([np.ones((1, n)), counts]))  # (R+1, n)
    boot = sim.CKABootstrap(n, name=sample) if "cka" in measures else None
    grams, covs, roots = {}, {}, {}

    def gram(side, c, h):
        if (side, c) not in grams:
            grams[(side, c)] = sim.centered_gram(sim.flat(h))
        return grams[(side, c)]

    def cov(side, c, h, pooled):
        if (side, c, pooled) not in covs:
            x = _image_rows(h, pooled)
            covs[(side, c, pooled)] = _weighted_cov(x, x, w)
            roots[(side, c, pooled)] = _inv_sqrt(covs[(side, c, pooled)])
        return covs[(side, c, pooled)], roots[(side, c, pooled)]

    own = None
    if "dm_accuracy" in measures:
        own = compare._own_correct(model_b, images, labels, batch_size, device).astype(np.float64)
        own_reps = np.maximum(w.numpy() @ own / n, 1e-12)
    pairs = [(a, b) for a in cuts_a for b in cuts_b]
    out = {m: np.full((len(w), len(pairs)), np.nan) for m in measures}
    side_b = "A" if same else "B"
    for p, (a, b) in enumerate(progress_bar(iterable=pairs, desc="layer pairs", disable=not progress, unit="pair")):
        ha, hb = acts_a[a], acts_b[b]
        if "cka" in measures:
            out["cka"][:, p] = boot.replicates(gram("A", a, ha), gram(side_b, b, hb))
        if {"pwcca", "procrustes"} & set(measures):
            pooled = ha.shape[2:] != hb.shape[2:]
            (caa, ra), (cbb, rb) = cov("A", a, ha, pooled), cov(side_b, b, hb, pooled)
            cab = _weighted_cov(_image_rows(ha, pooled), _image_rows(hb, pooled), w)
            if "procrustes" in measures:
                out["procrustes"][:, p] = procrustes_from_moments(caa, cbb, cab)
            if "pwcca" in measures:
                x, y = sim.preprocess(ha, hb, "pwcca")
                try:  # defined where compare's is: the weights from the narrower side (A's on a tie)
                    sim.pwcca_distance(*((y, x) if x.shape[1] > y.shape[1] else (x, y)))
                except sim.SimilarityInputError:
                    pass
                else:
                    out["pwcca"][:, p] = (pwcca_from_moments(cbb, caa, cab.transpose(-1, -2), rb, ra)
                                          if x.shape[1] > y.shape[1] else pwcca_from_moments(caa, cbb, cab, ra, rb))
        if dm:
            stitch = compare.dm_map(fit_a[a], fit_b[b])
            if "dm" in measures:
                est = stitch(ha)
                err = ((est - hb).double() ** 2).flatten(1).sum(1).numpy()
                norm = (hb.double() ** 2).flatten(1).sum(1).numpy()
                out["dm"][:, p] = (w.numpy() @ err) / (w.numpy() @ norm)
            if "dm_accuracy" in measures:
                ok = compare.stitched_correct(model_b, b, stitch, ha, images, labels, **kw).astype(np.float64)
                out["dm_accuracy"][:, p] = (w.numpy() @ ok / n) / own_reps
    return pairs, out, own


def kendall_tau(x: np.ndarray, y: np.ndarray) -> np.ndarray:
    """Kendall's tau-b between ``x`` and ``y`` (..., L) along the last axis -> (...): concordant
    minus discordant pairs over the root of the untied pairs' counts (scipy's default); NaN where
    either is constant."""
    sx = np.sign(x[..., :, None] - x[..., None, :]).astype(np.float32)
    sy = np.sign(y[..., :, None] - y[..., None, :]).astype(np.float32)
    num = np.einsum("...ij,...ij->...", sx, sy, dtype=np.float64)
    den = np.sqrt(np.einsum("...ij,...ij->...", sx, sx, dtype=np.float64)
                  * np.einsum("...ij,...ij->...", sy, sy, dtype=np.float64))
    return np.where(den > 0, num / np.where(den > 0, den, 1.0), np.nan)


def identity_failures(pairs: list[tuple[str, str]], values: np.ndarray, sign: float = 1.0) -> int:
    """Layers of a network compared with itself whose own pair (ℓ, ℓ) is less similar, by more
    than rounding, than some (ℓ, b) or (a, ℓ): the identity control counts them (0 to pass)."""
    sims = dict(zip(pairs, sign * np.asarray(values, dtype=float)))
    layers = list(dict.fromkeys(a for a, _ in pairs))
    bad = 0
    for c in layers:
        own = sims[(c, c)]
        others = [v for (a, b), v in sims.items() if (a == c) != (b == c)]
        bad += bool(not np.isfinite(own) or any(v > own + IDENTITY_TOL for v in others if np.isfinite(v)))
    return bad


__all__ = ["NOTIONS", "identity_failures", "kendall_tau", "notion_replicates", "procrustes_from_moments",
           "pwcca_from_moments"]
