#!/usr/bin/env bash
# The board cost model against the board (issue 18, acceptance 3; docs/remote.md "Cost model"):
# on a synthesized ~100M-parameter model and a loopback board (a private sshd on 127.0.0.1 that
# this script starts and stops), deploy an INT4 engine with --cost-models (the agent's
# micro-profile), then for a set of plans - uniform INT4 / INT8 / FP16, three pairs of plans with
# equal bits per weight, and autoplan --board at four time budgets - compare the predicted time per
# token (predict-tpot, autoplan) with the board's measured TPOT p50 (deploy + profile, rounds
# interleaved, medians). Prints a Markdown table, Spearman's rank correlation and the median
# relative error.
#
# Usage: scripts/bench-board-cost.sh [WORKDIR] [--shape SHAPE] [--threads N] [--rounds N]
#   WORKDIR: model, engines, plans and the board folder (default /tmp/edge-board-cost)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cli="${EDGE_CLI:-$root/build/app/cli/edgestudio-cli}"
work=/tmp/edge-board-cost
shape=llama-110m
threads=2
rounds=3
while [ $# -gt 0 ]; do
  case "$1" in
    --shape) shape="$2"; shift 2 ;;
    --threads) threads="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --*) echo "bench-board-cost.sh: unknown option $1" >&2; exit 64 ;;
    *) work="$1"; shift ;;
  esac
done
rm -rf "$work/board"  # the loopback board starts empty: its versions are this run's
mkdir -p "$work/ssh" "$work/plans" "$work/engines" "$work/board"
model="$work/$shape-f16.gguf"
calib="$root/../shared/data/tinystories_sample.txt"
[ -f "$model" ] || "$cli" synth --shape "$shape" --out "$model" --type f16 > /dev/null

# ---- the loopback board: a private sshd -----------------------------------------------------
ssh="$work/ssh"
rm -f "$ssh"/host_key* "$ssh"/id "$ssh"/id.pub
ssh-keygen -q -t ed25519 -N '' -f "$ssh/host_key" < /dev/null
ssh-keygen -q -t ed25519 -N '' -f "$ssh/id" < /dev/null
cp "$ssh/id.pub" "$ssh/authorized_keys"
port=$(python3 -c 'import socket; s=socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
cat > "$ssh/sshd_config" <<EOF
Port $port
ListenAddress 127.0.0.1
HostKey $ssh/host_key
PidFile $ssh/sshd.pid
AuthorizedKeysFile $ssh/authorized_keys
UsePAM no
StrictModes no
PasswordAuthentication no
KbdInteractiveAuthentication no
PubkeyAuthentication yes
PermitRootLogin prohibit-password
Subsystem sftp internal-sftp
SetEnv HOME=$ssh/home
EOF
mkdir -p /run/sshd "$ssh/home"  # the board's home is its own: root's ~/.bashrc is not the board's
"$(command -v sshd || echo /usr/sbin/sshd)" -D -e -f "$ssh/sshd_config" 2> "$ssh/sshd.log" &
sshd_pid=$!
trap 'kill $sshd_pid 2>/dev/null || true' EXIT
echo "[127.0.0.1]:$port $(cut -d' ' -f1,2 "$ssh/host_key.pub")" > "$ssh/known_hosts"
for _ in $(seq 50); do [ -s "$ssh/sshd.pid" ] && break; sleep 0.1; done
board=(--board "$(id -un)@127.0.0.1:$port" -i "$ssh/id" --known-hosts "$ssh/known_hosts" --root "$work/board")
name="$(id -un)@127.0.0.1:$port"
costs="$work/cost-models.json"
rm -f "$costs"

# ---- the cost model: deploy an INT4 engine with the micro-profile -----------------------------
rtn() {  # a layer rule: FP16 as it is, INT8 / INT4 by RTN in groups of 32
  if [ "$1" = fp16 ]; then echo '{"precision": "fp16"}'; else echo "{\"precision\": \"$1\", \"method\": \"rtn\", \"group_size\": 32}"; fi
}
plan() {  # plan NAME DEFAULT [PATTERN PRECISION]...
  local out="$work/plans/$1.plan.json" d="$2"; shift 2
  local layers=""
  while [ $# -gt 0 ]; do
    layers="$layers${layers:+, }\"$1\": $(rtn "$2")"; shift 2
  done
  echo "{\"version\": 1, \"default\": $(rtn "$d"), \"layers\": {$layers}}" > "$out"
}
plan int4 int4
"$cli" compile "$model" --plan "$work/plans/int4.plan.json" --out "$work/engines/int4.edge" > /dev/null
"$cli" deploy "$work/engines/int4.edge" "${board[@]}" --version cost-model --cost-models "$costs" \
  --threads "$threads" > /dev/null

# ---- the plans ------------------------------------------------------------------------------
plan int8 int8
plan fp16 fp16
n_layers=$("$cli" info "$model" --json --no-tensors | python3 -c 'import json,sys; print(json.load(sys.stdin)["config"]["n_layers"])')
half=$((n_layers / 2))
first=() second=()
for ((b = 0; b < n_layers; ++b)); do
  if [ $b -lt $half ]; then first+=("blk.$b.*" int8); else second+=("blk.$b.*" int8); fi
done
plan pair-a1 int4 "blk.*.ffn_gate" int8           # equal bits per weight: gate or up at INT8
plan pair-a2 int4 "blk.*.ffn_up" int8
plan pair-b1 int4 "${first[@]}"                    # the first or the second half of the blocks at INT8
plan pair-b2 int4 "${second[@]}"
plan pair-c1 int8 "blk.*.attn_q" int4 "blk.*.attn_k" int4   # Q/K or V/O at INT4
plan pair-c2 int8 "blk.*.attn_v" int4 "blk.*.attn_output" int4
sens="$work/sensitivity.json"
[ -f "$sens" ] || "$cli" analyze "$model" --calib "$calib" --calib-sequences 4 --quant-sequences 4 --seq-len 32 \
  --batches 2 --batch-size 2 --hessian-sequences 2 --lanczos-steps 4 --topk 2 --threads "$threads" --out "$sens" > /dev/null
pred() { "$cli" predict-tpot "$model" --plan "$1" --cost-models "$costs" --board "$name" --json |
  python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["predicted_tpot_ms"])'; }
lo=$(pred "$work/plans/int4.plan.json")
hi=$(pred "$work/plans/fp16.plan.json")
for k in 1 2 3 4; do
  budget=$(python3 -c "print($lo + ($hi - $lo) * $k / 5)")
  "$cli" autoplan "$model" --calib "$calib" --sensitivity "$sens" --cost-models "$costs" --board "$name" \
    --budget-ms-per-token "$budget" --out "$work/plans/auto-$k.plan.json" > /dev/null
done
plans=(int4 int8 fp16 pair-a1 pair-a2 pair-b1 pair-b2 pair-c1 pair-c2 auto-1 auto-2 auto-3 auto-4)
for p in "${plans[@]}"; do
  [ -f "$work/engines/$p.edge" ] && [ "$work/engines/$p.edge" -nt "$work/plans/$p.plan.json" ] ||
    "$cli" compile "$model" --plan "$work/plans/$p.plan.json" --out "$work/engines/$p.edge" > /dev/null
done

# ---- measure: rounds interleave the plans ---------------------------------------------------
results="$work/measured.txt"
: > "$results"
for ((r = 1; r <= rounds; ++r)); do
  for p in "${plans[@]}"; do
    "$cli" deploy "$work/engines/$p.edge" "${board[@]}" --version "$p" > /dev/null
    t=$("$cli" profile "${board[@]}" --threads "$threads" -p "Once upon a time" -p "The little dog ran" -n 64 --json |
      python3 -c 'import json,sys; print(json.load(sys.stdin)[0]["summary"]["latency_p50_ms"])')
    echo "$p $t" >> "$results"
  done
done

# ---- the table ------------------------------------------------------------------------------
for p in "${plans[@]}"; do
  echo "$p $(pred "$work/plans/$p.plan.json") $(stat -c %s "$work/engines/$p.edge")"
done > "$work/predicted.txt"
python3 - "$work/predicted.txt" "$results" "$costs" "$name" <<'EOF'
import json, statistics, sys
pred = {l.split()[0]: (float(l.split()[1]), int(l.split()[2])) for l in open(sys.argv[1])}
runs = {}
for l in open(sys.argv[2]):
    p, t = l.split()
    runs.setdefault(p, []).append(float(t))
cm = json.load(open(sys.argv[3]))["boards"][sys.argv[4]]
print(f"board: {cm['cpu']}, {cm['kernels']}; cost model from {cm['engine']}: {cm['engine_tpot_ms']:.3f} ms per "
      f"token, {cm['rest_ms']:.3f} ms outside the products")
print("| plan | engine MB | predicted ms/token | measured TPOT p50 (median) | runs | error |")
print("|---|---:|---:|---:|---|---:|")
P, M, E = [], [], []
for p, (t, size) in pred.items():
    m = statistics.median(runs[p])
    P.append(t); M.append(m); E.append(abs(t - m) / m)
    print(f"| {p} | {size / 1e6:.1f} | {t:.3f} | {m:.3f} | {', '.join(f'{x:.2f}' for x in runs[p])} | {100 * (t - m) / m:+.1f}% |")
def ranks(v):
    order = sorted(range(len(v)), key=lambda i: v[i])
    r = [0.0] * len(v)
    i = 0
    while i < len(v):
        j = i
        while j + 1 < len(v) and v[order[j + 1]] == v[order[i]]:
            j += 1
        for k in range(i, j + 1):
            r[order[k]] = (i + j) / 2 + 1
        i = j + 1
    return r
rp, rm = ranks(P), ranks(M)
mp, mm = statistics.mean(rp), statistics.mean(rm)
num = sum((a - mp) * (b - mm) for a, b in zip(rp, rm))
den = (sum((a - mp) ** 2 for a in rp) * sum((b - mm) ** 2 for b in rm)) ** 0.5
print(f"\nSpearman(predicted, measured) = {num / den:.3f} over {len(P)} plans; "
      f"median |error| = {100 * statistics.median(E):.1f}%, largest {100 * max(E):.1f}%")
EOF
