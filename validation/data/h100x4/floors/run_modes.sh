#!/bin/bash
# What sets a single-thread process's floor mode (issue 13): nccl-tests floors under settings that could decide it, with NCCL's log.
# Usage (on the GPU machine, from the repository root): validation/data/h100x4/floors/run_modes.sh START_ID REPS BUDGET_S
# nccl-tests binaries in $NT (default .ext/nccl-tests). Every process runs 8 B .. 4 KiB (-w 5 -n 20, as the
# coverage runs) with NCCL_DEBUG=INFO, so a slow-mode process's log can be compared with a fast one's. Each
# repetition runs every case once, interleaved, so drift touches all alike; it stops starting repetitions after
# BUDGET_S seconds. Cases (sendrecv on GPUs 0,1 with -g 2 unless named):
#   base     as the coverage runs
#   cumem0   NCCL_CUMEM_ENABLE=0 (legacy cudaMalloc + IPC buffers instead of cuMem)
#   lmgroup  NCCL_LAUNCH_MODE=GROUP (one launch for the whole group instead of one per device)
#   cdmc1    CUDA_DEVICE_MAX_CONNECTIONS=1 (one hardware work queue per device)
#   eager    CUDA_MODULE_LOADING=EAGER (every kernel loaded at context creation)
#   noaslr   under `setarch -R` (the same virtual addresses in every process)
#   g1       sendrecv -g 1 on GPU 0 (a send to itself: the launch path without a peer)
#   ar_g1    all_reduce -g 1 on GPU 0
#   t2       sendrecv -t 2 -g 1 on GPUs 0,1 (a thread per GPU, the stable launch mode)
# Writes /tmp/cov/START_ID/: one log (nccl-tests output and NCCL's INFO lines) and JSON per process, variants.csv
# (file,workload,gpus,launch,repeat,variant: the case is the variant; analyse.py reads it) and meta/.
set -u
# shellcheck source=validation/scripts/capture_meta.sh
source "$(dirname "$0")/../../../scripts/capture_meta.sh"
START=$1; REPS=${2:-8}; BUDGET=${3:-300}
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=INIT,ENV,GRAPH,P2P,ALLOC,SHM
NT=${NT:-$PWD/.ext/nccl-tests}
D=/tmp/cov/$START; mkdir -p "$D"
V=$D/variants.csv
echo "file,workload,gpus,launch,repeat,variant" > "$V"
meta_start "$D" "$START"
T0=$(date +%s)
run() {  # run CASE REP
  local c=$1 rep=$2 name="${1}_r$2" wl=sendrecv dev=0,1 shape="-g 2 -t 1" pre=() envs=()
  case $c in
    cumem0) envs=(NCCL_CUMEM_ENABLE=0) ;;
    lmgroup) envs=(NCCL_LAUNCH_MODE=GROUP) ;;
    cdmc1) envs=(CUDA_DEVICE_MAX_CONNECTIONS=1) ;;
    eager) envs=(CUDA_MODULE_LOADING=EAGER) ;;
    noaslr) pre=(setarch "$(uname -m)" -R) ;;
    g1) dev=0; shape="-g 1 -t 1" ;;
    ar_g1) wl=all_reduce; dev=0; shape="-g 1 -t 1" ;;
    t2) shape="-g 1 -t 2" ;;
  esac
  # shellcheck disable=SC2086
  env CUDA_VISIBLE_DEVICES=$dev "${envs[@]}" timeout 120 "${pre[@]}" "$NT/${wl}_perf" $shape -c 0 \
    -J "$D/$name.json" -b 8 -e 4K -f 8 -w 5 -n 20 > "$D/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - T0 ))s"
  local launch=single-thread; [ "$c" = t2 ] && launch=thread-per-gpu
  [ $rc -eq 0 ] && echo "$name.json,$wl,\"$dev\",$launch,$rep,$c" >> "$V"
  return 0
}
for rep in $(seq 1 "$REPS"); do
  [ $(( $(date +%s) - T0 )) -lt "$BUDGET" ] || break
  for c in base cumem0 lmgroup cdmc1 eager noaslr g1 ar_g1 t2; do run "$c" "$rep"; done
done
meta_end "$D"
