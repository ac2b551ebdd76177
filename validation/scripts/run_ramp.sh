#!/bin/bash
# Is the rising marginal rate of bandwidth-bound nccl-tests runs a warm-up of the machine (issue 13)? The same sizes with 5, 200 and 200 + 200 iterations.
# Usage (on the GPU machine, from the repository root): validation/scripts/run_ramp.sh START_ID REPS BUDGET_S [knobs]
# nccl-tests binaries in $NT (default .ext/nccl-tests). Sizes 4 MiB .. 1 GiB (x2). Cases, interleaved per
# repetition so drift touches all alike; it stops starting repetitions after BUDGET_S seconds:
#   sendrecv on GPUs 0,1 (16-32 channels near the NVLink port's rate), alltoall on 0-3 (the same), and sendrecv
#   on 0-3 (a ring, 8-16 channels at half the port's rate: the control), each with -g N (one thread) under
#   base  -w 5 -n 20 (as the coverage runs)
#   warm  -w 200 -n 20 (the same timed loop after 40x the warm-up)
#   long  -w 200 -n 200
# With `knobs`, instead (base iterations, NCCL knobs that change what the rate could depend on): sendrecv 0,1
# under NCCL_MAX_NCHANNELS=8 (half the channels: half the port's rate), NCCL_P2P_NVL_CHUNKSIZE=128K (4x the
# steps), NCCL_P2P_NVL_CHUNKSIZE=2M with NCCL_BUFFSIZE=16M (a quarter of the steps, 8 slots kept),
# NCCL_P2P_READ_ENABLE=0 and =1; alltoall 0-3 under NCCL_MAX_NCHANNELS=16 and under the 2M chunks.
# Writes /tmp/cov/START_ID/: one log and JSON per process, manifest.csv (file,start,workload,gpus,launch,
# nccl_env,repeat: the base and knob runs, as commsim validate reads them), variants.csv (every run with its variant)
# and meta/ (host, clocks before and after).
set -u
# shellcheck source=validation/scripts/capture_meta.sh
source "$(dirname "$0")/capture_meta.sh"
START=$1; REPS=${2:-3}; BUDGET=${3:-300}; MODE=${4:-}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NT=${NT:-$PWD/.ext/nccl-tests}
D=/tmp/cov/$START; mkdir -p "$D"
M=$D/manifest.csv
echo "file,start,workload,gpus,launch,nccl_env,repeat" > "$M"
V=$D/variants.csv
echo "file,workload,gpus,launch,repeat,variant" > "$V"
meta_start "$D" "$START"
T0=$(date +%s)
run() {  # run WORKLOAD DEVICES VARIANT REP [NCCL_ENV...]
  local wl=$1 dev=$2 variant=$3 rep=$4 iters="-w 5 -n 20"
  shift 4
  local envs=("$@")
  local n; n=$(echo "$dev" | tr ',' '\n' | wc -l)
  local name="${wl}_g${dev//,/}_${variant}_r$rep"
  case $variant in
    base) iters="-w 5 -n 20" ;;
    warm) iters="-w 200 -n 20" ;;
    long) iters="-w 200 -n 200" ;;
  esac
  local knob=""; [ ${#envs[@]} -gt 0 ] && knob=$(IFS=' '; echo "${envs[*]}")
  # shellcheck disable=SC2086
  env CUDA_VISIBLE_DEVICES=$dev "${envs[@]}" timeout 200 "$NT/${wl}_perf" -g "$n" -t 1 -c 0 -J "$D/$name.json" \
    -b 4M -e 1G -f 2 $iters > "$D/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - T0 ))s"
  [ $rc -eq 0 ] || return 0
  local gpus=$dev; [ "$dev" = 0,1,2,3 ] && gpus=0-3; [ "$dev" = 0,1 ] && gpus=0-1
  echo "$name.json,$wl,\"$dev\",single-thread,$rep,$variant" >> "$V"
  [ "$variant" = base ] || [ -n "$knob" ] || return 0
  # commsim models no NCCL_P2P_READ_ENABLE (NCCL's default on NVLink here is write): variants.csv only
  case $knob in *NCCL_P2P_READ_ENABLE*) return 0 ;; esac
  echo "$name.json,$START,$wl,$gpus,single-thread,$knob,$rep" >> "$M"
  return 0
}
for rep in $(seq 1 "$REPS"); do
  [ $(( $(date +%s) - T0 )) -lt "$BUDGET" ] || break
  if [ "$MODE" = knobs ]; then
    run sendrecv 0,1 ch8 "$rep" NCCL_MAX_NCHANNELS=8
    run sendrecv 0,1 chunk128k "$rep" NCCL_P2P_NVL_CHUNKSIZE=131072
    run sendrecv 0,1 chunk2m "$rep" NCCL_P2P_NVL_CHUNKSIZE=2097152 NCCL_BUFFSIZE=16777216
    run sendrecv 0,1 read0 "$rep" NCCL_P2P_READ_ENABLE=0
    run sendrecv 0,1 read1 "$rep" NCCL_P2P_READ_ENABLE=1
    run alltoall 0,1,2,3 ch16 "$rep" NCCL_MAX_NCHANNELS=16
    run alltoall 0,1,2,3 chunk2m "$rep" NCCL_P2P_NVL_CHUNKSIZE=2097152 NCCL_BUFFSIZE=16777216
    continue
  fi
  for cfg in "sendrecv 0,1" "alltoall 0,1,2,3" "sendrecv 0,1,2,3"; do
    set -- $cfg
    for v in base warm long; do run "$1" "$2" "$v" "$rep"; done
  done
done
meta_end "$D"
