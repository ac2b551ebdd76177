#!/bin/bash
# Issue 18: the commsim-measure data behind commsim's accuracy figures, measured again with --timing pipelined
# (nccl-tests' semantics, what the simulator's time_us predicts), and one pipeline configuration timed per-op and
# per-iteration to bound what the timing changes for pipeline steps. Output: /tmp/mp/.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
M=$PWD/.ext/measure/commsim-measure
D=/tmp/mp; mkdir -p $D; T0=$(date +%s)
run() { local name=$1; shift; timeout 200 "$M" "$@" --out $D/$name > $D/$name.stdout 2> $D/$name.stderr; echo "$name rc=$? $(( $(date +%s) - T0 ))s"; }
run p2p_all p2p --pairs all --reps 5 --drift-seconds 2 --gpus all
for mode in sequential overlapped batched; do
  run exchange_$mode exchange --pair 0,1 --mode $mode --reps 5 --drift-seconds 0
done
PIPE="pipeline --gpus all --activation-bytes 4MiB,64MiB --microbatches 8 --mode batched,sequential --fwd-us 500 --bwd-us 1000 --warmup 2 --iters 5 --reps 3 --drift-seconds 0"
run pipeline_per_op $PIPE --timing per-op
run pipeline_per_iteration $PIPE --timing per-iteration
echo "measure-pipelined done in $(( $(date +%s) - T0 )) s"
# Start vm-20261122T203226Z (session 6, commsim-measure with --rotate-buffers on, the default since then) ran this
# script unchanged on the nvidia-h200-x2 lease, /tmp/mp renamed to the start's name.
