#!/usr/bin/env bash
# clang-tidy (Debian's clang-tidy-14, .clang-tidy) over C++ files, with the build's
# compile_commands.json (scripts/build.sh and the test command's build write it).
#   bash scripts/tidy.sh [--check] [FILES...]     the given files (default: the .cpp files the last
#                                                 commit changed)
#   bash scripts/tidy.sh [--check] --all          every .cpp file the build compiles (~1 hour of
#                                                 CPU for the ~350 files; in parallel on every core)
#   bash scripts/tidy.sh [--check] --since REV    the .cpp files changed since REV, and for a
#                                                 changed header the .cpp files of its folder
#   bash scripts/tidy.sh --check --since-clean    --since the commit recorded in
#                                                 tests/conventions/tidy_clean_commit, the last one
#                                                 whose whole tree (--all) had no finding: ctest's
#                                                 conventions.tidy
# --check turns findings into a failure (exit 1). EDGE_BUILD_DIR: the build (default build/).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="${EDGE_BUILD_DIR:-$root/build}"
tidy="${CLANG_TIDY:-clang-tidy-14}"
cd "$root"
check=()
mode=files
since=""
args=()
while [ $# -gt 0 ]; do
  case "$1" in
    --check) check=(--warnings-as-errors='*'); shift ;;
    --all) mode=all; shift ;;
    --since) mode=since; since="${2:?--since needs a revision}"; shift 2 ;;
    --since-clean)
      mode=since
      since="$(tr -d '[:space:]' <"$root/tests/conventions/tidy_clean_commit")"
      shift ;;
    -h|--help) sed -n '2,16p' "$0"; exit 0 ;;
    *) args+=("$1"); shift ;;
  esac
done
command -v "$tidy" >/dev/null || { echo "tidy.sh: $tidy not found (scripts/install-deps.sh installs clang-tidy-14)" >&2; exit 2; }
[ -f "$build/compile_commands.json" ] || { echo "tidy.sh: no $build/compile_commands.json (run scripts/build.sh)" >&2; exit 2; }

# Files clang-tidy-14 cannot parse: LibTorch's headers fail under clang 14 with C++20 and
# libstdc++ 12 (the files' own code was read by hand). --all and --since skip them.
unparsable=(engine/analysis/torch_cnn.cpp engine/analysis/torch_llama.cpp tests/analysis/test_torchscript_cnn.cpp)

# The sources the build compiles (relative paths), generated files and unparsable ones excluded.
compiled() {
  python3 -c '
import json, os, sys
root = sys.argv[2]
for e in json.load(open(sys.argv[1])):
    f = os.path.relpath(os.path.join(e["directory"], e["file"]), root)
    if not f.startswith(("build", "..")) and f.endswith(".cpp") and f not in sys.argv[3:]:
        print(f)' "$build/compile_commands.json" "$root" "${unparsable[@]}" | sort -u
}

files=()
case "$mode" in
  files)
    if [ ${#args[@]} -gt 0 ]; then files=("${args[@]}"); else mapfile -t files < <(git diff --name-only HEAD~1 -- '*.cpp'); fi ;;
  all) mapfile -t files < <(compiled) ;;
  since)
    git cat-file -e "$since^{commit}" 2>/dev/null ||
      { echo "tidy.sh: revision '$since' is not in this repository's history (a shallow clone?)" >&2; exit 2; }
    mapfile -t changed < <(git diff --name-only "$since" -- '*.cpp' '*.h')
    mapfile -t all < <(compiled)
    declare -A want=()
    for f in "${changed[@]}"; do
      case "$f" in
        *.cpp) want["$f"]=1 ;;
        *.h) for c in "${all[@]}"; do [ "$(dirname "$c")" = "$(dirname "$f")" ] && want["$c"]=1; done ;;
      esac
    done
    for c in "${all[@]}"; do [ -n "${want[$c]:-}" ] && files+=("$c"); done
    echo "tidy.sh: ${#files[@]} files changed since $since" >&2 ;;
esac
[ ${#files[@]} -gt 0 ] || { echo "tidy.sh: no files"; exit 0; }
# (The build is g++'s: clang does not know GCC's `#pragma GCC target` of the SIMD kernels nor some
# of GCC's warning names, which the code uses on purpose.)
printf '%s\n' "${files[@]}" | xargs -P "${EDGE_JOBS:-$(nproc)}" -n 1 "$tidy" -p "$build" --quiet \
  --extra-arg=-Wno-unknown-pragmas --extra-arg=-Wno-unknown-warning-option "${check[@]}"
