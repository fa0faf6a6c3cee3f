#!/bin/bash
# The measurements a GPU loan runs while the page batch (issue 47) is being built, in one call:
#   1. candidate gpu training recipes for Bansal's ResNet-18 width 64 (benchmarks/gpu_recipes.py);
#   2. H-F2's stitch length at gpu under issue 46's training-length control (benchmarks/gpu_hf2_length.py).
# Fails before any training when there is no GPU or no CIFAR-10 archive. Each script writes its JSON
# after every item into $OUT, so a run cut by its time limit still returns what it finished.
# Usage (on the lent machine, repository root, the CIFAR-10 archive in .gpudata/):
#   bash benchmarks/gpu_batch.sh [SECONDS]   (default 540: the whole call's budget)
set -u
budget=${1:-540}
start=$(date +%s)
out=${OUT:-/tmp/gpu-batch-out}; mkdir -p "$out"
export PYTHONPATH=$PWD PYTHONUNBUFFERED=1 STITCHKIT_PROGRESS=0
export STITCHKIT_DATA_ROOT=${STITCHKIT_DATA_ROOT:-$PWD/.gpudata} STITCHKIT_CACHE=${STITCHKIT_CACHE:-/root/skcache}
nvidia-smi -L || { echo "no GPU: stopping before any training"; exit 2; }
ls "$STITCHKIT_DATA_ROOT"/cifar10-images.tar.gz || { echo "no CIFAR-10 archive in $STITCHKIT_DATA_ROOT"; exit 2; }
python3 -c "import torch, stitchkit; assert torch.cuda.is_available(), 'torch sees no GPU'; print('torch', torch.__version__, torch.cuda.get_device_name())" || exit 2
left() { echo $(( budget - ($(date +%s) - start) )); }
timeout 250 python3 benchmarks/gpu_recipes.py --out "$out" --budget 150 2>&1 | tee "$out/recipes.log"
echo "recipes done at $(( $(date +%s) - start )) s; $(left) s left"
t=$(left); [ "$t" -gt 60 ] && timeout "$t" python3 benchmarks/gpu_hf2_length.py --out "$out" 2>&1 | tee "$out/hf2-length.log"
echo "batch done at $(( $(date +%s) - start )) s"
