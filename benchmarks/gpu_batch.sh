#!/bin/bash
# The one call a GPU loan runs (issue 47), prepared on the CPU beforehand. Here first:
#   make wheels                      (the notebook packages as wheels in .whl/, the data archives in .shared-data/)
#   git commit                       (the device's copy has no usable .git: the commit travels as STITCHKIT_COMMIT)
# Then one device call, carry [".whl", ".shared-data"], timeout_s 600:
#   STITCHKIT_COMMIT=<sha> bash benchmarks/gpu_batch.sh [PAGE ...]
# It installs the wheels; measures, if the repository holds no measurement yet, how well concurrent
# processes share the GPU (benchmarks/gpu_lanes.py, ~1 minute; the JSON comes back in $OUT to be
# committed as benchmarks/spot/gpu-lanes.json) and, where k processes get more done than one, starts a
# local Dask cluster of k workers (benchmarks/dask_local.py); then runs `stitchkit pages` (the pages
# named, or the batch's priority order) within what is left of BUDGET seconds (default 550), their
# networks trained ahead in k processes and their stitch grids on the workers, packing into
# $OUT/pages.tar.gz after every page. Back here:
#   stitchkit import-pages <files_at>/pages.tar.gz
set -u
: "${STITCHKIT_COMMIT:?set STITCHKIT_COMMIT to the commit this copy was made at: the copy on the device has no usable .git}"
start=$(date +%s)
out=${OUT:-/tmp/gpu-batch-out}; mkdir -p "$out"
scale=${SCALE:-gpu}  # SCALE=smoke SKIP_WHEELS=1: a rehearsal on a CPU (wheels already installed)
[ "$scale" = gpu ] && gpu_flag=--require-gpu || gpu_flag=
[ -n "${SKIP_WHEELS:-}" ] || python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "the wheels did not install: run make wheels here and carry .whl"; exit 3; }
export PYTHONPATH=/tmp/site:$PWD${PYTHONPATH:+:$PYTHONPATH} STITCHKIT_DATA_ROOT=${STITCHKIT_DATA_ROOT:-$PWD/.shared-data} \
  STITCHKIT_CACHE=${STITCHKIT_CACHE:-/root/skcache} STITCHKIT_PROGRESS=0 PYTHONUNBUFFERED=1 STITCHKIT_COMMIT
[ -z "$gpu_flag" ] || nvidia-smi -L || { echo "no GPU: stopping before any training"; exit 2; }
if [ ! -f benchmarks/spot/gpu-lanes.json ]; then
  timeout 120 python3 benchmarks/gpu_lanes.py --out "$out"  # written after each k: a cut run keeps what it measured
  [ -f "$out/gpu-lanes.json" ] && cp "$out/gpu-lanes.json" benchmarks/spot/gpu-lanes.json
fi
# the number of processes that gets the most work done per second (k / slowdown), at most 4; 1 without a measurement
k=$(python3 -c "
import json
try:
    rows = json.load(open('benchmarks/spot/gpu-lanes.json'))['rows']
    print(max((r['k'] / r['slowdown'], -r['k'], r['k']) for r in rows if r.get('slowdown') and r['k'] <= 4)[2])
except Exception:
    print(1)")
workers=1
if [ "$k" -gt 1 ]; then
  # a local Dask cluster of k workers sharing the GPU: the pages' networks are trained ahead in k processes and
  # each page's stitch grids spread over the workers; without one (it did not start), the pages run alone
  rm -f /tmp/dask-address
  setsid python3 benchmarks/dask_local.py --workers "$k" --address-file /tmp/dask-address > "$out/dask.log" 2>&1 &
  for i in $(seq 60); do [ -f /tmp/dask-address ] && break; sleep 1; done
  if [ -f /tmp/dask-address ]; then export STITCHKIT_DASK=$(cat /tmp/dask-address); workers=$k; fi
fi
budget=$(( ${BUDGET:-550} - ($(date +%s) - start) ))
echo "processes sharing the GPU: $k; dask workers: $workers; budget: $budget s"
timeout -s TERM $(( budget + 25 )) python3 -m stitchkit pages "$@" --scale "$scale" --budget "$budget" --workers "$workers" \
  $gpu_flag --pack "$out/pages.tar.gz" 2>&1 | tee "$out/batch.log"
[ -f /tmp/dask-address ] && pkill -f benchmarks/dask_local.py
echo "batch done at $(( $(date +%s) - start )) s"
