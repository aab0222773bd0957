#!/usr/bin/env bash
# The sanitizer legs (docs/sanitizers.md): a separate g++ build with EDGE_SANITIZE, then the tests
# of the layers each leg covers, run as their GoogleTest binaries.
#   bash scripts/sanitize.sh asan   AddressSanitizer + UBSan: the engine's test binaries and the
#                                   remote tests (agent, protocol, client over the loopback sshd)
#   bash scripts/sanitize.sh tsan   ThreadSanitizer: the thread pool (core), KV, scheduler, runtime
#                                   and the remote tests (agent worker, telemetry pump, client)
#   bash scripts/sanitize.sh tsan-jobs  ThreadSanitizer over the studio's jobs: edge_view_jobs_tests
#                                   (JobSlot, the model document, streamed validation and
#                                   sensitivity, the board controller over the loopback sshd) with
#                                   Debian's uninstrumented QtCore; the hand-offs through Qt are
#                                   annotated (engine/core/tsan.h, views/models/job.h)
# Builds without LibTorch and CUDA, and (but for tsan-jobs) without Qt: uninstrumented third-party
# code would drown the reports.
# Prints the minutes each phase took; exits non-zero on the first failing binary.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
leg="${1:-asan}"
gui=OFF
extra=(edge-agent edgestudio-cli)  # the remote tests run both as processes
tsan_extra=""
case "$leg" in
  asan) san="address,undefined"; tests=(edge_core_tests edge_tokenizer_tests edge_model_tests edge_runtime_tests
          edge_kv_tests edge_sched_tests edge_quant_tests edge_compile_tests edge_backend_tests edge_cnn_tests
          edge_telemetry_tests edge_remote_tests) ;;
  tsan) san="thread"; tests=(edge_core_tests edge_kv_tests edge_sched_tests edge_runtime_tests edge_remote_tests) ;;
  # io_sync=0: no happens-before from file descriptors (glib's eventfd wake-up would otherwise
  # order Qt's queued calls by accident), so the queued calls' edges are the annotated ones only.
  tsan-jobs) san="thread"; gui=ON; extra=(); tsan_extra=":io_sync=0"; tests=(edge_view_jobs_tests) ;;
  *) echo "sanitize.sh: unknown leg '$leg' (asan, tsan or tsan-jobs)" >&2; exit 2 ;;
esac
build="${EDGE_SANITIZE_BUILD_DIR:-$root/build-$leg}"
export CCACHE_BASEDIR="${CCACHE_BASEDIR:-$root}" CCACHE_NOHASHDIR="${CCACHE_NOHASHDIR:-1}"
t0=$(date +%s)
cmake -S "$root" -B "$build" -G Ninja -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDGE_SANITIZE="$san" \
  -DEDGE_WITH_TORCH=OFF -DEDGE_WITH_CUDA=OFF -DEDGE_BUILD_GUI="$gui" >/dev/null
cmake --build "$build" -j "${EDGE_JOBS:-$(nproc)}" --target "${tests[@]}" "${extra[@]}"
t1=$(date +%s)
echo "[sanitize $leg] build: $(( (t1 - t0 + 30) / 60 )) min"
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=0:strict_string_checks=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:suppressions=$root/tests/sanitizers/tsan.supp$tsan_extra}"
cd "$build"
for t in "${tests[@]}"; do
  bin=$(find . -name "$t" -type f -perm -u+x | head -1)
  [ -n "$bin" ] || { echo "[sanitize $leg] $t was not built" >&2; exit 1; }
  s=$(date +%s)
  "$bin" --gtest_brief=1
  echo "[sanitize $leg] $t: passed in $(( $(date +%s) - s )) s"
done
echo "[sanitize $leg] tests: $(( ($(date +%s) - t1 + 30) / 60 )) min; total $(( ($(date +%s) - t0 + 30) / 60 )) min"
