"""Memory-bounded measures over a stream of minibatches: linear CKA from the unbiased HSIC of each
minibatch, and the running sums direct matching's residual needs.

Minibatch CKA (Nguyen, Raghu & Kornblith 2021, "Do wide and deep networks learn the same
things?"): for each minibatch of m ≥ 4 images, the unbiased HSIC estimator of Song et al. (2012)
on the linear Gram matrices K = X Xᵀ and L = Y Yᵀ with their diagonals zeroed,

    HSIC₁(K, L) = [tr(K L) + (1ᵀK1)(1ᵀL1) / ((m-1)(m-2)) - 2/(m-2) · 1ᵀK L1] / (m(m-3)),

and CKA = Σ_b HSIC₁(K_b, L_b) / sqrt(Σ_b HSIC₁(K_b, K_b) · Σ_b HSIC₁(L_b, L_b)). Memory is one
minibatch's activations and m×m Grams, whatever the number of images; the estimate does not
depend on how the images are ordered into batches in expectation (unlike a CKA of minibatch
averages of biased HSIC, it has no minibatch-size bias). Its interval resamples the minibatches
(the same resample for every layer pair), in float64.
"""

from __future__ import annotations

import numpy as np
import torch

MIN_BATCH = 4  # the unbiased HSIC needs m >= 4


def gram(h: torch.Tensor) -> torch.Tensor:
    """The linear Gram matrix (m, m) of a minibatch's activations (flattened per image), float64,
    its diagonal zeroed (the unbiased estimator's K̃)."""
    x = h.reshape(h.shape[0], -1).to(torch.float64)
    k = x @ x.T
    k.fill_diagonal_(0.0)
    return k


def hsic1(k: torch.Tensor, l: torch.Tensor) -> float:
    """Song et al.'s unbiased HSIC of two zero-diagonal Gram matrices of one minibatch."""
    m = k.shape[0]
    if m < MIN_BATCH:
        raise ValueError(f"a minibatch of {m} images: the unbiased HSIC needs at least {MIN_BATCH}")
    ones_k, ones_l = k.sum(0), l.sum(0)  # 1ᵀK, 1ᵀL (symmetric)
    value = ((k * l).sum() + ones_k.sum() * ones_l.sum() / ((m - 1) * (m - 2)) - 2.0 / (m - 2) * (ones_k @ ones_l))
    return float(value / (m * (m - 3)))


class MinibatchCKA:
    """Per layer pair, the minibatches' HSIC₁ terms; :meth:`estimate` gives CKA and its bootstrap
    replicates over the minibatches."""

    def __init__(self) -> None:
        self.terms: dict[tuple[str, str], list[tuple[float, float, float]]] = {}

    def update(self, grams_a: dict[str, torch.Tensor], grams_b: dict[str, torch.Tensor]) -> None:
        """One minibatch: the Grams (:func:`gram`) of every layer of A and of B on the same images."""
        self_a = {a: hsic1(k, k) for a, k in grams_a.items()}
        self_b = {b: hsic1(l, l) for b, l in grams_b.items()}
        for a, k in grams_a.items():
            for b, l in grams_b.items():
                self.terms.setdefault((a, b), []).append((hsic1(k, l), self_a[a], self_b[b]))

    def replicates(self, a: str, b: str, resamples: int = 1000, seed: int = 0) -> np.ndarray:
        """(R+1,): CKA on every minibatch, then on each of ``resamples`` resamples of the
        minibatches with replacement (the same draws for every pair: one seed)."""
        t = np.asarray(self.terms[(a, b)], dtype=np.float64)  # (batches, 3)
        w = np.random.default_rng(seed).multinomial(len(t), np.full(len(t), 1 / len(t)), size=resamples)
        w = np.vstack([np.ones(len(t)), w])  # (R+1, batches)
        s = w @ t  # (R+1, 3)
        with np.errstate(invalid="ignore", divide="ignore"):
            return s[:, 0] / np.sqrt(np.clip(s[:, 1], 0, None) * np.clip(s[:, 2], 0, None))


__all__ = ["MIN_BATCH", "MinibatchCKA", "gram", "hsic1"]
