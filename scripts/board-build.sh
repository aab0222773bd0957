#!/usr/bin/env bash
# Builds edge-agent ON the board with the board's own compiler (and nvcc when it has one, e.g.
# JetPack's /usr/local/cuda), then installs it where `edgestudio-cli deploy` puts agents: a new
# version folder <root>/versions/<version>/ holding the fresh edge-agent plus hard links to the
# files of the live version (the engine), a SHA256SUMS manifest, and an atomic switch of
# <root>/current (the old one becomes <root>/previous, so `rollback` works). docs/cross.md.
#
# Usage: scripts/board-build.sh [options] BOARD
#   BOARD               user@host or an alias from ~/.ssh/config
#   --root DIR          the board folder (default /opt/edgestudio)
#   --version V         name of the new version folder (default: UTC time, e.g. 20261201T041500Z-src)
#   --cuda auto|on|off  auto (default): on when the board has nvcc (PATH or /usr/local/cuda/bin)
#   --jobs N            parallel compile jobs on the board (default: its nproc)
#   --no-switch         build and fill the version folder, but leave `current` as it is
#   --work-dir DIR      build folder on the board (default ~/.cache/edgestudio/agent-build): kept
#                       between runs, so a rebuild is incremental (and ccache hits)
#   -p PORT, -i KEY, -o OPTION, -F CONFIG   passed to ssh
#
# What is sent: `git archive` of the agent's sources (CMakeLists.txt cmake/ engine/ remote/) from
# the working tree's tracked files (`git stash create`, so uncommitted edits are included). The
# board needs: cmake >= 3.25, a C++20 compiler (g++ >= 11), pkg-config, and the -dev packages of
# lz4, zlib, pcre2, nlohmann-json and xxhash (ninja and ccache are used when present).
set -euo pipefail

die() { echo "board-build: $*" >&2; exit 1; }
root_dir=/opt/edgestudio
version=""
cuda=auto
jobs=""
switch=1
work_dir=""
ssh_args=(-o BatchMode=yes)
board=""
while [ $# -gt 0 ]; do
  case "$1" in
    --root) root_dir="${2:?--root needs a value}"; shift 2 ;;
    --version) version="${2:?--version needs a value}"; shift 2 ;;
    --cuda) cuda="${2:?--cuda needs a value}"; shift 2 ;;
    --jobs) jobs="${2:?--jobs needs a value}"; shift 2 ;;
    --no-switch) switch=0; shift ;;
    --work-dir) work_dir="${2:?--work-dir needs a value}"; shift 2 ;;
    -p|-i|-o|-F) [ $# -ge 2 ] || die "$1 needs a value"; ssh_args+=("$1" "$2"); shift 2 ;;
    -h|--help) sed -n '2,24p' "$0"; exit 0 ;;
    -*) die "unknown option '$1' (see --help)" ;;
    *) [ -z "$board" ] || die "more than one board given ('$board', '$1')"; board="$1"; shift ;;
  esac
done
[ -n "$board" ] || die "no board given (see --help)"
case "$cuda" in auto|on|off) ;; *) die "--cuda must be auto, on or off (got '$cuda')" ;; esac
case "$root_dir" in /*) ;; *) die "--root must be an absolute path on the board (got '$root_dir')" ;; esac
[ -z "$jobs" ] || [[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "--jobs must be a positive number (got '$jobs')"
[ -n "$version" ] || version="$(date -u +%Y%m%dT%H%M%SZ)-src"
[[ "$version" =~ ^[A-Za-z0-9._-]+$ ]] && [ "$version" != . ] && [ "$version" != .. ] ||
  die "--version may hold letters, digits, '.', '_' and '-' only (got '$version')"

src="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
git -C "$src" rev-parse --git-dir >/dev/null 2>&1 || die "$src is not a git checkout (the bundle is a git archive)"
tree="$(git -C "$src" stash create 2>/dev/null || true)"
[ -n "$tree" ] || tree=HEAD
bundle="$(mktemp "${TMPDIR:-/tmp}/edge-agent-src.XXXXXX")"
trap 'rm -f "$bundle"' EXIT
git -C "$src" archive --format=tar "$tree" -- CMakeLists.txt cmake engine remote | gzip -1 > "$bundle"
sum="$(sha256sum "$bundle" | cut -d' ' -f1)"
echo "board-build: bundle $(du -k "$bundle" | cut -f1) KiB, sha256 ${sum:0:16}..., from $(git -C "$src" rev-parse --short HEAD)$([ "$tree" = HEAD ] || echo ' + working tree')"

q() { printf '%q' "$1"; }
stage="$root_dir/build/$version"
# 1. the bundle, checked on the board
ssh "${ssh_args[@]}" "$board" "mkdir -p $(q "$stage") && cat > $(q "$stage/src.tar.gz") && cd $(q "$stage") && echo '$sum  src.tar.gz' | sha256sum -c --quiet" < "$bundle" ||
  die "$board: uploading the source bundle to $stage failed (see above)"

# 2. configure, build, smoke-test and install on the board
ssh "${ssh_args[@]}" "$board" bash -s -- "$(q "$root_dir")" "$(q "$version")" "$cuda" "${jobs:-0}" "$switch" "$(q "$work_dir")" <<'REMOTE'
set -euo pipefail
root="$1" version="$2" cuda="$3" jobs="$4" switch="$5" work="${6:-}"
stage="$root/build/$version"
host="$(hostname)"
die() { echo "board-build ($host): $*" >&2; exit 1; }
shopt -s nullglob
# One stable build folder per board user: sources replaced, build tree kept (incremental).
[ -n "$work" ] || work="${XDG_CACHE_HOME:-$HOME/.cache}/edgestudio/agent-build"
mkdir -p "$work"
if command -v flock >/dev/null; then exec 9>"$work.lock"; flock 9; fi  # one board-build at a time
# The bundle is unpacked at $work/tree and built in $work/tree/build: the layout of a checkout and
# its build/ folder, so that with ccache (paths relative to the tree) the commands of the
# translation units that do not depend on the CUDA setting are those of a host build of the same
# sources, which are then cache hits (a host that builds the project and then its own agent, as
# the test command does, compiles them once).
tree="$work/tree"
rm -rf "$work/src" "$work/build"  # (the layout before: sources and build tree side by side)
mkdir -p "$tree"
find "$tree" -mindepth 1 -maxdepth 1 ! -name build -exec rm -rf {} +
tar -xzf "$stage/src.tar.gz" -C "$tree"
cd "$stage"
command -v cmake >/dev/null || die "cmake is not installed (need >= 3.25)"
cm="$(cmake --version | sed -n 's/^cmake version \([0-9]*\)\.\([0-9]*\).*/\1 \2/p')"
set -- $cm
{ [ "${1:-0}" -gt 3 ] || { [ "${1:-0}" -eq 3 ] && [ "${2:-0}" -ge 25 ]; }; } || die "cmake $(cmake --version | head -1) is too old (need >= 3.25; e.g. pip3 install cmake)"
command -v c++ >/dev/null || die "no C++ compiler (c++) on the board"
if [ "$cuda" = auto ]; then
  if command -v nvcc >/dev/null || [ -x /usr/local/cuda/bin/nvcc ]; then cuda=on; else cuda=off; fi
fi
args=(-DEDGE_AGENT_ONLY=ON -DEDGE_BUILD_TESTS=OFF -DCMAKE_BUILD_TYPE=RelWithDebInfo)
if [ "$cuda" = on ]; then
  export PATH="$PATH:/usr/local/cuda/bin"
  command -v nvcc >/dev/null || die "--cuda on, but there is no nvcc on the board"
  args+=(-DEDGE_WITH_CUDA=ON -DCMAKE_CUDA_COMPILER="$(command -v nvcc)")
else
  args+=(-DEDGE_WITH_CUDA=OFF)
fi
if command -v ninja >/dev/null; then args+=(-G Ninja); fi
if command -v ccache >/dev/null; then
  # Paths relative to the tree, no working-directory hash: rebuilds (and identical sources
  # elsewhere on the board, laid out the same way) are cache hits.
  export CCACHE_BASEDIR="$tree" CCACHE_NOHASHDIR=1
  args+=(-DCMAKE_CXX_COMPILER_LAUNCHER=ccache -DCMAKE_C_COMPILER_LAUNCHER=ccache)
fi
[ "$jobs" -gt 0 ] || jobs="$(nproc)"
echo "board-build ($host): $(c++ --version | head -1); cmake $(cmake --version | head -1 | cut -d' ' -f3); CUDA $cuda; $jobs jobs"
t0=$(date +%s)
cmake -S "$tree" -B "$tree/build" "${args[@]}" > configure.log 2>&1 || { tail -30 configure.log >&2; die "configure failed (log: $stage/configure.log)"; }
cmake --build "$tree/build" --target edge-agent --parallel "$jobs" > build.log 2>&1 || { tail -40 build.log >&2; die "build failed (log: $stage/build.log)"; }
agent="$tree/build/remote/edge-agent"
"$agent" --version > version.txt 2>&1 || { cat version.txt >&2; die "the built agent does not run"; }
echo "board-build ($host): built $(cat version.txt) in $(( $(date +%s) - t0 )) s"

# Install: a new version folder beside deploy's, the live version's other files hard-linked in.
dest="$root/versions/$version"
[ ! -e "$dest" ] || die "$dest exists already (choose another --version)"
live=""
[ -L "$root/current" ] && live="$(readlink "$root/current")"
mkdir -p "$dest.part"
if [ -n "$live" ]; then
  for f in "$root/$live"/*; do
    n="$(basename "$f")"
    case "$n" in edge-agent|SHA256SUMS|*.part) continue ;; esac
    ln "$f" "$dest.part/$n" 2>/dev/null || cp -p "$f" "$dest.part/$n"
  done
fi
cp "$agent" "$dest.part/edge-agent"
chmod 0755 "$dest.part/edge-agent"
(cd "$dest.part" && for f in *; do [ "$f" = SHA256SUMS ] || sha256sum -b "$f"; done > SHA256SUMS)
mv -T "$dest.part" "$dest"
echo "board-build ($host): installed $dest ($(ls "$dest" | tr '\n' ' '))"
if [ "$switch" = 1 ]; then
  cd "$root"
  if [ -n "$live" ]; then ln -sfn "$live" .previous.new && mv -Tf .previous.new previous; fi
  ln -sfn "versions/$version" .current.new && mv -Tf .current.new current
  echo "board-build ($host): current -> versions/$version${live:+ (previous -> $live)}"
fi
rm -f "$stage/src.tar.gz"
REMOTE
