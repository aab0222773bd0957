#!/usr/bin/env bash
# A Q4_K_M-style GGUF run as stored (ggml's Q4_K/Q6_K blocks multiplied in place) against our INT4
# RTN g32 engine of the same shape: `edgestudio-cli bench` on each, alternating, ROUNDS rounds of
# 3 runs each, medians of the rounds. Prints a Markdown table (docs/benchmarks.md keeps the
# figures, per processor).
#
# Usage: scripts/bench-kquant.sh [SHAPE] [WORKDIR] [ROUNDS] [THREADS]
#   SHAPE: a synth shape whose rows are whole 256-element super-blocks (default llama-3.2-1b)
#   WORKDIR: where the model files go (default /tmp/edge-kquant); existing files are reused
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${EDGE_CLI:-$root/build/app/cli/edgestudio-cli}"
shape="${1:-llama-3.2-1b}"
work="${2:-/tmp/edge-kquant}"
rounds="${3:-5}"
threads="${4:-2}"
mkdir -p "$work"
f16="$work/$shape-f16.gguf"
kq="$work/$shape-q4_k_m.gguf"
int4="$work/$shape-int4.edge"
plan="$work/int4-rtn-g32.json"
echo '{"version":1,"default":{"precision":"int4","method":"rtn","group_size":32}}' > "$plan"
[ -f "$kq" ] || "$cli" synth --shape "$shape" --type q4_k_m --out "$kq" >&2
if [ ! -f "$int4" ]; then
  [ -f "$f16" ] || "$cli" synth --shape "$shape" --type f16 --out "$f16" >&2
  "$cli" compile "$f16" --plan "$plan" --out "$int4" >&2
fi

# One bench run: "prefill decode" tokens/s (median of its 3 runs).
run() {
  "$cli" bench "$1" --threads "$threads" --prompt-tokens 128 --gen-tokens 64 --runs 3 --json 2>/dev/null |
    python3 -c 'import json,sys; r=json.load(sys.stdin)["results"][0]; print(r["prefill_tokens_per_second"], r["decode_tokens_per_second"])'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
: > "$work/.int4"; : > "$work/.kq"
for ((i = 1; i <= rounds; i++)); do
  run "$int4" >> "$work/.int4"
  run "$kq" >> "$work/.kq"
done
ip=$(cut -d' ' -f1 "$work/.int4" | median); id=$(cut -d' ' -f2 "$work/.int4" | median)
kp=$(cut -d' ' -f1 "$work/.kq" | median); kd=$(cut -d' ' -f2 "$work/.kq" | median)
cpu=$(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2 | sed 's/^ *//')
kernels=$("$cli" bench "$kq" --threads 1 --prompt-tokens 1 --gen-tokens 1 --runs 1 --json 2>/dev/null |
  python3 -c 'import json,sys; print(json.load(sys.stdin)["backend"])')
echo "$shape, $cpu, $threads threads, $rounds alternating rounds ($kernels)"
echo
printf '| %-40s | %12s | %12s | %10s |\n' "model" "prefill t/s" "decode t/s" "file"
printf '|%s|%s|%s|%s|\n' "------------------------------------------" "-------------:" "-------------:" "-----------:"
size() { stat -L -c %s "$1" | awk '{printf "%.2f GB", $1/1e9}'; }
printf '| %-40s | %12.1f | %12.1f | %10s |\n' "INT4 RTN g32 engine (.edge)" "$ip" "$id" "$(size "$int4")"
printf '| %-40s | %12.1f | %12.1f | %10s |\n' "Q4_K_M-style GGUF, as stored" "$kp" "$kd" "$(size "$kq")"
python3 -c "print(f'\nQ4_K_M / INT4: prefill {$kp/$ip:.2f}x, decode {$kd/$id:.2f}x')"
