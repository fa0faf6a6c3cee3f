#!/bin/bash
# The one call a GPU loan runs (issue 47), prepared on the CPU beforehand. Here first:
#   make wheels                      (the notebook packages as wheels in .whl/, the data archives in .shared-data/)
#   git commit                       (the device's copy has no usable .git: the commit travels as STITCHKIT_COMMIT)
# Then one device call, carry [".whl", ".shared-data"], timeout_s 600:
#   STITCHKIT_COMMIT=<sha> bash benchmarks/gpu_batch.sh [PAGE ...]
# It installs the wheels; measures, if the repository holds no measurement yet, how well concurrent
# processes share the GPU (benchmarks/gpu_lanes.py, ~1 minute; the JSON comes back in $OUT to be
# committed as benchmarks/spot/gpu-lanes.json) and picks the lane count that gets the most work
# done; then runs `stitchkit pages` (the pages named, or the batch's priority order) within what is
# left of BUDGET seconds (default 550), packing into $OUT/pages.tar.gz after every page. Back here:
#   stitchkit import-pages <files_at>/pages.tar.gz   (and each <files_at>/pages.laneK.tar.gz if the merge was cut)
set -u
: "${STITCHKIT_COMMIT:?set STITCHKIT_COMMIT to the commit this copy was made at: the copy on the device has no usable .git}"
start=$(date +%s)
out=${OUT:-/tmp/gpu-batch-out}; mkdir -p "$out"
python3 -m pip install -q --no-index --no-deps --no-compile --no-cache-dir --upgrade --target /tmp/site .whl/*.whl \
  || { echo "the wheels did not install: run make wheels here and carry .whl"; exit 3; }
export PYTHONPATH=/tmp/site:$PWD STITCHKIT_DATA_ROOT=${STITCHKIT_DATA_ROOT:-$PWD/.shared-data} \
  STITCHKIT_CACHE=${STITCHKIT_CACHE:-/root/skcache} STITCHKIT_PROGRESS=0 PYTHONUNBUFFERED=1 STITCHKIT_COMMIT
nvidia-smi -L || { echo "no GPU: stopping before any training"; exit 2; }
if [ ! -f benchmarks/spot/gpu-lanes.json ]; then
  timeout 120 python3 benchmarks/gpu_lanes.py --out "$out" && cp "$out/gpu-lanes.json" benchmarks/spot/gpu-lanes.json
fi
# the lane count with the most work done per second (k / slowdown), at most 4; 1 without a measurement
lanes=$(python3 -c "
import json
try:
    rows = json.load(open('benchmarks/spot/gpu-lanes.json'))['rows']
    print(max((r['k'] / r['slowdown'], -r['k'], r['k']) for r in rows if r.get('slowdown') and r['k'] <= 4)[2])
except Exception:
    print(1)")
budget=$(( ${BUDGET:-550} - ($(date +%s) - start) ))
echo "lanes: $lanes; budget: $budget s"
timeout -s TERM $(( budget + 25 )) python3 -m stitchkit pages "$@" --scale gpu --budget "$budget" --lanes "$lanes" \
  --require-gpu --pack "$out/pages.tar.gz" 2>&1 | tee "$out/batch.log"
echo "batch done at $(( $(date +%s) - start )) s"
