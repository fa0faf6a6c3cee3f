"""Sizing H-F2's `gpu` preset under issue 46's controls, on a GPU: how long must a stitch train?

H-F2's `gpu` page (2026-11-24) trained its stitches 2 of the paper's 4 epochs; its self-stitch
control fell 0.88 points at R1111 block3 and 4x longer training gained 3.26 points on average, so
its verdicts could not be decided. Under issue 46 every stitching verdict also carries the
training-length control (the claim re-judged with 4x the epochs), which a page must afford. This
script trains the `gpu` preset's networks (R1111, R2222, width 64, the zoo's gpu recipe) and, on a
sample of cells, stitches them with the `gpu` stitch recipe at the paper's 4 epochs and at 4x
that (16), recording each stitch's accuracy, its direct-matching start and its seconds. The JSON
(written after each cell group, so a stopped run keeps what it finished) gives the time per
stitch-epoch a preset estimate needs and whether 4 epochs already stop gaining.

    python benchmarks/gpu_hf2_length.py --out DIR [--epochs 4 16] [--scale gpu]
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from dataclasses import replace
from pathlib import Path

from stitchkit.base.fileio import atomic_write_json
from stitchkit.base.hardware import default_device, device_name
from stitchkit.data.datasets import DataSpec
from stitchkit.experiments.hernandez.all_layers import PRESETS_F2, display_name
from stitchkit.networks import network, zoo
from stitchkit.stitching.grid import stitch_grid
from stitchkit.stitching.grid_spec import Net

# (sender, receiver) -> cells (cut_i, cut_j): the self-stitch's block that fell at 2 epochs and a
# neighbour; cells at j <= i of both ordered pairs (the lower triangle the paper finds high);
# one cell above the diagonal (the upper triangle the paper finds low).
CELLS = {
    ("r1111", "r1111"): [("block2", "block2"), ("block3", "block3")],
    ("r2222", "r1111"): [("block2", "block1"), ("block4", "block2"), ("block8", "block4"), ("block6", "block3")],
    ("r1111", "r2222"): [("block2", "block4"), ("block4", "block8"), ("block1", "block6")],
}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--out", required=True, type=Path)
    ap.add_argument("--epochs", nargs="+", type=float, default=[4.0, 16.0])
    ap.add_argument("--scale", default="gpu", help="the preset whose networks and stitch recipe to use (smoke: a dry run)")
    args = ap.parse_args()
    device = default_device()
    cfg = PRESETS_F2[args.scale]
    t0 = time.perf_counter()
    nets, acc = {}, {}
    for arch in ("r1111", "r2222"):
        nets[arch] = Net(display_name(arch), cfg.model(arch))
        nets[arch].model, m = network.load_or_train(nets[arch].spec, device=device, progress=False)
        acc[arch] = m["test"]["accuracy"]
    out = {"figure": "H-F2", "scale": args.scale, "device": device_name(device),
           "date": dt.datetime.now(dt.timezone.utc).isoformat(timespec="seconds"), "accuracy": acc,
           "networks_seconds": round(time.perf_counter() - t0, 1), "rows": []}
    print(out, flush=True)
    base = cfg.recipe()
    for epochs in args.epochs:
        recipe = replace(base, train=replace(base.train, epochs=epochs))
        for (a, b), cells in CELLS.items():
            have = set(nets[a].model.cuts), set(nets[b].model.cuts)
            cells = [(i, j) for i, j in cells if i in have[0] and j in have[1]]
            if not cells:
                continue
            t1 = time.perf_counter()
            t = stitch_grid([nets[a]], [nets[b]], cells, recipe, DataSpec("cifar10"), device=device, progress=False)
            wall = time.perf_counter() - t1
            for _, row in t.iterrows():
                out["rows"].append(dict(epochs=epochs, sender=a, receiver=b, cut_i=row.cut_i, cut_j=row.cut_j,
                                        accuracy=float(row.accuracy), dm_accuracy=float(row.dm_accuracy),
                                        receiver_accuracy=acc[b], seconds=float(row.seconds),
                                        group_wall_seconds=round(wall, 1), group_size=len(t)))
            print(epochs, a, b, t[["cut_i", "cut_j", "accuracy", "dm_accuracy", "seconds"]].to_string(), flush=True)
            atomic_write_json(args.out / "hf2-length.json", out)


if __name__ == "__main__":
    main()
