#!/usr/bin/env bash
# One prepared script for a lent GPU machine (see the device tool): `verify --device cuda`
# on the examples (1 rank, and 2 ranks over NCCL when there are 2 GPUs), on the held-out
# accumulations, `verify --pytest` on the fixture project, a plot, and the GPU facts of
# hazards.md section 4.3. Results go to $OUT (default benchmarks/gpu_results/); record them,
# with the date and the GPU, in benchmarks/README.md.
#
# The machine cannot reach the network: it needs torch with CUDA installed already. The
# script says so and stops when it is missing, instead of installing a CPU build.
# DEVICE=cpu runs the same steps on the CPU (a dry run of the script itself).
set -uo pipefail
device=${DEVICE:-cuda}
cd "$(dirname "$0")/.."
out="${OUT:-benchmarks/gpu_results}"
mkdir -p "$out"
out=$(cd "$out" && pwd)
log="$out/gpu_check.log"
: > "$log"
say() { echo "$*" | tee -a "$log"; }

python=${PYTHON:-python3}
if [ "$device" = cuda ] && ! "$python" -c "import torch, sys; sys.exit(0 if torch.cuda.is_available() else 3)" 2>>"$log"; then
    say "no torch with CUDA here ($("$python" -c 'import torch; print(torch.__version__)' 2>/dev/null || echo 'torch missing')): nothing run"
    exit 2
fi
# the package itself, without dependencies: libcst and setuptools must be there already
# (no network). It has to be installed: its rules/ folder is mapped in by the install.
if ! "$python" -c "import precision_lint.registry as r; r.all_rules()" 2>/dev/null; then
    if ! "$python" -m pip install --no-deps --no-build-isolation --quiet -e . >>"$log" 2>&1; then
        say "pip install -e . failed (see $log): nothing run"
        exit 2
    fi
fi
pl() { "$python" -m precision_lint "$@"; }

date -u +%Y-%m-%dT%H:%M:%SZ > "$out/date.txt"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv > "$out/nvidia-smi.csv" 2>>"$log" || true
"$python" -c "import torch; print(torch.__version__, torch.version.cuda, torch.cuda.device_count(), torch.cuda.get_device_name() if torch.cuda.is_available() else 'no GPU')" > "$out/torch.txt"
gpus=$("$python" -c "import torch; print(torch.cuda.device_count())")
ranks=1
[ "$gpus" -ge 2 ] && ranks=2
[ "$device" = cpu ] && ranks=2  # gloo ranks on the CPU
say "GPUs: $gpus; ranks for all-reduce replays: $ranks ($(cat "$out/torch.txt"))"

status=0
step() {  # step NAME COMMAND...: run, keep its exit status, never stop the script
    local name=$1; shift
    local started=$SECONDS
    "$@" >"$out/$name.out" 2>"$out/$name.err"
    local rc=$?
    say "$name: exit $rc in $((SECONDS - started)) s"
    [ $rc -gt 1 ] && status=$rc
    return 0
}

step verify-examples-1rank pl verify examples/ --device "$device" --world-size 1 --output-format json -o "$out/verify-examples-1rank.json"
step verify-examples-ranks pl verify examples/ --device "$device" --world-size "$ranks" --output-format markdown -o "$out/verify-examples-${ranks}ranks.md"
step verify-plot pl verify examples/ --device "$device" --world-size 1 --plot "$out/verify-examples.png"
step verify-heldout "$python" benchmarks/verify_heldout/run.py --precision-lint "$python -m precision_lint" --device "$device"
project=$(mktemp -d)
cp -r tests/fixtures/verify_project/. "$project/"
step verify-pytest bash -c "cd '$project' && '$python' -m precision_lint verify --pytest counting --device $device --output-format json -o '$out/verify-pytest.json'"
rm -rf "$project"
step gpu-facts "$python" benchmarks/gpu_facts.py --device "$device" --output "$out/gpu_facts.json"
"$python" - "$out" <<'EOF' | tee -a "$log"
import json, pathlib, sys
out = pathlib.Path(sys.argv[1])
for name in ("verify-examples-1rank.json", "verify-pytest.json"):
    path = out / name
    if path.exists():
        for f in json.loads(path.read_text()):
            print(f"{name}: {f['path']}:{f['line']} {f['code']} {f['verdict']} on {f['device']}: {f['detail'][:100]}")
EOF
say "results in $out (worst exit status $status)"
exit "$status"
