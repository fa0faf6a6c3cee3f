"""Training throughput of every architecture the book trains, fp32 against bf16 side by side on this
CPU (images/s, batch 256, crop + flip, the library's training path and memory format), to choose
where a native-bf16 CPU makes width cheap. Each pair is timed in one process, one after the other.

    python benchmarks/cpu_precision.py

Measured 2026-12-02 on a 2-core AMD EPYC with AVX512-BF16 and no AMX (torch 2.13, quiet machine):
pre-act ResNet-18 w16 574 -> 899, w32 141 -> 368; Myrtle w16 1426 -> 1871, w32 312 -> 580,
w64 81 -> 189; R1111 w16 1182 -> 2009; ResNet-34 w16 365 -> 501; ViT dim 64 depth 6 237 -> 225,
dim 128 81 -> 104 (fp32 -> bf16).
"""

from __future__ import annotations

import sys
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).parent))
from bench_train import _split, _timed  # noqa: E402

from stitchkit.base.hardware import channels_last_ok  # noqa: E402
from stitchkit.data.batches import Batches  # noqa: E402
from stitchkit.networks.models import build_model  # noqa: E402
from stitchkit.networks.train import TrainConfig, train  # noqa: E402

NETWORKS = [("preact_resnet18", 16, {}), ("preact_resnet18", 32, {}), ("myrtle", 16, {}), ("myrtle", 32, {}),
            ("myrtle", 64, {}), ("r1111", 16, {}), ("resnet34", 16, {}),
            ("vit_ti", 64, {"depth": 6, "heads": 2}), ("vit_ti", 128, {"depth": 6, "heads": 4})]


def throughput(name: str, width: int, batch: int, precision: str, steps: int = 6, **kw) -> float:
    """Training images/s of ``name`` at ``width`` (two warm-up steps, then ``steps`` timed)."""
    dev = torch.device("cpu")
    split = _split(batch * (steps + 2))
    model = build_model(name, seed=0, width=width, **kw)
    cl = channels_last_ok(model)
    if cl:
        model = model.to(memory_format=torch.channels_last)
    b = Batches(split, batch, normalisation="cifar", shuffle=True, augment=True, drop_last=True, device=dev,
                channels_last=cl)
    train(model, b, TrainConfig(steps=2, batch_size=batch, precision=precision), device=dev, progress=False)
    cfg = TrainConfig(steps=steps, batch_size=batch, precision=precision)
    return batch * steps / _timed(lambda: train(model, b, cfg, device=dev, progress=False), dev)


def main() -> None:
    for name, width, kw in NETWORKS:
        r = {p: round(throughput(name, width, 256, p, **kw), 1) for p in ("fp32", "bf16")}
        print(f"{name} w{width}: fp32 {r['fp32']} img/s, bf16 {r['bf16']} img/s "
              f"({r['bf16'] / r['fp32']:.2f}x)", flush=True)


if __name__ == "__main__":
    main()
