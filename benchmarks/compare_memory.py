"""Peak memory of ``stitchkit.compare`` on a realistic pair (issue 49): two width-64 ResNet-18s
(random weights: memory does not depend on training), CKA and direct matching at every one of
their 9 x 9 layer pairs, fitted on 5,000 CIFAR-10 training images and measured on all 10,000 test
images, fed as batches of uint8 images normalised on the fly (so the images take 30 MB, not 120).

    python benchmarks/compare_memory.py [--images 10000] [--fit 5000] [--batch 250]

Writes ``benchmarks/spot/compare-memory.json`` (peak resident memory of the process, its wall time,
the device, the commit); the README quotes the peak.
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import resource
import time
from pathlib import Path

import torch

import stitchkit
from stitchkit.base.hardware import device_name
from stitchkit.base.provenance import git_state
from stitchkit.data.batches import normalise
from stitchkit.data.datasets import DataSpec, test_split, train_split
from stitchkit.networks.models import build_model


def batches(split, n: int, size: int):
    for s in range(0, n, size):
        yield normalise(split.images[s:min(s + size, n)], "cifar"), split.labels[s:min(s + size, n)]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--images", type=int, default=10_000)
    ap.add_argument("--fit", type=int, default=5_000)
    ap.add_argument("--batch", type=int, default=250)
    ap.add_argument("--out", default=str(Path(__file__).parent / "spot" / "compare-memory.json"))
    args = ap.parse_args()
    commit = git_state().get("commit")  # the code that runs: taken before, not when the file is written
    test, train = test_split(DataSpec("cifar10")), train_split(DataSpec("cifar10"))
    a, b = build_model("resnet18", seed=0, width=64), build_model("resnet18", seed=1, width=64)
    cuts = [n for n, _ in a.named_modules() if n.count(".") == 1 and n.startswith("pieces.")]
    start_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    t0 = time.perf_counter()
    table = stitchkit.compare(a, b, cuts, cuts, batches(test, args.images, args.batch),
                              measures=("cka", "dm"), fit_images=batches(train, args.fit, args.batch),
                              batch_size=args.batch)
    wall = time.perf_counter() - t0
    peak_mb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    out = {"what": "stitchkit.compare, CKA and direct matching at every layer pair of two width-64 ResNet-18s",
           "cuts": cuts, "pairs": len(cuts) ** 2, "images": args.images, "fit_images": args.fit,
           "batch": args.batch, "rows": len(table), "peak_rss_mb": round(peak_mb, 1),
           "rss_before_compare_mb": round(start_mb, 1), "wall_seconds": round(wall, 1),
           "device": device_name("cpu"), "threads": torch.get_num_threads(),
           "date": dt.datetime.now().isoformat(timespec="seconds"), "commit": commit,
           "cka_same_cut_mean": float(table[(table.measure == "cka") & (table.layer_a == table.layer_b)].value.mean())}
    Path(args.out).write_text(json.dumps(out, indent=1) + "\n")
    print(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
