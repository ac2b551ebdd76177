#!/usr/bin/env bash
# Block alignment in alltoallv on the lent 4x H200 (issue 13): the asymmetric and skewed runs whose rate
# halved (validation/data/h200x4/asym, hot, lonetail) had blocks of any multiple of 4 B back to back, so most
# started misaligned; here the same patterns with --block-align 16B, 4KiB or 8KiB (cases.txt). Run from the
# repository root on the device with .ext/measure2 (commsim-measure with --block-align, + libtomlplusplus)
# carried; results in $OUT/align.tgz. BUDGET_S (300) stops starting runs after that many seconds.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure2:${LD_LIBRARY_PATH:-}
M=.ext/measure2/commsim-measure
here=validation/data/h200x4/align
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
tar czf "$OUT/align.tgz" -C "$OUT" "$start"
rm -rf "$d"
echo "start $start"
