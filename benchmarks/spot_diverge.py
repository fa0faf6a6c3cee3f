"""One-off diagnosis on a GPU: why do some paper-scale self-stitches of H-F2 fall during training?
R1111 (paper recipe) stitched into itself at block3 (the worst case of the spot check) with the
paper preset's stitch recipe, in bf16 (auto) and in fp32, and with a 10x lower lr; each variant
in its own store (precision is not part of a stitch's key).

``--scale gpu --cuts all``: the same for the ``gpu`` preset's R1111 at every stitched layer (the
stem and each block: its self-stitch control), with variants of the gpu recipe: as preset (bf16,
2 epochs, lr 0.001), fp32, twice the epochs, and a third of the lr.

    python benchmarks/spot_diverge.py --out DIR [--scale gpu --cuts all --stem NAME]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import tempfile
import time
from dataclasses import replace
from pathlib import Path

from stitchkit.base.hardware import default_device, device_name
from stitchkit.base.store import Store
from stitchkit.data.datasets import DataSpec
from stitchkit.experiments.hernandez.all_layers import PRESETS_F2
from stitchkit.networks import network, zoo
from stitchkit.stitching.grid import stitch_grid
from stitchkit.stitching.grid_spec import Net


def main() -> None:
    ap = argparse.ArgumentParser()
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--cut", default="block3")
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--scale", default="paper", choices=("paper", "gpu"))
    ap.add_argument("--cuts", default=None, help="'all': every stitched layer of R1111 (default: --cut alone)")
    ap.add_argument("--stem", default="hernandez-f2-diverge")
    args = ap.parse_args()
    device = default_device()
    cfg = PRESETS_F2[args.scale]
    net = Net("R1111", cfg.model("r1111"))
    cuts = cfg.cuts(net.spec) if args.cuts == "all" else [args.cut]
    t0 = time.perf_counter()
    net.model, m = network.load_or_train(net.spec, device=device, progress=False)
    out = {"figure": "H-F2", "network": f"R1111 ({args.scale} recipe)", "scale": args.scale, "cut": ", ".join(cuts), "device": device_name(device),
           "commit": args.commit, "date": dt.date.today().isoformat(), "accuracy": m["test"]["accuracy"], "train_seconds": time.perf_counter() - t0, "variants": {}}
    print(out, flush=True)
    base = cfg.recipe()
    if args.scale == "gpu":
        t = base.train
        variants = {"as preset (bf16)": base, "fp32": replace(base, train=replace(t, precision="fp32")),
                    "2x epochs": replace(base, train=replace(t, epochs=2 * t.epochs)),
                    "lr / 3": replace(base, train=replace(t, lr=t.lr / 3))}
    else:
        variants = {"bf16 (auto)": base, "fp32": replace(base, train=replace(base.train, precision="fp32")),
                "bf16, lr / 10": replace(base, train=replace(base.train, lr=base.train.lr / 10)),
                    "fp32, lr / 10": replace(base, train=replace(base.train, lr=base.train.lr / 10, precision="fp32"))}
    for name, recipe in variants.items():
        with tempfile.TemporaryDirectory() as tmp:
            t = stitch_grid([net], [net], [(c, c) for c in cuts], recipe, DataSpec("cifar10"), device=device,
                            store=Store(tmp), progress=False)
        if len(cuts) == 1:
            row = t.iloc[0]
            out["variants"][name] = {k: float(row[k]) for k in ("accuracy", "dm_accuracy", "train_loss", "seconds")}
        else:
            out["variants"][name] = {row.cut_i: {k: float(row[k]) for k in ("accuracy", "dm_accuracy", "penalty",
                                                                            "train_loss", "seconds")}
                                     for _, row in t.iterrows()}
        print(name, out["variants"][name], flush=True)
        (args.out / f"{args.stem}.json").write_text(json.dumps(out, indent=1))


if __name__ == "__main__":
    main()
