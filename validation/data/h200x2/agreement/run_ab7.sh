#!/bin/bash
# Issue 18, two causes tested by changing one thing each (2x H200; results as one tarball in $OUT):
#  A. the 2-8 MiB difference: nccl-tests shifts its buffers by the size every iteration (startColl, "avoid cache
#     effects"), commsim-measure reused the same bytes. commsim-measure --rotate-buffers on/off, thread per GPU,
#     pipelined, sendrecv and all_reduce 1-32 MiB, beside nccl-tests.
#  B. the single-thread floors: commsim-measure called cudaSetDevice before each GPU's NCCL calls, nccl-tests -g N
#     never does. --select-device per-call/when-needed, single thread, pipelined, 8 B-1 MiB, beside nccl-tests -g 2.
# Each variant runs as two processes, interleaved with the other variant. Carry .ext/measure and .ext/nccl-tests.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
NT=$PWD/.ext/nccl-tests; CM=$PWD/.ext/measure/commsim-measure
start="$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)"
D=/tmp/ab7/$start; mkdir -p $D; T0=$(date +%s)
nt() { local name=$1 wl=$2; shift 2; CUDA_VISIBLE_DEVICES=0,1 timeout 120 $NT/${wl}_perf -c 0 -w 5 -n 20 "$@" \
  > $D/$name.log 2>&1; echo "$name rc=$? $(( $(date +%s) - T0 ))s"; }
cm() { local name=$1 wl=$2; shift 2; timeout 180 $CM $wl --gpus 0,1 --timing pipelined --warmup 5 --iters 20 \
  --reps 3 --drift-seconds 0 --out $D/$name "$@" > $D/$name.stdout 2>&1; echo "$name rc=$? $(( $(date +%s) - T0 ))s"; }
for r in 1 2; do
  for wl in sendrecv all_reduce; do
    nt nt_${wl}_t2_r$r $wl -g 1 -t 2 -b 1M -e 32M -f 2
    cm cm_${wl}_rot-on_r$r $wl --min-bytes 1MiB --max-bytes 32MiB --factor 2 --rotate-buffers on --seed $r
    cm cm_${wl}_rot-off_r$r $wl --min-bytes 1MiB --max-bytes 32MiB --factor 2 --rotate-buffers off --seed $r
  done
done
for r in 1 2; do
  for wl in sendrecv all_reduce alltoall; do
    nt nt_${wl}_g2_r$r $wl -g 2 -t 1 -b 8 -e 1M -f 4
    cm cm_${wl}_single_per-call_r$r $wl --launch single-thread --min-bytes 8B --max-bytes 1MiB --factor 4 \
      --select-device per-call --seed $r
    cm cm_${wl}_single_when-needed_r$r $wl --launch single-thread --min-bytes 8B --max-bytes 1MiB --factor 4 \
      --select-device when-needed --seed $r
  done
done
rm -f $D/*/nccl_debug.*.log
tar czf "$OUT/ab7.tgz" -C /tmp/ab7 "$start"
echo "ab7 done in $(( $(date +%s) - T0 )) s, start $start"
