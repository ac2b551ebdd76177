#!/usr/bin/env bash
# Session 25's held-out test of the peer loss on a machine start it never saw: validation/data/h200x4/a2a3/run.sh
# (commsim-measure alltoall on GPUs 0-2 and 0-3, 4 / 8 / 16 / default channels, two rounds) then
# validation/data/h200x4/peers/run.sh (alltoallv to 1, 2, 3 peers, fan-out, fan-in, one pair; default / 16 / 8
# channels). Predictions written before measuring: predicted/ (predict.sh).
# Usage on the lease, from the repository root with .ext/m (commsim-measure + libtomlplusplus) carried:
#   validation/data/h100x4/peers2/run.sh   (writes $OUT/a2a3.tar.gz and $OUT/peers.tgz)
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p .ext/measure && cp .ext/m/* .ext/measure/
cat /proc/sys/kernel/random/boot_id
nvidia-smi -L
t0=$SECONDS
M=.ext/m/commsim-measure bash validation/data/h200x4/a2a3/run.sh
echo "a2a3 done in $((SECONDS - t0)) s"
BUDGET_S=${BUDGET_S:-240} bash validation/data/h200x4/peers/run.sh default 16 8
echo "all done in $((SECONDS - t0)) s"
