#!/bin/bash
# Session 2, fourth call: 1F1B pipeline with per-kernel timelines (the measured half of the report's timeline pair).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:$LD_LIBRARY_PATH
M=$PWD/.ext/measure/commsim-measure
D=/tmp/h200x4-s2d; mkdir -p $D
T0=$(date +%s)
step() { local name=$1; shift; echo "== $name $(date +%T)"; timeout 200 $M "$@" --out $D/$name > $D/$name.stdout 2> $D/$name.stderr; echo "rc=$? $(tail -2 $D/$name.stderr | tr '\n' ' ')"; }
step pipeline_1f1b_timeline pipeline --gpus 0-3 --activation-bytes 64MiB --microbatches 8 --mode sequential,batched --fwd-us 500 --bwd-us 1000 --warmup 2 --iters 5 --reps 5 --drift-seconds 2 --timeout 30
echo "total $(( $(date +%s) - T0 )) s"
tar czf $OUT/s2d.tar.gz -C /tmp h200x4-s2d
