#!/usr/bin/env bash
# balancenet against PyTorch DDP on a testbed (scripts/testbed.sh): every host is a network namespace with
# its own address and a kernel CPU quota (T4: and a shaped link), and both systems are launched per host as
# a user would on a cluster: `balancenet train --nnodes N --node-rank I ...` with a job token, and
# bench/ddp_peer.py with torchrun's environment and GLOO_SOCKET_IFNAME=eth0. No emulation flag on either
# side: the heterogeneity is the kernel's. One model (MODEL), one thread per worker, same global batch, data, SGD,
# steps.
# Usage: bench/testbed_vs_ddp.sh [out-dir] [scenario...]   scenarios: T1 T2 T3 T4 T5 T6 TSLOW T1SLOW T1OUT
#        (default: T1-T6)
#   T1: 4 hosts at 0.45,0.45,0.45,0.11 cores, B=128 (with EVAL_EVERY: also time to 85% test accuracy)
#   T2: 2 hosts at 0.8,0.2, B=256          T3: 4 hosts at 0.45, B=128
#   T4: T3 with host 3's link at 20 Mbit/s  T5: T1 with host 3 at 0.45 for the middle third of the steps
#   T6: 8 hosts at 0.3 x 6 and 0.1 x 2 cores, B=256 (2.0 cores: all of this machine's)
#   TSLOW: T3 with every host's link at 50 Mbit/s   T1SLOW: T1 with the slow host's link at 50 Mbit/s (issue 54)
#   T1OUT: T1's three 0.45-core hosts alone: the most that leaving the 0.11-core host out could give T1 (issue 55)
# Each scenario runs balancenet balanced with each --comm mode of MODES, --policy equal (the default --comm)
# and DDP, and measures each distinct quota alone (one host, one worker, the scenario's global batch): the
# ideal is the sum over hosts. The limit is the ideal once every host pays one all-reduce of the model per step
# in CPU (bench/testbed_limit.py): that cost, c_h, is measured per scenario by a small timing on the
# scenario's hosts with their quotas lifted, bench/allreduce_cpu.py: c10d Gloo's ring all-reduce of one tensor
# of the model's parameter count, the process CPU time per call (not yet steps.csv's sync_cpu_ms, which is
# per mode and still to come). Rates: rank 0's step times over the steady steps, from STEADY_FROM on, the
# same steps for every row (auto tries modes in its first steps; the split settles); the CSV also has each
# row's rate over every step but the first.
#   MODES="..."    the --comm modes, one run each (default "allreduce flat hd a2a auto"); each is checked
#                  against the binary before any run
#   MODEL=m        cnn (default) or resnet18 (at width 0.5; DDP the same network): results in OUT/S for cnn,
#                  OUT/S-resnet18 for resnet18, so both models' calls can share one out-dir and one table
#   STEPS=n        every scenario's steps; STEPS_T1=n etc. one scenario's (defaults below, per model: each
#                  steady row about 20-30 s on the idle machine)
#   STEADY_FROM=n  the first step counted in the rates (default 25 for cnn, 15 for resnet18; 1 for T4; 40 for
#                  TSLOW and T1SLOW)
#   EVAL_EVERY=n, TARGET=a   T1's evaluation period and target accuracy (default none: evaluations at the end
#                  only; 0.85): with EVAL_EVERY, T1's bn-balanced, bn-auto and DDP evaluate every n steps on
#                  the first EVAL_IMAGES test images (default 10000, the full set), for the time to target
#                  (85% came at about 225 steps of T1 in issue 15: STEPS_T1=250 EVAL_EVERY=25); everything
#                  else evaluates once, at the end, on the first 1000 (about 10 s on a 0.11-core host for
#                  the full set); TSLOW's the same, for bn-auto-lossy, DDP and DDP with PowerSGD (ddp-powersgd,
#                  ddp-powersgd4)
#   ALONE_STEPS=n  steps of each alone measurement (default 12 for cnn, 5 for resnet18)
#   SYSTEMS="..."  run only these of bn-MODE (MODE of MODES), bn-equal, ddp and, as before issue 30,
#                  bn-balanced (the default --comm) and bn-nooffload (balanced with --offload-below 0, the ring
#                  as before issue 15); fewer bits (issue 54): bn-gc-W (balanced, --grad-compress W),
#                  bn-auto-lossy (--comm auto --allow-lossy-comm), ddp-W (DDP with its own hook, ddp_peer.py
#                  --comm-hook W), W one of bf16 fp16 int8 (bn only) powersgd powersgdR (PowerSGD at rank R);
#                  the frameworks (issue 52): lightning-balanced and lightning-ddp, Lightning's Trainer
#                  (bench/framework_peer.py --framework lightning --model M: the same network, data, batch
#                  and SGD) with BalancedStrategy under `balancenet launch --nnodes N` per host, and with
#                  strategy "ddp" started with torchrun's environment as DDP is (cnn only);
#                  default: every bn-MODE, bn-equal and ddp (the table shows the runs
#                  found in out-dir, so a second call with the same out-dir adds systems or scenarios to it)
#   BN_FLAGS="..." more flags for every balancenet run (e.g. "--timeline F" or "--explain-comm" to see a run's steps)
#   QUICK=1        a smoke run: a few steps everywhere, a 50% target
#   TB_NAME, TB_SUBNET   the testbed's name and /24 (default vsddp, 10.213.99)
#   RUN_TIMEOUT=s  a run still going after s seconds fails (default 900)
# The whole of issue 30's set, T1 T3 T5 T6 with cnn and T1 T3 with resnet18, 6 modes + equal + DDP, takes about
# 40 minutes on an otherwise idle 2-core machine; the script prints its estimate at start. To repeat issue
# 15's table: MODES=flat SYSTEMS="bn-balanced bn-nooffload bn-flat bn-equal ddp" STEADY_FROM=1 STEPS_T1=250
# STEPS_T3=60 STEPS_T2=60 EVAL_EVERY=25.
# Exit 77 (a skip) when the project's Python (.venv/) has no torch or this machine cannot make a testbed; 1 when a
# run fails (the message names its logs). The testbed is taken down at the end, also on failure.
set -euo pipefail
cd "$(dirname "$0")/.."
overrides="" # the command line to repeat this run, for the results
for v in MODES MODEL STEPS STEPS_T1 STEPS_T2 STEPS_T3 STEPS_T4 STEPS_T5 STEPS_T6 STEPS_TSLOW STEPS_T1SLOW STEPS_T1OUT \
  STEADY_FROM EVAL_EVERY TARGET \
  EVAL_IMAGES ALONE_STEPS SYSTEMS QUICK TB_NAME TB_SUBNET RUN_TIMEOUT; do
  [ -z "${!v:-}" ] || overrides+="$v=$(printf %q "${!v}") "
done
command="${overrides}bench/testbed_vs_ddp.sh $*"
for v in STEPS STEPS_T1 STEPS_T2 STEPS_T3 STEPS_T4 STEPS_T5 STEPS_T6 STEPS_TSLOW STEPS_T1SLOW STEPS_T1OUT STEADY_FROM \
  EVAL_EVERY ALONE_STEPS EVAL_IMAGES \
  RUN_TIMEOUT; do
  [ -z "${!v:-}" ] || [[ ${!v} =~ ^[1-9][0-9]*$ ]] ||
    { echo "testbed_vs_ddp: error: $v must be a positive whole number, not '${!v}'" >&2; exit 2; }
done
OUT=${1:-runs/testbed-vs-ddp/$(date +%Y%m%d-%H%M%S)}
shift $(($# > 0 ? 1 : 0))
SCENARIOS=${*:-T1 T2 T3 T4 T5 T6}
. bench/lib/peers.sh # PY, require_torch, wait_peers, run_peers, run_ddp
. bench/lib/testset.sh # FULL_DATA, make_data
BN=${BN:-build/apps/balancenet} # BN=path: another build of balancenet (the same commit's flags), e.g. to compare two
TB=scripts/testbed.sh
TB_ARGS=(--name "${TB_NAME:-vsddp}" --subnet "${TB_SUBNET:-10.213.99}")
WARMUP=1 # steps left out of the alone rates and of the rows' all-steps rates, as in bench/vs_ddp.sh
RUN_TIMEOUT=${RUN_TIMEOUT:-900}
BN_FLAGS=${BN_FLAGS:-}
EVAL_IMAGES=${EVAL_IMAGES:-10000}
DATA=$OUT/data             # the training set and the first EVAL_IMAGES test images: T1's, with EVAL_EVERY
CHECK_DATA=$OUT/data-check # the training set and the first 1000 test images: the others'
ALONE_DATA=$OUT/data-alone # the training set and the first 100 test images: the alone runs' (their end)
MODES=${MODES:-allreduce flat hd a2a auto}
MODEL=${MODEL:-cnn}
RESNET_WIDTH=0.5
# Per model: its flags (the same for ddp_peer.py), the scenario folder's suffix, and for the estimate at
# start what one uncapped core trains alone (samples/s, measured here: cnn 370 at 0.45 cores, resnet18 at
# width 0.5 67 at 0.45 cores).
case $MODEL in
  cnn) model_args=(--model cnn) suffix="" per_core=820 ALONE_STEPS=${ALONE_STEPS:-12} steady=25 ;;
  resnet18) model_args=(--model resnet18 --width "$RESNET_WIDTH") suffix=-resnet18 per_core=150
    ALONE_STEPS=${ALONE_STEPS:-5} steady=15 ;;
  *) echo "testbed_vs_ddp: error: MODEL must be cnn or resnet18, not '$MODEL'" >&2; exit 2 ;;
esac
SYSTEMS=${SYSTEMS:-$(printf 'bn-%s ' $MODES)bn-equal ddp}

fail() {
  echo "testbed_vs_ddp: error: $*" >&2
  exit 1
}
tb() { "$TB" "${TB_ARGS[@]}" "$@"; }

# name -> host quotas (cores), global batch, steps (cnn resnet18), link rates in Mbit/s (- = unshaped),
# changes of host 3's quota (- = none; FRACTION=QUOTA,...: at that fraction of the steps, watched in rank
# 0's output). Steps: at the rates of issue 15's table, about 20-30 s of steady steps per mode on the idle
# machine (the slower --policy equal and DDP rows take 2-3x longer in T1, T5 and T6).
scenario() {
  case $1 in
    T1) echo "0.45,0.45,0.45,0.11 128 150 40 - -" ;;
    T2) echo "0.8,0.2 256 100 40 - -" ;;
    T3) echo "0.45,0.45,0.45,0.45 128 200 60 - -" ;;
    T4) echo "0.45,0.45,0.45,0.45 128 10 4 0,0,0,20 -" ;;
    T5) echo "0.45,0.45,0.45,0.11 128 150 40 - 0.333=0.45,0.667=0.11" ;;
    T6) echo "0.3,0.3,0.3,0.3,0.3,0.3,0.1,0.1 256 120 40 - -" ;;
    TSLOW) echo "0.45,0.45,0.45,0.45 128 100 60 50,50,50,50 -" ;;
    T1SLOW) echo "0.45,0.45,0.45,0.11 128 100 60 0,0,0,50 -" ;;
    # T1 without its 0.11-core host: what leaving that host out of the exchange could give T1 at best (issue 55); B=129
    # for DDP, which needs a batch the workers divide.
    T1OUT) echo "0.45,0.45,0.45 129 150 40 - -" ;;
    *) echo "testbed_vs_ddp: error: unknown scenario '$1' (T1 T2 T3 T4 T5 T6 TSLOW T1SLOW T1OUT)" >&2; exit 2 ;;
  esac
}
CHANGED_HOST=3

# steps and the first steady step of scenario S (its name, its steps for cnn and resnet18)
steps_of() {
  local var=STEPS_$1
  if [ "${QUICK:-0}" = 1 ]; then
    [ "$1" = T4 ] && echo 6 || echo 12
  elif [ -n "${!var:-}" ]; then
    echo "${!var}"
  elif [ -n "${STEPS:-}" ]; then
    echo "$STEPS"
  else
    [ "$MODEL" = cnn ] && echo "$2" || echo "$3"
  fi
}
steady_of() { # scenario, its steps
  local from=${STEADY_FROM:-$steady}
  [ -n "${STEADY_FROM:-}" ] || [ "$1" != T4 ] || from=1 # T4 is link-bound: every step alike
  # On the slow links, after --comm auto --allow-lossy-comm's trial of 8 exchanges (32 steps): the all-steps rate
  # in the CSV counts the trial.
  [ -n "${STEADY_FROM:-}" ] || [[ $1 != *SLOW ]] || from=40
  [ "${QUICK:-0}" != 1 ] || from=2
  ((from < $2)) || { echo "testbed_vs_ddp: error: STEADY_FROM=$from leaves no step of $1's $2" >&2; exit 2; }
  echo "$from"
}

# Minutes the whole call should take on the idle machine: per scenario, the alone runs, the all-reduce timing,
# and per system its steps at an assumed rate (a mode at 0.65 of the ideal; --policy equal and DDP at the
# slowest host's pace for an equal share) plus 8 s to start and evaluate.
estimate_minutes() {
  local s quotas batch steps_cnn steps_r18 rates changes total=0
  for s in $SCENARIOS; do
    read -r quotas batch steps_cnn steps_r18 rates changes <<< "$(scenario "$s")"
    total=$(awk -v q="$quotas" -v b="$batch" -v n="$(steps_of "$s" "$steps_cnn" "$steps_r18")" -v c="$per_core" \
      -v a="$ALONE_STEPS" -v sys="$SYSTEMS" -v t="$total" 'BEGIN {
        k = split(q, qs, ","); sum = 0; slow = qs[1]
        for (i = 1; i <= k; i++) { sum += qs[i]; if (qs[i] < slow) slow = qs[i]; seen[qs[i]] = 1 }
        for (x in seen) t += a * b / (c * x) + 5
        t += 15
        m = split(sys, ss, " ")
        for (i = 1; i <= m; i++)
          t += (ss[i] ~ /^lightning/ ? 60 : 8) + \
            n * (ss[i] ~ /ddp/ || ss[i] == "bn-equal" ? b / k / (c * slow) : b / (0.65 * c * sum))
        printf "%.0f", t }')
  done
  echo $(((total + 59) / 60))
}

require_torch testbed_vs_ddp
[ -x "$BN" ] || { echo "testbed_vs_ddp: error: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }
for s in $SCENARIOS; do scenario "$s" > /dev/null; done # an unknown name fails here, before any run
for system in $SYSTEMS; do
  [[ " bn-balanced bn-nooffload bn-equal ddp bn-auto-lossy lightning-balanced lightning-ddp $(printf 'bn-%s ' $MODES)" \
    == *" $system "* ]] ||
    [[ $system =~ ^bn-gc-(bf16|fp16|int8|powersgd[0-9]*)$ ]] || [[ $system =~ ^ddp-(bf16|fp16|powersgd[0-9]*)$ ]] || {
    echo "testbed_vs_ddp: error: unknown system '$system' in SYSTEMS (bn-MODE for a MODE of MODES, bn-equal," \
      "ddp, bn-balanced, bn-nooffload, bn-auto-lossy, bn-gc-W, ddp-W, lightning-balanced, lightning-ddp)" >&2
    exit 2
  }
  [[ $system != lightning-* ]] || [ "$MODEL" = cnn ] ||
    { echo "testbed_vs_ddp: error: $system runs the cnn only (MODEL=cnn)" >&2; exit 2; }
done
for mode in $MODES; do # the binary's own check of --comm, before a run: a mode it lacks fails here
  [[ $mode =~ ^[a-z0-9]+$ ]] || { echo "testbed_vs_ddp: error: '$mode' in MODES is not a --comm mode" >&2; exit 2; }
  why=$("$BN" train --comm "$mode" --workers 1 --steps 1 --data-dir /nonexistent-testbed-vs-ddp 2>&1 || true)
  [[ $why != *--comm* ]] || { echo "testbed_vs_ddp: error: MODES: $why" >&2; exit 2; }
done
if ! why=$(tb check); then
  [ -n "$why" ] || exit 2 # testbed.sh refused TB_NAME or TB_SUBNET, and said why
  echo "testbed_vs_ddp: skipped: this machine cannot make a testbed: $why" >&2
  exit 77
fi

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
# Lightning reads torchrun's GROUP_RANK too (its TorchElasticEnvironment): one host per node.
lightning_on_host() {
  local i=$1
  shift
  GROUP_RANK=$i TORCHELASTIC_RUN_ID=testbed ddp_on_host "$i" "$@"
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
      --log-level info --progress-seconds 0.2 "$@" $BN_FLAGS > "$log.host$i.log" 2>&1 &
    pids+=($!)
  done
  wait_peers "${pids[@]}"
}

# run_lightning_bn NODES RUN_DIR OUT_JSON LOG ARGS...: Lightning with BalancedStrategy, `balancenet launch` per
# host as a user would start it on a cluster. Importing torch and Lightning takes the 0.11-core host over a
# minute, past the default --rendezvous-timeout of 60 s (torchrun's DDP side waits up to 30 minutes).
run_lightning_bn() {
  local nodes=$1 dir=$2 json=$3 log=$4 i port=$next_port
  local -a pids=()
  shift 4
  next_port=$((next_port + 1))
  for ((i = 0; i < nodes; i++)); do
    PYTHONWARNINGS=ignore on_host "$i" "$BN" launch --nnodes "$nodes" --node-rank "$i" --nproc-per-node 1 \
      --master-addr "$(tb addr 0)" --master-port "$port" --iface eth0 --threads 1 --log-level warn \
      --rendezvous-timeout 600 \
      --run-dir "$dir$( ((i == 0)) || echo ".host$i")" bench/framework_peer.py --framework lightning --balanced \
      --out "$json" "$@" > "$log.host$i.log" 2>&1 &
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

# One host alone at quota Q (the others idle), one worker, the scenario's global batch:
# OUT/alone/[MODEL-]qQ-bB.
measure_alone() { # host, quota, batch
  local dir=$OUT/alone/${suffix#-}${suffix:+-}q$2-b$3
  [ -f "$dir/summary.json" ] && return 0 # measured earlier in this run
  echo "testbed_vs_ddp: alone at $2 cores, B=$3 ($(uptime | sed 's/.*load/load/'))" >&2
  rm -rf "$dir"
  mkdir -p "$OUT/alone"
  tb set-cpu "$1" "$2"
  (on_host "$1" "$BN" train --workers 1 --threads 1 --global-batch "$3" --steps "$ALONE_STEPS" --eval-every 0 \
    "${model_args[@]}" --data-dir "$ALONE_DATA" --progress-seconds 0 --log-level warn --run-dir "$dir") \
    > "$dir.log" 2>&1 || fail "balancenet alone at $2 cores failed (exit $?), see $dir.log"
}

# The CPU one all-reduce of the model costs each of the scenario's hosts (bench/allreduce_cpu.py), with
# every quota lifted: CPU time does not depend on the quota, and Python's start at 0.1 cores takes 20 s.
measure_allreduce_cpu() { # scenario folder, hosts
  local json=$OUT/$1/allreduce-cpu.json i
  [ -f "$json" ] && return 0
  for ((i = 0; i < $2; i++)); do tb set-cpu "$i" none; done
  echo "testbed_vs_ddp: $1: the CPU of one all-reduce of $MODEL ($(uptime | sed 's/.*load/load/'))" >&2
  run_peers ddp_on_host "$2" "$(tb addr 0)" "$((next_port++))" bench/allreduce_cpu.py "${model_args[@]}" \
    --out "$json" > "$OUT/$1/allreduce-cpu.log" 2>&1 ||
    fail "$1: bench/allreduce_cpu.py failed (exit $?), see $OUT/$1/allreduce-cpu.log"
}

# A system's wire type as --grad-compress and ddp_peer.py's --comm-hook take it: powersgd4 is powersgd:4.
wire_of() { sed -E 's/^powersgd([0-9]+)$/powersgd:\1/' <<< "$1"; }

# framework_peer.py's flags of a run's: the same batch, steps, data, evaluation and model (cnn), no pacing.
lightning_args() {
  local -a out=()
  while (($#)); do
    case $1 in
      --global-batch | --steps | --data-dir | --eval-every | --model) out+=("$1" "$2") ;;
      *) echo "testbed_vs_ddp: error: lightning systems do not take $1" >&2; return 2 ;;
    esac
    shift 2
  done
  echo "${out[@]}" --target-accuracy 0
}

run_system() { # scenario folder, system, nodes, quotas, steps, changes, flags...
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
    bn-equal) run_bn "$nodes" "$OUT/$s/$system" "$log" "$@" --policy equal || rc=$? ;;
    bn-auto-lossy) run_bn "$nodes" "$OUT/$s/$system" "$log" "$@" --comm auto --allow-lossy-comm || rc=$? ;;
    bn-gc-*) run_bn "$nodes" "$OUT/$s/$system" "$log" "$@" --grad-compress "$(wire_of "${system#bn-gc-}")" || rc=$? ;;
    ddp-*) run_ddp ddp_on_host "$nodes" "$(tb addr 0)" "$((next_port++))" "$OUT/$s/$system.json" --print-steps \
      --comm-hook "$(wire_of "${system#ddp-}")" "$@" > "$log.host0.log" 2>&1 || rc=$? ;;
    bn-*) run_bn "$nodes" "$OUT/$s/$system" "$log" "$@" --comm "${system#bn-}" || rc=$? ;;
    ddp) run_ddp ddp_on_host "$nodes" "$(tb addr 0)" "$((next_port++))" "$OUT/$s/ddp.json" --print-steps "$@" \
      > "$log.host0.log" 2>&1 || rc=$? ;;
    lightning-balanced) run_lightning_bn "$nodes" "$OUT/$s/$system-run" "$OUT/$s/$system.json" "$log" \
      $(lightning_args "$@") || rc=$? ;;
    lightning-ddp) PYTHONWARNINGS=ignore run_peers lightning_on_host "$nodes" "$(tb addr 0)" "$((next_port++))" \
      bench/framework_peer.py --framework lightning --out "$OUT/$s/$system.json" $(lightning_args "$@") \
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

for s in $SCENARIOS; do
  read -r _ _ n1 n2 _ _ <<< "$(scenario "$s")"
  steady_of "$s" "$(steps_of "$s" "$n1" "$n2")" > /dev/null
done
echo "testbed_vs_ddp: $MODEL, scenarios $SCENARIOS, systems $SYSTEMS: about $(estimate_minutes) minutes on the" \
  "idle machine" >&2
mkdir -p "$OUT"
export BALANCENET_JOB_TOKEN
BALANCENET_JOB_TOKEN=$(od -An -N16 -tx1 /dev/urandom | tr -d ' \n')
if [ -n "${EVAL_EVERY:-}" ]; then
  make_data "$DATA" "$EVAL_IMAGES" "testbed_vs_ddp: error: EVAL_IMAGES" || fail "could not write the test set into $DATA"
fi
make_data "$CHECK_DATA" 1000 || fail "could not write the test set into $CHECK_DATA"
make_data "$ALONE_DATA" 100 || fail "could not write the test set into $ALONE_DATA"
touch "$OUT/scenarios.txt"
for s in $SCENARIOS; do
  read -r quotas batch steps_cnn steps_r18 rates changes <<< "$(scenario "$s")"
  nodes=$(awk -F, '{ print NF }' <<< "$quotas")
  steps=$(steps_of "$s" "$steps_cnn" "$steps_r18")
  from=$(steady_of "$s" "$steps")
  every=$steps target=- data=$CHECK_DATA timed=""
  [ "$s" != T1 ] && [ "$s" != TSLOW ] || target=${TARGET:-0.85}
  if [ "$s" = T1 ] && [ -n "${EVAL_EVERY:-}" ]; then
    every=$EVAL_EVERY data=$DATA timed="bn-balanced bn-auto ddp lightning-balanced lightning-ddp"
  elif [ "$s" = TSLOW ] && [ -n "${EVAL_EVERY:-}" ]; then
    every=$EVAL_EVERY data=$DATA timed="bn-auto-lossy ddp ddp-powersgd ddp-powersgd4"
  fi
  if [ "${QUICK:-0}" = 1 ]; then
    ALONE_STEPS=4 every=$steps
    [ "$s" != T1 ] || every=4 target=0.5 timed="bn-balanced bn-auto ddp lightning-balanced lightning-ddp"
  fi
  folder=$s$suffix
  mkdir -p "$OUT/$folder"
  up_args=(up "$nodes" --cpu "$quotas")
  [ "$rates" = - ] || up_args+=(--rate-mbit "$rates")
  tb "${up_args[@]}" >&2 || fail "could not make the testbed ($TB ${TB_ARGS[*]} ${up_args[*]});" \
    "if it is left over from an earlier run: $TB ${TB_ARGS[*]} down"
  testbed_up=1

  # The ideal: every distinct quota of the scenario (its changes included) alone, on the last host.
  IFS=, read -r -a q <<< "$quotas"
  alone_quotas=$(printf '%s\n' "${q[@]}" $([ "$changes" = - ] || tr ',' '\n' <<< "$changes" | cut -d= -f2) | sort -u)
  for aq in $alone_quotas; do measure_alone $((nodes - 1)) "$aq" "$batch"; done
  measure_allreduce_cpu "$folder" "$nodes"
  common=(--global-batch "$batch" --steps "$steps" --data-dir "$data" "${model_args[@]}")
  for system in $SYSTEMS; do
    # Time to target is compared between the default balancenet and DDP; the others evaluate at the end only.
    e=$steps
    [[ " $timed " != *" $system "* ]] || e=$every
    run_system "$folder" "$system" "$nodes" "$quotas" "$steps" "$changes" "${common[@]}" --eval-every "$e"
  done

  tb down
  testbed_up=0
  # This scenario's line replaces any earlier one of the same folder: a second call adds to the table.
  line="$folder $batch $quotas $target $([ "$changes" = - ] && echo - || echo "$CHANGED_HOST") $rates $changes"
  { grep -v "^$folder " "$OUT/scenarios.txt" || true; echo "$line $MODEL $from"; } > "$OUT/scenarios.txt.tmp"
  mv "$OUT/scenarios.txt.tmp" "$OUT/scenarios.txt"
done
"$PY" bench/testbed_vs_ddp_summary.py "$OUT" "$WARMUP"
echo "$command" >> "$OUT/command.txt"
echo "testbed_vs_ddp: rows in $OUT/testbed_vs_ddp.csv; commands: $OUT/command.txt; this one: $command" >&2
