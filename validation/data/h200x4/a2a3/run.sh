#!/usr/bin/env bash
# Three works on a channel, on a new 4x H200 machine start (session 18): commsim-measure alltoall on GPUs 0-2 and
# 0-3 with NCCL_MAX_NCHANNELS=4, 8, 16 and the default channels, 1 MiB .. 1 GiB, every configuration in its own
# process, two rounds. Tests p2p.split3_rate (fitted on start h200x4-2026-11-26a's nccl-tests runs) held out.
# Usage on the lease: M=.ext/m/commsim-measure validation/data/h200x4/a2a3/run.sh  (writes $OUT/a2a3.tar.gz)
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
M=${M:-.ext/m/commsim-measure}
export LD_LIBRARY_PATH=$(dirname "$M")${LD_LIBRARY_PATH:+:$LD_LIBRARY_PATH}
root=${OUT:-/tmp/out}
out=$root/a2a3
mkdir -p "$out"
boot=$(cut -c1-8 /proc/sys/kernel/random/boot_id)
{ echo "boot_id_prefix=$boot"; date -u +%FT%TZ; hostname; nproc; } > "$out/start.txt"
nvidia-smi > "$out/nvidia-smi.txt" 2>&1
nvidia-smi topo -m > "$out/topo.txt" 2>&1
nvidia-smi -q -d CLOCK,PERFORMANCE > "$out/clocks_start.txt" 2>&1
common=(-b 1M -e 1G -f 2 --reps 3 -w 5 -n 20 --drift-seconds 0 --timing pipelined --launch single-thread)
for round in 1 2; do
  for g in 0,1,2 0,1,2,3; do
    for c in 4 8 16 default; do
      d=a2a_g${g//,/}_ch${c}_r$round
      env=()
      [ "$c" = default ] || env=(NCCL_MAX_NCHANNELS=$c)
      s=$(date +%s.%N)
      env ${env[@]+"${env[@]}"} "$M" alltoall --gpus "$g" "${common[@]}" --out "$out/$d" > "$out/$d.log" 2>&1 ||
        echo "rc=$? $d" >> "$out/failures.txt"
      echo "$d $(date +%s.%N) $s" >> "$out/times.txt"
    done
  done
done
nvidia-smi -q -d CLOCK,PERFORMANCE > "$out/clocks_end.txt" 2>&1
tar -C "$root" -czf "$root/a2a3.tar.gz" a2a3 && rm -rf "$out"
