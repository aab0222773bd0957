#!/usr/bin/env bash
# Builds the runtime + CUDA backend + edge-gpu-check standalone (tests/gpu/CMakeLists.txt: no
# Debian libraries needed) and runs the kernel/model checks (with the board agent's executor on
# CUDA: --backend cuda/auto, prefix reuse at pos > 0, a batch over shared blocks), the agent path
# again under compute-sanitizer's memcheck when the toolkit has it, and the benchmark, printing
# tables. Every part runs even when an earlier one fails (a GPU lease is short).
#   tests/gpu/run.sh [build-dir] [bench shape: tinyllama-1.1b (default) | stories260k | none]
#   EDGE_CUDA_ARCHS="90"   architectures to build (default "87;90"; one is quicker on a lease)
# Exit status: non-zero when a check failed (0 also when no device answered: it says "no device").
set -uo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="${1:-${TMPDIR:-/tmp}/edge-gpu-build}"
shape="${2:-tinyllama-1.1b}"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
command -v nvcc >/dev/null || [ ! -x /usr/local/cuda/bin/nvcc ] || export PATH="/usr/local/cuda/bin:$PATH"
cmake -S "$here" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release \
  "-DCMAKE_CUDA_ARCHITECTURES=${EDGE_CUDA_ARCHS:-87;90}" >"$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
grep -q "no CUDA compiler" "$build.configure.log" && { echo "no nvcc: nothing built"; exit 0; }
start=$(date +%s)
cmake --build "$build" -j "$(nproc)" --target edge-gpu-check || exit 1
echo "built in $(( $(date +%s) - start )) s ($(nvcc --version | tail -1))"
nvidia-smi --query-gpu=name,driver_version,memory.total --format=csv,noheader 2>/dev/null || true
status=0
"$build/edge-gpu-check" check || status=$?
sanitizer="$(command -v compute-sanitizer || ls /usr/local/cuda/bin/compute-sanitizer 2>/dev/null || true)"
if [ -n "$sanitizer" ]; then
  echo; echo "== compute-sanitizer --tool memcheck: edge-gpu-check agent"
  timeout 150 "$sanitizer" --tool memcheck --leak-check full --error-exitcode 3 "$build/edge-gpu-check" agent || status=$?
fi
if [ "$shape" != none ]; then "$build/edge-gpu-check" bench "$shape" || status=$?; fi
exit $status
