#!/bin/bash
# Session 2 capture on the 4x H200 machine: interleaved pipeline steps and reduce sweeps (commsim-measure).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:$LD_LIBRARY_PATH
M=$PWD/.ext/measure/commsim-measure
D=/tmp/h200x4-s2; mkdir -p $D
T0=$(date +%s)
nvidia-smi -L > $D/nvidia_smi_L.txt
step() { local name=$1; shift; echo "== $name $(date +%T)"; timeout 300 $M "$@" --out $D/$name > $D/$name.stdout 2> $D/$name.stderr; echo "rc=$? $(tail -2 $D/$name.stderr | tr '\n' ' ')"; }
step pipeline_interleaved_v2_nccl pipeline --gpus 0-3 --schedule interleaved --chunks 2 --activation-bytes 4MiB,64MiB --microbatches 4,16 --mode sequential,overlapped,batched --fwd-us 500 --bwd-us 1000 --warmup 2 --iters 5 --reps 5 --drift-seconds 2
step pipeline_interleaved_v4_nccl pipeline --gpus 0-3 --schedule interleaved --chunks 4 --activation-bytes 4MiB,64MiB --microbatches 4,16 --mode sequential,overlapped,batched --fwd-us 500 --bwd-us 1000 --warmup 2 --iters 5 --reps 5 --drift-seconds 2
step reduce_g4 reduce --gpus 0-3 --min-bytes 16B --reps 5 --drift-seconds 2
step reduce_g2 reduce --gpus 0,1 --min-bytes 16B --reps 5 --drift-seconds 2
echo "total $(( $(date +%s) - T0 )) s"
cp -r $D $OUT/
