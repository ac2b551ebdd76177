#!/usr/bin/env bash
# The host probe's test on a fresh 2-GPU machine start: commsim-measure runs sendrecv (the probe) and six
# collectives on GPUs 0,1, one thread and a thread per GPU, every one in its own process, three rounds.
# Usage on the lease: M=.ext/m/commsim-measure validation/data/h200x2/probe/run.sh  (writes $OUT/probe.tar.gz)
# PIN=1: each process pinned with taskset, one thread to core 0, a thread per GPU to cores 0-1
# (writes $OUT/pinned.tar.gz)
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
M=${M:-.ext/m/commsim-measure}
export LD_LIBRARY_PATH=$(dirname "$M")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
root=${OUT:-/tmp/out}
name=probe
[ "${PIN:-0}" = 1 ] && name=pinned
out=$root/$name
mkdir -p "$out"
boot=$(cut -c1-8 /proc/sys/kernel/random/boot_id)
{ echo "boot_id_prefix=$boot"; date -u +%FT%TZ; hostname; nproc; } > "$out/start.txt"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
nvidia-smi topo -m > "$out/topo.txt" 2>&1
common=(--gpus 0,1 -b 8 -e 64M -f 4 --reps 3 -w 5 -n 20 --drift-seconds 0 --timing pipelined)
for round in 1 2 3; do
  for w in sendrecv all_reduce all_gather reduce_scatter alltoall broadcast reduce; do
    for l in single-thread thread-per-gpu; do
      d=${w}_${l}_r$round
      s=$(date +%s.%N)
      pin=()
      if [ "${PIN:-0}" = 1 ]; then
        if [ "$l" = single-thread ]; then pin=(taskset -c 0); else pin=(taskset -c 0-1); fi
      fi
      ${pin[@]+"${pin[@]}"} "$M" "$w" "${common[@]}" --launch "$l" --out "$out/$d" > "$out/$d.log" 2>&1 || echo "rc=$? $d" >> "$out/failures.txt"
      echo "$d $(date +%s.%N) $s" >> "$out/times.txt"
    done
  done
done
tar -C "$root" -czf "$root/$name.tar.gz" "$name" && rm -rf "$out"
