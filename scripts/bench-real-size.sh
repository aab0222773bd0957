#!/usr/bin/env bash
# Time and peak resident memory (VmHWM, file pages included: GNU time's %M) of each phase of the
# user's path on a synthesized model at a real shape: synth -> info -> tokenize -> quantize (INT4
# RTN g32) -> compile the plan -> generate 16 tokens from the engine, then from the F16 file itself
# (its weights run as stored) [-> quantize INT4 GPTQ g32].
# With --hf the model is a BF16 Hugging Face folder (sharded safetensors, config.json, a
# byte-level BPE tokenizer.json with Llama 3's special tokens) instead of the F16 GGUF.
# Prints a Markdown table (docs/benchmarks.md keeps the figures).
#
# Usage: scripts/bench-real-size.sh SHAPE [WORKDIR] [--gptq] [--hf] [--sensitivity] [--analyze]
#   SHAPE: a synth shape (edgestudio-cli synth --list): llama-3.2-1b, llama-3.2-3b, llama-3-8b, ...
#   WORKDIR: where the model files go (default /tmp/edge-real-size; an 8B F16 file is 16 GB)
# The page cache is dropped before each phase when the kernel allows it (root), so every phase
# reads its input from disk as a first run would.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${EDGE_CLI:-$root/build/app/cli/edgestudio-cli}"
shape="${1:?usage: bench-real-size.sh SHAPE [WORKDIR] [--gptq]}"
work="${2:-/tmp/edge-real-size}"
gptq=0
hf=0
sens=0
analyze=0
for a in "$@"; do
  [ "$a" = "--analyze" ] && analyze=1
  [ "$a" = "--gptq" ] && gptq=1
  [ "$a" = "--sensitivity" ] && sens=1
  [ "$a" = "--hf" ] && hf=1
done
case "$work" in --*) work=/tmp/edge-real-size ;; esac
mkdir -p "$work"
model="$work/$shape-f16.gguf"
[ "$hf" = 1 ] && model="$work/$shape-bf16-hf"
plan="$work/int4-rtn-g32.json"
gplan="$work/int4-gptq-g32.json"
echo '{"version":1,"default":{"precision":"int4","method":"rtn","group_size":32}}' > "$plan"
echo '{"version":1,"default":{"precision":"int4","method":"gptq","group_size":32}}' > "$gplan"
calib="$root/../shared/data/tinystories_sample.txt"

drop_caches() { sync; echo 1 > /proc/sys/vm/drop_caches 2>/dev/null || true; }
printf '| %-34s | %9s | %10s |\n' "phase ($shape, $(nproc) threads)" "time" "peak RSS"
printf '|%s|%s|%s|\n' "------------------------------------" "-----------" "------------"
phase() {
  local name="$1"; shift
  drop_caches
  local out="$work/.time"
  if ! /usr/bin/time -f '%e %M' -o "$out" "$@" > "$work/.stdout" 2> "$work/.stderr"; then
    echo "phase '$name' failed:" >&2; tail -5 "$work/.stderr" >&2; exit 1
  fi
  read -r secs kb < <(tail -1 "$out")
  printf '| %-34s | %7.1f s | %6d MiB |\n' "$name" "$secs" "$((kb / 1024))"
}
if [ "$hf" = 1 ]; then
  [ -f "$model/config.json" ] || phase "synth (BF16 HF folder, BPE vocab)" "$cli" synth --shape "$shape" --out "$model" \
    --format hf --type bf16 --tokenizer bpe
else
  [ -f "$model" ] || phase "synth (F16 GGUF)" "$cli" synth --shape "$shape" --out "$model" --type f16
fi
phase "info" "$cli" info "$model" --no-tensors
phase "tokenize" "$cli" tokenize "$model" --text "Once upon a time there was a little robot."
phase "quantize INT4 RTN g32 -> .edgeq" "$cli" quantize "$model" --plan "$plan" --out "$work/$shape-int4.edgeq"
phase "compile INT4 RTN g32 -> .edge" "$cli" compile "$model" --plan "$plan" --out "$work/$shape-int4.edge"
phase "generate -n 16 (the .edge engine)" "$cli" generate "$work/$shape-int4.edge" --prompt "Once upon a time" -n 16 --temperature 0
phase "generate -n 16 (the $( [ "$hf" = 1 ] && echo "BF16 folder" || echo "F16 GGUF") as stored)" "$cli" generate "$model" --prompt "Once upon a time" -n 16 --temperature 0
if [ "$gptq" = 1 ]; then
  phase "quantize INT4 GPTQ g32 -> .edgeq" "$cli" quantize "$model" --plan "$gplan" --calib "$calib" \
    --calib-sequences 8 --calib-len 128 --out "$work/$shape-gptq.edgeq"
fi
if [ "$sens" = 1 ]; then
  phase "sensitivity INT4 RTN g32 (2 x 64 tokens)" "$cli" sensitivity "$model" --calib "$calib" \
    --calib-sequences 2 --calib-len 64 --out "$work/$shape-sensitivity.json"
fi
if [ "$analyze" = 1 ]; then
  # The LibTorch statistics block by block (one short window per batch, two Lanczos steps: the
  # memory it holds at this shape, not a useful spectrum; the defaults take hours at 1B on 2 cores).
  phase "analyze (gradients + Hessian, 32 tokens)" "$cli" analyze "$model" --calib "$calib" --no-quant \
    --calib-sequences 2 --batches 2 --batch-size 1 --seq-len 32 --hessian-sequences 1 --lanczos-steps 2 --topk 1 \
    --out "$work/$shape-analysis.json"
fi
du -sb "$model" | awk '{printf "  %s  %.2f GB\n", $2, $1/1e9}'
ls -l "$work/$shape-int4.edgeq" "$work/$shape-int4.edge" | awk '{printf "  %s  %.2f GB\n", $9, $5/1e9}'
