#!/usr/bin/env bash
# Line coverage of each reader by its fuzz corpus (issue 21, acceptance 1), measured with
# clang's source-based coverage and llvm-cov: the fuzz project (tests/fuzz/project) is built
# once more with -DEDGE_FUZZ_COVERAGE=ON (coverage instrumentation instead of ASan/UBSan), each
# target optionally fuzzes for SECONDS to grow its corpus, then runs every input of the corpus
# once (-runs=0), and llvm-cov reports the lines of the target's reader files that ran.
#
#   scripts/fuzz-coverage.sh [--build DIR] [--corpus DIR] [--seconds N] [--only NAME[,NAME]]
#     --build DIR    the main build (default build/): its tests/fuzz/work/<name> corpora (what
#                    ctest's fuzz runs left) or, when absent, tests/fuzz/seeds/<name>
#     --corpus DIR   corpora from elsewhere, DIR/<name> (a long run's, say)
#     --seconds N    fuzz each target N seconds with the coverage build first (default 0)
# Prints one row per target: reader files, corpus inputs, lines covered / lines, percent. Needs
# clang++ and llvm-profdata/llvm-cov (Debian packages clang and llvm, scripts/install-deps.sh).
set -euo pipefail
here="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
build="$here/build"
corpus_root=""
seconds=0
only=""
while [ $# -gt 0 ]; do
  case "$1" in
    --build) build="${2:?}"; shift 2 ;;
    --corpus) corpus_root="${2:?}"; shift 2 ;;
    --seconds) seconds="${2:?}"; shift 2 ;;
    --only) only=",${2:?},"; shift 2 ;;
    -h|--help) sed -n '2,14p' "$0"; exit 0 ;;
    *) echo "fuzz-coverage: unknown argument '$1' (see --help)" >&2; exit 2 ;;
  esac
done
# Absolute, as it becomes the coverage build's output folder (a relative one landed inside it).
build="$(cd "$build" && pwd)"
for tool in clang++ llvm-profdata llvm-cov; do
  command -v "$tool" >/dev/null || { echo "fuzz-coverage: $tool not found (apt-get install clang llvm)" >&2; exit 1; }
done

# target -> the reader files its corpus is measured on (relative to the checkout); FILE@REGEX
# counts only the functions of FILE whose (mangled) names match REGEX, FILE@!REGEX the others
# (hf_config.cpp holds three readers, each with its own fuzzer; writers, the plan's resolution
# against a model and libssh's fingerprints share files with readers and are not readers)
declare -A readers=(
  [gguf]="engine/model/gguf.cpp engine/model/gguf_value.cpp engine/model/gguf_import.cpp engine/model/ggml_dequant.cpp"
  [safetensors]="engine/model/safetensors.cpp@!serialize_safetensors|encode_f32_as|open_safetensors|write_safetensors|storage_name|SafetensorsFile4find"
  [onnx]="engine/model/onnx_reader.cpp engine/model/onnx.cpp"
  [edge]="engine/model/edge_reader.cpp"
  [edgeq]="engine/model/edgeq.cpp@!EdgeqWriter|save_edgeq"
  [hf_config]="engine/model/hf_config.cpp@!parse_generation_config|parse_tokenizer_config"
  [generation_config]="engine/model/hf_config.cpp@parse_generation_config"
  [tokenizer_config]="engine/model/hf_config.cpp@parse_tokenizer_config"
  [tokenizer_json]="engine/tokenizer/hf_json.cpp engine/tokenizer/gguf_translate.cpp"
  [plan]="engine/quant/plan.cpp@!resolve_plan|glob_match|uniform_plan|apply_rule|load_plan|precision_name"
  [workload]="engine/sched/workload.cpp"
  [protocol]="remote/protocol/frame.cpp remote/protocol/handshake.cpp remote/protocol/messages.cpp"
  [llama2c]="engine/model/llama2c.cpp"
  [llama2c_q80]="engine/quant/llama2c_q80.cpp"
  [llama2c_tokenizer]="engine/tokenizer/llama2c_loader.cpp"
  [kv_trace]="engine/kv/trace.cpp"
  [boards]="remote/client/boards.cpp"
  [cost_model]="engine/runtime/cost_model_json.cpp@!cost_model_to_json"
  [known_hosts]="remote/client/known_hosts.cpp@!known_fingerprints|key_fingerprint"
  [project]="views/models/project_file.cpp views/models/configuration_json.cpp engine/quant/sensitivity_json.cpp"
  [chat_template]="engine/tokenizer/chat_template.cpp engine/tokenizer/chat_template_lex.cpp engine/tokenizer/chat_template_parse.cpp engine/tokenizer/chat_template_eval.cpp engine/tokenizer/chat_template_filters.cpp engine/tokenizer/chat_template_methods.cpp engine/tokenizer/chat_template_value.cpp"
)

cov="$build/fuzz-coverage"
mkdir -p "$cov"
gen=()
command -v ninja >/dev/null && gen=(-G Ninja)
cmake -S "$here/tests/fuzz/project" -B "$cov/build" "${gen[@]}" -DCMAKE_CXX_COMPILER=clang++ \
  -DCMAKE_BUILD_TYPE=RelWithDebInfo -DEDGE_SOURCE_DIR="$here" -DEDGE_FUZZ_COVERAGE=ON \
  -DCMAKE_RUNTIME_OUTPUT_DIRECTORY="$cov/bin" >"$cov/configure.log" 2>&1 || { cat "$cov/configure.log"; exit 1; }
cmake --build "$cov/build" --parallel "$(nproc)" >"$cov/build.log" 2>&1 || { tail -30 "$cov/build.log"; exit 1; }

printf '| target | reader files | inputs | lines covered | line coverage |\n|---|---|---:|---:|---:|\n'
for bin in "$cov"/bin/fuzz_*; do
  name="$(basename "$bin")"; name="${name#fuzz_}"
  [ -z "$only" ] || [[ "$only" == *",$name,"* ]] || continue
  files="${readers[$name]:-}"
  if [ -z "$files" ]; then echo "| $name | (no reader listed in scripts/fuzz-coverage.sh) | | | |"; continue; fi
  src=""
  for c in "$corpus_root/$name" "$build/tests/fuzz/work/$name" "$build/tests/fuzz/seeds/$name"; do
    if [ -n "$c" ] && [ -d "$c" ] && [ -n "$(ls -A "$c" 2>/dev/null)" ]; then src="$c"; break; fi
  done
  work="$cov/corpus/$name"
  rm -rf "$work" && mkdir -p "$work"
  [ -z "$src" ] || cp -r "$src"/. "$work"/
  rm -f "$work/stamp"
  dict="$here/tests/fuzz/dict/$name.dict"
  args=(-rss_limit_mb=2048 -malloc_limit_mb=1024 -timeout=10)
  [ -f "$dict" ] && args+=(-dict="$dict")
  export LLVM_PROFILE_FILE="$cov/$name-%p.profraw"
  rm -f "$cov/$name"-*.profraw
  if [ "$seconds" -gt 0 ]; then
    "$bin" "${args[@]}" -max_total_time="$seconds" "$work" >"$cov/$name.fuzz.log" 2>&1 || true
    rm -f "$cov/$name"-*.profraw
  fi
  "$bin" "${args[@]}" -runs=0 "$work" >"$cov/$name.run.log" 2>&1 || true
  llvm-profdata merge -sparse "$cov/$name"-*.profraw -o "$cov/$name.profdata"
  if [[ "$files" == *@* ]]; then  # one file, some of its functions
    file="${files%%@*}" re="${files#*@}" neg=0
    if [[ "$re" == !* ]]; then neg=1; re="${re#!}"; fi
    total="$(llvm-cov report -show-functions "$bin" -instr-profile="$cov/$name.profdata" "$here/$file" |
      awk -v re="$re" -v neg="$neg" 'NF >= 10 && $1 != "Name" && $1 != "TOTAL" && $1 !~ /^-/ {
          m = ($1 ~ re); if (neg) m = !m; if (m) { l += $5; x += $6 } }
        END { printf "%d %d %.2f%%", l, x, l ? 100 * (l - x) / l : 0 }')"
    shown="${re//|/ or }"
    if [ "$neg" = 1 ]; then files="$file (all but $shown)"; else files="$file ($shown)"; fi
  else
    paths=()
    for f in $files; do paths+=("$here/$f"); done
    total="$(llvm-cov report "$bin" -instr-profile="$cov/$name.profdata" "${paths[@]}" | awk '/^TOTAL/ {print $8, $9, $10}')"
  fi
  read -r lines missed pct <<<"$total"
  inputs="$(find "$work" -type f | wc -l)"
  printf '| fuzz_%s | %s | %s | %s / %s | %s |\n' "$name" "$(echo "$files" | sed 's|engine/||g; s|remote/||g')" \
    "$inputs" "$((lines - missed))" "$lines" "$pct"
done
