"""Shared linear algebra: activations as rows, and least squares by float64 normal equations.

Used by direct matching (stitch initialisation, DM similarity) and by the similarity measures'
preprocessing. Rows are examples: a conv map (N, C, H, W) gives N*H*W rows of C features
(positions as examples), ViT tokens (N, T, D) give N*T rows of D features, vectors stay (N, D).
"""

from __future__ import annotations

import torch


def to_rows(h: torch.Tensor) -> torch.Tensor:
    """(N, C, H, W) -> (N*H*W, C); tokens (N, T, D) -> (N*T, D); (N, D) unchanged."""
    if h.ndim == 4:
        return h.permute(0, 2, 3, 1).reshape(-1, h.shape[1])
    if h.ndim == 3:
        return h.reshape(-1, h.shape[2])
    if h.ndim == 2:
        return h
    raise ValueError(f"expected (N, C, H, W), (N, T, D) or (N, D) activations, got shape {tuple(h.shape)}")


class NormalEquations:
    """Accumulates [X 1]^T [X 1] and [X 1]^T Y in float64, chunk by chunk, then solves.

    Solving uses the eigendecomposition of the Gram matrix with a relative cut-off on singular
    values (``rtol``), i.e. the minimum-norm least-squares solution on the numerical range.
    """

    def __init__(self, bias: bool = True) -> None:
        self.bias = bias
        self.xtx: torch.Tensor | None = None
        self.xty: torch.Tensor | None = None
        self.n = 0

    def update(self, x: torch.Tensor, y: torch.Tensor) -> None:
        x, y = x.to(torch.float64), y.to(torch.float64)  # (n, p), (n, q)
        if x.shape[0] != y.shape[0]:
            raise ValueError(f"row counts differ: X has {x.shape[0]}, Y has {y.shape[0]}")
        if self.bias:
            x = torch.cat([x, torch.ones_like(x[:, :1])], dim=1)
        xtx, xty = x.T @ x, x.T @ y
        self.xtx = xtx if self.xtx is None else self.xtx + xtx
        self.xty = xty if self.xty is None else self.xty + xty
        self.n += x.shape[0]

    def solve(self, rtol: float = 1e-6) -> tuple[torch.Tensor, torch.Tensor | None]:
        """W (p, q) and b (q,) (None without bias), float64."""
        if self.xtx is None:
            raise ValueError("no rows accumulated")
        evals, evecs = torch.linalg.eigh(self.xtx)
        keep = evals > (rtol ** 2) * evals.max().clamp_min(0)
        inv = torch.where(keep, 1.0 / evals.clamp_min(torch.finfo(torch.float64).tiny), torch.zeros_like(evals))
        beta = evecs @ (inv[:, None] * (evecs.T @ self.xty))
        return (beta[:-1], beta[-1]) if self.bias else (beta, None)


def least_squares(x: torch.Tensor, y: torch.Tensor, *, bias: bool = True, rtol: float = 1e-6,
                  chunk: int = 65536) -> tuple[torch.Tensor, torch.Tensor | None]:
    """Least-squares affine map X (n, p) -> Y (n, q) via float64 normal equations."""
    ne = NormalEquations(bias)
    for s in range(0, x.shape[0], chunk):
        ne.update(x[s:s + chunk], y[s:s + chunk])
    return ne.solve(rtol)
