#!/usr/bin/env bash
# Federated training with heterogeneous clients (issue 18): 8 clients paced at 100,100,50,50,25,25,12,12
# samples/s (--node-speed), cnn on Fashion-MNIST split by Dirichlet(alpha) labels, for alpha 0.1 and 0.5; each
# strategy gets the same wall budget (--time-budget-s; --rounds is only a cap):
#   fedavg-wait-all  fedavg, LOCAL_STEPS steps, waits for every client (the slowest sets the round's length)
#   fedavg-deadline  fedavg, LOCAL_STEPS steps, clients past --deadline-s DEADLINE left out of the round
#   fedprox          fedprox (--mu MU), LOCAL_STEPS steps, waits for every client
#   fednova          fednova, local steps drawn per client and round in DRAWN (FedNova's setting)
#   fedavg-drawn     fedavg with the same drawn steps: FedNova's published comparison (normalised vs not)
#   fedbuff          fedbuff (asynchronous, --buffer BUFFER), LOCAL_STEPS steps
#   balanced         balanced: per-client step quotas from the measured speeds, all done by DEADLINE
# Usage: bench/federated.sh [OUT] [alpha...]   (default alphas: 0.1 0.5)
#   BUDGET=s        wall budget of every run (default 150)
#   DEADLINE=s      round deadline of fedavg-deadline and balanced (default 5)
#   LOCAL_STEPS=n   fixed local steps (default 10)   DRAWN=LO:HI  drawn local steps (default 5:20)
#   LR=x            clients' SGD step size (default 0.05)   MU=x  FedProx's weight (default 0.01)
#   BUFFER=k        FedBuff's buffer (default 4)   TEST=n  test images evaluated after every round (default 2000)
#   SYSTEMS="..."   a subset of the systems above   FLAGS="..."  more flags for every run (e.g. --threads 1)
# Defaults for 2 cores: local batch 32 and lr 0.05 with 5-20 local steps move the cnn to 80% on Fashion-MNIST
# in a few hundred aggregated steps; --eval-every 1 on TEST images keeps time-to-accuracy exact to a round
# without the server's evaluation (the whole 10,000 test set: ~1 s a round here) eating the budget.
# Results: OUT/alpha-<a>/<system>/ (run directories), OUT/alpha-<a>/<system>.log, OUT/federated.md (one table
# per alpha and the ratios the targets ask for), OUT/federated.json. Exit 2 on bad input, 1 when a run failed
# (the others still run; the tables mark it).
set -euo pipefail
cd "$(dirname "$0")/.."
VARS="BUDGET DEADLINE LOCAL_STEPS DRAWN LR MU BUFFER TEST SYSTEMS FLAGS"
overrides=""
for v in $VARS; do
  [ -z "${!v:-}" ] || overrides+="$v=$(printf %q "${!v}") "
done
command="${overrides}bench/federated.sh $*"
BUDGET=${BUDGET:-150}
DEADLINE=${DEADLINE:-5}
LOCAL_STEPS=${LOCAL_STEPS:-10}
DRAWN=${DRAWN:-5:20}
LR=${LR:-0.05}
MU=${MU:-0.01}
BUFFER=${BUFFER:-4}
TEST=${TEST:-2000}
ALL_SYSTEMS="fedavg-wait-all fedavg-deadline fedprox fednova fedavg-drawn fedbuff balanced"
SYSTEMS=${SYSTEMS:-$ALL_SYSTEMS}
read -r -a EXTRA <<< "${FLAGS:-}"
for v in BUDGET DEADLINE LOCAL_STEPS BUFFER TEST; do
  [[ ${!v} =~ ^[1-9][0-9]*$ ]] ||
    { echo "federated: error: $v must be a positive whole number, not '${!v}'" >&2; exit 2; }
done
[[ $DRAWN =~ ^[1-9][0-9]*:[1-9][0-9]*$ ]] || { echo "federated: error: DRAWN must be LO:HI, not '$DRAWN'" >&2; exit 2; }
for s in $SYSTEMS; do
  [[ " $ALL_SYSTEMS " == *" $s "* ]] || { echo "federated: error: unknown system '$s' ($ALL_SYSTEMS)" >&2; exit 2; }
done
OUT=${1:-runs/federated/$(date +%Y%m%d-%H%M%S)}
shift $(($# > 0 ? 1 : 0))
ALPHAS=${*:-0.1 0.5}
. bench/lib/peers.sh   # PY
. bench/lib/testset.sh # make_data
BN=build/apps/balancenet
[ -x "$BN" ] || { echo "federated: error: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }

COMMON=(--clients 8 --node-speed "100,100,50,50,25,25,12,12" --model cnn --local-batch 32 --lr "$LR" --seed 1
  --rounds 100000 --time-budget-s "$BUDGET" --eval-every 1)

# flags SYSTEM: the strategy and work of one system.
flags() {
  case $1 in
    fedavg-wait-all) echo --strategy fedavg --local-steps "$LOCAL_STEPS" ;;
    fedavg-deadline) echo --strategy fedavg --local-steps "$LOCAL_STEPS" --deadline-s "$DEADLINE" ;;
    fedprox) echo --strategy fedprox --local-steps "$LOCAL_STEPS" --mu "$MU" ;;
    fednova) echo --strategy fednova --local-steps "$DRAWN" ;;
    fedavg-drawn) echo --strategy fedavg --local-steps "$DRAWN" ;;
    fedbuff) echo --strategy fedbuff --local-steps "$LOCAL_STEPS" --buffer "$BUFFER" ;;
    balanced) echo --strategy balanced --deadline-s "$DEADLINE" ;;
  esac
}

failed=0
mkdir -p "$OUT"
: > "$OUT/runs.txt"
make_data "$OUT/data" "$TEST" "federated: error: TEST" || exit 2
for alpha in $ALPHAS; do
  mkdir -p "$OUT/alpha-$alpha"
  for s in $SYSTEMS; do
    dir=$OUT/alpha-$alpha/$s
    rm -rf "$dir" "$dir.log"
    echo "federated: alpha $alpha $s ($(uptime | sed 's/.*load/load/'))" >&2
    start=$SECONDS rc=0
    # shellcheck disable=SC2046 # flags' words are meant to split
    timeout -k 10 $((BUDGET * 3 + 120)) "$BN" federate "${COMMON[@]}" --alpha "$alpha" $(flags "$s") \
      --data-dir "$OUT/data" --run-dir "$dir" ${EXTRA[@]+"${EXTRA[@]}"} > "$dir.log" 2>&1 || rc=$?
    ((rc == 0)) || { echo "federated: error: alpha $alpha $s failed (exit $rc), see $dir.log" >&2; failed=1; }
    echo "$alpha $s $rc $((SECONDS - start))" >> "$OUT/runs.txt"
  done
done
"$PY" bench/federated_summary.py "$OUT" | tee "$OUT/federated.md"
echo "$command" > "$OUT/command.txt"
echo "federated: tables in $OUT/federated.md; command: $command" >&2
exit $failed
