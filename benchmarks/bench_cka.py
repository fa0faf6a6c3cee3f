"""9x9 layer-by-layer linear CKA between two ResNet-18-shaped activation sets: each layer's
centred Gram computed once and cached, against recomputing both Grams for every pair. Both are
timed side by side in one run and must give the same matrix.

    python benchmarks/bench_cka.py [--n 5000] [--width 4]

Activations are random float32 tensors with the shapes of a CIFAR ResNet-18 of the given width
at its 9 cut points (stem + 8 blocks); CKA flattens them to (n, c*h*w) as Balogh & Jelasity do.
"""

from __future__ import annotations

import argparse
import time

import numpy as np
import torch
from _table import print_rows

from stitchkit.base.hardware import device_name
from stitchkit.measures.similarity import layer_matrix
from stitchkit.networks.models import build_model


def activations(n: int, width: int, seed: int, device: str) -> dict[str, torch.Tensor]:
    shapes = build_model("resnet18", width=width).cut_shapes((3, 32, 32))
    g = torch.Generator().manual_seed(seed)
    return {cut: torch.randn(n, *shape, generator=g).to(device) for cut, shape in shapes.items() if cut != "pool"}


def run(n: int = 2000, width: int = 4, device: str | None = None) -> list[dict]:
    """The two CKA paths timed side by side; they must agree to 1e-10."""
    device = device or ("cuda" if torch.cuda.is_available() else "cpu")
    a, b = activations(n, width, 0, device), activations(n, width, 1, device)
    t0 = time.perf_counter()
    cached = layer_matrix(a, b, "cka", cache_grams=True)
    t_cached = time.perf_counter() - t0
    t0 = time.perf_counter()
    recomputed = layer_matrix(a, b, "cka", cache_grams=False)
    t_recomputed = time.perf_counter() - t0
    assert np.allclose(cached, recomputed, atol=1e-10), "the two paths disagree"
    feats = [int(np.prod(v.shape[1:])) for v in a.values()]
    return [dict(benchmark="linear CKA layer matrix",
                 setting=f"n = {n}, {len(a)}x{len(b)} layers, {min(feats)}-{max(feats)} features (ResNet-18 width {width})",
                 baseline="both Grams recomputed per pair", baseline_value=t_recomputed,
                 ours="each layer's centred Gram cached", ours_value=t_cached, unit="s", ratio=t_recomputed / t_cached,
                 target=None, notes=f"max |difference| {np.abs(cached - recomputed).max():.1e}")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="examples")
    ap.add_argument("--width", type=int, default=4, help="ResNet-18 base width (64 = the real one)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    print(f"device: {device_name(args.device)}")
    print_rows(run(args.n, args.width, args.device))


if __name__ == "__main__":
    main()
