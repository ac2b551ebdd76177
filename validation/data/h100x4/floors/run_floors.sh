#!/bin/bash
# Where a latency floor's run-to-run spread comes from (issue 13): nccl-tests floors unpinned, pinned, and with more iterations.
# Usage (on the GPU machine, from the repository root): validation/data/h100x4/floors/run_floors.sh START_ID REPS
# nccl-tests binaries in $NT (default .ext/nccl-tests). Each repetition runs every configuration under every
# variant, interleaved, so drift during the call touches all variants alike:
#   base  as the coverage runs (-w 5 -n 20, no CPU affinity set)
#   pin1  the same under `taskset -c 8` (the process and NCCL's threads on one vCPU)
#   pin4  the same under `taskset -c 8-11`
#   long  -w 50 -n 200, no affinity
# Writes /tmp/cov/START_ID/: one nccl-tests log and JSON per process, manifest.csv (the base runs, in the
# columns commsim validate reads), variants.csv (every run with its variant) and meta/.
set -u
# shellcheck source=validation/scripts/capture_meta.sh
source "$(dirname "$0")/../../../scripts/capture_meta.sh"
START=$1; REPS=${2:-5}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NT=${NT:-$PWD/.ext/nccl-tests}
D=/tmp/cov/$START; mkdir -p "$D"
M=$D/manifest.csv
echo "file,start,workload,gpus,launch,nccl_env,repeat" > "$M"
V=$D/variants.csv
echo "file,workload,gpus,launch,repeat,variant" > "$V"
meta_start "$D" "$START"
T0=$(date +%s)
# run NAME WORKLOAD DEVICES LAUNCH VARIANT REP
run() {
  local name=$1 wl=$2 dev=$3 launch=$4 variant=$5 rep=$6
  local n; n=$(echo "$dev" | tr ',' '\n' | wc -l)
  local shape pre=() iters="-w 5 -n 20"
  if [ "$launch" = single-thread ]; then shape="-g $n -t 1"; else shape="-g 1 -t $n"; fi
  case $variant in
    pin1) pre=(taskset -c 8) ;;
    pin4) pre=(taskset -c 8-11) ;;
    long) iters="-w 50 -n 200" ;;
  esac
  # shellcheck disable=SC2086
  env CUDA_VISIBLE_DEVICES=$dev timeout 120 "${pre[@]}" "$NT/${wl}_perf" $shape -c 0 -J "$D/$name.json" \
    -b 8 -e 256K -f 8 $iters > "$D/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - T0 ))s"
  [ $rc -eq 0 ] || return 0
  echo "$name.json,$wl,\"$dev\",$launch,$rep,$variant" >> "$V"
  [ "$variant" = base ] && echo "$name.json,$START,$wl,\"$dev\",$launch,,$rep" >> "$M"
}
for rep in $(seq 1 "$REPS"); do
  for cfg in "sendrecv 0,1 single-thread" "all_reduce 0,1 single-thread" "sendrecv 0,1,2,3 single-thread" \
             "all_reduce 0,1,2,3 single-thread" "sendrecv 0,1,2,3 thread-per-gpu"; do
    set -- $cfg
    for v in base pin1 pin4 long; do
      run "${1}_g${2//,/}_${3:0:1}_${v}_r$rep" "$1" "$2" "$3" "$v" "$rep"
    done
  done
done
meta_end "$D"
