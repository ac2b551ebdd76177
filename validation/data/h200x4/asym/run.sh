#!/usr/bin/env bash
# Asymmetric works on every GPU of the lent 4x H200 (issue 13: multi-peer works whose two directions differ).
# commsim-measure alltoallv with the --counts files beside this script: even ranks send 1 to every other rank,
# odd ranks x (asym1: x = 1, the uniform alltoall; asym075, asym05, asym025), so on every GPU the works of rounds
# 1 and 3 pair directions of ratio x (or 1/x) and round 2's are equal; NCCL's default channels and
# NCCL_MAX_NCHANNELS=8. Run from the repository root on the device with .ext/measure carried; results in
# $OUT/asym.tgz (one directory per machine start, with its metadata). BUDGET_S (300) stops starting runs.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
M=.ext/measure/commsim-measure
here=validation/data/h200x4/asym
start="$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)"
d=$OUT/$start
mkdir -p "$d"
{
  echo "start: $start"; date -u; hostname; cat /proc/sys/kernel/random/boot_id; uname -r
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,temperature.gpu,clocks.sm,clocks.mem,power.draw,pstate --format=csv
} > "$d/host.txt" 2>&1
nvidia-smi topo -m > "$d/topo.txt" 2>&1
nvidia-smi -q -d CLOCK,PERFORMANCE > "$d/clocks_start.txt" 2>&1
sizes=(--min-bytes 4MiB --max-bytes 1GiB --factor 4 --reps 3 --drift-seconds 2)
for ch in ${CHANNELS:-default 8}; do
  for k in ${CASES:-asym1 asym075 asym05 asym025}; do
    name=${k}_ch$ch
    [ $SECONDS -lt ${BUDGET_S:-300} ] || { echo "$name: skipped, past ${BUDGET_S:-300} s" | tee -a "$d/exit_codes.txt"; continue; }
    if [ "$ch" = default ]; then envs=(); else envs=(NCCL_MAX_NCHANNELS=$ch); fi
    env "${envs[@]}" timeout 300 $M alltoallv --gpus 0-3 --counts $here/$k.txt "${sizes[@]}" --out "$d/$name" \
      > "$d/$name.stdout" 2> "$d/$name.stderr"
    echo "$name: exit $? at $SECONDS s" | tee -a "$d/exit_codes.txt"
  done
done
nvidia-smi -q -d CLOCK,PERFORMANCE > "$d/clocks_end.txt" 2>&1
rm -f "$d"/*/nccl_debug.*.log
tar czf "$OUT/asym.tgz" -C "$OUT" "$start"
rm -rf "$d"
echo "start $start"
