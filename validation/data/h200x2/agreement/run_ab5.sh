#!/bin/bash
# Issue 18, the direct test of the two-state latency floor: commsim-measure with persistent per-GPU threads (as
# nccl-tests keeps its threads) against new threads for every repetition (before issue 18), 2-rank sendrecv,
# thread per GPU, pipelined, 8 B .. 512 KiB, beside nccl-tests -t 2; four processes of each. Output /tmp/ab5/.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
NT=$PWD/.ext/nccl-tests; CM=$PWD/.ext/measure/commsim-measure
D=/tmp/ab5; mkdir -p $D; T0=$(date +%s)
cm() { local name=$1; shift; $CM sendrecv --gpus 0,1 --timing pipelined --min-bytes 8B --max-bytes 512KiB --factor 4 \
  --reps 5 --drift-seconds 0 --out $D/$name "$@" > $D/$name.stdout 2>&1; echo "$name rc=$? $(( $(date +%s) - T0 ))s"; }
for r in 1 2 3 4; do
  CUDA_VISIBLE_DEVICES=0,1 $NT/sendrecv_perf -g 1 -t 2 -b 8 -e 512K -f 4 -w 5 -n 20 -c 0 > $D/nt_t2_r$r.log 2>&1
  cm cm_persistent_r$r --worker-threads persistent --seed $r
  cm cm_perrep_r$r --worker-threads per-repetition --seed $r
done
