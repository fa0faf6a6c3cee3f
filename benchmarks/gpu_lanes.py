"""Do pages in concurrent processes share a GPU well? Measure it before a batch plans on it.

The papers' small networks are launch-bound on an H100 (a width-64 ResNet-18 on MNIST trains at
~12,000 images/s, a few per cent of its peak: benchmarks/spot/smith-gpu-costs.json), so k processes
might each run nearly as fast as one alone. This script trains the same network (Smith & Marcu's
`gpu` Digit model, one epoch, a private cache each) in k concurrent processes for each k, all
starting together once their data is loaded, and records each one's training time against one
process alone: ``slowdown`` = mean train time at k / train time at 1 (k when sharing gains
nothing, 1 when it is free). `stitchkit.book.batch.lane_slowdown` reads the committed file; without it
a batch plans k lanes as if sharing gained nothing.

    python benchmarks/gpu_lanes.py --out DIR [--k 1 2 4] [--epochs 1]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import subprocess
import sys
import tempfile
import time
from dataclasses import replace
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def child(epochs: float, scale: str, start_at: float) -> None:
    """Train one network, timing the training alone: the data set is read and CUDA started first,
    then every child of a round starts training at ``start_at`` (a wall-clock time), so the k
    trainings overlap."""
    import torch

    from stitchkit.base.hardware import default_device
    from stitchkit.base.store import Store
    from stitchkit.data.datasets import DataSpec, fingerprint, train_split
    from stitchkit.experiments.smith.config import PRESETS
    from stitchkit.networks import network, zoo

    spec = PRESETS[scale].model("Digit", 0)
    spec = replace(spec, train=replace(spec.train, epochs=epochs))
    device = default_device()
    train_split(spec.data), fingerprint(spec.data)
    torch.zeros(1, device=device).sum().item()
    time.sleep(max(0.0, start_at - time.time()))
    t0 = time.perf_counter()
    network.load_or_train(spec, device=device, store=Store(Path(tempfile.mkdtemp(prefix="lanes-")) / "store"),
                      progress=False)  # a private cache (and locks): nothing shared but the device
    print(json.dumps({"train_seconds": time.perf_counter() - t0}), flush=True)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", type=Path)
    ap.add_argument("--k", nargs="+", type=int, default=[1, 2, 4])
    ap.add_argument("--epochs", type=float, default=1.0)
    ap.add_argument("--scale", default="gpu", help="whose Digit network (smoke: a dry run on a CPU)")
    ap.add_argument("--child", action="store_true", help=argparse.SUPPRESS)
    ap.add_argument("--start-at", type=float, default=0.0, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.child:
        return child(args.epochs, args.scale, args.start_at)
    from stitchkit.base.hardware import default_device, device_name

    def round_of(k: int) -> list[float]:
        cmd = [sys.executable, __file__, "--child", "--epochs", str(args.epochs), "--scale", args.scale,
               "--start-at", str(time.time() + 8 + k)]
        procs = [subprocess.Popen(cmd, cwd=ROOT, stdout=subprocess.PIPE, text=True) for _ in range(k)]
        outs = [p.communicate()[0] for p in procs]
        if any(p.returncode for p in procs):
            raise SystemExit(f"a child failed at k={k}")
        return [json.loads(o.strip().splitlines()[-1])["train_seconds"] for o in outs]

    round_of(1)  # warm: the data set's files, the first CUDA start
    out = {"device": device_name(default_device()), "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"),
           "network": f"Smith & Marcu's {args.scale} Digit ResNet-18 (28x28)", "scale": args.scale,
           "epochs": args.epochs, "rows": []}
    one = None
    for k in args.k:
        secs = round_of(k)
        mean = sum(secs) / len(secs)
        one = one or (mean if k == 1 else None)
        row = {"k": k, "train_seconds": [round(x, 2) for x in secs]}
        if one:
            row["slowdown"] = round(mean / one, 3)
        out["rows"].append(row)
        print(json.dumps(row), flush=True)
        if args.out:
            args.out.mkdir(parents=True, exist_ok=True)
            (args.out / "gpu-lanes.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
