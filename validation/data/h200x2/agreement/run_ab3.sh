#!/bin/bash
# Issue 18, the cause experiment: 2-rank sendrecv, thread per GPU, pipelined timing, changing one thing at a time:
# buffers from ncclMemAlloc (as nccl-tests) or cudaMalloc, and NCCL's nvlinkCentricSched on (as nccl-tests 2.19
# sets it for NCCL >= 2.28) or off. Two commsim-measure runs of each beside three nccl-tests runs. Output: /tmp/ab3/.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
NT=$PWD/.ext/nccl-tests; CM=$PWD/.ext/measure/commsim-measure
D=/tmp/ab3; mkdir -p $D; T0=$(date +%s)
for r in 1 2 3; do
  CUDA_VISIBLE_DEVICES=0,1 $NT/sendrecv_perf -g 1 -t 2 -b 8 -e 64M -f 4 -w 5 -n 20 -c 0 > $D/nt_r$r.log 2>&1
done
for buf in ncclmemalloc cudamalloc; do
  for sched in on off; do
    for r in 1 2; do
      $CM sendrecv --gpus 0,1 --timing pipelined --buffers $buf --nvlink-centric-sched $sched --min-bytes 8B \
        --max-bytes 64MiB --factor 4 --reps 3 --drift-seconds 0 --seed $r --out $D/cm_${buf}_${sched}_r$r \
        > $D/cm_${buf}_${sched}_r$r.stdout 2>&1
      echo "cm_${buf}_${sched}_r$r rc=$? $(( $(date +%s) - T0 ))s"
    done
  done
done
