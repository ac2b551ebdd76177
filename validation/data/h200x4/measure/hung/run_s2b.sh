#!/bin/bash
# Session 2, second call: the interleaved pipeline again, with NCCL connecting every P2P channel at init
# (NCCL_RUNTIME_CONNECT=0): the first call hung in overlapped mode at 64 MiB (see the data README).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 NCCL_RUNTIME_CONNECT=0
export LD_LIBRARY_PATH=$PWD/.ext/measure:$LD_LIBRARY_PATH
M=$PWD/.ext/measure/commsim-measure
D=/tmp/h200x4-s2b; mkdir -p $D
T0=$(date +%s)
step() { local name=$1; shift; echo "== $name $(date +%T)"; timeout 200 $M "$@" --out $D/$name > $D/$name.stdout 2> $D/$name.stderr; echo "rc=$? $(tail -2 $D/$name.stderr | tr '\n' ' ')"; }
for v in 2 4; do
step pipeline_interleaved_v${v}_nccl pipeline --gpus 0-3 --schedule interleaved --chunks $v --activation-bytes 4MiB,64MiB --microbatches 4,16 --mode sequential,overlapped,batched --fwd-us 500 --bwd-us 1000 --warmup 2 --iters 5 --reps 5 --drift-seconds 2 --timeout 40
done
echo "total $(( $(date +%s) - T0 )) s"
tar czf $OUT/s2b.tar.gz -C /tmp h200x4-s2b
