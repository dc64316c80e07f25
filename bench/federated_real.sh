#!/usr/bin/env bash
# Federated training for real (issue 33) on a testbed (scripts/testbed.sh): host 0 runs `balancenet federate
# serve` (no CPU cap), hosts 1..8 each run one `balancenet federate join` client under its own kernel CPU quota
# (two at 0.1 core), each reading its OWN data directory: Fashion-MNIST's training set cut by Dirichlet(ALPHA)
# over the labels (bench/federated_split.py; each client's held-out split has its training share's label
# proportions). The server evaluates on the first TEST test images. Clients join over the first JOIN_SPREAD
# seconds (client i after i x JOIN_SPREAD / 8 s); the server starts rounds once 2 are there. Every system gets the
# same wall budget (--time-budget-s BUDGET; --rounds is only a cap):
#   balanced         balanced, every round done by DEADLINE (quotas from the clients' measured speeds)
#   fedavg-wait-all  fedavg, LOCAL_STEPS steps, waits for every sampled client (the slowest sets the round)
#   fedbuff          fedbuff (asynchronous, --buffer BUFFER), LOCAL_STEPS steps
#   fedavg-adam      FedAdam (Reddi et al.): fedavg's clients, --server-opt adam --server-lr ETA on the server
#   fedavg           FedAdam's baseline, fedavg with the same LOCAL_STEPS (the same flags as fedavg-wait-all: the
#                    two rows also show the run-to-run spread)
#   balanced-adam    balanced with FedAdam on the server (the server optimiser composes with every strategy)
# Usage: bench/federated_real.sh [OUT]        (needs root and a testbed-capable machine; see testbed.sh check)
#   SYSTEMS="..."    a subset or order of the systems above (default: balanced fedavg-wait-all fedbuff fedavg-adam
#                    fedavg)
#   QUOTAS=q1,...,q8 the clients' CPU quotas in cores (default 0.4,0.3,0.25,0.2,0.15,0.15,0.1,0.1; their count
#                    is the number of clients); the server's host is uncapped
#   ALPHA=a          Dirichlet concentration of the split (default 0.1)   SEED=n  split and run seed (default 1)
#   BUDGET=s         wall budget of every system (default 300)   JOIN_SPREAD=s  (default 60)
#   LOCAL_STEPS=n    (default 10)  DEADLINE=s balanced's round (default 5)  BUFFER=k fedbuff's (default 4)
#   LR=x             clients' SGD step (default 0.05)   ETA=x  FedAdam's server step size (default 0.01)
#   TEST=n           test images the server evaluates after every round (default 1000)
#   PORT=p           the server's port (default 29533)   MODEL=m (default cnn)   FLAGS="..." more serve flags
#   TB_NAME, TB_SUBNET  the testbed's name and /24 (default fedreal, 10.213.98)   BN=path  the binary (default
#                    build/apps/balancenet)
#   DRY_RUN=1        print the testbed and balancenet commands (the data split is still made, it is cheap) and
#                    run nothing else; needs neither root nor a built binary
# Results in OUT (default runs/federated-real/<time>): data/ (server/, c1..c8/), split.md (label counts per
# client), setup.md (hosts, quotas, settings, command), <system>/ (the server's run directory: rounds.csv,
# summary.json), <system>/server.log and <system>/c<i>.log, federated_real.md (the table and the setup),
# federated_real.json, accuracy.png (test accuracy vs wall time, every system). Exit 2 on bad input, 77 when this
# machine cannot make a testbed, 1 when a run failed (the others still run; the table marks it).
set -euo pipefail
cd "$(dirname "$0")/.."
VARS="BN SYSTEMS QUOTAS ALPHA SEED BUDGET JOIN_SPREAD LOCAL_STEPS DEADLINE BUFFER LR ETA TEST PORT MODEL FLAGS TB_NAME
  TB_SUBNET"
overrides=""
for v in $VARS; do
  [ -z "${!v:-}" ] || overrides+="$v=$(printf %q "${!v}") "
done
command="${overrides}bench/federated_real.sh $*"
ALL_SYSTEMS="balanced fedavg-wait-all fedbuff fedavg-adam fedavg balanced-adam"
SYSTEMS=${SYSTEMS:-$ALL_SYSTEMS}
QUOTAS=${QUOTAS:-0.4,0.3,0.25,0.2,0.15,0.15,0.1,0.1}
ALPHA=${ALPHA:-0.1}
SEED=${SEED:-1}
BUDGET=${BUDGET:-300}
JOIN_SPREAD=${JOIN_SPREAD:-60}
LOCAL_STEPS=${LOCAL_STEPS:-10}
DEADLINE=${DEADLINE:-5}
BUFFER=${BUFFER:-4}
LR=${LR:-0.05}
ETA=${ETA:-0.01}
TEST=${TEST:-1000}
PORT=${PORT:-29533}
MODEL=${MODEL:-cnn}
read -r -a EXTRA <<< "${FLAGS:-}"
DRY_RUN=${DRY_RUN:-0}

die2() {
  echo "federated_real: error: $*" >&2
  exit 2
}
for v in SEED BUDGET LOCAL_STEPS DEADLINE BUFFER TEST PORT; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] || die2 "$v must be a positive whole number, not '${!v}'"
done
[[ $JOIN_SPREAD =~ ^[0-9]+$ ]] || die2 "JOIN_SPREAD must be a whole number of seconds, not '$JOIN_SPREAD'"
for v in ALPHA LR ETA; do
  [[ ${!v} =~ ^[0-9]*\.?[0-9]+$ ]] && [[ ${!v} =~ [1-9] ]] || die2 "$v must be a positive number, not '${!v}'"
done
[[ $QUOTAS =~ ^[0-9.]+(,[0-9.]+)+$ ]] || die2 "QUOTAS must be two or more cores, e.g. 0.4,0.1, not '$QUOTAS'"
IFS=, read -r -a QUOTA <<< "$QUOTAS"
CLIENTS=${#QUOTA[@]}
for s in $SYSTEMS; do
  [[ " $ALL_SYSTEMS " == *" $s "* ]] || die2 "unknown system '$s' ($ALL_SYSTEMS)"
done
OUT=${1:-runs/federated-real/$(date +%Y%m%d-%H%M%S)}
. bench/lib/peers.sh   # PY (Debian's python3, with numpy)
. bench/lib/testset.sh # FULL_DATA, make_data
BN=${BN:-build/apps/balancenet}
TB=scripts/testbed.sh
TB_ARGS=(--name "${TB_NAME:-fedreal}" --subnet "${TB_SUBNET:-10.213.98}")
tb() { "$TB" "${TB_ARGS[@]}" "$@"; }
# Fashion-MNIST's statistics for every process: a client would otherwise normalise by its own shard's (under
# alpha 0.1, very different ones), and the server's model would see other inputs than the clients trained on.
NORMALIZE=0.2860,0.3530
# --iface eth0 (every testbed host's link) on both sides, as bench/testbed_vs_ddp.sh: Gloo then listens and
# connects there, not on the loopback of the host's namespace.

# flags SYSTEM: the strategy and work of one system.
flags() {
  case $1 in
    balanced) echo --strategy balanced --deadline-s "$DEADLINE" ;;
    fedavg-wait-all | fedavg) echo --strategy fedavg --local-steps "$LOCAL_STEPS" ;;
    fedbuff) echo --strategy fedbuff --local-steps "$LOCAL_STEPS" --buffer "$BUFFER" ;;
    fedavg-adam) echo --strategy fedavg --local-steps "$LOCAL_STEPS" --server-opt adam --server-lr "$ETA" ;;
    balanced-adam) echo --strategy balanced --deadline-s "$DEADLINE" --server-opt adam --server-lr "$ETA" ;;
  esac
}

# Prints a command (DRY_RUN) or runs it.
act() {
  if ((DRY_RUN)); then
    printf '%q ' "$@"
    echo
  else
    "$@"
  fi
}

if ((!DRY_RUN)); then
  [ -x "$BN" ] || die2 "$BN not built (cmake --build build --target balancenet)"
  if ! why=$(tb check); then
    [ -n "$why" ] || exit 2 # testbed.sh refused TB_NAME or TB_SUBNET, and said why
    echo "federated_real: skipped: this machine cannot make a testbed: $why" >&2
    exit 77
  fi
fi

mkdir -p "$OUT"
make_data "$OUT/data/server" "$TEST" "federated_real: error: TEST" || exit 2
"$PY" bench/federated_split.py "$FULL_DATA" "$OUT/data" "$CLIENTS" "$ALPHA" "$SEED" > "$OUT/split.md" ||
  die2 "the data split failed"
cat "$OUT/split.md" >&2

# The hosts' processes and the testbed go when the script ends, however it ends.
testbed_up=0
clients=()
cleanup() {
  local rc=$?
  ((${#clients[@]} == 0)) || kill "${clients[@]}" 2>/dev/null || true
  if ((testbed_up)); then tb down || { echo "federated_real: error: could not take the testbed down" >&2; rc=1; }; fi
  exit $rc
}
trap cleanup EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

act "$TB" "${TB_ARGS[@]}" up $((CLIENTS + 1)) --cpu "none,$QUOTAS"
((DRY_RUN)) || testbed_up=1
SERVER_ADDR=$( ((DRY_RUN)) && echo "${TB_SUBNET:-10.213.98}.1" || tb addr 0)
RUN_TIMEOUT=$((BUDGET * 2 + JOIN_SPREAD + 300))
{
  echo "Testbed ${TB_ARGS[*]}: host 0 the server ($SERVER_ADDR:$PORT, no CPU cap), hosts 1..$CLIENTS clients" \
    "c1..c$CLIENTS at $QUOTAS cores (sum $(echo "$QUOTAS" | tr , '\n' | awk '{s += $1} END {print s}')) on" \
    "$(nproc) cores ($(uname -n))."
  echo "Data: Fashion-MNIST's training set cut by Dirichlet(alpha=$ALPHA) over the labels, seed $SEED, one IDX" \
    "directory per client (split.md); the server evaluates on the first $TEST test images."
  echo "Clients join over ${JOIN_SPREAD} s (client i after i x $JOIN_SPREAD / $CLIENTS s); the server starts rounds" \
    "with 2. Every system: --time-budget-s $BUDGET, model $MODEL, local batch 32, --lr $LR, LOCAL_STEPS" \
    "$LOCAL_STEPS, balanced --deadline-s $DEADLINE, fedbuff --buffer $BUFFER, FedAdam --server-lr $ETA."
  echo "Command: $command"
} > "$OUT/setup.md"
cat "$OUT/setup.md" >&2

: > "$OUT/runs.txt"
failed=0
for s in $SYSTEMS; do
  dir=$OUT/$s
  ((DRY_RUN)) || { rm -rf "$dir" && mkdir -p "$dir"; }
  echo "federated_real: $s ($(uptime | sed 's/.*load/load/'))" >&2
  start=$SECONDS rc=0
  # shellcheck disable=SC2207 # flags' words are meant to split
  server=("$TB" "${TB_ARGS[@]}" run 0 timeout -k 10 "$RUN_TIMEOUT" "$BN" federate serve --port "$PORT"
    --bind "$SERVER_ADDR" --iface eth0 --min-clients 2 --insecure-open-job $(flags "$s") --time-budget-s "$BUDGET" --rounds 100000 --eval-every 1 --model "$MODEL"
    --local-batch 32 --lr "$LR" --seed "$SEED" --data "idx:$OUT/data/server" --normalize "$NORMALIZE"
    --run-dir "$dir" ${EXTRA[@]+"${EXTRA[@]}"})
  if ((DRY_RUN)); then
    act "${server[@]}"
  else
    "${server[@]}" > "$dir/server.log" 2>&1 &
    spid=$!
  fi
  clients=()
  for ((i = 1; i <= CLIENTS; i++)); do
    # Client i after i x JOIN_SPREAD / CLIENTS seconds from the server's start. "--name=": testbed.sh takes a
    # separate "--name X" anywhere on its command line for its own (the testbed's name).
    delay=$(awk -v i="$i" -v j="$JOIN_SPREAD" -v n="$CLIENTS" 'BEGIN {printf "%.2f", i * j / n}')
    join=("$TB" "${TB_ARGS[@]}" run "$i" timeout -k 10 "$RUN_TIMEOUT" "$BN" federate join --server "$SERVER_ADDR:$PORT"
      --data "idx:$OUT/data/c$i" --normalize "$NORMALIZE" "--name=c$i" --iface eth0 --insecure-open-job)
    if ((DRY_RUN)); then
      echo "# after $delay s:"
      act "${join[@]}"
    else
      (sleep "$delay" && exec "${join[@]}") > "$dir/c$i.log" 2>&1 &
      clients+=($!)
    fi
  done
  ((DRY_RUN)) && continue
  wait "$spid" || rc=$?
  # The server is done: the clients' part ends with it (a client still joining or waiting is stopped).
  kill "${clients[@]}" 2>/dev/null || true
  wait "${clients[@]}" 2>/dev/null || true
  clients=()
  ((rc == 0)) || { echo "federated_real: error: $s failed (exit $rc), see $dir/server.log" >&2; failed=1; }
  echo "$s $rc $((SECONDS - start))" >> "$OUT/runs.txt"
done
((DRY_RUN)) && exit 0
"$PY" bench/federated_real_summary.py "$OUT" | tee "$OUT/federated_real.md"
echo "$command" > "$OUT/command.txt"
echo "federated_real: table in $OUT/federated_real.md$([ -f "$OUT/accuracy.png" ] && echo ", chart $OUT/accuracy.png");" \
  "command: $command" >&2
exit $failed
