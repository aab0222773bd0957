#!/usr/bin/env bash
# Configures and builds EdgeStudio into ./build (Ninja, RelWithDebInfo, ccache when present).
# Usage: scripts/build.sh [extra cmake -D options...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EDGE_BUILD_DIR:-$root/build}"
jobs="${EDGE_JOBS:-$(nproc)}"
# ccache: paths relative to the checkout and no working-directory hash, so every clone or worktree
# of the project (CI's fresh clone included) shares one cache.
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}"
export CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo "$@"
cmake --build "$build" -j "$jobs"
