"""Linear probes on frozen representations: a representation as the probe sees it (conv maps
pooled, tokens as CLS and mean) and a probe's test accuracy. Balogh & Jelasity's J-T2 and J-T3
measure each representation's function F this way."""

from __future__ import annotations

import torch

from ..networks.simclr import linear_probe


def probe_features(h: torch.Tensor) -> torch.Tensor:
    """A representation as the linear probe sees it: conv maps average-pooled to at most 4 x 4,
    then flattened; tokens as the CLS token and the mean token side by side."""
    if h.ndim == 4:
        size = (min(4, h.shape[2]), min(4, h.shape[3]))
        return torch.nn.functional.adaptive_avg_pool2d(h, size).flatten(1)
    if h.ndim == 3:
        return torch.cat([h[:, 0], h[:, 1:].mean(1)], dim=1)
    return h


def probe_accuracy(train_x: torch.Tensor, train_y: torch.Tensor, test_x: torch.Tensor, test_y: torch.Tensor, *,
                   epochs: int, seed: int = 0, per_image: bool = False):
    """Test accuracy of a linear classifier (Adam 1e-2, cross-entropy, cosine, batch 256) on
    standardised features (``per_image``: the (n,) bool array of test images it gets right)."""
    mu, sd = train_x.mean(0), train_x.std(0).clamp_min(1e-6)
    holder = torch.nn.Module()
    holder.head = torch.nn.Linear(train_x.shape[1], int(train_y.max()) + 1)
    linear_probe(holder, (train_x - mu) / sd, train_y, epochs=epochs, lr=1e-2, seed=seed)
    with torch.no_grad():
        pred = holder.head((test_x - mu) / sd).argmax(1)
    if per_image:
        return (pred == test_y).cpu().numpy()
    return float((pred == test_y).float().mean())
