#!/bin/bash
# Issue 18, first experiment (machine start h200x4-2026-11-22a): where do commsim-measure's extra ~3 us on 2 ranks
# come from? Changes one thing at a time: nccl-tests with and without CUDA events between iterations (-I 1), one
# thread vs a thread per GPU; commsim-measure (per-iteration events, the pre-issue-18 binary) with its NCCL INFO log
# on (its default) and off. Output: /tmp/ab1/.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
NT=$PWD/.ext/nccl-tests; CM=$PWD/.ext/measure/commsim-measure-legacy
D=/tmp/ab1; mkdir -p $D; T0=$(date +%s)
nt() { local name=$1 dev=$2; shift 2; CUDA_VISIBLE_DEVICES=$dev timeout 120 $NT/sendrecv_perf -b 8 -e 1G -f 2 -w 5 -n 20 -c 0 -J $D/$name.json "$@" > $D/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s) - T0 ))s"; }
cm() { local name=$1; shift; timeout 180 $CM sendrecv --min-bytes 8B --max-bytes 1GiB --factor 2 --reps 5 --warmup 5 --iters 20 --drift-seconds 0 --out $D/$name "$@" > $D/$name.stdout 2> $D/$name.stderr; echo "$name rc=$? $(( $(date +%s) - T0 ))s"; }
for r in 1 2 3; do
  nt nt_t2_r$r 0,1 -g 1 -t 2
  nt nt_t2_I1_r$r 0,1 -g 1 -t 2 -I 1
  nt nt_g2_r$r 0,1 -g 2 -t 1
done
nt nt_t4_r1 0,1,2,3 -g 1 -t 4
nt nt_t3_r1 0,1,2 -g 1 -t 3
cm cm_g2_debuginfo --gpus 0,1
NCCL_DEBUG=WARN cm cm_g2_debugwarn --gpus 0,1
cm cm_g2_single --gpus 0,1 --launch single-thread
cm cm_g4_debuginfo --gpus 0-3
cm cm_g3_debuginfo --gpus 0-2
echo "ab1 done in $(( $(date +%s) - T0 )) s"
