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

from stitchkit.models import build_model
from stitchkit.similarity import layer_matrix
from stitchkit.train import device_name


def activations(n: int, width: int, seed: int, device: str) -> dict[str, torch.Tensor]:
    shapes = build_model("resnet18", width=width).cut_shapes((3, 32, 32))
    g = torch.Generator().manual_seed(seed)
    return {cut: torch.randn(n, *shape, generator=g).to(device) for cut, shape in shapes.items() if cut != "pool"}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--n", type=int, default=5000, help="examples")
    ap.add_argument("--width", type=int, default=4, help="ResNet-18 base width (64 = the real one)")
    ap.add_argument("--device", default="cuda" if torch.cuda.is_available() else "cpu")
    args = ap.parse_args()
    a = activations(args.n, args.width, 0, args.device)
    b = activations(args.n, args.width, 1, args.device)
    feats = [int(np.prod(v.shape[1:])) for v in a.values()]
    print(f"device: {device_name(args.device)}; n = {args.n}; {len(a)}x{len(b)} layers; "
          f"features per layer {min(feats)}..{max(feats)} (ResNet-18 width {args.width})")
    t0 = time.perf_counter()
    cached = layer_matrix(a, b, "cka", cache_grams=True)
    t_cached = time.perf_counter() - t0
    t0 = time.perf_counter()
    recomputed = layer_matrix(a, b, "cka", cache_grams=False)
    t_recomputed = time.perf_counter() - t0
    assert np.allclose(cached, recomputed, atol=1e-10), "the two paths disagree"
    print(f"{'Gram cached per layer':<28} {t_cached:8.1f} s")
    print(f"{'Grams recomputed per pair':<28} {t_recomputed:8.1f} s")
    print(f"ratio (recomputed / cached): {t_recomputed / t_cached:.1f}x; max |difference| "
          f"{np.abs(cached - recomputed).max():.1e}")


if __name__ == "__main__":
    main()
