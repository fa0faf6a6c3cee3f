"""A Dask cluster on this machine for a batch's pages: N worker processes (one thread each) that
share its GPU, their scheduler's address written to a file once every worker is up. The pages'
stitch grids go to it when ``STITCHKIT_DASK`` names that address (stitchkit.base.cluster); the workers
inherit this process's environment (``STITCHKIT_CACHE``, the data root, ``PYTHONPATH``), so they
read and write the same cache as the pages. Runs until killed.

    python benchmarks/dask_local.py --workers 4 --address-file /tmp/dask-address
"""

from __future__ import annotations

import argparse
import os
import time
from pathlib import Path


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--workers", type=int, required=True)
    ap.add_argument("--address-file", type=Path, required=True)
    args = ap.parse_args()
    if args.workers < 1:
        raise SystemExit(f"--workers must be >= 1, got {args.workers}")
    from distributed import Client, LocalCluster

    cluster = LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True, dashboard_address=None)
    client = Client(cluster)
    client.wait_for_workers(args.workers, timeout=120)
    tmp = args.address_file.with_name(args.address_file.name + ".tmp")
    tmp.write_text(cluster.scheduler_address)
    os.replace(tmp, args.address_file)
    print(f"dask: {args.workers} workers at {cluster.scheduler_address}", flush=True)
    while True:
        time.sleep(3600)


if __name__ == "__main__":
    main()
