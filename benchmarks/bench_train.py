"""Model training throughput (images/s), side by side in one run on the same machine:

- ``naive``: what a typical tutorial writes: fp32, NCHW, per-image crop + flip + normalise in a
  ``Dataset.__getitem__``, batches from a ``DataLoader`` with 2 worker processes;
- ``ours``: the project's path: the split held as one uint8 tensor on the device, crop + flip on
  the whole batch, channels_last, precision chosen by the hardware (``auto``);
- the precision choice itself: fp32 NCHW, fp32 channels_last, bf16 channels_last.

    python benchmarks/bench_train.py [--width 16] [--steps 12] [--batch 128]
"""

from __future__ import annotations

import argparse
import time

import torch
from _table import print_rows

from stitchkit.base.hardware import cpu_capability, default_device, device_name, resolve_precision
from stitchkit.data.batches import Batches, normalise
from stitchkit.data.splits import Split
from stitchkit.networks.models import build_model
from stitchkit.networks.train import TrainConfig, train


def _split(n: int) -> Split:
    g = torch.Generator().manual_seed(0)
    return Split(torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=g),
                 torch.randint(0, 10, (n,), generator=g), tuple("0123456789"))


class PerImage(torch.utils.data.Dataset):
    """The tutorial data path: one image at a time, augmented and normalised in the worker."""

    def __init__(self, split: Split) -> None:
        self.split = split

    def __len__(self) -> int:
        return len(self.split)

    def __getitem__(self, i: int):
        img = torch.nn.functional.pad(self.split.images[i], (4, 4, 4, 4))
        y0, x0 = torch.randint(0, 9, (2,)).tolist()
        img = img[:, y0:y0 + 32, x0:x0 + 32]
        if torch.rand(()) < 0.5:
            img = img.flip(-1)
        return normalise(img[None], "cifar")[0], self.split.labels[i]


def _timed(fn, device) -> float:
    if device.type == "cuda":
        torch.cuda.synchronize()
    t0 = time.perf_counter()
    fn()
    if device.type == "cuda":
        torch.cuda.synchronize()
    return time.perf_counter() - t0


def matmul_tflops(device: torch.device, n: int = 8192, reps: int = 10, dtype=torch.bfloat16) -> float:
    """The measured rate (TFLOP/s) of an n x n matrix product: the denominator of "fraction of peak"."""
    a = torch.randn(n, n, device=device, dtype=dtype)
    b = torch.randn(n, n, device=device, dtype=dtype)
    for _ in range(3):
        a @ b
    seconds = _timed(lambda: [a @ b for _ in range(reps)], device)
    return 2 * n ** 3 * reps / seconds / 1e12


def train_flops_per_image(width: int, batch: int, device: torch.device) -> float:
    """FLOPs of one training step (forward + backward) per image, counted by torch."""
    from torch.utils.flop_counter import FlopCounterMode

    model = build_model("preact_resnet18", seed=0, width=width).to(device)
    x = torch.randn(batch, 3, 32, 32, device=device)
    y = torch.randint(0, 10, (batch,), device=device)
    with FlopCounterMode(display=False) as counter:
        torch.nn.functional.cross_entropy(model(x), y).backward()
    return counter.get_total_flops() / batch


def naive_throughput(width: int, steps: int, batch: int, device: torch.device, workers: int = 2) -> float:
    split = _split(batch * (steps + 2))
    model = build_model("preact_resnet18", seed=0, width=width).to(device)
    opt = torch.optim.SGD(model.parameters(), lr=0.05, momentum=0.9, weight_decay=1e-4)
    loader = torch.utils.data.DataLoader(PerImage(split), batch_size=batch, shuffle=True, num_workers=workers,
                                         drop_last=True, persistent_workers=False,
                                         pin_memory=device.type == "cuda")

    def epoch(limit: int | None = None):
        model.train()
        for k, (x, y) in enumerate(loader):
            x, y = x.to(device), y.to(device)
            loss = torch.nn.functional.cross_entropy(model(x), y)
            opt.zero_grad()
            loss.backward()
            opt.step()

    # one pass = steps + 2 batches; time the whole pass (worker start-up included, as a tutorial pays it)
    epoch()  # warm-up pass
    return batch * (steps + 2) / _timed(epoch, device)


def ours_throughput(width: int, steps: int, batch: int, device: torch.device, precision: str = "auto",
                    channels_last: bool = True, compile: bool = False) -> float:
    split = _split(batch * (steps + 2))
    model = build_model("preact_resnet18", seed=0, width=width).to(device)
    if channels_last:
        model = model.to(memory_format=torch.channels_last)
    if compile:
        model = torch.compile(model)
    batches = Batches(split, batch, normalisation="cifar", shuffle=True, augment=True, drop_last=True,
                      device=device, channels_last=channels_last)
    train(model, batches, TrainConfig(steps=2, batch_size=batch, precision=precision), device=device, progress=False)
    cfg = TrainConfig(steps=steps + 2, batch_size=batch, precision=precision)
    return batch * (steps + 2) / _timed(lambda: train(model, batches, cfg, device=device, progress=False), device)


def run(width: int = 16, steps: int = 12, batch: int = 128) -> list[dict]:
    device = default_device()
    auto = resolve_precision("auto", device)
    naive = naive_throughput(width, steps, batch, device)
    ours = ours_throughput(width, steps, batch, device)
    nchw = ours_throughput(width, steps, batch, device, precision="fp32", channels_last=False)
    cl32 = ours_throughput(width, steps, batch, device, precision="fp32")
    clbf = ours_throughput(width, steps, batch, device, precision="bf16")
    target = 5.0 if device.type == "cuda" else 3.0
    setting = f"pre-act ResNet-18 width {width}, batch {batch}, crop+flip"
    rows = []
    if device.type == "cpu":  # how far the hardware lets the target go (the GPU rows do this in bench_gpu)
        peak = 1e3 * matmul_tflops(device, n=2048, reps=5, dtype=torch.float32)
        gflop = train_flops_per_image(width, 8, device) / 1e9
        rate = lambda v: v * gflop  # noqa: E731
        rows.append(dict(
            benchmark="model training vs the hardware", setting=setting,
            baseline="fp32 matrix product (2048³, every thread)", baseline_value=peak,
            ours=f"ours: {ours:.0f} img/s × {gflop:.3f} GFLOP per training image", ours_value=rate(ours),
            unit="GFLOP/s", ratio=rate(ours) / peak, target=None,
            notes=f"the naive loop already runs at {rate(naive):.0f} GFLOP/s ({100 * rate(naive) / peak:.0f}% of the "
                  f"matrix product's rate); {target:g}x the naive loop would need {target * rate(naive):.0f} GFLOP/s, "
                  f"{target * rate(naive) / peak:.1f}x what this CPU multiplies matrices at (FLOPs counted by "
                  "torch.utils.flop_counter: convolutions and matrix products only)"))
    return rows + [
        dict(benchmark="model training", setting=setting, baseline="naive: fp32 NCHW, per-image DataLoader (2 workers)",
             baseline_value=naive, ours=f"ours: device uint8 + batch augmentation, channels_last, {auto} (auto)",
             ours_value=ours, unit="img/s", ratio=ours / naive, target=target),
        dict(benchmark="precision choice", setting=setting, baseline="fp32 NCHW", baseline_value=nchw,
             ours="fp32 channels_last", ours_value=cl32, unit="img/s", ratio=cl32 / nchw, target=None),
        dict(benchmark="precision choice", setting=setting, baseline="fp32 channels_last", baseline_value=cl32,
             ours="bf16 channels_last", ours_value=clbf, unit="img/s", ratio=clbf / cl32, target=None,
             notes=f"CPU capability {cpu_capability()}; auto picks {auto}"),
    ]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=16)
    ap.add_argument("--steps", type=int, default=12)
    ap.add_argument("--batch", type=int, default=128)
    args = ap.parse_args()
    print(f"device: {device_name()}")
    print_rows(run(args.width, args.steps, args.batch))


if __name__ == "__main__":
    main()
