#!/usr/bin/env bash
# balancenet against PyTorch DDP on a testbed (scripts/testbed.sh): every host is a network namespace with
# its own address and a kernel CPU quota (T4: and a shaped link), and both systems are launched per host as
# a user would on a cluster: `balancenet train --nnodes N --node-rank I ...` with a job token, and
# bench/ddp_peer.py with torchrun's environment and GLOO_SOCKET_IFNAME=eth0. No emulation flag on either
# side: the heterogeneity is the kernel's. cnn, one thread per worker, same global batch, data, SGD, steps.
# Usage: bench/testbed_vs_ddp.sh [out-dir] [scenario...]   scenarios: T1 T2 T3 T4 T5 (default: all)
#   T1: 4 hosts at 0.45,0.45,0.45,0.11 cores, B=128 (also time to 85% test accuracy)
#   T2: 2 hosts at 0.8,0.2, B=256          T3: 4 hosts at 0.45, B=128
#   T4: T3 with host 3's link at 20 Mbit/s  T5: T1 with host 3 at 0.45 for the middle third of the steps
# Each scenario runs balancenet (balanced, balanced --comm flat, --policy equal) and DDP, and measures each
# distinct quota alone (one host, one worker, the scenario's global batch): the ideal is the sum over hosts.
#   STEPS=n        every scenario's steps (default: T1 250, T2 60, T3 60, T4 10, T5 150)
#   EVAL_EVERY=n, TARGET=a   T1's evaluation period and target accuracy (default 25, 0.85), for balanced
#                  balancenet and DDP; everything else evaluates once, at the end (balancenet always does)
#   EVAL_IMAGES=n  T1 evaluates on the first n test images (default 10000, the full set); the rest, whose
#                  accuracy is only a sanity check, on the first 1000 (a full evaluation on a 0.11-core host
#                  takes about 10 s)
#   ALONE_STEPS=n  steps of each alone measurement (default 12)
#   SYSTEMS="..."  run only these of bn-balanced bn-nooffload bn-flat bn-equal ddp (bn-nooffload: balanced
#                  with --offload-below 0, the ring as before issue 15) (the table shows the runs found in
#                  out-dir, so a second call with the same out-dir adds systems to it)
#   QUICK=1        a smoke run: a few steps everywhere, a 50% target (about 5 minutes)
#   TB_NAME, TB_SUBNET   the testbed's name and /24 (default vsddp, 10.213.99)
#   RUN_TIMEOUT=s  a run still going after s seconds fails (default 900)
# About 25 minutes for all scenarios on an otherwise idle 2-core machine (the quotas add up to 1.46 cores).
# Exit 77 (a skip) when Debian's python3-torch is missing or this machine cannot make a testbed; 1 when a
# run fails (the message names its logs). The testbed is taken down at the end, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
overrides="" # the command line to repeat this run, for the results
for v in STEPS EVAL_EVERY TARGET EVAL_IMAGES ALONE_STEPS SYSTEMS QUICK TB_NAME TB_SUBNET RUN_TIMEOUT; do
  [ -z "${!v:-}" ] || overrides+="$v=$(printf %q "${!v}") "
done
command="${overrides}bench/testbed_vs_ddp.sh $*"
for v in STEPS EVAL_EVERY ALONE_STEPS EVAL_IMAGES RUN_TIMEOUT; do
  [ -z "${!v:-}" ] || [[ ${!v} =~ ^[1-9][0-9]*$ ]] ||
    { echo "testbed_vs_ddp: error: $v must be a positive whole number, not '${!v}'" >&2; exit 2; }
done
OUT=${1:-runs/testbed-vs-ddp/$(date +%Y%m%d-%H%M%S)}
shift $(($# > 0 ? 1 : 0))
SCENARIOS=${*:-T1 T2 T3 T4 T5}
. bench/lib/peers.sh # PY, require_torch, wait_peers, run_ddp
. bench/lib/testset.sh # FULL_DATA, make_data
BN=build/apps/balancenet
TB=scripts/testbed.sh
TB_ARGS=(--name "${TB_NAME:-vsddp}" --subnet "${TB_SUBNET:-10.213.99}")
WARMUP=1 # steps left out of samples/s on both sides, as in bench/vs_ddp.sh
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
ALONE_STEPS=${ALONE_STEPS:-12}
EVAL_IMAGES=${EVAL_IMAGES:-10000}
DATA=$OUT/data             # the training set and the first EVAL_IMAGES test images: T1's
CHECK_DATA=$OUT/data-check # the training set and the first 1000 test images: the others'
ALL_SYSTEMS="bn-balanced bn-nooffload bn-flat bn-equal ddp"
SYSTEMS=${SYSTEMS:-$ALL_SYSTEMS}

fail() {
  echo "testbed_vs_ddp: error: $*" >&2
  exit 1
}
tb() { "$TB" "${TB_ARGS[@]}" "$@"; }

require_torch testbed_vs_ddp
[ -x "$BN" ] || { echo "testbed_vs_ddp: error: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }
if ! why=$(tb check); then
  [ -n "$why" ] || exit 2 # testbed.sh refused TB_NAME or TB_SUBNET, and said why
  echo "testbed_vs_ddp: skipped: this machine cannot make a testbed: $why" >&2
  exit 77
fi

# name -> host quotas (cores), global batch, steps, link rates in Mbit/s (- = unshaped), changes of host 3's
# quota (- = none; FRACTION=QUOTA,...: at that fraction of the steps, watched in rank 0's output)
scenario() {
  case $1 in
    T1) echo "0.45,0.45,0.45,0.11 128 250 - -" ;;
    T2) echo "0.8,0.2 256 60 - -" ;;
    T3) echo "0.45,0.45,0.45,0.45 128 60 - -" ;;
    T4) echo "0.45,0.45,0.45,0.45 128 10 0,0,0,20 -" ;;
    T5) echo "0.45,0.45,0.45,0.11 128 150 - 0.333=0.45,0.667=0.11" ;;
    *) echo "testbed_vs_ddp: error: unknown scenario '$1' (T1 T2 T3 T4 T5)" >&2; exit 2 ;;
  esac
}
CHANGED_HOST=3

# The hosts' processes and the testbed itself go when the script ends, however it ends.
watcher=""
testbed_up=0
cleanup() {
  local rc=$?
  [ -z "$watcher" ] || kill "$watcher" 2>/dev/null || true
  if ((testbed_up)); then tb down || { echo "testbed_vs_ddp: error: could not take the testbed down" >&2; rc=1; }; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

# run_ddp's runner and balancenet's: rank/host I runs in host I's namespace and cgroup, with a time limit.
on_host() {
  local i=$1
  shift
  exec "$TB" "${TB_ARGS[@]}" run "$i" timeout -k 10 "$RUN_TIMEOUT" "$@"
}
ddp_on_host() {
  local i=$1
  shift
  LOCAL_RANK=0 LOCAL_WORLD_SIZE=1 GLOO_SOCKET_IFNAME=eth0 on_host "$i" "$@"
}

next_port=29500 # a fresh store port per run: no run waits for the last one's sockets to close

# run_bn NODES RUN_DIR LOG FLAGS...: one `balancenet train` per host; host 0's rank 0 writes RUN_DIR.
run_bn() {
  local nodes=$1 dir=$2 log=$3 i port=$next_port
  local -a pids=()
  shift 3
  next_port=$((next_port + 1))
  for ((i = 0; i < nodes; i++)); do
    on_host "$i" "$BN" train --nnodes "$nodes" --node-rank "$i" --nproc-per-node 1 --master-addr "$(tb addr 0)" \
      --master-port "$port" --iface eth0 --threads 1 --run-dir "$dir$( ((i == 0)) || echo ".host$i")" \
      --log-level info --progress-seconds 0.2 "$@" > "$log.host$i.log" 2>&1 &
    pids+=($!)
  done
  wait_peers "${pids[@]}"
}

# In the background: host CHANGED_HOST's quota changes once rank 0 has done the steps CHANGES names
# (FRACTION=QUOTA,...); each change is recorded as "STEPS_DONE QUOTA" in RECORD, for the ideal.
change_quotas() { # log, steps, changes, record
  local log=$1 steps=$2 record=$4 change at done_steps
  local -a changes
  IFS=, read -r -a changes <<< "$3"
  for change in "${changes[@]}"; do
    at=$(awk -v f="${change%%=*}" -v s="$steps" 'BEGIN { printf "%d", f * s + 0.5 }')
    while :; do
      done_steps=$(grep -o 'step [0-9]*/' "$log" 2>/dev/null | tail -n 1 | tr -dc 0-9 || true)
      [ -n "$done_steps" ] && ((done_steps >= at)) && break
      sleep 0.1
    done
    tb set-cpu "$CHANGED_HOST" "${change#*=}"
    echo "$done_steps ${change#*=}" >> "$record"
  done
}

set_quotas() { # comma-separated quotas, one per host
  local -a q
  local i
  IFS=, read -r -a q <<< "$1"
  for i in "${!q[@]}"; do tb set-cpu "$i" "${q[$i]}"; done
}

# One host alone at quota Q (the others idle), one worker, the scenario's global batch: OUT/alone/qQ-bB.
measure_alone() { # host, quota, batch
  local dir=$OUT/alone/q$2-b$3
  [ -f "$dir/summary.json" ] && return 0 # measured earlier in this run
  echo "testbed_vs_ddp: alone at $2 cores, B=$3 ($(uptime | sed 's/.*load/load/'))" >&2
  rm -rf "$dir"
  mkdir -p "$OUT/alone"
  tb set-cpu "$1" "$2"
  (on_host "$1" "$BN" train --workers 1 --threads 1 --global-batch "$3" --steps "$ALONE_STEPS" --eval-every 0 \
    --data-dir "$CHECK_DATA" --progress-seconds 0 --log-level warn --run-dir "$dir") > "$dir.log" 2>&1 \
    || fail "balancenet alone at $2 cores failed (exit $?), see $dir.log"
}

run_system() { # scenario, system, nodes, quotas, steps, changes, flags...
  local s=$1 system=$2 nodes=$3 quotas=$4 steps=$5 changes=$6 log=$OUT/$1/$2 rc=0
  shift 6
  set_quotas "$quotas"
  rm -rf "$OUT/$s/$system" "$OUT/$s/$system".* "$OUT/$s/$system.json"
  echo "testbed_vs_ddp: $s: $system ($(uptime | sed 's/.*load/load/'))" >&2
  if [ "$changes" != - ]; then
    : > "$log.changes"
    change_quotas "$log.host0.log" "$steps" "$changes" "$log.changes" &
    watcher=$!
  fi
  case $system in
    bn-balanced) run_bn "$nodes" "$OUT/$s/$system" "$log" "$@" || rc=$? ;;
    bn-nooffload) run_bn "$nodes" "$OUT/$s/$system" "$log" "$@" --offload-below 0 || rc=$? ;;
    bn-flat) run_bn "$nodes" "$OUT/$s/$system" "$log" "$@" --comm flat || rc=$? ;;
    bn-equal) run_bn "$nodes" "$OUT/$s/$system" "$log" "$@" --policy equal || rc=$? ;;
    ddp) run_ddp ddp_on_host "$nodes" "$(tb addr 0)" "$((next_port++))" "$OUT/$s/ddp.json" --print-steps "$@" \
      > "$log.host0.log" 2>&1 || rc=$? ;;
  esac
  if [ -n "$watcher" ]; then
    kill "$watcher" 2>/dev/null || true
    wait "$watcher" 2>/dev/null || true
    watcher=""
  fi
  local why=""
  ((rc != 124)) || why=": over RUN_TIMEOUT=${RUN_TIMEOUT}s"
  ((rc == 0)) || fail "$s: $system failed (exit $rc$why), see $log.host*.log"
}

for s in $SCENARIOS; do scenario "$s" > /dev/null; done # an unknown name fails here, before any run
for system in $SYSTEMS; do
  [[ " $ALL_SYSTEMS " == *" $system "* ]] ||
    { echo "testbed_vs_ddp: error: unknown system '$system' in SYSTEMS ($ALL_SYSTEMS)" >&2; exit 2; }
done
mkdir -p "$OUT"
export BALANCENET_JOB_TOKEN
BALANCENET_JOB_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
make_data "$DATA" "$EVAL_IMAGES" "testbed_vs_ddp: error: EVAL_IMAGES" || fail "could not write the test set into $DATA"
make_data "$CHECK_DATA" 1000 || fail "could not write the test set into $CHECK_DATA"
: > "$OUT/scenarios.txt"
for s in $SCENARIOS; do
  read -r quotas batch steps rates changes <<< "$(scenario "$s")"
  nodes=$(awk -F, '{ print NF }' <<< "$quotas")
  steps=${STEPS:-$steps}
  every=$steps target=- data=$CHECK_DATA
  [ "$s" != T1 ] || every=${EVAL_EVERY:-25} target=${TARGET:-0.85} data=$DATA
  if [ "${QUICK:-0}" = 1 ]; then
    steps=$([ "$s" = T4 ] && echo 6 || echo 12) ALONE_STEPS=4 every=$steps
    [ "$s" != T1 ] || every=4 target=0.5
  fi
  mkdir -p "$OUT/$s"
  up_args=(up "$nodes" --cpu "$quotas")
  [ "$rates" = - ] || up_args+=(--rate-mbit "$rates")
  tb "${up_args[@]}" >&2 || fail "could not make the testbed ($TB ${TB_ARGS[*]} ${up_args[*]});" \
    "if it is left over from an earlier run: $TB ${TB_ARGS[*]} down"
  testbed_up=1

  # The ideal: every distinct quota of the scenario (its changes included) alone, on the last host.
  IFS=, read -r -a q <<< "$quotas"
  alone_quotas=$(printf '%s\n' "${q[@]}" $([ "$changes" = - ] || tr ',' '\n' <<< "$changes" | cut -d= -f2) | sort -u)
  for aq in $alone_quotas; do measure_alone $((nodes - 1)) "$aq" "$batch"; done
  common=(--global-batch "$batch" --steps "$steps" --data-dir "$data")
  for system in $SYSTEMS; do
    # Time to target is compared between balanced balancenet and DDP; the others evaluate at the end only.
    case $system in bn-balanced | ddp) e=$every ;; *) e=$steps ;; esac
    run_system "$s" "$system" "$nodes" "$quotas" "$steps" "$changes" "${common[@]}" --eval-every "$e"
  done

  tb down
  testbed_up=0
  echo "$s $batch $quotas $target $([ "$changes" = - ] && echo - || echo "$CHANGED_HOST") $rates $changes" \
    >> "$OUT/scenarios.txt"
done
"$PY" bench/testbed_vs_ddp_summary.py "$OUT" "$WARMUP"
echo "$command" > "$OUT/command.txt"
echo "testbed_vs_ddp: rows in $OUT/testbed_vs_ddp.csv; command: $command" >&2
