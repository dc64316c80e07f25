#!/usr/bin/env bash
# M2 (issue 53): state that does not fit. The zoo's gpt (4 blocks, width 384, windows of 64 tokens of the fortunes)
# with Adam on 4 workers; worker 3's --memory-limit-mb is below the replicated state (16 bytes a parameter) but
# above its slice's. Side by side in one run:
#   replicated            no caps, the state replicated (the reference step)
#   sharded-equal         no caps, --shard-state (equal slices): the cost of the all-gather where both fit
#   replicated-capped     the caps, replicated: refused before training (its one line is recorded)
#   sharded-capped        the caps, --shard-state --accumulate auto: slices by memory, worker 3's share in passes
#   pipeline-capped       the caps, --pipeline-stages 2 --partition auto: the other way to fit (two pipelines)
# Usage: bench/sharded_state.sh [out-dir]     STEPS=n (default 40), BATCH=n (default 16), WARMUP=n (default 5)
# Results: docs/results.md.
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/sharded-state/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh  # PY
BN=${BN:-build/apps/balancenet}
STEPS=${STEPS:-40}
BATCH=${BATCH:-16}
WARMUP=${WARMUP:-5}
TEXT=${TEXT:-/usr/share/games/fortunes/fortunes}
[ -x "$BN" ] || { echo "sharded_state: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }
[ -r "$TEXT" ] || { echo "sharded_state: $TEXT not readable (Debian's fortunes-min)" >&2; exit 2; }
mkdir -p "$OUT"
common=(--nodes 4 --threads 1 --model gpt --layers 4 --embed 384 --heads 6 --context 64 --data "text:$TEXT"
        --optimizer adam --lr 0.001 --global-batch "$BATCH" --steps "$STEPS" --eval-samples 0 --progress-seconds 0)

# The estimate's state and activations, from the refusal of a 1 MiB cap ("state S MiB + activations A MiB" for
# the equal share; the refusal exits 2, hence the `|| true`): worker 3's cap holds 60% of the replicated state and a pass of 1.5 samples.
estimate=$("$BN" train "${common[@]}" --memory-limit-mb 1 2>&1 | grep -o 'state [0-9.]* MiB + activations [0-9.]* MiB' | head -1 || true)
read -r state acts <<< "$(echo "$estimate" | awk '{print $2, $6}')"
cap=$("$PY" -c "print(round(0.6 * $state + 1.5 * $acts / ($BATCH / 4), 1))")
caps="400,400,400,$cap"
echo "sharded_state: replicated state $state MiB, activations $acts MiB for $((BATCH / 4)) samples; caps $caps" >&2

run() {
  local name=$1
  shift
  echo "sharded_state: $name ($(uptime | sed 's/.*load/load/'))" >&2
  rm -rf "${OUT:?}/$name"
  local rc=0
  "$BN" train "${common[@]}" --run-dir "$OUT/$name" "$@" > "$OUT/$name.log" 2>&1 || rc=$?
  echo "$rc" > "$OUT/$name.rc"
}
run replicated
run sharded-equal --shard-state
run replicated-capped --memory-limit-mb "$caps" --accumulate auto
run sharded-capped --memory-limit-mb "$caps" --shard-state --accumulate auto
run pipeline-capped --memory-limit-mb "$caps" --pipeline-stages 2 --partition auto
"$PY" bench/sharded_state_summary.py "$OUT" "$WARMUP" "$caps"
