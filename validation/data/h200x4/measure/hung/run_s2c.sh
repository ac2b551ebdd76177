#!/bin/bash
# Session 2, third call: the interleaved pipeline without the configuration that hangs (overlapped at 64 MiB):
# sequential and batched at both sizes, overlapped at 4 MiB.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:$LD_LIBRARY_PATH
M=$PWD/.ext/measure/commsim-measure
D=/tmp/h200x4-s2c; mkdir -p $D
T0=$(date +%s)
step() { local name=$1; shift; echo "== $name $(date +%T)"; timeout 200 $M "$@" --out $D/$name > $D/$name.stdout 2> $D/$name.stderr; echo "rc=$? $(tail -2 $D/$name.stderr | tr '\n' ' ')"; }
for v in 2 4; do
step pipeline_interleaved_v${v}_seq_batched pipeline --gpus 0-3 --schedule interleaved --chunks $v --activation-bytes 4MiB,64MiB --microbatches 4,16 --mode sequential,batched --fwd-us 500 --bwd-us 1000 --warmup 2 --iters 5 --reps 5 --drift-seconds 2 --timeout 30
step pipeline_interleaved_v${v}_overlapped_4MiB pipeline --gpus 0-3 --schedule interleaved --chunks $v --activation-bytes 4MiB --microbatches 4,16 --mode overlapped --fwd-us 500 --bwd-us 1000 --warmup 2 --iters 5 --reps 5 --drift-seconds 2 --timeout 30
done
echo "total $(( $(date +%s) - T0 )) s"
tar czf $OUT/s2c.tar.gz -C /tmp h200x4-s2c
