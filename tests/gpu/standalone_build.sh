#!/usr/bin/env bash
# ctest gpu.standalone_build: the GPU machine builds the runtime + CUDA backend alone
# (tests/gpu/CMakeLists.txt, no Debian libraries), so a source the backends start to need must be
# added there too - this builds it here, one architecture, with ccache when present, and runs the
# check binary, which says "no device" and exits 0 on a machine without a GPU.
#   tests/gpu/standalone_build.sh BUILD_DIR CUDA_COMPILER
set -euo pipefail
here="$(cd "$(dirname "$0")" && pwd)"
build="$1"
nvcc="$2"
launch=()
if command -v ccache >/dev/null; then
  launch=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_CUDA_COMPILER_LAUNCHER=ccache)
  export CCACHE_BASEDIR="$(cd "$here/../.." && pwd)" CCACHE_NOHASHDIR=1
fi
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$here" -B "$build" "${gen[@]}" -DCMAKE_BUILD_TYPE=Release -DCMAKE_CUDA_COMPILER="$nvcc" \
  -DCMAKE_CUDA_ARCHITECTURES=90 "${launch[@]}" > "$build.configure.log" 2>&1 || { cat "$build.configure.log"; exit 1; }
cmake --build "$build" -j 2 --target edge-gpu-check
"$build/edge-gpu-check" check
