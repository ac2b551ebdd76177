#!/bin/bash
# NCCL's own tuner decisions on 2x H200 (issue 13 items 3-4), plus a timed coverage sweep of the same machine start.
#  A. Every collective on GPUs 0,1 (-g 2), 8 B .. 1 GiB, with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING: rank 0 logs,
#     per call, "<Func>: <bytes> Bytes -> Algo <A> proto <P> channel{Lo..Hi}={lo..hi}" (src/enqueue.cc) and, once,
#     the tuner's latency/bandwidth table (src/graph/tuning.cc). Default knobs, then NCCL_ALGO=Tree,
#     NCCL_PROTO=Simple and NCCL_MAX_NCHANNELS=4 on all_reduce and all_gather. One iteration each (-w 1 -n 1): the
#     timings of these runs are not used.
#  B. validation/data/h200x4/coverage/run_coverage.sh START 360 base-g base-t: the timed sweeps (3 repeats, both
#     launch modes) of this machine start, for the machine-start family of the held-out protocol.
#  C. (PHASE knobs) more knobs, tuning logs only: NCCL_PROTO=LL and LL128 on all_reduce and all_gather,
#     NCCL_PROTO=LL128 with NCCL_ALGO=Ring and with NCCL_ALGO=Tree on all_reduce, NCCL_MAX_NCHANNELS=1, 8 and 16,
#     NCCL_MIN_NCHANNELS=32 and NCCL_BUFFSIZE=1048576 on all_reduce, NCCL_PROTO=Simple on the other three.
# Usage (GPU machine, repository root, nccl-tests binaries in .ext/nt2, or .ext/nt2.txz):
#   validation/data/h200x2/tuning/run.sh START [PHASE]   (PHASE: all = A and B, the default; knobs = C)
# Writes one tarball, $OUT/tuning.tgz, with tuning/ and, for PHASE all, cov/START/.
set -u
START=$1; PHASE=${2:-all}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
[ -d .ext/nt2 ] || tar xJf .ext/nt2.txz -C .ext
export NT=$PWD/.ext/nt2
D=/tmp/tuning/$START; mkdir -p "$D"
T0=$(date +%s)
{ echo "start: $START"; date -u; hostname; cat /proc/sys/kernel/random/boot_id; uname -r
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.mem,pstate --format=csv
  ls -la /usr/lib/x86_64-linux-gnu/libnccl.so*; } > "$D/host.txt" 2>&1
tune() { local name=$1 wl=$2; shift 2
  env CUDA_VISIBLE_DEVICES=0,1 NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING "$@" timeout 120 "$NT/${wl}_perf" -g 2 -t 1 \
    -c 0 -b 8 -e 1G -f 2 -w 1 -n 1 > "$D/$name.log" 2>&1
  echo "$name rc=$? $(( $(date +%s) - T0 ))s"; }
if [ "$PHASE" = knobs ]; then
  for wl in all_reduce all_gather; do
    tune "${wl}_g01_protoLL" $wl NCCL_PROTO=LL
    tune "${wl}_g01_protoLL128" $wl NCCL_PROTO=LL128
  done
  tune all_reduce_g01_Ring_protoLL128 all_reduce NCCL_ALGO=Ring NCCL_PROTO=LL128
  tune all_reduce_g01_Tree_protoLL128 all_reduce NCCL_ALGO=Tree NCCL_PROTO=LL128
  for c in 1 8 16; do tune "all_reduce_g01_maxch$c" all_reduce NCCL_MAX_NCHANNELS=$c; done
  tune all_reduce_g01_minch32 all_reduce NCCL_MIN_NCHANNELS=32
  tune all_reduce_g01_buff1M all_reduce NCCL_BUFFSIZE=1048576
  for wl in reduce_scatter broadcast reduce; do tune "${wl}_g01_protoSimple" $wl NCCL_PROTO=Simple; done
  mkdir -p /tmp/pack && cp -r "$D" /tmp/pack/tuning && tar czf "$OUT/tuning.tgz" -C /tmp/pack tuning
  echo "tuning knobs done in $(( $(date +%s) - T0 )) s, start $START"
  exit 0
fi
for wl in all_reduce all_gather reduce_scatter broadcast reduce; do tune "${wl}_g01" $wl; done
for wl in all_reduce all_gather; do
  tune "${wl}_g01_Tree" $wl NCCL_ALGO=Tree
  tune "${wl}_g01_protoSimple" $wl NCCL_PROTO=Simple
  tune "${wl}_g01_maxch4" $wl NCCL_MAX_NCHANNELS=4
done
bash validation/data/h200x4/coverage/run_coverage.sh "$START" 360 base-g base-t
mkdir -p /tmp/pack && cp -r "$D" /tmp/pack/tuning && cp -r "/tmp/cov/$START" /tmp/pack/cov
tar czf "$OUT/tuning.tgz" -C /tmp/pack tuning cov
echo "tuning done in $(( $(date +%s) - T0 )) s, start $START"
