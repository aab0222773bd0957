#!/usr/bin/env bash
# Our compiled INT4 g32 and INT8 engines against llama.cpp's Q4_0 and Q8_0 of the same F16 weights
# (issue 19, acceptance 1): prefill at 128 and 512 tokens and decode, same host, runs alternating
# (ours INT4, llama.cpp Q4_0, ours INT8, llama.cpp Q8_0) for ROUNDS rounds, medians of the rounds,
# printed as a Markdown table with the ratios. llama.cpp is built outside the project (commands in
# docs/benchmarks.md) and never used by the tests.
#
# Usage: scripts/bench-vs-llamacpp.sh LLAMA_BIN WORKDIR [ROUNDS] [THREADS]
#   LLAMA_BIN  llama.cpp's bin folder (llama-bench)
#   WORKDIR    holds int4.edge, int8.edge (our `compile` of the F16 file with the INT4 RTN g32 and
#              the default INT8 plans), q4_0.gguf and q8_0.gguf (llama-quantize of the same file)
#   EDGE_KERNELS in the environment caps our kernel family (e.g. avx2 beside a llama.cpp built
#   with -DGGML_NATIVE=OFF -DGGML_AVX2=ON -DGGML_AVX512=OFF: the AVX2-only host's instructions).
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${EDGE_CLI:-$root/build/app/cli/edgestudio-cli}"
bin="${1:?llama.cpp bin folder}"
work="${2:?work folder}"
rounds="${3:-3}"
threads="${4:-2}"
for f in int4.edge int8.edge q4_0.gguf q8_0.gguf; do
  [ -f "$work/$f" ] || { echo "bench-vs-llamacpp: $work/$f is missing (see the usage)" >&2; exit 1; }
done
[ -x "$bin/llama-bench" ] || { echo "bench-vs-llamacpp: no $bin/llama-bench" >&2; exit 1; }

# Ours: "pp128 pp512 decode" tokens/s, each the median of the command's 3 runs.
ours() {
  local a b
  a=$("$cli" bench "$1" --threads "$threads" --prompt-tokens 128 --gen-tokens 32 --runs 3 --json 2>/dev/null)
  b=$("$cli" bench "$1" --threads "$threads" --prompt-tokens 512 --gen-tokens 0 --runs 3 --json 2>/dev/null)
  python3 -c 'import json,sys; a=json.loads(sys.argv[1])["results"][0]; b=json.loads(sys.argv[2])["results"][0]
print(a["prefill_tokens_per_second"], b["prefill_tokens_per_second"], a["decode_tokens_per_second"])' "$a" "$b"
}
# llama.cpp: the same three figures (llama-bench's mean of 3 repetitions).
theirs() {
  "$bin/llama-bench" -m "$1" -p 128,512 -n 32 -t "$threads" -r 3 -o json 2>/dev/null | python3 -c '
import json, sys
rows = json.load(sys.stdin)
ts = {(r["n_prompt"], r["n_gen"]): r["avg_ts"] for r in rows}
print(ts[(128, 0)], ts[(512, 0)], ts[(0, 32)])'
}
median() { sort -g | awk '{a[NR]=$1} END {print (NR%2 ? a[(NR+1)/2] : (a[NR/2]+a[NR/2+1])/2)}'; }
col() { cut -d' ' -f"$1" "$2" | median; }

for k in int4 q4_0 int8 q8_0; do : > "$work/.$k"; done
for ((i = 1; i <= rounds; i++)); do
  echo "round $i: $(date -u +%H:%M:%S)" >&2
  ours "$work/int4.edge" | tee -a "$work/.int4" >&2
  theirs "$work/q4_0.gguf" | tee -a "$work/.q4_0" >&2
  ours "$work/int8.edge" | tee -a "$work/.int8" >&2
  theirs "$work/q8_0.gguf" | tee -a "$work/.q8_0" >&2
done

echo "CPU: $(grep -m1 'model name' /proc/cpuinfo | cut -d: -f2- | xargs); ${threads} threads; our kernels: ${EDGE_KERNELS:-auto}; ${rounds} rounds, medians"
echo
echo "| ours | prefill 128 | prefill 512 | decode | llama.cpp | prefill 128 | prefill 512 | decode | ours / llama.cpp |"
echo "|---|---:|---:|---:|---|---:|---:|---:|---|"
for pair in "int4 q4_0 INT4_g32 Q4_0" "int8 q8_0 INT8_g32 Q8_0"; do
  read -r a b an bn <<<"$pair"
  a1=$(col 1 "$work/.$a"); a2=$(col 2 "$work/.$a"); a3=$(col 3 "$work/.$a")
  b1=$(col 1 "$work/.$b"); b2=$(col 2 "$work/.$b"); b3=$(col 3 "$work/.$b")
  awk -v an="${an/_/ }" -v bn="$bn" -v a1="$a1" -v a2="$a2" -v a3="$a3" -v b1="$b1" -v b2="$b2" -v b3="$b3" 'BEGIN {
    printf "| %s | %.1f | %.1f | %.1f | %s | %.1f | %.1f | %.1f | pp128 %.2fx, pp512 %.2fx, decode %.2fx |\n",
      an, a1, a2, a3, bn, b1, b2, b3, a1 / b1, a2 / b2, a3 / b3 }'
done
