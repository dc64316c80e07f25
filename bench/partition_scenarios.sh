#!/usr/bin/env bash
# Heterogeneity-aware stage partitioning (issue 17): the planned, live partition (`--partition auto`) against
# equal block counts (uniform), equal FLOPs per stage (PipeDream-style: every node assumed the same) and data
# parallelism (balanced and equal splits), on 4 workers of this machine, vgg16 width 0.5, M = 8, B = 128.
# Scenarios:
#   P1 nodes at 1, 1, 1/2 and 1/4 speed, emulated (--slowdown 1,1,2,4: a compute is followed by a sleep, on
#      4 processes sharing this machine's cores): auto, uniform, flops, dp-balanced, dp-equal
#   P1q the same speeds for real: 4 testbed hosts (scripts/testbed.sh, network namespaces) whose CPU the kernel
#      caps at 0.45, 0.45, 0.225 and 0.11 cores; the same systems. Needs root; skipped (said so) where the
#      machine cannot make a testbed
#   P1r the emulated nodes in the other order (--slowdown 4,2,1,1): uniform and flops then give the slow nodes
#      vgg16's heavy first blocks, which P1's rank order spares them
#   P2 P1 with node 3 dropping to 1/8 at step C1 and back at C2 (--slowdown-schedule): auto (live) against
#      auto --keep-partition (the first plan kept)
#   P2b P1 with node 1 (full speed, and so given heavy blocks) dropping to 1/4 at C1 and back at C2: the same
#      pair. The plan tends to give node 3 so little that P2's drop barely matters; this one cannot be ignored
#   P3 4 equal nodes: auto, uniform, flops, dp-balanced
#   P4 node 3 capped (--memory-limit-mb 0,0,0,CAP): dp and uniform are refused (their message kept), auto trains
# Usage: bench/partition_scenarios.sh [out-dir] [scenario...]   scenarios: P1 P1q P1r P2 P2b P3 P4 (default: all)
#   STEPS=n       steps of the P1/P1q/P1r/P3/P4 runs (default 60; the first WARMUP=5 are left out of samples/s)
#   REPEATS=n     P1, P1q, P1r and P3 run each system n times, interleaved (auto, uniform, ..., auto, ...), and
#                 the tables give the median (default 3): one run of each differs by 5-10% on this machine
#   P2_STEPS=n    steps of the P2 and P2b runs (default 300), with the drop at C1 (default 100) and back at C2 (200)
#   CAP=mb        P4's cap on node 3 (default 6)
#   RUN_TIMEOUT=s a run still going after s seconds fails (default 1200)
#   TB_NAME, TB_SUBNET  P1q's testbed name and /24 (default bnpart, 10.213.98)
# Results: OUT/<scenario>/<system>[.rK]/ (run directories and logs; .rK for the K-th repetition, K > 1),
# OUT/partition_scenarios.md (the tables) and OUT/partition_scenarios.json. Exit 2 on bad input, 1 when a run
# that should train fails.
set -euo pipefail
cd "$(dirname "$0")/.."
VARS="STEPS REPEATS P2_STEPS C1 C2 CAP RUN_TIMEOUT"
overrides=""
for v in $VARS TB_NAME TB_SUBNET; do
  [ -z "${!v:-}" ] || overrides+="$v=$(printf %q "${!v}") "
done
command="${overrides}bench/partition_scenarios.sh $*"
for v in $VARS; do
  [ -z "${!v:-}" ] || [[ ${!v} =~ ^[1-9][0-9]*$ ]] ||
    { echo "partition_scenarios: error: $v must be a positive whole number, not '${!v}'" >&2; exit 2; }
done
OUT=${1:-runs/partition-scenarios/$(date +%Y%m%d-%H%M%S)}
shift $(($# > 0 ? 1 : 0))
SCENARIOS=${*:-P1 P1q P1r P2 P2b P3 P4}
. bench/lib/peers.sh   # PY, wait_peers
. bench/lib/testset.sh # make_data
BN=build/apps/balancenet
TB=scripts/testbed.sh
TB_ARGS=(--name "${TB_NAME:-bnpart}" --subnet "${TB_SUBNET:-10.213.98}")
STEPS=${STEPS:-60}
REPEATS=${REPEATS:-3}
P2_STEPS=${P2_STEPS:-300}
C1=${C1:-100}
C2=${C2:-200}
CAP=${CAP:-6}
RUN_TIMEOUT=${RUN_TIMEOUT:-1200}
WARMUP=5
QUOTAS=0.45,0.45,0.225,0.11 # P1q: 1, 1, 1/2 and 1/4 of 0.45 cores; 1.235 cores in all, so the hosts never
                            # compete for this machine's 2 cores and each runs at its quota
((C1 < C2 && C2 < P2_STEPS)) || { echo "partition_scenarios: error: need C1 < C2 < P2_STEPS" >&2; exit 2; }
for s in $SCENARIOS; do
  [[ " P1 P1q P1r P2 P2b P3 P4 " == *" $s "* ]] ||
    { echo "partition_scenarios: error: unknown scenario '$s' (P1 P1q P1r P2 P2b P3 P4)" >&2; exit 2; }
done
[ -x "$BN" ] || { echo "partition_scenarios: error: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }

COMMON=(--threads 1 --progress-seconds 0 --log-level warn --model vgg16 --width 0.5 --global-batch 128
  --eval-every 0 --micro-batches 8)
PIPE=(--pipeline-stages 4)

testbed_up=0
cleanup() {
  local rc=$?
  if ((testbed_up)); then "$TB" "${TB_ARGS[@]}" down || { echo "partition_scenarios: error: could not take the testbed down" >&2; rc=1; }; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# One `balancenet train` per testbed host (FLAGS after the scenario's), host 0's rank 0 writing DIR; host I
# logs to DIR.hostI.log, and host 0's log is also DIR.log.
next_port=29700 # a fresh store port per run: no run waits for the last one's sockets to close
train_on_testbed() { # dir, flags...
  local dir=$1 i port=$next_port rc=0
  local -a pids=()
  shift
  next_port=$((next_port + 1))
  for i in 0 1 2 3; do
    "$TB" "${TB_ARGS[@]}" run "$i" timeout -k 10 "$RUN_TIMEOUT" "$BN" train --nnodes 4 --node-rank "$i" \
      --nproc-per-node 1 --master-addr "$("$TB" "${TB_ARGS[@]}" addr 0)" --master-port "$port" --iface eth0 \
      --run-dir "$dir$( ((i == 0)) || echo ".host$i")" "${COMMON[@]}" --data-dir "$OUT/data" "$@" \
      > "$dir.host$i.log" 2>&1 &
    pids+=($!)
  done
  wait_peers "${pids[@]}" || rc=$?
  cp "$dir.host0.log" "$dir.log"
  return $rc
}

# run SCENARIO SYSTEM EXPECT REPETITION FLAGS...: one `balancenet train` (on the testbed for P1q); EXPECT ok
# (must train) or refused (must exit 2).
run() {
  local scenario=$1 system=$2 expect=$3 repetition=$4 rc=0
  shift 4
  local dir=$OUT/$scenario/$system$( ((repetition == 1)) || echo ".r$repetition")
  rm -rf "$dir" "$dir".*
  mkdir -p "$OUT/$scenario"
  echo "partition_scenarios: $scenario $system, run $repetition ($(uptime | sed 's/.*load/load/'))" >&2
  local start=$SECONDS
  if [ "$scenario" = P1q ]; then
    train_on_testbed "$dir" "$@" || rc=$?
  else
    timeout -k 10 "$RUN_TIMEOUT" "$BN" train --nodes 4 "${COMMON[@]}" --data-dir "$OUT/data" --run-dir "$dir" "$@" \
      > "$dir.log" 2>&1 || rc=$?
  fi
  if [ "$expect" = refused ]; then
    ((rc == 2)) || { echo "partition_scenarios: error: $scenario $system should be refused (exit 2), got $rc; see $dir.log" >&2; exit 1; }
  else
    ((rc == 0)) || { echo "partition_scenarios: error: $scenario $system failed (exit $rc), see $dir.log" >&2; exit 1; }
  fi
  echo "$scenario $system $expect $((SECONDS - start)) $repetition" >> "$OUT/runs.txt"
  echo "partition_scenarios: $scenario $system took $((SECONDS - start)) s" >&2
}

mkdir -p "$OUT"
: > "$OUT/runs.txt"
: > "$OUT/skipped.txt"
export BALANCENET_JOB_TOKEN
BALANCENET_JOB_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
make_data "$OUT/data" 1000 || { echo "partition_scenarios: error: could not write the test set into $OUT/data" >&2; exit 1; }
for s in $SCENARIOS; do
  case $s in
    P1 | P1q | P1r | P3)
      slow=()
      [ "$s" = P1 ] && slow=(--slowdown 1,1,2,4)
      [ "$s" = P1r ] && slow=(--slowdown 4,2,1,1)
      if [ "$s" = P1q ]; then
        if ! why=$("$TB" "${TB_ARGS[@]}" check); then
          echo "partition_scenarios: P1q skipped: this machine cannot make a testbed: $why" >&2
          echo "P1q this machine cannot make a testbed: $why" >> "$OUT/skipped.txt"
          continue
        fi
        "$TB" "${TB_ARGS[@]}" up 4 --cpu "$QUOTAS" >&2 ||
          { echo "partition_scenarios: error: could not make the testbed (if it is left over: $TB ${TB_ARGS[*]} down)" >&2; exit 1; }
        testbed_up=1
      fi
      for ((k = 1; k <= REPEATS; k++)); do
        run "$s" auto ok "$k" --steps "$STEPS" "${slow[@]}" "${PIPE[@]}" --partition auto
        run "$s" uniform ok "$k" --steps "$STEPS" "${slow[@]}" "${PIPE[@]}" --partition uniform
        run "$s" flops ok "$k" --steps "$STEPS" "${slow[@]}" "${PIPE[@]}" --partition flops
        run "$s" dp-balanced ok "$k" --steps "$STEPS" "${slow[@]}" --policy balanced
        if [ "$s" != P3 ]; then run "$s" dp-equal ok "$k" --steps "$STEPS" "${slow[@]}" --policy equal; fi
      done
      if [ "$s" = P1q ]; then
        "$TB" "${TB_ARGS[@]}" down
        testbed_up=0
      fi
      ;;
    P2 | P2b)
      sched="$C1=1,1,2,8;$C2=1,1,2,4"
      [ "$s" = P2b ] && sched="$C1=1,4,2,4;$C2=1,1,2,4"
      run "$s" auto ok 1 --steps "$P2_STEPS" --slowdown 1,1,2,4 --slowdown-schedule "$sched" "${PIPE[@]}" --partition auto
      run "$s" keep ok 1 --steps "$P2_STEPS" --slowdown 1,1,2,4 --slowdown-schedule "$sched" "${PIPE[@]}" \
        --partition auto --keep-partition
      ;;
    P4)
      caps=0,0,0,$CAP
      run P4 dp refused 1 --steps "$STEPS" --memory-limit-mb "$caps" --policy balanced
      run P4 uniform refused 1 --steps "$STEPS" --memory-limit-mb "$caps" "${PIPE[@]}" --partition uniform
      run P4 auto ok 1 --steps "$STEPS" --memory-limit-mb "$caps" "${PIPE[@]}" --partition auto
      ;;
  esac
done
"$PY" bench/partition_scenarios_summary.py "$OUT" "$WARMUP" "$C1" "$C2" | tee "$OUT/partition_scenarios.md"
echo "$command" > "$OUT/command.txt"
echo "partition_scenarios: tables in $OUT/partition_scenarios.md; command: $command" >&2
