"""Run every benchmark and write one table of side-by-side ratios (``make bench``).

Each benchmark times a baseline and the project's path in the same process on the same
machine, so the *ratio* is the result; absolute numbers depend on the hardware, which the
table names. Writes ``benchmarks/results.md`` and ``benchmarks/results.json``.

    python benchmarks/run_all.py [--quick]
"""

from __future__ import annotations

import argparse
import datetime as dt
import json
import platform
import sys
import time
from pathlib import Path

import torch

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE))

import bench_cka  # noqa: E402
import bench_cpu  # noqa: E402
import bench_gpu  # noqa: E402
import bench_stitch  # noqa: E402
import bench_train  # noqa: E402

from stitchkit.base.fileio import atomic_write_json, atomic_write_text  # noqa: E402
from stitchkit.base.hardware import default_device, device_name, resolve_precision  # noqa: E402


def _fmt(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.2f}"


def markdown(report: dict) -> str:
    lines = [f"# Benchmarks ({report['date']})", "",
             f"Hardware: **{report['device']}**, platform {report['platform']}; automatic precision: "
             f"**{report['precision']}**. Each row is measured side by side in one run; the ratio is the result.",
             "", "| benchmark | setting | baseline | ours | unit | ratio | target | met |", "|---|---|---|---|---|---|---|---|"]
    for r in report["rows"]:
        target = "-" if r.get("target") is None else f"≥ {r['target']:g}×"
        met = "-" if r.get("target") is None else ("yes" if r["ratio"] >= r["target"] else "**no**")
        lines.append(f"| {r['benchmark']} | {r['setting']} | {r['baseline']}: {_fmt(r['baseline_value'])} | "
                     f"{r['ours']}: {_fmt(r['ours_value'])} | {r['unit']} | {r['ratio']:.2f}× | {target} | {met} |")
    notes = [f"- {r['benchmark']}: {r['notes']}" for r in report["rows"] if r.get("notes")]
    lines += [""] + notes if notes else []
    paper = report.get("paper_throughput") or []
    if paper:
        when = f" (measured {report['paper_throughput_date'][:10]})" if report.get("paper_throughput_date") else ""
        lines += ["", f"## Paper-scale stitch grid throughput{when}", "",
                  "Each grid timed (stacked) at two training lengths: t = stitches × overhead + image passes / "
                  "training rate; the projection applies the two to the paper-scale work.", "",
                  "| run | setting | stitches | seconds at each length | training image passes/s | overhead s/stitch "
                  "| paper-scale stitches | paper-scale image passes | projected GPU-hours | goal |",
                  "|---|---|---|---|---|---|---|---|---|---|"]
        for p in paper:
            if "training_passes_per_second" in p:
                timed = ", ".join(f"{e:g} ep: {t:.1f}" for e, t in zip(p["lengths"], p["seconds_at_lengths"]))
                lines.append(f"| {p['run']} | {p['setting']} | {p['stitches']} | {timed} | "
                             f"{p['training_passes_per_second']:,.0f} | {p['overhead_seconds_per_stitch']:.2f} | "
                             f"{p['paper_stitches']:,} | {p['paper_image_passes']:.3g} | {p['projected_gpu_hours']:.1f} "
                             f"| ≤ {p['goal_gpu_hours']:g} |")
            else:  # an older run: one length, overall rate
                lines.append(f"| {p['run']} | {p['setting']} | {p['stitches']} | {p['seconds']:.1f} | "
                             f"{p['image_passes_per_second']:,.0f} (overall) | - | - | {p['paper_image_passes']:.3g} | "
                             f"{p['projected_gpu_hours']:.1f} | ≤ {p['goal_gpu_hours']:g} |")
    elif report["device"].startswith("cpu"):
        lines += ["", "GPU rows: not measured here (no GPU on this machine); see `results-gpu.md` where one was lent."]
    return "\n".join(lines) + "\n"


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--quick", action="store_true", help="small sizes (seconds; for checking the wiring)")
    args = ap.parse_args()
    t0 = time.perf_counter()
    rows, extra = [], {}
    gpu = default_device().type == "cuda"
    if gpu:
        rows, extra = bench_gpu.run(quick=args.quick)
        rows += bench_stitch.run(receivers=2, epochs=1, images=1000, test_size=500, dm_images=200) if args.quick \
            else bench_stitch.run()
        rows += bench_cka.run(n=300, width=2) if args.quick else bench_cka.run()
    elif args.quick:
        rows += bench_train.run(width=8, steps=3, batch=64)
        rows += bench_stitch.dask_scaling(receivers=2, images=500, test_size=200, dm_images=100)
        rows += bench_stitch.run(receivers=2, epochs=1, images=1000, test_size=500, dm_images=200)
        rows += bench_cka.run(n=300, width=2)
        rows += bench_cpu.run(steps=3, stitch_images=512)
    else:
        rows += bench_train.run()
        rows += bench_stitch.run()
        rows += bench_stitch.dask_scaling()
        rows += bench_cka.run()
        rows += bench_cpu.run()
    report = {"date": dt.datetime.now().isoformat(timespec="seconds"), "device": device_name(),
              "platform": platform.platform(), "precision": resolve_precision("auto", default_device()),
              "torch": torch.__version__, "quick": args.quick, "seconds": round(time.perf_counter() - t0, 1),
              "rows": rows, **extra}
    out = HERE / (("results-gpu" if gpu else "results") + ("-quick" if args.quick else ""))
    atomic_write_json(out.with_suffix(".json"), report)
    atomic_write_text(out.with_suffix(".md"), markdown(report))
    print(markdown(report))


if __name__ == "__main__":
    main()
