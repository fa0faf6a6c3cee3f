"""Time every page at ``smoke`` from an empty cache, one page at a time, and keep the times in
``benchmarks/smoke_times.json``, which each page's "Rerun this page" box quotes.

Each page runs in a fresh temporary cache (so it trains its tiny networks itself, as on a new
machine) into a temporary folder (the book is not touched), with the thread count given (default:
1, the slower and steadier measure on a shared machine). A page already timed at its current
notebook is skipped unless ``--force``; the file is rewritten atomically after each page, so an
interrupted run resumes where it stopped.

    .venv/bin/python benchmarks/smoke_times.py            # every page not yet timed
    .venv/bin/python benchmarks/smoke_times.py B-F2A H-F2  # these pages (again with --force)
"""

from __future__ import annotations

import argparse
import json
import os
import sys
import tempfile
import time
from pathlib import Path

from stitchkit.base.fileio import atomic_write_json
from stitchkit.book.catalogue import SMOKE_TIMES, smoke_times, source_hash
from stitchkit.book.execution import execute
from stitchkit.book.notebooks import discover


def main(argv: list[str] | None = None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("ids", nargs="*", help="page IDs (default: every page)")
    ap.add_argument("--threads", type=int, default=1, help="torch threads per page (default 1)")
    ap.add_argument("--force", action="store_true", help="time pages already timed at their current notebook")
    args = ap.parse_args(argv)
    infos = discover()
    unknown = [i for i in args.ids if i not in infos]
    if unknown:
        ap.error(f"unknown page ID(s) {', '.join(unknown)}; valid: {', '.join(sorted(infos))}")
    times = smoke_times()
    os.environ["OMP_NUM_THREADS"] = os.environ["MKL_NUM_THREADS"] = str(args.threads)  # the kernels' torch
    for fid in args.ids or sorted(infos):
        info = infos[fid]
        sha = source_hash(info.source)
        if not args.force and times.get(fid, {}).get("source_sha256") == sha:
            continue
        with tempfile.TemporaryDirectory(prefix=f"smoke-{fid}-") as tmp:
            os.environ["STITCHKIT_CACHE"] = str(Path(tmp) / "cache")
            print(f"[smoke] {fid} ...", flush=True)
            t0 = time.perf_counter()
            try:
                results = execute(info, Path(tmp) / "out" / f"{fid}.ipynb", "smoke", progress=False)
            except Exception as exc:  # one failing page must not stop the others; it stays untimed
                print(f"[smoke] {fid} FAILED: {type(exc).__name__}: {exc}", file=sys.stderr, flush=True)
                continue
            wall = time.perf_counter() - t0
        prov = results.get("provenance", {})
        times[fid] = {"seconds": round(wall, 1), "threads": args.threads, "device": prov.get("device"),
                      "commit": prov.get("commit"), "source_sha256": sha, "date": time.strftime("%Y-%m-%d")}
        atomic_write_json(SMOKE_TIMES, dict(sorted(times.items())))
        print(f"[smoke] {fid} {wall:.1f} s", flush=True)
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
