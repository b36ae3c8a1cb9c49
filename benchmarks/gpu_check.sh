#!/usr/bin/env bash
# One script for a GPU machine: `verify --device cuda` on the shipped examples (one
# rank and two ranks) and the GPU facts of shared/hazards.md section 4.3. Results go
# to $OUT (default: benchmarks/gpu_results/). Needs torch with CUDA installed.
set -euo pipefail
cd "$(dirname "$0")/.."
out="${OUT:-benchmarks/gpu_results}"
mkdir -p "$out"
python -m pip install --quiet -e . matplotlib 2>/dev/null || python -m pip install --quiet -e .
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/nvidia-smi.csv" || true
python -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.get_device_name())" > "$out/torch.txt"
status=0
precision-lint verify examples/ --device cuda --world-size 1 --output-format json -o "$out/verify-cuda-1rank.json" || status=$?
precision-lint verify examples/ --device cuda --world-size 2 --output-format markdown -o "$out/verify-cuda-2ranks.md" || status=$?
precision-lint verify examples/ --device cuda --world-size 1 --plot "$out/verify-cuda.png" > "$out/verify-cuda.txt" || status=$?
python benchmarks/gpu_facts.py --device cuda --output "$out/gpu_facts.json" > /dev/null
echo "results in $out (verify exit status $status)"
exit "$status"
