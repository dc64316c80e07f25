#!/usr/bin/env bash
# balancenet under mpirun (Open MPI; MPICH's mpiexec takes the same -n): one process per worker, each reading
# its rank, the world size and its local rank from the launcher's variables (docs/usage.md, "mpirun").
# Usage: examples/mpi/train.sh [train flags...]
#   NP      workers (default 4)
#   HOSTS   mpirun's --host list for several machines, e.g. "node1:2,node2:2"; the first is the master, and
#           the job gets a fresh token (both passed with -x: in the environment, not on a command line)
#   OUT, RUN_DIR, BALANCENET: see examples/common.sh
set -euo pipefail
source "$(dirname "$0")/../common.sh"
NP=${NP:-4}
hosts=()
if [ -n "${HOSTS:-}" ]; then
  export MASTER_ADDR=${MASTER_ADDR:-${HOSTS%%[:,]*}}
  BALANCENET_JOB_TOKEN=${BALANCENET_JOB_TOKEN:-$(openssl rand -hex 32)}
  export BALANCENET_JOB_TOKEN
  hosts=(--host "$HOSTS" -x MASTER_ADDR -x BALANCENET_JOB_TOKEN)
fi
mpirun -n "$NP" "${hosts[@]}" "$BALANCENET" train --model cnn --global-batch 128 --lr 0.05 --momentum 0.9 \
  --steps "${STEPS:-500}" --policy balanced --run-dir "$RUN_DIR" "$@"
