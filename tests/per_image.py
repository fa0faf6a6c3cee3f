"""Per-image results for the synthetic tables of the verdict tests (the paired bootstrap's input)."""

from __future__ import annotations

import numpy as np

N = 10_000  # test images of a synthetic table: one penalty's paired SE is ~0.1-0.2 points
BASE = np.arange(N) < N // 2  # the receiver (top) gets the first half right (accuracy 0.5)


def stitched(points: float) -> np.ndarray:
    """Per-image results of a stitch whose penalty against :data:`BASE` is ``points``: a penalty
    loses the receiver's first right answers, a gain wins its first wrong ones (nested: 4 points
    loses the images 1 point loses)."""
    k = int(round(abs(points) * N / 100))
    c = BASE.copy()
    if points >= 0:
        c[:k] = False
    else:
        c[N // 2:N // 2 + k] = True
    return c


def correct(acc: float, n: int = 4000, seed: int = 0) -> np.ndarray:
    """``n`` per-image results whose mean is ``acc``, the right ones at random places (seeded)."""
    out = np.zeros(n, dtype=bool)
    out[np.random.default_rng(seed).permutation(n)[:round(acc * n)]] = True
    return out
