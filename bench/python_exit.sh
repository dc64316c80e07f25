#!/usr/bin/env bash
# How often a launched Python script fails to end: the example (examples/python/train_ddp.py, balancenet's five
# lines in a DDP script) launched N times in a row on 2 workers, each under a time limit; a launch still running
# at the limit is a hang (the interpreter's teardown), and is counted and stopped. Also runs plain DDP (no
# balancenet) the same way, for comparison.
#   [KINDS="balancenet plain-ddp"] bench/python_exit.sh [N (default 50)] [LIMIT_S (default 120)]
# Prints one line per kind: launches, ended, hangs, failures, and the seconds each launch took (median, max).
set -euo pipefail
cd "$(dirname "$0")/.."
n=${1:-50}
limit=${2:-120}
out=$(mktemp -d)
trap 'rm -rf "$out"' EXIT
for kind in ${KINDS:-balancenet plain-ddp}; do
  args=(examples/python/train_ddp.py --steps 10)
  [ "$kind" = plain-ddp ] && args=(examples/python/plain_ddp.py --steps 10 --out "$out/params.pt")
  ended=0 hangs=0 failures=0
  : >"$out/seconds"
  for i in $(seq 1 "$n"); do
    start=$(date +%s.%N)
    set +e
    timeout -k 5 "$limit" build/apps/balancenet launch --workers 2 --run-dir "$out/run$i" "${args[@]}" >"$out/log" 2>&1
    rc=$?
    set -e
    echo "$(date +%s.%N) - $start" | bc >>"$out/seconds"
    if [ $rc -eq 0 ]; then ended=$((ended + 1));
    elif [ $rc -eq 124 ] || [ $rc -eq 137 ]; then hangs=$((hangs + 1)); cp "$out/log" "$out/hang$i.log";
    else failures=$((failures + 1)); tail -3 "$out/log" >&2; fi
  done
  read -r median max < <(sort -n "$out/seconds" | awk '{a[NR]=$1} END {printf "%.1f %.1f\n", a[int((NR+1)/2)], a[NR]}')
  echo "$kind: $n launches, $ended ended, $hangs hangs (over ${limit} s), $failures failed; seconds per launch median $median, max $max"
done
