#!/usr/bin/env bash
# A held-out capture on a new 4x H200 machine start (session 15): commsim-measure p2p over all pairs, the three
# exchange modes, 1F1B pipeline steps, sendrecv and alltoall, alltoallv uniform / skewed, and the peers patterns
# one / fan-in / three peers. Run from the repository root on the device with .ext/measure carried; results in
# $OUT/heldout.tgz (one directory per call, named by host and UTC time, with host.txt: boot id, GPUs, clocks).
# Usage: run.sh PHASE... (a: p2p exchange sendrecv alltoall; b: pipeline alltoallv peers); BUDGET_S (500).
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
M=.ext/measure/commsim-measure
peers=validation/data/h200x4/peers
start="$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)"
d=$OUT/$start
mkdir -p "$d"
{
  echo "start: $start"; date -u; hostname; cat /proc/sys/kernel/random/boot_id; uname -r
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,temperature.gpu,clocks.sm,clocks.mem,power.draw,pstate --format=csv
} > "$d/host.txt" 2>&1
nvidia-smi topo -m > "$d/topo.txt" 2>&1
nvidia-smi -q -d CLOCK,PERFORMANCE > "$d/clocks_start.txt" 2>&1
# one NAME [ENV...] -- ARGS...: one commsim-measure run into $d/NAME.
one() {
  local name=$1; shift
  local envs=()
  while [ "$1" != "--" ]; do envs+=("$1"); shift; done
  shift
  [ $SECONDS -lt ${BUDGET_S:-500} ] || { echo "$name: skipped, past ${BUDGET_S:-500} s" | tee -a "$d/exit_codes.txt"; return; }
  env "${envs[@]}" timeout 300 $M "$@" --out "$d/$name" > "$d/$name.stdout" 2> "$d/$name.stderr"
  echo "$name: exit $? at $SECONDS s" | tee -a "$d/exit_codes.txt"
}
for phase in "$@"; do
  case $phase in
    a)
      one p2p_all -- p2p --pairs all --reps 5 --drift-seconds 2
      for m in sequential overlapped batched; do one exchange_$m -- exchange --pair 0,1 --mode $m --reps 5 --drift-seconds 2; done
      one sendrecv_g4 -- sendrecv --gpus 0-3 --reps 5 --drift-seconds 2
      one alltoall_g4 -- alltoall --gpus 0-3 --min-bytes 16B --reps 5 --drift-seconds 2 ;;
    b)
      one pipeline_1f1b_nccl -- pipeline --gpus 0-3 --activation-bytes 4MiB,64MiB --microbatches 4,16 \
        --mode sequential,overlapped,batched --fwd-us 500 --bwd-us 1000 --warmup 2 --iters 5 --reps 3 --drift-seconds 2
      for skew in 0 1.2; do
        one alltoallv_g4_skew$skew -- alltoallv --gpus 0-3 --skew $skew --min-bytes 1KiB --max-bytes 1GiB --factor 4 --reps 3 --drift-seconds 2
      done
      for k in one fanin3 k3; do
        one ${k}_chdefault -- alltoallv --gpus 0-3 --counts $peers/$k.txt --min-bytes 4MiB --max-bytes 1GiB --factor 4 --reps 3 --drift-seconds 2
        one ${k}_ch8 NCCL_MAX_NCHANNELS=8 -- alltoallv --gpus 0-3 --counts $peers/$k.txt --min-bytes 4MiB --max-bytes 1GiB --factor 4 --reps 3 --drift-seconds 2
      done ;;
  esac
done
nvidia-smi -q -d CLOCK,PERFORMANCE > "$d/clocks_end.txt" 2>&1
rm -f "$d"/*/nccl_debug.*.log
tar czf "$OUT/heldout.tgz" -C "$OUT" "$start"
rm -rf "$d"
echo "start $start"
