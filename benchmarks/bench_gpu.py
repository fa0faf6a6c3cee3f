"""GPU rows of the benchmark table (only where a CUDA GPU is present):

- the GPU's measured bf16 matrix-product rate (8192^3, the denominator of "fraction of peak");
- ResNet-18 (width 64) training throughput: the tutorial loop (fp32, NCHW, per-image DataLoader)
  vs this companion's path (uint8 split resident on the GPU, batch-level crop + flip, bf16
  autocast, channels_last), eager and under ``torch.compile``; FLOPs per image counted by
  ``torch.utils.flop_counter`` on one training step, so "fraction of peak" is measured, not assumed;
- paper-scale stitch-grid throughput (image passes per second, every per-stitch cost included:
  direct-matching fit, sender activations, evaluation on the test set) for the two runs whose
  paper-scale cost the issues bound: Hernandez et al.'s H-F2 grid and Balogh & Jelasity's J-T1
  TLM grid (ResNet-18 rows). Throughput does not depend on the weights, so the networks are
  untrained copies of the paper-scale architectures (BN statistics calibrated for Hernandez's).

    python benchmarks/bench_gpu.py [--quick]
"""

from __future__ import annotations

import argparse
import tempfile
import time
from dataclasses import replace
from pathlib import Path

import torch
from _table import print_rows
from bench_train import _timed, matmul_tflops, naive_throughput, ours_throughput, train_flops_per_image

from stitchkit.base.hardware import default_device
from stitchkit.base.store import Store
from stitchkit.data.datasets import DataSpec
from stitchkit.networks.models import build_model
from stitchkit.stitching.grid import stitch_grid
from stitchkit.stitching.grid import STITCHES_PER_PASS
from stitchkit.stitching.grid_spec import Net


def training_rows(width: int, batch: int, steps: int, workers: int, device: torch.device) -> tuple[list[dict], dict]:
    peak = matmul_tflops(device)
    flops = train_flops_per_image(width, batch, device)
    naive = naive_throughput(width, steps, batch, device, workers=workers)
    eager = ours_throughput(width, steps, batch, device)
    torch.backends.cudnn.benchmark = True
    tuned = ours_throughput(width, steps, batch, device)
    compiled = ours_throughput(width, steps, batch, device, compile=True)
    torch.backends.cudnn.benchmark = False
    best = max(eager, tuned, compiled)
    setting = f"pre-act ResNet-18 width {width}, batch {batch}, crop+flip, {steps + 2} steps timed"
    frac = lambda v: f"{v * flops / 1e12:.0f} TFLOP/s = {100 * v * flops / 1e12 / peak:.1f}% of the measured bf16 peak"  # noqa: E731
    rows = [
        dict(benchmark="model training (GPU)", setting=setting,
             baseline=f"naive: fp32 (TF32 convolutions) NCHW, per-image DataLoader ({workers} workers)",
             baseline_value=naive, ours="ours: GPU-resident uint8 + batch augmentation, channels_last, bf16 (auto)",
             ours_value=eager, unit="img/s", ratio=eager / naive, target=5.0, notes=f"ours: {frac(eager)}"),
        dict(benchmark="model training (GPU)", setting=setting, baseline="ours, eager", baseline_value=eager,
             ours="ours + cudnn.benchmark", ours_value=tuned, unit="img/s", ratio=tuned / eager, target=None),
        dict(benchmark="model training (GPU)", setting=setting, baseline="ours, eager", baseline_value=eager,
             ours="ours + cudnn.benchmark + torch.compile", ours_value=compiled, unit="img/s",
             ratio=compiled / eager, target=None, notes=f"compiled: {frac(compiled)}"),
        dict(benchmark="model training (GPU)", setting=setting, baseline="naive", baseline_value=naive,
             ours="ours, best of the three", ours_value=best, unit="img/s", ratio=best / naive, target=5.0,
             notes=f"{flops / 1e9:.2f} GFLOP per training image (torch.utils.flop_counter); measured bf16 matrix "
                   f"product {peak:.0f} TFLOP/s; anchor: a standard ResNet-18 trains at about 23k img/s on an A100"),
    ]
    return rows, {"matmul_bf16_tflops": peak, "train_gflop_per_image": flops / 1e9, "naive": naive, "eager": eager,
                  "cudnn_benchmark": tuned, "compiled": compiled}


def _grid_rate(senders, receivers, cut_pairs, recipe, data, device, stitches_per_pass) -> tuple[float, int, float]:
    """(image passes per second, stitches, seconds) of one stitch grid in a fresh store."""
    with tempfile.TemporaryDirectory() as tmp:
        store = Store(tmp)
        for net in [*senders, *receivers]:  # build (and BN-calibrate) the networks outside the timing
            net.load(device, store, None, progress=False)
        if device.type == "cuda":
            torch.cuda.synchronize()
        t0 = time.perf_counter()
        table = stitch_grid(senders, receivers, cut_pairs, recipe, data, device=device, store=store, progress=True,
                            stitches_per_pass=stitches_per_pass)
        seconds = time.perf_counter() - t0
    n = len(table)
    passes = n * recipe.train.epochs * (recipe.train_size or 50_000)
    return passes / seconds, n, seconds


def _runs(quick: bool):
    """The two paper-scale grids whose cost the issues bound, as (run, setting(epochs), senders,
    receivers, layer pairs, recipe(epochs), paper work, goal in GPU-hours): H-F2 R1111 -> R2222
    at width 64 with the paper's stitch recipe (50k images, batch 256), every layer pair; J-T1
    Balogh's ResNet-18 width 64, #0 -> #1, TLM (DM init, Adam, batch 256), every block into four
    receiver depths. Untrained copies: throughput does not depend on the weights."""
    from stitchkit.experiments.balogh import identification
    from stitchkit.experiments.hernandez import all_layers

    cfg = all_layers.PRESETS_F2["paper"]
    if quick:
        cfg = replace(cfg, stitch_train_size=5000, test_size=1000)
    s = Net("R1111", cfg.model("r1111", trained=False))
    r = Net("R2222", cfg.model("r2222", trained=False))
    pairs = [(i, j) for j in cfg.cuts(r.spec) for i in cfg.cuts(s.spec)]
    yield ("H-F2", lambda e: (f"R1111 -> R2222 width {s.spec.width}, all {len(pairs)} layer pairs, {e:g} epoch(s) x "
                              f"{cfg.stitch_train_size or 50_000:,} images, batch {cfg.stitch_batch}"),
           [s], [r], pairs, lambda e: replace(cfg, stitch_epochs=e).recipe(), all_layers.paper_work(), 4.0)
    t1 = identification.PRESETS_T1["paper"]
    if quick:
        t1 = replace(t1, tlm_train_size=5000, test_size=1000)
    nets = replace(t1, networks=2, model_epochs=0).nets("resnet18")
    layers = t1.layers(nets[0])
    pairs = [(i, j) for j in layers[::2] for i in layers]
    yield ("J-T1 ResNet-18",
           lambda e: (f"ResNet-18 width {nets[0].spec.width} #0 -> #1, {len(pairs)} TLM stitches (every block into "
                      f"{', '.join(layers[::2])}), {e:g} epoch(s) x {t1.tlm_train_size or 50_000:,} images, "
                      f"batch {t1.tlm_batch}"),
           [nets[0]], [nets[1]], pairs, lambda e: replace(t1, tlm_epochs=e).recipe(tlm=True),
           identification.paper_work("resnet18"), 24.0)


def paper_throughput(device: torch.device, quick: bool = False) -> tuple[list[dict], list[dict]]:
    """Paper-scale grid throughput, each grid trained one epoch, one stitch per pass and with the
    device's stitches per pass: (records, benchmark rows with the ratio). A record's projection
    divides the paper's image passes by the stacked rate, so it counts the per-stitch costs (DM
    fit, activations, test evaluation) once per epoch instead of once per stitch: it errs high
    (:func:`paper_projection` separates the two)."""
    data = DataSpec("cifar10")
    k = STITCHES_PER_PASS[device.type]
    out, rows = [], []
    for run, setting, senders, receivers, pairs, recipe, work, goal in _runs(quick):
        one, n, s1 = _grid_rate(senders, receivers, pairs, recipe(1), data, device, 1)
        rate, n, seconds = _grid_rate(senders, receivers, pairs, recipe(1), data, device, k)
        out.append(dict(run=run, setting=setting(1), stitches=n, seconds=seconds, image_passes_per_second=rate,
                        stitches_per_pass=k, image_passes_per_second_one_at_a_time=one,
                        paper_image_passes=work["image_passes"],
                        projected_gpu_hours=work["image_passes"] / rate / 3600, goal_gpu_hours=goal))
        rows.append(dict(benchmark=f"stitch grid, several stitches per pass ({run})", setting=setting(1),
                         baseline="one stitch per pass", baseline_value=s1 / n, ours=f"{k} stitches per pass (stacked)",
                         ours_value=seconds / n, unit="s per stitch", ratio=s1 / seconds, target=None,
                         notes=f"{one:,.0f} vs {rate:,.0f} image passes/s"))
    return out, rows


def paper_projection(device: torch.device, quick: bool = False, epochs: tuple[float, float] = (1, 3)) -> list[dict]:
    """The paper-scale cost separated into its two parts by timing each grid (stacked) at two
    training lengths: t(e) = n * overhead + n * e * images / rate, so the per-stitch overhead (DM
    fit, activations, test evaluation) and the training rate are both measured, and the
    projection is stitches * overhead + image passes / rate."""
    data = DataSpec("cifar10")
    out = []
    for run, setting, senders, receivers, pairs, recipe, work, goal in _runs(quick):
        (_, n, t_a), (_, _, t_b) = (_grid_rate(senders, receivers, pairs, recipe(e), data, device, None)
                                    for e in epochs)
        images = recipe(epochs[0]).train_size or 50_000
        rate = n * (epochs[1] - epochs[0]) * images / (t_b - t_a)
        overhead = max(0.0, (t_a - n * epochs[0] * images / rate) / n)
        seconds = work["stitches"] * overhead + work["image_passes"] / rate
        out.append(dict(run=run, setting=setting(epochs[1]), stitches=n, seconds=t_b,
                        image_passes_per_second=n * epochs[1] * images / t_b, training_passes_per_second=rate,
                        overhead_seconds_per_stitch=overhead, lengths=list(epochs), seconds_at_lengths=[t_a, t_b],
                        stitches_per_pass=STITCHES_PER_PASS[device.type], paper_stitches=work["stitches"],
                        paper_image_passes=work["image_passes"], projected_gpu_hours=seconds / 3600,
                        goal_gpu_hours=goal))
    return out


def run(quick: bool = False) -> tuple[list[dict], dict]:
    device = default_device()
    if device.type != "cuda":
        return [], {}
    width, batch, steps = (16, 128, 4) if quick else (64, 512, 60)
    rows, training = training_rows(width, batch, steps, workers=4, device=device)
    print_rows(rows)
    rows += paper_throughput(device, quick)[1]
    paper = paper_projection(device, quick)
    print(paper)
    return rows, {"training": training, "paper_throughput": paper}


def update_grid_rows(report: dict, paper: list[dict], grid_rows: list[dict], when: str) -> dict:
    """``report`` (a results-gpu.json) with its paper-scale grid throughput and its stacking rows
    replaced by a newer measurement (made on the same kind of device; its date recorded)."""
    keep = [r for r in report.get("rows", []) if not (grid_rows and r["benchmark"].startswith("stitch grid, several"))]
    return {**report, "rows": keep + grid_rows, "paper_throughput": paper, "paper_throughput_date": when}


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true")
    ap.add_argument("--projection-only", action="store_true",
                    help="with --grid-only: keep the stored one-at-a-time vs stacked rows")
    ap.add_argument("--grid-only", type=Path, metavar="OUT",
                    help="measure only the paper-scale grid rows and write benchmarks/results-gpu.{json,md} "
                         "with them replaced into OUT")
    args = ap.parse_args()
    if args.grid_only:
        import datetime as dt
        import json

        from run_all import markdown

        from stitchkit.base.fileio import atomic_write_json, atomic_write_text
        from stitchkit.base.hardware import device_name

        device = default_device()
        paper = paper_projection(device, args.quick)
        print(paper)
        grid_rows = [] if args.projection_only else paper_throughput(device, args.quick)[1]
        print_rows(grid_rows)
        here = Path(__file__).resolve().parent
        report = json.loads((here / "results-gpu.json").read_text())
        if report["device"] != device_name(device):
            raise SystemExit(f"results-gpu.json was measured on {report['device']!r}, this is {device_name(device)!r}: "
                             "run the whole benchmark instead")
        report = update_grid_rows(report, paper, grid_rows, dt.datetime.now().isoformat(timespec="seconds"))
        args.grid_only.mkdir(parents=True, exist_ok=True)
        atomic_write_json(args.grid_only / "results-gpu.json", report)
        atomic_write_text(args.grid_only / "results-gpu.md", markdown(report))
        print(markdown(report))
        return
    rows, extra = run(args.quick)
    print_rows(rows)
    print(extra)


if __name__ == "__main__":
    main()
