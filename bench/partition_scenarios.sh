#!/usr/bin/env bash
# Heterogeneity-aware stage partitioning (issue 17): the planned, live partition (`--partition auto`) against
# equal block counts (uniform), equal FLOPs per stage (PipeDream-style: every node assumed the same) and data
# parallelism (balanced and equal splits), on 4 workers of this machine, vgg16 width 0.5, M = 8, B = 128.
# Scenarios:
#   P1 nodes at 1, 1, 1/2 and 1/4 speed (--slowdown 1,1,2,4): auto, uniform, flops, dp-balanced, dp-equal
#   P1r the same nodes in the other order (--slowdown 4,2,1,1): uniform and flops then give the slow nodes
#      vgg16's heavy first blocks, which P1's rank order spares them
#   P2 P1 with node 3 dropping to 1/8 at step C1 and back at C2 (--slowdown-schedule): auto (live) against
#      auto --keep-partition (the first plan kept)
#   P3 4 equal nodes: auto, uniform, flops, dp-balanced
#   P4 node 3 capped (--memory-limit-mb 0,0,0,CAP): dp and uniform are refused (their message kept), auto trains
# Usage: bench/partition_scenarios.sh [out-dir] [scenario...]   scenarios: P1 P1r P2 P3 P4 (default: all)
#   STEPS=n       steps of the P1/P1r/P3/P4 runs (default 60; the first WARMUP=5 are left out of samples/s; auto
#                 spends its first 3 decision windows measuring the plan and the two baselines)
#   P2_STEPS=n    steps of the P2 runs (default 300), with the drop at C1 (default 100) and back at C2 (200)
#   CAP=mb        P4's cap on node 3 (default 6)
#   RUN_TIMEOUT=s a run still going after s seconds fails (default 1200)
# Results: OUT/<scenario>/<system>/ (run directories and logs), OUT/partition_scenarios.md (the tables) and
# OUT/partition_scenarios.json. Exit 2 on bad input, 1 when a run that should train fails.
set -euo pipefail
cd "$(dirname "$0")/.."
overrides=""
for v in STEPS P2_STEPS C1 C2 CAP RUN_TIMEOUT; do
  [ -z "${!v:-}" ] || overrides+="$v=$(printf %q "${!v}") "
done
command="${overrides}bench/partition_scenarios.sh $*"
for v in STEPS P2_STEPS C1 C2 CAP RUN_TIMEOUT; do
  [ -z "${!v:-}" ] || [[ ${!v} =~ ^[1-9][0-9]*$ ]] ||
    { echo "partition_scenarios: error: $v must be a positive whole number, not '${!v}'" >&2; exit 2; }
done
OUT=${1:-runs/partition-scenarios/$(date +%Y%m%d-%H%M%S)}
shift $(($# > 0 ? 1 : 0))
SCENARIOS=${*:-P1 P1r P2 P3 P4}
. bench/lib/peers.sh   # PY
. bench/lib/testset.sh # make_data
BN=build/apps/balancenet
STEPS=${STEPS:-60}
P2_STEPS=${P2_STEPS:-300}
C1=${C1:-100}
C2=${C2:-200}
CAP=${CAP:-6}
RUN_TIMEOUT=${RUN_TIMEOUT:-1200}
WARMUP=5
((C1 < C2 && C2 < P2_STEPS)) || { echo "partition_scenarios: error: need C1 < C2 < P2_STEPS" >&2; exit 2; }
for s in $SCENARIOS; do
  [[ " P1 P1r P2 P3 P4 " == *" $s "* ]] ||
    { echo "partition_scenarios: error: unknown scenario '$s' (P1 P1r P2 P3 P4)" >&2; exit 2; }
done
[ -x "$BN" ] || { echo "partition_scenarios: error: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }

COMMON=(--nodes 4 --threads 1 --progress-seconds 0 --log-level warn --model vgg16 --width 0.5 --global-batch 128
  --eval-every 0 --micro-batches 8)
PIPE=(--pipeline-stages 4)

# run SCENARIO SYSTEM EXPECT FLAGS...: one `balancenet train`; EXPECT ok (must train) or refused (must exit 2).
run() {
  local scenario=$1 system=$2 expect=$3 rc=0
  shift 3
  local dir=$OUT/$scenario/$system
  rm -rf "$dir" "$dir.log"
  mkdir -p "$OUT/$scenario"
  echo "partition_scenarios: $scenario $system ($(uptime | sed 's/.*load/load/'))" >&2
  local start=$SECONDS
  timeout -k 10 "$RUN_TIMEOUT" "$BN" train "${COMMON[@]}" --data-dir "$OUT/data" --run-dir "$dir" "$@" \
    > "$dir.log" 2>&1 || rc=$?
  if [ "$expect" = refused ]; then
    ((rc == 2)) || { echo "partition_scenarios: error: $scenario $system should be refused (exit 2), got $rc; see $dir.log" >&2; exit 1; }
  else
    ((rc == 0)) || { echo "partition_scenarios: error: $scenario $system failed (exit $rc), see $dir.log" >&2; exit 1; }
  fi
  echo "$scenario $system $expect $((SECONDS - start))" >> "$OUT/runs.txt"
  echo "partition_scenarios: $scenario $system took $((SECONDS - start)) s" >&2
}

mkdir -p "$OUT"
: > "$OUT/runs.txt"
make_data "$OUT/data" 1000 || { echo "partition_scenarios: error: could not write the test set into $OUT/data" >&2; exit 1; }
for s in $SCENARIOS; do
  case $s in
    P1 | P1r | P3)
      slow=()
      [ "$s" = P1 ] && slow=(--slowdown 1,1,2,4)
      [ "$s" = P1r ] && slow=(--slowdown 4,2,1,1)
      run "$s" auto ok --steps "$STEPS" "${slow[@]}" "${PIPE[@]}" --partition auto
      run "$s" uniform ok --steps "$STEPS" "${slow[@]}" "${PIPE[@]}" --partition uniform
      run "$s" flops ok --steps "$STEPS" "${slow[@]}" "${PIPE[@]}" --partition flops
      run "$s" dp-balanced ok --steps "$STEPS" "${slow[@]}" --policy balanced
      [ "$s" != P3 ] && run "$s" dp-equal ok --steps "$STEPS" "${slow[@]}" --policy equal
      ;;
    P2)
      sched="$C1=1,1,2,8;$C2=1,1,2,4"
      run P2 auto ok --steps "$P2_STEPS" --slowdown 1,1,2,4 --slowdown-schedule "$sched" "${PIPE[@]}" --partition auto
      run P2 keep ok --steps "$P2_STEPS" --slowdown 1,1,2,4 --slowdown-schedule "$sched" "${PIPE[@]}" \
        --partition auto --keep-partition
      ;;
    P4)
      caps=0,0,0,$CAP
      run P4 dp refused --steps "$STEPS" --memory-limit-mb "$caps" --policy balanced
      run P4 uniform refused --steps "$STEPS" --memory-limit-mb "$caps" "${PIPE[@]}" --partition uniform
      run P4 auto ok --steps "$STEPS" --memory-limit-mb "$caps" "${PIPE[@]}" --partition auto
      ;;
  esac
done
"$PY" bench/partition_scenarios_summary.py "$OUT" "$WARMUP" "$C1" "$C2" | tee "$OUT/partition_scenarios.md"
echo "$command" > "$OUT/command.txt"
echo "partition_scenarios: tables in $OUT/partition_scenarios.md; command: $command" >&2
