# shellcheck shell=bash
# Shared by the GPU benchmarks (bench/gpu_hetero.sh, bench/gpu_mixed.sh, bench/gpu_overhead.sh): the program, its
# flags, the GPU, the data, runs of balancenet (its launcher, or one process per rank started here with an
# environment of its own) and the results file. Source it from the repository root after bench/lib/peers.sh.
#   BN           the balancenet program (default build/apps/balancenet; scripts/gpu-check.sh passes its build's)
#   BN_ROOT      where scripts/gpu-check.sh unpacked .gpu-deps/ (default /tmp/bn-root): the data comes from there
#                when this machine has no dataset-fashion-mnist or fortunes of its own
#   RUN_TIMEOUT  seconds one run may take (default 150); BN_FLAGS: more `balancenet train` flags for every run
#   BENCH_DEVICE the GPU workers' device (default cuda:0); cpu: a smoke run of a script's plumbing on a machine
#                without a GPU (tiny sizes advised: the numbers mean nothing then)
BN=${BN:-build/apps/balancenet}
DEV=${BENCH_DEVICE:-cuda:0}
[ -x "$PY" ] || PY=$(command -v python3)  # the GPU machine: no .venv/, its python3 has the CUDA torch
BN_ROOT=${BN_ROOT:-/tmp/bn-root}
RUN_TIMEOUT=${RUN_TIMEOUT:-150}
# --offload-below keeps its default: a CPU worker whose share is small hands its gradient to a GPU peer rather than
# joining the exchange, which is how a GPU job keeps CPU workers from costing more than they add.
GPU_FLAGS=(--progress-seconds 0 --log-level warn)

# gpu_require NAME FLAG...: exit 2 without the program, 3 (with a line saying so) when its `train --help` lacks a
# flag the bench needs, 77 (a skip) when PY's torch sees no GPU.
gpu_require() {
  local name=$1 help flag
  shift
  [ -x "$BN" ] || { echo "$name: $BN not built (cmake --build build --target balancenet)" >&2; exit 2; }
  help=$("$BN" train --help 2>&1)
  for flag in "$@"; do
    if ! grep -qE -- "(^|[ ,])$flag([ ,=]|\$)" <<< "$help"; then
      echo "$name: balancenet at $BN lacks the train flag $flag (this build predates the GPU workers of issue 43)" >&2
      exit 3
    fi
  done
  if [ "$DEV" = cpu ]; then
    echo "$name: BENCH_DEVICE=cpu: a smoke run on the CPU, not a measurement" >&2
  elif ! "$PY" -c 'import sys, torch; sys.exit(not torch.cuda.is_available())' 2>/dev/null; then
    echo "$name: skipped: $PY's torch sees no GPU" >&2
    exit 77
  fi
}

# gpu_begin OUT KIND KEY=VALUE...: OUT/meta.txt (what bench/gpu_summary.py prints beside the table), an empty
# OUT/results.txt.
gpu_begin() {
  local out=$1 kind=$2
  shift 2
  mkdir -p "$out"
  printf '%s\n' "kind=$kind" "$@" > "$out/meta.txt"
  : > "$out/results.txt"
}

# gpu_result OUT MODEL SYSTEM RATE [NOTE...]: one line of OUT/results.txt (RATE: samples/s, or 'failed').
gpu_result() {
  local out=$1
  shift
  echo "$*" | tee -a "$out/results.txt" >&2
}

# The Fashion-MNIST .gz files: Debian's dataset-fashion-mnist, here or unpacked under BN_ROOT.
fashion_source() {
  local d
  for d in "${FASHION_DIR:-}" /usr/share/datasets/fashion-mnist "$BN_ROOT/usr/share/datasets/fashion-mnist"; do
    [ -n "$d" ] && [ -s "$d/train-images-idx3-ubyte.gz" ] && { echo "$d"; return 0; }
  done
  echo "gpu bench: no Fashion-MNIST (dataset-fashion-mnist; scripts/gpu-deps.sh downloads it, gpu-check.sh unpacks it)" >&2
  return 1
}

# gpu_image_folder DIR LIMIT: DIR/train and DIR/val, LIMIT images each (examples/fashion_mnist_to_imagefolder.py).
gpu_image_folder() {
  local dir=$1 limit=$2 source
  [ -d "$dir/train" ] && return 0
  source=$(fashion_source) || return 1
  "$PY" examples/fashion_mnist_to_imagefolder.py "$dir.tmp" --limit "$limit" --source "$source" > /dev/null &&
    mv "$dir.tmp" "$dir"
}

# gpu_text FILE: the fortunes text (bench/lib/fortunes.sh), from BN_ROOT's copy where this machine has none.
gpu_text() {
  if [ -z "${FORTUNES_DIR:-}" ] && [ ! -d /usr/share/games/fortunes ] && [ -d "$BN_ROOT/usr/share/games/fortunes" ]; then
    FORTUNES_DIR=$BN_ROOT/usr/share/games/fortunes
  fi
  FORTUNES_DIR=${FORTUNES_DIR:-/usr/share/games/fortunes} fortunes_text "$1"
}

# show_tail LOG...: the last lines of each log, after a failed run.
show_tail() {
  local log
  for log in "$@"; do
    [ -s "$log" ] || continue
    echo "--- last lines of $log:" >&2
    tail -n 25 "$log" >&2
  done
}

# bn_launch LOG RUN_DIR TRAIN_ARGS...: `balancenet train` with its own launcher (--workers in the args), under
# RUN_TIMEOUT (--foreground: the run stays in the caller's process group, which scripts/gpu-check.sh's own
# timeout stops whole). Fails (after the log's tail) when the run does.
bn_launch() {
  local log=$1 run=$2
  shift 2
  rm -rf "$run"
  # shellcheck disable=SC2086  # BN_FLAGS is a list of words
  if ! timeout --foreground -k 5 "$RUN_TIMEOUT" "$BN" train "$@" "${GPU_FLAGS[@]}" ${BN_FLAGS:-} --run-dir "$run" > "$log" 2>&1; then
    show_tail "$log"
    return 1
  fi
}

# bn_ranks LOG RUN_DIR N ENV_0 ... ENV_N-1 -- TRAIN_ARGS...: N workers started here as another launcher would
# (torchrun's RANK, WORLD_SIZE, LOCAL_RANK, LOCAL_WORLD_SIZE, MASTER_ADDR, MASTER_PORT: rank 0 serves the store),
# rank r with the extra environment ENV_r ("NAME=value NAME=value", may be empty): how one worker gets an MPS
# limit of its own. Waits for all (bench/lib/peers.sh's wait_peers: the first failure stops the others).
bn_ranks() {
  local log=$1 run=$2 n=$3 port r rc=0
  shift 3
  local -a envs=() pids=()
  for ((r = 0; r < n; r++)); do envs+=("$1"); shift; done
  [ "$1" = -- ] && shift
  rm -rf "$run"
  port=$(free_port)
  : > "$log"
  for ((r = 0; r < n; r++)); do
    # shellcheck disable=SC2086  # ENV_r and BN_FLAGS are lists of words
    env RANK=$r WORLD_SIZE="$n" LOCAL_RANK=$r LOCAL_WORLD_SIZE="$n" MASTER_ADDR=127.0.0.1 MASTER_PORT="$port" \
      ${envs[r]} timeout --foreground -k 5 "$RUN_TIMEOUT" "$BN" train "$@" "${GPU_FLAGS[@]}" ${BN_FLAGS:-} --run-dir "$run" \
      > "$log.rank$r" 2>&1 &
    pids+=($!)
  done
  wait_peers "${pids[@]}" || rc=$?
  for ((r = 0; r < n; r++)); do sed "s/^/[rank $r] /" "$log.rank$r" >> "$log"; rm -f "$log.rank$r"; done
  ((rc == 0)) || show_tail "$log"
  return $rc
}

# bn_rate RUN_DIR WARMUP: samples/s of a finished run (bench/gpu_summary.py rate).
bn_rate() { "$PY" bench/gpu_summary.py rate "$1" "$2"; }

# gpu_systems OUT MODEL BENCH SYSTEM...: the calling script's `measure MODEL SYSTEM` for each system, its rate
# recorded (gpu_result), or its failure (FAILED=1, the run's log named).
gpu_systems() {
  local out=$1 model=$2 bench=$3 system rate
  shift 3
  for system in "$@"; do
    echo "$bench: $model $system" >&2
    if rate=$(measure "$model" "$system"); then
      gpu_result "$out" "$model" "$system" "$rate"
    else
      gpu_result "$out" "$model" "$system" failed "see $out/$model-$system.log"
      FAILED=1
    fi
  done
}
