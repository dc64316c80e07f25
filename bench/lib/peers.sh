# Shared by the benchmarks that run PyTorch DDP beside balancenet (bench/vs_ddp.sh, bench/testbed_vs_ddp.sh):
# the Python to use, the skip when it has no torch, and a group of peer processes started together and
# waited for together (DDP's, bench/allreduce_cpu.py's). Source it from the repository root.
PY="${BALANCENET_PYTHON:-$PWD/.venv/bin/python}"  # the project's torch (scripts/setup.sh), the one balancenet links

# Exit 77 (a skip, for CTest) when $PY cannot import torch.distributed. $1: the script's name for the message.
require_torch() {
  if ! "$PY" -c 'import torch.distributed' 2>/dev/null; then
    echo "$1: skipped: $PY cannot import torch (run scripts/setup.sh)" >&2
    exit 77
  fi
}

free_port() { "$PY" -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])'; }

# Waits for every pid given (children of this shell). The first one to fail takes the others down with it:
# a peer whose partner died would otherwise wait in a collective until its own timeout (DDP's: 30 minutes).
# Returns the first failure's status, or 0.
wait_peers() {
  local -a left=("$@")
  local rc=0 done_pid p status
  while ((${#left[@]})); do
    status=0
    wait -n -p done_pid "${left[@]}" || status=$?
    local -a still=()
    for p in "${left[@]}"; do [ "$p" = "$done_pid" ] || still+=("$p"); done
    left=(${still[@]+"${still[@]}"})
    if ((status != 0 && rc == 0)); then
      rc=$status
      ((${#left[@]})) && kill -TERM "${left[@]}" 2>/dev/null || true
    fi
  done
  return $rc
}

# run_peers RUNNER NODES MASTER_ADDR MASTER_PORT SCRIPT ARGS...: one Python SCRIPT per rank with torchrun's
# environment, set by hand: Debian's `python3 -m torch.distributed.run` (torch 1.13) fails under Python 3.11
# (AttributeError in its redirect handling), so the workers are started directly. Each is started as
# `RUNNER RANK env ... python3 ...` in a background subshell: the runner places rank RANK (this machine, a
# testbed host), sets what is local to it (LOCAL_RANK, LOCAL_WORLD_SIZE, GLOO_SOCKET_IFNAME) and execs the
# command, so that the pid waited for (and stopped by wait_peers) is the worker's own.
run_peers() {
  local runner=$1 nodes=$2 addr=$3 port=$4 script=$5 r
  local -a pids=()
  shift 5
  for ((r = 0; r < nodes; r++)); do
    "$runner" "$r" env RANK=$r WORLD_SIZE="$nodes" MASTER_ADDR="$addr" MASTER_PORT="$port" \
      "$PY" "$script" "$@" &
    pids+=($!)
  done
  wait_peers "${pids[@]}"
}

# run_ddp RUNNER NODES MASTER_ADDR MASTER_PORT OUT_JSON ARGS...: bench/ddp_peer.py on every rank (run_peers).
run_ddp() {
  local runner=$1 nodes=$2 addr=$3 port=$4 out=$5
  shift 5
  run_peers "$runner" "$nodes" "$addr" "$port" bench/ddp_peer.py --out "$out" "$@"
}
