#!/usr/bin/env bash
# Builds the runtime + CUDA backend + edge-gpu-check standalone (tests/gpu/CMakeLists.txt: no
# Debian libraries needed) and runs the kernel/model checks (with the board agent's executor on
# CUDA: --backend cuda/auto, prefix reuse at pos > 0) and the benchmark, printing tables.
#   tests/gpu/run.sh [build-dir] [bench shape: tinyllama-1.1b (default) | stories260k | none]
# Exit status: that of the checks (0 also when no device answered: the output says "no device").
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-${TMPDIR:-/tmp}/edge-gpu-build}"
shape="${2:-tinyllama-1.1b}"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$here" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
grep -q "no CUDA compiler" "$build.configure.log" && { echo "no nvcc: nothing built"; exit 0; }
cmake --build "$build" -j "$(nproc)" --target edge-gpu-check
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
status=0
"$build/edge-gpu-check" check || status=$?
if [ "$shape" != none ] && [ $status -eq 0 ]; then "$build/edge-gpu-check" bench "$shape" || status=$?; fi
exit $status
