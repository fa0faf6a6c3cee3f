"""GPU diagnosis for B-F6's failing control: the linear-probe accuracy of the demo's SimCLR
network (ResNet-18 width 16, the zoo's demo recipe) after more SimCLR epochs than the demo can
afford on a CPU, beside the demo's supervised network (the control asks for a probe within 10
points of it). Writes ``--out``/``bansal-f6-simclr-epochs.json`` after every length, so a run
stopped by a time limit keeps what it finished.

    python benchmarks/spot_simclr.py --out DIR [--epochs 3 10 30 60] [--width W] [--commit SHA]

With ``--width`` both networks (supervised and SimCLR) have that width, the rest of the demo
recipe unchanged, and the file is ``bansal-f6-simclr-epochs-wW.json``.
"""

from __future__ import annotations

import argparse
import datetime as dt
import time
from dataclasses import replace
from pathlib import Path

import torch

from stitchkit.base.fileio import atomic_write_json
from stitchkit.base.hardware import default_device, device_name, resolve_precision
from stitchkit.experiments.bansal.f3c_f6 import PRESETS_F6
from stitchkit.networks import network, zoo


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True)
    ap.add_argument("--epochs", type=float, nargs="+", default=[3, 10, 30, 60])
    ap.add_argument("--commit", default="unknown")
    ap.add_argument("--width", type=int, default=None, help="both networks' width (default: the demo's)")
    args = ap.parse_args()
    args.out.mkdir(parents=True, exist_ok=True)
    device = default_device()
    cfg = replace(PRESETS_F6["demo"], width=args.width)
    t0 = time.perf_counter()
    sup_spec = cfg.variant(cfg.seeds[0])
    _, m = network.load_or_train(sup_spec, device=device, progress=False)
    result = {"figure": "B-F6", "what": "SimCLR linear-probe accuracy against SimCLR epochs at the demo's width",
              "supervised": {"seed": cfg.seeds[0], "width": sup_spec.width, "accuracy": m["test"]["accuracy"]},
              "simclr": [], "device": device_name(device), "precision": resolve_precision("auto", device),
              "torch": torch.__version__, "commit": args.commit}
    print(f"supervised (seed {cfg.seeds[0]}): {100 * m['test']['accuracy']:.2f}%", flush=True)
    for epochs in args.epochs:
        spec = zoo.bansal_simclr(cfg.simclr, cfg.seeds[1], width=cfg.width, epochs=epochs, final_bn=cfg.final_bn)
        t1 = time.perf_counter()
        _, m = network.load_or_train(spec, device=device, progress=False)
        seconds = time.perf_counter() - t1
        if seconds < 5 and m.get("train_seconds"):  # loaded from the cache: the training run's own time
            seconds = m["train_seconds"]
        result["simclr"].append({"epochs": epochs, "width": spec.width, "probe_accuracy": m["test"]["accuracy"],
                                 "seconds": seconds})
        result.update(date=dt.datetime.now().isoformat(timespec="seconds"), wall_seconds=time.perf_counter() - t0)
        atomic_write_json(args.out / f"bansal-f6-simclr-epochs{f'-w{args.width}' if args.width else ''}.json", result)
        print(f"SimCLR {epochs:g} epochs: probe {100 * m['test']['accuracy']:.2f}% in {seconds:.0f} s", flush=True)


if __name__ == "__main__":
    main()
