#!/usr/bin/env bash
# clang-tidy (Debian's clang-tidy-14, .clang-tidy) over the given files, or over the C++ files
# changed since HEAD~1. Needs build/compile_commands.json (scripts/build.sh writes it).
#   bash scripts/tidy.sh [FILES...]
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EDGE_BUILD_DIR:-$root/build}"
cd "$root"
[ -f "$build/compile_commands.json" ] || { echo "tidy.sh: no $build/compile_commands.json (run scripts/build.sh)" >&2; exit 2; }
if [ $# -gt 0 ]; then files=("$@"); else mapfile -t files < <(git diff --name-only HEAD~1 -- '*.cpp'); fi
[ ${#files[@]} -gt 0 ] || { echo "tidy.sh: no files"; exit 0; }
exec clang-tidy-14 -p "$build" --quiet "${files[@]}"
