"""CPU tuning for the ``demo`` scale: which thread count, memory format and batch sizes run
fastest on this machine, each pair timed side by side in one run (``make bench`` on a CPU).

- memory format: the one the library picks (:func:`stitchkit.base.hardware.channels_last_ok`) against
  the other, at the demo width and twice it;
- threads: the project's training path with one intra-op thread vs all of them;
- training batch: images/s at batch 64, 128 (every recipe's batch) and 256;
- stitch batch: one stitch trained for an epoch at batch 32 (the `demo` stitches) vs 128 (the
  paper's), on cached sender activations as the stitch grid trains them;
- compiled training: the demo-width network (NCHW) eager vs under ``torch.compile`` (what
  :func:`stitchkit.base.hardware.compile_wins` picks for long runs on a CPU), timed after compilation,
  with the compilation's seconds in the notes;
- sender activations at every cut: one forward from the images per cut (a grid that treats cuts
  independently) vs each cut continued from the previous one (what the grid does).

The recipes keep their batch sizes (they are part of the papers' settings); the batch rows show
what a different choice would cost or save. The CPU's capability (AVX2, AVX512, AMX) is named in
each row's notes, so tables from a CPU with native bf16 and one without can be told apart.

    python benchmarks/bench_cpu.py [--width 8] [--steps 30]
"""

from __future__ import annotations

import argparse
import time

import torch
from _table import print_rows
from bench_train import _split, ours_throughput

from stitchkit.base.hardware import (channels_last_ok, cpu_capability, default_device, device_name, resolve_precision,
                                     to_memory_format)
from stitchkit.data.batches import normalise
from stitchkit.networks.models import build_model
from stitchkit.networks.train import TrainConfig
from stitchkit.stitching import stitches


def _with_threads(n: int, fn):
    before = torch.get_num_threads()
    torch.set_num_threads(n)
    try:
        return fn()
    finally:
        torch.set_num_threads(before)


def stitch_throughput(batch: int, width: int, images: int, device: torch.device, cut: str = "block4") -> float:
    """Images/s of one stitch's training (1 epoch on ``images`` random images, the sender's
    activations computed once, as the stitch grid does) at ``batch``, between two untrained
    networks (throughput does not depend on the weights)."""
    sender = to_memory_format(build_model("preact_resnet18", seed=1, width=width).to(device)).eval()
    receiver = to_memory_format(build_model("preact_resnet18", seed=0, width=width).to(device)).eval()
    split = _split(images)
    cfg = TrainConfig(epochs=1, batch_size=batch, optimizer="adam", lr=1e-3, weight_decay=0.0, schedule="cosine",
                      augment=False)
    st = stitches.stitch_models(sender, cut, receiver, cut, kind="bn_conv_bn", seed=0, device=device)
    with torch.no_grad():
        x = normalise(split.images, "cifar").to(device)
        acts = sender.forward_to(x.contiguous(memory_format=torch.channels_last) if channels_last_ok(sender) else x, cut)

    def fit(k: int) -> None:
        stitches.train_stitch(st, split.subset(torch.arange(k)), cfg, normalisation="cifar", device=device,
                               activations=acts[:k], progress=False)

    fit(2 * batch)  # warm-up
    t0 = time.perf_counter()
    fit(images)
    return images / (time.perf_counter() - t0)


def compiled_training(width: int, steps: int, device: torch.device) -> tuple[float, float, float]:
    """(eager img/s, compiled img/s, seconds of compilation) of the training path at ``width``
    in the library's memory format, fp32, batch 128."""
    cl = _auto_cl(width)
    eager = ours_throughput(width, steps, 128, device, precision="fp32", channels_last=cl)
    t0 = time.perf_counter()
    compiled = ours_throughput(width, steps, 128, device, precision="fp32", channels_last=cl, compile=True)
    total = time.perf_counter() - t0
    return eager, compiled, max(0.0, total - 128 * (2 * steps + 4) / compiled)


def activations_every_cut(width: int, images: int, device: torch.device,
                          precision: str = "fp32") -> tuple[float, float]:
    """Seconds to get a sender's activations at all its cuts on ``images`` random images: one
    forward from the images per cut, vs each cut continued from the previous one (as the grid).
    Under ``bf16`` they are stored in bfloat16, as the grid stores its training split (the
    continuation is exact where the forward hands on bfloat16, which it does at every cut of this
    network: ``tests/test_grid.py``)."""
    model = to_memory_format(build_model("preact_resnet18", seed=1, width=width).to(device)).eval()
    split = _split(images)
    cuts = list(model.cuts)
    dtype = torch.bfloat16 if precision == "bf16" else torch.float32

    def per_cut() -> None:
        for cut in cuts:
            stitches.activations(model, cut, split, normalisation="cifar", device=device, precision=precision,
                                  dtype=dtype)

    def continued() -> None:
        h = stitches.activations(model, cuts[0], split, normalisation="cifar", device=device, precision=precision,
                                  dtype=dtype)
        for a, b in zip(cuts, cuts[1:]):
            h = stitches.activations_between(model, a, b, h, device=device, precision=precision, dtype=dtype)

    times = []
    for fn in (per_cut, continued):
        t0 = time.perf_counter()
        fn()
        times.append(time.perf_counter() - t0)
    return times[0], times[1]


def _auto_cl(width: int) -> bool:
    return channels_last_ok(build_model("preact_resnet18", seed=0, width=width))


def _fmt_name(cl: bool) -> str:
    return "channels_last" if cl else "NCHW"


def run(width: int = 8, steps: int = 30, stitch_images: int = 4096) -> list[dict]:
    device = default_device()
    if device.type != "cpu":
        return []
    n = torch.get_num_threads()
    cap = f"CPU capability {cpu_capability()}, {n} intra-op threads available"
    rows = []
    for w in (width, 2 * width):  # the memory format the library picks, against the other, at two widths
        auto = _auto_cl(w)
        mine, other = (ours_throughput(w, steps, 128, device, precision="fp32", channels_last=cl) for cl in (auto, not auto))
        rows.append(dict(benchmark="CPU memory format", setting=f"pre-act ResNet-18 width {w}, fp32, batch 128, "
                         "crop+flip", baseline=_fmt_name(not auto), baseline_value=other,
                         ours=f"{_fmt_name(auto)} (the library's choice)", ours_value=mine, unit="img/s",
                         ratio=mine / other, target=None, notes=cap if w == width else None))
    auto = _auto_cl(width)
    setting = f"pre-act ResNet-18 width {width} (the demo width), fp32, {_fmt_name(auto)}, crop+flip"
    one = _with_threads(1, lambda: ours_throughput(width, steps, 128, device, precision="fp32", channels_last=auto))
    alln = ours_throughput(width, steps, 128, device, precision="fp32", channels_last=auto)
    rows.append(dict(benchmark="CPU threads", setting=f"{setting}, batch 128", baseline="1 thread", baseline_value=one,
                     ours=f"{n} threads", ours_value=alln, unit="img/s", ratio=alln / one, target=None))
    by_batch = {b: ours_throughput(width, max(2, steps * 128 // b), b, device, precision="fp32", channels_last=auto)
                for b in (64, 128, 256)}
    rows += [
        dict(benchmark="CPU training batch", setting=setting, baseline="batch 64", baseline_value=by_batch[64],
             ours="batch 128 (the recipes')", ours_value=by_batch[128], unit="img/s",
             ratio=by_batch[128] / by_batch[64], target=None),
        dict(benchmark="CPU training batch", setting=setting, baseline="batch 128 (the recipes')",
             baseline_value=by_batch[128], ours="batch 256", ours_value=by_batch[256], unit="img/s",
             ratio=by_batch[256] / by_batch[128], target=None),
    ]
    s32, s128 = (stitch_throughput(b, width, stitch_images, device) for b in (32, 128))
    rows.append(dict(benchmark="CPU stitch batch", setting=f"one stitch at block4, width {width}, 1 epoch on "
                     f"{stitch_images} images, cached sender activations", baseline="batch 32 (the demo stitches)",
                     baseline_value=s32, ours="batch 128 (the paper's)", ours_value=s128, unit="img/s",
                     ratio=s128 / s32, target=None))
    eager, compiled, compile_s = compiled_training(width, steps * 2, device)
    rows.append(dict(benchmark="CPU compiled training", setting=f"{setting}, batch 128, timed after compilation",
                     baseline="eager", baseline_value=eager, ours="torch.compile (auto for long runs)",
                     ours_value=compiled, unit="img/s", ratio=compiled / eager, target=None,
                     notes=f"compilation about {compile_s:.0f} s once per network (inductor's cache warm or cold)"))
    # fp32, and the precision the grid trains its stitches in here when that is bf16 (the training
    # split's activations are then stored in bf16 and continued where that is exact)
    for precision in dict.fromkeys(("fp32", resolve_precision("auto", device))):
        per_cut, continued = activations_every_cut(width, stitch_images, device, precision)
        rows.append(dict(benchmark="sender activations, every cut", setting=f"pre-act ResNet-18 width {width}, "
                         f"10 cuts, {stitch_images} images, {precision}", baseline="one forward from the images per cut",
                         baseline_value=per_cut, ours="each cut continued from the previous (the grid)",
                         ours_value=continued, unit="s", ratio=per_cut / continued, target=None))
    return rows


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--width", type=int, default=8)
    ap.add_argument("--steps", type=int, default=30)
    args = ap.parse_args()
    print(f"device: {device_name()}")
    print_rows(run(args.width, args.steps))


if __name__ == "__main__":
    main()
