#!/usr/bin/env bash
# Held-out test of p2p.lone_tail_rate on the lent 4x H200: alltoallv patterns whose works pair directions of
# unequal size in other ratios than the fit's (validation/data/h200x4/hot), other skews, another seed, 2 and 3
# GPUs (cases.txt). Run from the repository root on the device with .ext/measure (commsim-measure +
# libtomlplusplus) carried; results in $OUT/lonetail.tgz (one directory per machine start, with its metadata).
# BUDGET_S (300) stops starting runs after that many seconds.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
M=.ext/measure/commsim-measure
here=validation/data/h200x4/lonetail
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
ngpus=$(nvidia-smi -L | grep -c '^GPU')
grep -v '^#' $here/cases.txt | while IFS='|' read -r name args; do
  name=$(echo $name)
  # The cases a machine of fewer GPUs can run (a 2-GPU lease runs the --gpus 0-1 ones).
  last=$(echo $args | sed -E 's/.*--gpus 0-([0-9]+).*/\1/')
  [ $((last + 1)) -le $ngpus ] || { echo "$name: skipped, needs $((last + 1)) GPUs" | tee -a "$d/exit_codes.txt"; continue; }
  [ $SECONDS -lt ${BUDGET_S:-300} ] || { echo "$name: skipped, past ${BUDGET_S:-300} s" | tee -a "$d/exit_codes.txt"; continue; }
  timeout 300 $M alltoallv $args "${sizes[@]}" --out "$d/$name" > "$d/$name.stdout" 2> "$d/$name.stderr"
  echo "$name: exit $? at $SECONDS s" | tee -a "$d/exit_codes.txt"
done
nvidia-smi -q -d CLOCK,PERFORMANCE > "$d/clocks_end.txt" 2>&1
rm -f "$d"/*/nccl_debug.*.log
tar czf "$OUT/lonetail.tgz" -C "$OUT" "$start"
rm -rf "$d"
echo "start $start"
