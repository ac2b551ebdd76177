#!/bin/bash
# Grouped send/recv sharing a channel's warps (issue 13): nccl-tests alltoall on 2x H200 where NCCL's p2p
# schedule puts the copy to self and the peer's work on the same channels, and on one GPU (the copy alone).
#  - alltoall -g 1: only the copy to self (its rate per channel).
#  - alltoall -g 2 with NCCL_MAX_NCHANNELS=4, 8 and 16, and the defaults: p2pnChannels = 4 .. 32, so the
#    self round (base 0) and the peer round (base = half the channels) overlap once the peer's parts double,
#    at a size that moves with the channel count. Out-of-place times include the copy to self, in-place ones
#    skip it (src/enqueue.cc).
#  - alltoall -t 2 (a thread per GPU) with NCCL_MAX_NCHANNELS=4, and sendrecv -g 2 with NCCL_MAX_NCHANNELS=4
#    (no copy to self: the reference).
# Usage (GPU machine, repository root, nccl-tests binaries in .ext/nt2, or .ext/nt2.txz):
#   validation/data/h200x2/alltoall-channels/run.sh START
# Writes $OUT/a2a.tgz with START/: host.txt, clocks, one nccl-tests log per run (NAME_rREPEAT.log), manifest.csv.
set -u
START=$1
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
[ -d .ext/nt2 ] || tar xJf .ext/nt2.txz -C .ext
NT=$PWD/.ext/nt2
D=/tmp/a2a/$START; mkdir -p "$D"
T0=$(date +%s)
{ echo "start: $START"; date -u; hostname; cat /proc/sys/kernel/random/boot_id; uname -r
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,clocks.sm,clocks.mem,pstate --format=csv
  nvidia-smi topo -m; ls -la /usr/lib/x86_64-linux-gnu/libnccl.so*; } > "$D/host.txt" 2>&1
nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$D/clocks_start.txt" 2>&1
echo "file,start,workload,gpus,launch,nccl_env,repeat" > "$D/manifest.csv"
run() { # NAME WORKLOAD GPUS(-g) THREADS(-t) REPEAT [KEY=VALUE]
  local name=$1 wl=$2 g=$3 t=$4 r=$5 knob=${6:-}
  local launch=single-thread; [ "$t" -gt 1 ] && launch=thread-per-gpu
  local gpus="0-$(( g * t - 1 ))"
  env CUDA_VISIBLE_DEVICES=0,1 $knob timeout 150 "$NT/${wl}_perf" -g "$g" -t "$t" -c 0 -b 8 -e 1G -f 2 -w 5 -n 20 \
    > "$D/${name}_r$r.log" 2>&1
  echo "${name} r$r rc=$? $(( $(date +%s) - T0 ))s"
  echo "${name}_r$r.log,$START,$wl,$gpus,$launch,$knob,$r" >> "$D/manifest.csv"
}
for r in 1 2; do
  run alltoall_g0_st alltoall 1 1 $r
  for c in 4 8 16; do run "alltoall_g01_st_maxch$c" alltoall 2 1 $r NCCL_MAX_NCHANNELS=$c; done
  run alltoall_g01_st alltoall 2 1 $r
  run alltoall_g01_tpg_maxch4 alltoall 1 2 $r NCCL_MAX_NCHANNELS=4
  run sendrecv_g01_st_maxch4 sendrecv 2 1 $r NCCL_MAX_NCHANNELS=4
done
nvidia-smi --query-gpu=index,clocks.sm,clocks.mem,clocks.max.sm,power.draw,temperature.gpu --format=csv > "$D/clocks_end.txt" 2>&1
tar czf "$OUT/a2a.tgz" -C /tmp/a2a "$START"
echo "done in $(( $(date +%s) - T0 )) s, start $START"
