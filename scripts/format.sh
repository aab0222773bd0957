#!/usr/bin/env bash
# Formats every tracked C++/CUDA source with the committed .clang-format, using Debian's
# clang-format-14 (the version the style is pinned to; other versions format differently).
#   bash scripts/format.sh           rewrite the files in place
#   bash scripts/format.sh --check   change nothing; list unformatted files and exit 1 if any
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
cf="${CLANG_FORMAT:-clang-format-14}"
if ! command -v "$cf" >/dev/null; then
  echo "format.sh: $cf not found (Debian package clang-format-14; scripts/install-deps.sh installs it)" >&2
  exit 2
fi
ver="$("$cf" --version)"
case "$ver" in
  *"version 14."*) ;;
  *) echo "format.sh: $cf is '$ver'; the style is pinned to clang-format 14" >&2; exit 2 ;;
esac
mapfile -t files < <(git ls-files '*.cpp' '*.h' '*.cu' '*.cuh' '*.cc' '*.hpp')
if [ "${1:-}" = "--check" ]; then
  bad=0
  for f in "${files[@]}"; do
    if ! "$cf" --dry-run --Werror "$f" >/dev/null 2>&1; then
      echo "not formatted: $f (run: bash scripts/format.sh)"
      bad=1
    fi
  done
  [ "$bad" = 0 ] && echo "format.sh: ${#files[@]} files formatted as .clang-format says"
  exit "$bad"
fi
printf '%s\n' "${files[@]}" | xargs -P "$(nproc)" -n 16 "$cf" -i
