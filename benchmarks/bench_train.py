"""Training throughput (images/s) of Bansal's pre-activation ResNet-18, side by side in one run:
fp32 NCHW vs channels_last + bf16 autocast, at widths 16 and 64.

    python benchmarks/bench_train.py [--widths 16 64] [--steps 12] [--batch 128]

Synthetic uint8 images go through the project's own Batches (device tensor, crop+flip per batch)
and train() loop, so the numbers include the data path. Prints one row per setting and the ratio.
"""

from __future__ import annotations

import argparse
import time

import torch

from stitchkit.data import Batches, Split
from stitchkit.models import build_model
from stitchkit.train import TrainConfig, default_device, device_name, train


def throughput(width: int, precision: str, steps: int, batch: int, device: torch.device) -> float:
    n = batch * steps
    g = torch.Generator().manual_seed(0)
    split = Split(torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=g),
                  torch.randint(0, 10, (n,), generator=g), tuple("0123456789"))
    model = build_model("preact_resnet18", seed=0, width=width).to(device)
    cl = precision == "bf16"
    if cl:
        model = model.to(memory_format=torch.channels_last)
    batches = Batches(split, batch, normalisation="cifar", shuffle=True, augment=True, drop_last=True,
                      device=device, channels_last=cl)
    warm = TrainConfig(steps=2, batch_size=batch, precision=precision)
    train(model, batches, warm, device=device, progress=False)
    cfg = TrainConfig(steps=steps, batch_size=batch, precision=precision)
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    train(model, batches, cfg, device=device, progress=False)
    if device.type == "cuda":
        torch.cuda.synchronize()
    return steps * batch / (time.perf_counter() - t0)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--widths", type=int, nargs="+", default=[16, 64])
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    device = default_device()
    print(f"device: {device_name(device)}; batch {args.batch}, {args.steps} timed steps after 2 warm-up steps")
    print(f"{'width':>5} {'fp32 NCHW img/s':>16} {'CL+bf16 img/s':>14} {'ratio':>6}")
    for w in args.widths:
        a = throughput(w, "fp32", args.steps, args.batch, device)
        b = throughput(w, "bf16", args.steps, args.batch, device)
        print(f"{w:>5} {a:>16.0f} {b:>14.0f} {b / a:>6.2f}")


if __name__ == "__main__":
    main()
