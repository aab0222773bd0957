#!/usr/bin/env bash
# Long fuzz runs (issue 21, acceptance 1: an hour per target), several targets at a time, at the
# lowest CPU priority so that the machine stays usable, and a table of what each run did.
#
#   scripts/fuzz-long.sh [--build DIR] [--out DIR] [--seconds N | --cpu-seconds N] [--parallel K]
#                        [--only a,b]
#     --build DIR     the main build with the fuzzers (default build/: tests/fuzz/bin, seeds)
#     --out DIR       where corpora, logs and crash artifacts go (default DIR/tests/fuzz/long)
#     --seconds N     wall-clock seconds per target (default 3600)
#     --cpu-seconds N each target runs until its process has had N seconds of CPU (user + system),
#                     however long that takes beside other work; it is then interrupted (SIGINT:
#                     libFuzzer prints its final stats and exits 72, counted as a clean end).
#                     libFuzzer's -timeout is wall time, so a fuzzer starved at nice 19 beside a
#                     build reports inputs of 0.2 s as 10-s timeouts and stops: in this mode the
#                     wall-time watchdog is 600 s (hangs), and every slow unit (over 10 s of wall
#                     time) is run again alone; one that takes over 10 s alone is a finding.
#     --parallel K    targets running at once (default: the number of processors)
#     --only a,b      these targets (names without fuzz_), default every built one
#
# The fuzzers are copied into OUT/bin first, so a rebuild during the run does not touch them.
# Each target starts from its seeds plus what an earlier long run in OUT left (random libFuzzer
# seed, its dictionary when tests/fuzz/dict/<name>.dict exists, the ctest run's limits). The
# table: wall seconds, CPU seconds the run got (runs share the processors), executions, final
# coverage counters, corpus size, findings (crash, leak, timeout and OOM inputs libFuzzer wrote)
# and slow units (inputs over 10 s, written as slow-unit-*: a report, not a failure; with many
# runs sharing the processors at the lowest priority they are mostly a starved process, so the
# table gives each one's time when rerun alone).
# Exit status 1 when any run left a finding or ended with an error.
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$here/build"
out=""
seconds=3600
cpu_seconds=0
parallel="$(nproc)"
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="${2:?}"; shift 2 ;;
    --out) out="${2:?}"; shift 2 ;;
    --seconds) seconds="${2:?}"; shift 2 ;;
    --cpu-seconds) cpu_seconds="${2:?}"; seconds=$(( ${2:?} * 1000 )); shift 2 ;;
    --parallel) parallel="${2:?}"; shift 2 ;;
    --only) only=",${2:?},"; shift 2 ;;
    -h|--help) sed -n '2,28p' "$0"; exit 0 ;;
    *) echo "fuzz-long: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
fuzz="$build/tests/fuzz"
out="${out:-$fuzz/long}"
[ -d "$fuzz/bin" ] || { echo "fuzz-long: no fuzzers in $fuzz/bin (ninja -C $build edge_fuzzers edge_fuzz_seeds)" >&2; exit 1; }
[ -x /usr/bin/time ] || { echo "fuzz-long: /usr/bin/time not found (apt-get install time)" >&2; exit 1; }
mkdir -p "$out/bin" "$out/logs" "$out/artifacts"

targets=()
for bin in "$fuzz"/bin/fuzz_*; do
  name="$(basename "$bin")"; name="${name#fuzz_}"
  if [ -n "$only" ] && [[ "$only" != *",$name,"* ]]; then continue; fi
  cp "$bin" "$out/bin/fuzz_$name"
  targets+=("$name")
done
[ ${#targets[@]} -gt 0 ] || { echo "fuzz-long: no target matches '$only'" >&2; exit 2; }

run_one() {
  local name="$1" corpus="$out/corpus/$1" dict="$here/tests/fuzz/dict/$1.dict" dict_arg=()
  mkdir -p "$corpus" "$out/artifacts/$name"
  if [ -d "$fuzz/seeds/$name" ]; then cp -rn "$fuzz/seeds/$name"/. "$corpus"/; fi
  [ -f "$dict" ] && dict_arg=(-dict="$dict")
  local rc=0 timeout=10
  [ "$cpu_seconds" -gt 0 ] && timeout=600
  # Its own session (setsid), so its own scheduler autogroup, set to nice 19 as well: with
  # autogroups on (Debian's default) a process's nice only ranks it inside its group, and the
  # groups share the processors equally, so `nice -n 19` alone still took half of them from a
  # build or benchmark started in another session (a 2-thread benchmark ran at one core's speed).
  nice -n 19 setsid sh -c 'echo 19 >/proc/self/autogroup 2>/dev/null; exec "$@"' sh \
    /usr/bin/time -f '%e %U %S %M' -o "$out/logs/$name.time" \
    "$out/bin/fuzz_$name" "${dict_arg[@]}" -max_total_time="$seconds" -rss_limit_mb=2048 \
    -malloc_limit_mb=1024 -timeout="$timeout" -report_slow_units=10 -print_final_stats=1 \
    -artifact_prefix="$out/artifacts/$name/" "$corpus" >"$out/logs/$name.log" 2>&1 &
  local timer=$!
  if [ "$cpu_seconds" -gt 0 ]; then
    # The fuzzer is /usr/bin/time's child; its CPU time is fields 14 + 15 of /proc/PID/stat.
    local pid="" ticks used=0
    ticks="$(getconf CLK_TCK)"
    while kill -0 "$timer" 2>/dev/null; do
      sleep 5
      [ -n "$pid" ] || pid="$(pgrep -P "$timer" | head -1 || true)"
      [ -n "$pid" ] || continue
      used="$(awk -v t="$ticks" '{ sub(/^.*\) /, ""); print int(($12 + $13) / t) }' "/proc/$pid/stat" 2>/dev/null || echo 0)"
      if [ "$used" -ge "$cpu_seconds" ]; then kill -INT "$pid" 2>/dev/null || true; break; fi
    done
  fi
  wait "$timer" || rc=$?
  # 72: libFuzzer's exit status when interrupted, which is how a --cpu-seconds run ends.
  if [ "$cpu_seconds" -gt 0 ] && [ "$rc" = 72 ]; then rc=0; fi
  echo "$rc" >"$out/logs/$name.rc"
}
export -f run_one
export out fuzz here seconds cpu_seconds
budget="${seconds} s"; [ "$cpu_seconds" -gt 0 ] && budget="${cpu_seconds} CPU s"
echo "fuzz-long: ${#targets[@]} targets, ${budget} each, ${parallel} at a time, logs in $out/logs ($(date -u +%FT%TZ))"
printf '%s\n' "${targets[@]}" | xargs -P "$parallel" -I{} bash -c 'run_one "$@"' _ {}

status=0
printf '| target | wall s | CPU s | executions | cov | ft | corpus | peak RSS MiB | findings | slow units (rerun alone) |\n'
printf '|---|---:|---:|---:|---:|---:|---:|---:|---:|---|\n'
for name in "${targets[@]}"; do
  log="$out/logs/$name.log"
  read -r wall user sys rss < <(tail -n 1 "$out/logs/$name.time") || true
  execs="$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo '?')"
  last="$(grep -E '#[0-9]+.*cov: [0-9]+' "$log" | tail -1)"
  cov="$(sed -n 's/.*cov: \([0-9]*\).*/\1/p' <<<"$last")"
  ft="$(sed -n 's/.*ft: \([0-9]*\).*/\1/p' <<<"$last")"
  inputs="$(find "$out/corpus/$name" -type f | wc -l)"
  found="$(find "$out/artifacts/$name" -type f ! -name 'slow-unit-*' | wc -l)"
  slow=""
  while IFS= read -r unit; do
    t0=$(date +%s.%N)
    "$out/bin/fuzz_$name" -runs=1 "$unit" >/dev/null 2>&1 || true
    alone="$(awk -v a="$t0" -v b="$(date +%s.%N)" 'BEGIN{printf "%.2f", b - a}')"
    slow+="$alone s "
    # (--cpu-seconds: a unit slow even alone is what -timeout=10 would have reported.)
    if [ "$cpu_seconds" -gt 0 ] && awk -v t="$alone" 'BEGIN{exit !(t > 10)}'; then found=$((found + 1)); fi
  done < <(find "$out/artifacts/$name" -type f -name 'slow-unit-*')
  rc="$(cat "$out/logs/$name.rc")"
  cpu="$(awk -v u="${user:-0}" -v s="${sys:-0}" 'BEGIN{printf "%.0f", u+s}')"
  printf '| fuzz_%s | %.0f | %s | %s | %s | %s | %s | %d | %s | %s |\n' "$name" "${wall:-0}" "$cpu" "$execs" \
    "${cov:-?}" "${ft:-?}" "$inputs" "$(( ${rss:-0} / 1024 ))" "$found$([ "$rc" = 0 ] || echo " (exit $rc)")" \
    "${slow:-none}"
  if [ "$found" -gt 0 ] || [ "$rc" != 0 ]; then status=1; fi
done
exit "$status"
