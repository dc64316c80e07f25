#!/usr/bin/env bash
# Issue 6 soak: one long --elastic run in which a random worker is SIGKILLed every few seconds (the
# launcher restarts it and it rejoins at a step boundary; the next kill waits for the re-form), beside
# the same run undisturbed. Prints the result: the job completed, every sample trained, accuracy
# against the undisturbed run, no orphans.
# Usage: bench/soak.sh [out-dir] [kills] [steps]
#   NODES (3), GLOBAL_BATCH (60), MODEL (mlp), EVERY (mean seconds between kills, 4), DATA (fashion-mnist)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-runs/soak}
KILLS=${2:-50}
STEPS=${3:-6000}
NODES=${NODES:-3}
GB=${GLOBAL_BATCH:-60}
MODEL=${MODEL:-mlp}
EVERY=${EVERY:-4}
BN=build/apps/balancenet
mkdir -p "$OUT"
SPEEDS=$(printf '1200,%.0s' $(seq "$NODES")); SPEEDS=${SPEEDS%,}  # paced steps: kills land mid-run
COMMON=(--nodes "$NODES" --model "$MODEL" --width 0.5 --dropout 0 --global-batch "$GB" --steps "$STEPS"
        --threads 1 --progress-seconds 2 --eval-every 0 --node-speed "$SPEEDS")
[ -n "${DATA:-}" ] && COMMON+=(--data-dir "$DATA")

echo "undisturbed run..."
"$BN" train "${COMMON[@]}" --run-dir "$OUT/calm" 2> "$OUT/calm.log"

echo "soak run with $KILLS kills..."
start=$(date +%s)
"$BN" train "${COMMON[@]}" --elastic --max-restarts "$KILLS" --peer-timeout 5 --run-dir "$OUT/soak" \
  2> "$OUT/soak.log" &
launcher=$!
kills=0
seen=()
# Kills land in training only: after the first progress line, and not in the last 10% (a failure in
# the final evaluation or output gathering is not recovered).
progress() { grep -o 'step [0-9]*/' "$OUT/soak.log" | tail -1 | tr -dc 0-9; }
until [ -n "$(progress)" ] || ! kill -0 "$launcher" 2> /dev/null; do sleep 1; done
while kill -0 "$launcher" 2> /dev/null && [ "$kills" -lt "$KILLS" ] && [ "$(progress)" -lt $((STEPS * 9 / 10)) ]; do
  sleep "$(awk -v m="$EVERY" -v r="$RANDOM" 'BEGIN { printf "%.2f", m * (0.5 + r / 32767) }')"
  mapfile -t workers < <(pgrep -P "$launcher" || true)
  seen+=("${workers[@]}")
  [ "${#workers[@]}" -lt "$NODES" ] && continue  # a restarted worker is still joining
  victim=${workers[$((RANDOM % ${#workers[@]}))]}
  changes=$(grep -c "membership changed" "$OUT/soak.log" || true)
  kill -9 "$victim" 2> /dev/null && kills=$((kills + 1))
  # The next kill comes after the survivors have re-formed (a kill during a recovery tests the
  # peer timeout, not recovery, and back-to-back ones would only stack timeouts).
  for _ in $(seq 60); do
    [ "$(grep -c "membership changed" "$OUT/soak.log" || true)" -gt "$changes" ] && break
    kill -0 "$launcher" 2> /dev/null || break
    sleep 1
  done
done
rc=0
wait "$launcher" || rc=$?
seconds=$(( $(date +%s) - start ))
orphans=0
for pid in "${seen[@]}"; do kill -0 "$pid" 2> /dev/null && orphans=$((orphans + 1)); done

"${BALANCENET_PYTHON:-.venv/bin/python}" - "$OUT" "$STEPS" "$GB" "$kills" "$rc" "$seconds" "$orphans" <<'PY'
import json, sys
out, steps, gb, kills, rc, seconds, orphans = sys.argv[1], *map(int, sys.argv[2:])
calm = json.load(open(f"{out}/calm/summary.json"))
try:
    soak = json.load(open(f"{out}/soak/summary.json"))
except OSError:
    soak = {}
log = open(f"{out}/soak.log").read()
reforms = log.count("membership changed")
print(f"kills: {kills}; membership changes: {reforms}; exit code: {rc}; wall time: {seconds} s "
      f"(undisturbed: {calm['train_seconds']:.0f} s of training)")
print(f"steps: {soak.get('steps')} of {steps}; samples trained: {soak.get('samples_trained', 0):.0f} "
      f"(expected {steps * gb})")
print(f"final test accuracy: {100 * soak.get('final_accuracy', 0):.2f}% (undisturbed: "
      f"{100 * calm['final_accuracy']:.2f}%); final loss {soak.get('final_loss', 0):.4f} "
      f"(undisturbed {calm['final_loss']:.4f})")
print(f"orphan processes: {orphans}")
ok = rc == 0 and soak.get("samples_trained") == steps * gb and orphans == 0
print("RESULT:", "PASS" if ok else "FAIL")
sys.exit(0 if ok else 1)
PY
