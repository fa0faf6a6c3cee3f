"""Stitch training, side by side in one run on the same machine and the same trained models:

- ``one at a time``: each stitch built with PyTorch's random initialisation and trained with a
  full forward through the frozen sender on every step (the straightforward loop);
- ``grid``: :func:`stitchkit.stitching.grid.stitch_grid`: the sender's activations at the cut computed once
  and shared by every receiver's stitch, each stitch initialised by direct matching;
- direct matching alone vs task-loss matching for one layer pair (the DM fit's cost against
  the training it replaces).

Models are the smoke-scale zoo ResNet-18s (trained once, then cached), so accuracies are real.
Both loops train the same number of epochs on the same images; accuracies are reported beside
the times so that "faster" is read together with "as accurate".

    python benchmarks/bench_stitch.py [--cut block4] [--receivers 3] [--epochs 2] [--images 4000]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace

import torch
from _table import print_rows

from stitchkit.base.hardware import default_device, device_name
from stitchkit.base.store import Store
from stitchkit.data import batches as data_mod
from stitchkit.data import splits
from stitchkit.data.datasets import DataSpec, test_split, train_split
from stitchkit.networks import zoo
from stitchkit.networks.train import TrainConfig
from stitchkit.stitching import stitches
from stitchkit.stitching.grid import stitch_grid
from stitchkit.stitching.grid_spec import Net, StitchRecipe


def run(cut: str = "block4", receivers: int = 3, epochs: float = 2, images: int = 4000, test_size: int = 2000,
        dm_images: int = 1000) -> list[dict]:
    device = default_device()
    sender = Net("sender", zoo.bansal_resnet18(zoo.BANSAL_RESNET18["smoke"], 1))
    recvs = [Net(f"receiver{s}", zoo.bansal_resnet18(zoo.BANSAL_RESNET18["smoke"], s)) for s in [0, 2, 3, 4, 5][:receivers]]
    for net in [sender, *recvs]:
        net.load(device, Store(), None, progress=False)
    train_cfg = TrainConfig(epochs=epochs, batch_size=32, optimizer="adam", lr=1e-3, weight_decay=0.0,
                            schedule="cosine", augment=False)
    data = DataSpec("cifar10")
    train = train_split(data)
    train = train.subset(splits.stratified_subset(train.labels, images, 0))
    test = test_split(data, test_size, 0)

    # one at a time: random init, full sender forward per step; the training loop timed alone
    naive_acc, train_s = [], 0.0
    t0 = time.perf_counter()
    for r in recvs:
        st = stitches.stitch_models(sender.model, cut, r.model, cut, kind="bn_conv_bn", seed=0, device=device)
        t1 = time.perf_counter()
        stitches.train_stitch(st, train, train_cfg, normalisation="cifar", device=device, progress=False)
        train_s += time.perf_counter() - t1
        naive_acc.append(stitches.evaluate_stitch(st, test, normalisation="cifar", device=device)["accuracy"])
    naive_s = (time.perf_counter() - t0) / len(recvs)
    train_s /= len(recvs)

    # the grid, in a fresh store so nothing is read from an earlier run
    recipe = StitchRecipe(train=train_cfg, train_size=images, test_size=test_size, dm_images=dm_images)
    with tempfile.TemporaryDirectory() as tmp:
        t0 = time.perf_counter()
        table = stitch_grid([sender], recvs, [(cut, cut)], recipe, data, device=device, store=Store(tmp),
                            progress=False)
        grid_s = (time.perf_counter() - t0) / len(recvs)

    # to the same accuracy: the grid with a fraction of the training (shortest first) until its
    # mean accuracy reaches the one-at-a-time loop's; direct matching alone is the fraction 0
    target_acc = sum(naive_acc) / len(naive_acc)
    reached = None
    for frac in (0.0, 0.125, 0.25, 0.5, 1.0):
        short = replace(recipe, train=replace(train_cfg, epochs=epochs * frac))
        with tempfile.TemporaryDirectory() as tmp:
            t0 = time.perf_counter()
            t = stitch_grid([sender], recvs, [(cut, cut)], short, data, device=device, store=Store(tmp),
                            progress=False)
            seconds = (time.perf_counter() - t0) / len(recvs)
        reached = (frac, seconds, float(t.accuracy.mean()))
        if reached[2] >= target_acc:
            break

    # direct matching alone: both networks' forwards on the DM images and the least-squares fit
    dm_split = train.subset(splits.stratified_subset(train.labels, dm_images, 0))
    st = stitches.stitch_models(sender.model, cut, recvs[0].model, cut, kind="bn_conv_bn", seed=0, device=device)
    t0 = time.perf_counter()
    x = stitches.activations(sender.model, cut, dm_split, normalisation="cifar", device=device, precision="fp32")
    y = stitches.activations(recvs[0].model, cut, dm_split, normalisation="cifar", device=device, precision="fp32")
    stitches.init_dm(st.stitch, x, y)
    dm_s = time.perf_counter() - t0
    dm_acc = stitches.evaluate_stitch(st, test, normalisation="cifar", device=device)["accuracy"]
    setting = f"smoke ResNet-18s, cut {cut}, {epochs:g} epochs on {images} images, {len(recvs)} receivers"
    mean = lambda xs: sum(xs) / len(xs)  # noqa: E731
    return [
        dict(benchmark="stitch training", setting=setting,
             baseline=f"one at a time, random init (acc {100 * mean(naive_acc):.1f}%)", baseline_value=naive_s,
             ours=f"grid: shared sender activations + DM init (acc {100 * table.accuracy.mean():.1f}%)",
             ours_value=grid_s, unit="s per stitch", ratio=naive_s / grid_s, target=4.0,
             notes=f"grid throughput {3600 / grid_s:.0f} stitches/hour"),
        dict(benchmark="stitch training, to the same accuracy", setting=setting,
             baseline=f"one at a time, random init, {epochs:g} epochs (acc {100 * target_acc:.1f}%)",
             baseline_value=naive_s,
             ours=(f"grid, DM init + {reached[0] * epochs:g} epochs (acc {100 * reached[2]:.1f}%"
                   + ("" if reached[2] >= target_acc else ", never reached") + ")"),
             ours_value=reached[1], unit="s per stitch", ratio=naive_s / reached[1], target=4.0,
             notes="the grid's training shortened (0, 1/8, 1/4, 1/2, 1 of the epochs, shortest first) until its "
                   "mean accuracy reaches the one-at-a-time loop's"),
        dict(benchmark="DM vs task-loss matching", setting=f"one layer pair; DM on {dm_images} images vs TLM "
             f"{epochs:g} epochs on {images} images", baseline=f"task-loss matching (acc {100 * mean(naive_acc):.1f}%)",
             baseline_value=train_s, ours=f"direct matching only (acc {100 * dm_acc:.1f}%)", ours_value=dm_s,
             unit="s per stitch", ratio=train_s / dm_s, target=100.0,
             notes="DM: both networks' forwards on the DM images + float64 least squares; TLM: the training loop "
                   "alone. The ratio grows linearly with TLM length (paper recipes: 30 epochs on 50k images)"),
    ]


def dask_scaling(cut: str = "block4", receivers: int = 4, epochs: float = 1, images: int = 2000,
                 test_size: int = 1000, dm_images: int = 500) -> list[dict]:
    """Stitches per hour of the grid on a local Dask cluster of 1 and of 2 worker processes (one
    torch thread each; one task per sender-receiver pair), side by side. The models come from
    the shared store; each run gets fresh stitch keys (a new training seed), so nothing is read
    back from an earlier run."""
    import os

    import distributed

    sender = Net("sender", zoo.bansal_resnet18(zoo.BANSAL_RESNET18["smoke"], 1))
    recvs = [Net(f"receiver{s}", zoo.bansal_resnet18(zoo.BANSAL_RESNET18["smoke"], s)) for s in [0, 2, 3, 4, 5][:receivers]]
    for net in [sender, *recvs]:
        net.load(torch.device("cpu"), Store(), None, progress=False)
    data = DataSpec("cifar10")
    rates = {}
    for workers in (1, 2):
        train_cfg = TrainConfig(epochs=epochs, batch_size=32, optimizer="adam", lr=1e-3, weight_decay=0.0,
                                schedule="cosine", augment=False, seed=int.from_bytes(os.urandom(4), "little"))
        recipe = StitchRecipe(train=train_cfg, train_size=images, test_size=test_size, dm_images=dm_images)
        with distributed.LocalCluster(n_workers=workers, threads_per_worker=1, processes=True,
                                      dashboard_address=None) as cluster, distributed.Client(cluster) as client:
            client.run(torch.set_num_threads, 1)
            t0 = time.perf_counter()
            table = stitch_grid([sender], recvs, [(cut, cut)], recipe, data, store=Store(), progress=False,
                                client=client)
            rates[workers] = 3600 * len(table) / (time.perf_counter() - t0)
    return [dict(benchmark="stitch grid on Dask", setting=f"smoke ResNet-18s, cut {cut}, {len(recvs)} receivers (one "
                 f"task each), {epochs:g} epoch on {images} images", baseline="1 worker process, 1 thread",
                 baseline_value=rates[1], ours="2 worker processes, 1 thread each", ours_value=rates[2],
                 unit="stitches/hour", ratio=rates[2] / rates[1], target=None,
                 notes=f"{os.cpu_count()} cores; worker start-up excluded, model loading on the workers included")]


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--cut", default="block4")
    ap.add_argument("--receivers", type=int, default=3)
    ap.add_argument("--epochs", type=float, default=2)
    ap.add_argument("--images", type=int, default=4000)
    args = ap.parse_args()
    print(f"device: {device_name()}")
    print_rows(run(args.cut, args.receivers, args.epochs, args.images))


if __name__ == "__main__":
    main()
