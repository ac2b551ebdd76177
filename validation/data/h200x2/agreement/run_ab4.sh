#!/bin/bash
# Issue 18, the remaining latency floor under a thread per GPU: commsim-measure starts fresh threads for every
# repetition, nccl-tests keeps its threads busy for the whole run. Changes one thing: commsim-measure's warmup
# (5 operations, ~50 us of issuing, against 1000, ~10 ms) before the timed 20. Sizes 8 B .. 512 KiB. Output /tmp/ab4/.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
NT=$PWD/.ext/nccl-tests; CM=$PWD/.ext/measure/commsim-measure
D=/tmp/ab4; mkdir -p $D; T0=$(date +%s)
cm() { local name=$1; shift; $CM sendrecv --gpus 0,1 --timing pipelined --min-bytes 8B --max-bytes 512KiB --factor 4 \
  --reps 5 --drift-seconds 0 --out $D/$name "$@" > $D/$name.stdout 2>&1; echo "$name rc=$? $(( $(date +%s) - T0 ))s"; }
for r in 1 2 3; do
  CUDA_VISIBLE_DEVICES=0,1 $NT/sendrecv_perf -g 1 -t 2 -b 8 -e 512K -f 4 -w 5 -n 20 -c 0 > $D/nt_t2_r$r.log 2>&1
  cm cm_w5_r$r --warmup 5 --seed $r
  cm cm_w1000_r$r --warmup 1000 --seed $r
done
for r in 1 2; do
  CUDA_VISIBLE_DEVICES=0,1 $NT/sendrecv_perf -g 2 -t 1 -b 8 -e 512K -f 4 -w 5 -n 20 -c 0 > $D/nt_g2_r$r.log 2>&1
  cm cm_single_r$r --launch single-thread --seed $r
done
