#!/usr/bin/env bash
# One hot receiver on the lent 4x H200 (issue 13: skewed alltoallv is measured ~27% slower than predicted while a
# plain fan-in runs at NVLink's rate). commsim-measure alltoallv with the --counts files beside this script
# (GPU 0 receives from 1, 2, 3; with small sends back from it, small traffic among the others, both, or equal
# sends back), and --skew 1.2, under channel limits. Run from the repository root on the device with
# .ext/measure (commsim-measure + libtomlplusplus) carried; results in $OUT/hot.tgz (one directory per machine
# start, named by host and UTC time, with its metadata).
# Usage: run.sh [CHANNEL_LIMIT...] (default: default 16 8); BUDGET_S (400) stops starting runs after that many seconds.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
M=.ext/measure/commsim-measure
here=validation/data/h200x4/hot
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
chs=("$@"); [ ${#chs[@]} -gt 0 ] || chs=(default 16 8)
for ch in "${chs[@]}"; do
  pats=(skew1.2 hotback fanin3 hotcold hotboth star oneback)
  [ "$ch" = default ] || pats=(skew1.2 hotback fanin3)
  for k in "${pats[@]}"; do
    name=${k}_ch$ch
    [ $SECONDS -lt ${BUDGET_S:-400} ] || { echo "$name: skipped, past ${BUDGET_S:-400} s" | tee -a "$d/exit_codes.txt"; continue; }
    if [ "$ch" = default ]; then envs=(); else envs=(NCCL_MAX_NCHANNELS=$ch); fi
    if [ "$k" = skew1.2 ]; then pat=(--skew 1.2); else pat=(--counts $here/$k.txt); fi
    env "${envs[@]}" timeout 300 $M alltoallv --gpus 0-3 "${pat[@]}" "${sizes[@]}" --out "$d/$name" \
      > "$d/$name.stdout" 2> "$d/$name.stderr"
    echo "$name: exit $? at $SECONDS s" | tee -a "$d/exit_codes.txt"
  done
done
nvidia-smi -q -d CLOCK,PERFORMANCE > "$d/clocks_end.txt" 2>&1
rm -f "$d"/*/nccl_debug.*.log
tar czf "$OUT/hot.tgz" -C "$OUT" "$start"
rm -rf "$d"
echo "start $start"
