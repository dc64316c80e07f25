# Shared by issue 53's memory benchmarks (bench/memory_capped.sh, bench/recompute_capped.sh): the cap that holds a
# model's sgd state and a pass of samples, and each side's run. Source it after bench/lib/peers.sh, with BENCH (the
# script's name, for its messages), BN, NODES, OUT and the array `common` (the flags of every balancenet side) set.

# cap_mib PARAMETERS MB_PER_SAMPLE PASS: the sgd state (parameters x 12 bytes) and PASS samples' activations, half a
# sample more so that one pass holds exactly PASS, in MiB (`balancenet models` gives the first two).
cap_mib() { "$PY" -c "print(round(($1 * 12 + ($3 + 0.5) * $2 * 1e6) / 2**20, 2))"; }

# Rank $1 of this machine's NODES workers: torchrun's local variables, then the command.
on_this_machine() {
  local r=$1
  shift
  LOCAL_RANK=$r LOCAL_WORLD_SIZE=$NODES exec "$@"
}

# run_bn NAME FLAGS...: `balancenet train` with `common` and FLAGS into OUT/NAME, its log OUT/NAME.log; a failure
# stops the benchmark in one line.
run_bn() {
  local name=$1
  shift
  echo "$BENCH: $name ($(uptime | sed 's/.*load/load/'))" >&2
  rm -rf "${OUT:?}/$name"
  "$BN" train "${common[@]}" --run-dir "$OUT/$name" "$@" > "$OUT/$name.log" 2>&1 \
    || { echo "$BENCH: $name failed, see $OUT/$name.log" >&2; exit 1; }
}

# run_ddp_side NAME ARGS...: bench/ddp_peer.py with ARGS on NODES ranks of this machine into OUT/NAME.json.
run_ddp_side() {
  local name=$1
  shift
  echo "$BENCH: $name" >&2
  run_ddp on_this_machine "$NODES" 127.0.0.1 "$(free_port)" "$OUT/$name.json" "$@" > "$OUT/$name.log" 2>&1 \
    || { echo "$BENCH: $name failed, see $OUT/$name.log" >&2; exit 1; }
}
