"""Why Smith & Marcu's pages at `gpu` cost more than estimated: time each piece on a GPU.

The first batch of 2026-11-27 ran S-F1B at `gpu` for 9 minutes without finishing its first compute
cell (estimate 330 s). This script times the pieces that cell is made of, each printed as soon as it
is done (a run cut by its limit keeps what it printed): building a coloured data set, training one
network of the `gpu` recipe for a fraction of its epochs, and one stitch of the page's recipe for a
fraction of its epochs, each with its images per second.

    python benchmarks/gpu_smith_costs.py [--scale gpu] [--fraction 0.25]
"""

from __future__ import annotations

import argparse
import json
import tempfile
import time
from dataclasses import replace

import torch

from stitchkit.base.hardware import default_device, device_name
from stitchkit.base.store import Store
from stitchkit.data.datasets import DataSpec, fingerprint, train_split
from stitchkit.experiments.smith.config import CUTS, PRESETS, SETS
from stitchkit.networks import network, zoo
from stitchkit.stitching.grid import stitch_grid
from stitchkit.stitching.grid_spec import Net


def _sync(device) -> None:
    if torch.device(device).type == "cuda":
        torch.cuda.synchronize()


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--scale", default="gpu")
    ap.add_argument("--fraction", type=float, default=0.25, help="of each recipe's epochs")
    args = ap.parse_args()
    device = default_device()
    print(json.dumps({"device": device_name(device), "torch": torch.__version__}), flush=True)
    cfg = PRESETS[args.scale]
    store = Store(tempfile.mkdtemp(prefix="smith-costs-"))
    for name in ("Digit", "Correlated"):
        t0 = time.perf_counter()
        split = train_split(DataSpec(SETS[name]))
        fingerprint(DataSpec(SETS[name]))
        print(json.dumps({"piece": f"data {name} (and its fingerprint)", "seconds": round(time.perf_counter() - t0, 2),
                          "train_images": len(split.images)}), flush=True)
    nets = {}
    for name in ("Digit", "Correlated"):
        spec = cfg.model(name, 0)
        spec = replace(spec, train=replace(spec.train, epochs=spec.train.epochs * args.fraction))
        t0 = time.perf_counter()
        model, metrics = network.load_or_train(spec, device=device, store=store, progress=False)
        _sync(device)
        s = time.perf_counter() - t0
        nets[name] = Net(name, spec, model)
        print(json.dumps({"piece": f"network {name} ({spec.train.epochs:g} epochs)", "seconds": round(s, 2),
                          "accuracy": metrics["test"]["accuracy"],
                          "train_images_per_s": round(60_000 * spec.train.epochs / s)}), flush=True)
    recipe = cfg.recipe(0)
    recipe = replace(recipe, train=replace(recipe.train, epochs=recipe.train.epochs * args.fraction))
    for cut in (CUTS[0], CUTS[-1]):
        t0 = time.perf_counter()
        row = stitch_grid([nets["Correlated"]], [nets["Digit"]], [(cut, cut)], recipe, DataSpec(SETS["Correlated"]),
                          store=store, device=device, progress=False).iloc[0]
        _sync(device)
        s = time.perf_counter() - t0
        n = (recipe.train_size or 60_000) * recipe.train.epochs
        print(json.dumps({"piece": f"stitch at {cut} ({recipe.train.epochs:g} epochs)", "seconds": round(s, 2),
                          "accuracy": float(row.accuracy), "stitch_images_per_s": round(n / s)}), flush=True)


if __name__ == "__main__":
    main()
