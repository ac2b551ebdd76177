#!/bin/bash
# commsim-measure against nccl-tests, like for like (issue 18): sendrecv, all_reduce and alltoall over 2, 3 and 4
# GPUs, one thread for every GPU (nccl-tests -g N) and a thread per GPU (-t N), pipelined timing (nccl-tests'
# default) and per-op timing (nccl-tests -z 3); nccl-tests three runs and commsim-measure two runs of each. Prints
# the agreement table (measure/scripts/ab_table.py) and exits non-zero when a cell misses the targets.
# Usage, on the GPU machine: NCCL_TESTS=DIR COMMSIM_MEASURE=BIN measure/scripts/ab_nccl_tests.sh OUTDIR
# NCCL_TESTS holds nccl-tests' *_perf binaries, built outside this repository from its public source.
set -u
OUTDIR=${1:?usage: NCCL_TESTS=DIR COMMSIM_MEASURE=BIN $0 OUTDIR}
NT=${NCCL_TESTS:?set NCCL_TESTS to the folder of nccl-tests binaries}
CM=${COMMSIM_MEASURE:?set COMMSIM_MEASURE to the commsim-measure binary}
for b in sendrecv_perf all_reduce_perf alltoall_perf; do
  [ -x "$NT/$b" ] || { echo "ab_nccl_tests: $NT/$b not found: build nccl-tests first" >&2; exit 2; }
done
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
mkdir -p "$OUTDIR"
T0=$(date +%s)
GPUS=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
RANKS=${RANKS:-2 3 4}  # rank counts to run; those above the machine's GPU count are skipped, and said so
SIZES_NT="-b 8 -e 1G -f 4 -w 5 -n 20 -c 0"
SIZES_CM="--min-bytes 8B --max-bytes 1GiB --factor 4 --warmup 5 --iters 20 --reps 3 --drift-seconds 0"
for wl in sendrecv all_reduce alltoall; do
  for n in $RANKS; do
    if [ "$n" -gt "$GPUS" ]; then echo "skipping $wl over $n GPUs: this machine has $GPUS" >&2; continue; fi
    dev=$(seq -s, 0 $((n - 1)))
    for launch in single-thread thread-per-gpu; do
      if [ $launch = single-thread ]; then shape="-g $n -t 1"; else shape="-g 1 -t $n"; fi
      for timing in pipelined per-op; do
        z=""; [ $timing = per-op ] && z="-z 3"
        cell=${wl}_g${n}_${launch}_${timing}
        for r in 1 2 3; do
          # shellcheck disable=SC2086
          CUDA_VISIBLE_DEVICES=$dev timeout 120 "$NT/${wl}_perf" $shape $z $SIZES_NT \
            > "$OUTDIR/nt_${cell}_r$r.log" 2>&1 || echo "nccl-tests $cell r$r failed" >&2
        done
        for r in 1 2; do
          # shellcheck disable=SC2086
          timeout 180 "$CM" $wl --gpus "$dev" --launch $launch --timing $timing $SIZES_CM --seed $r \
            --out "$OUTDIR/cm_${cell}_r$r" > "$OUTDIR/cm_${cell}_r$r.stdout" 2>&1 ||
            echo "commsim-measure $cell r$r failed" >&2
        done
        echo "$cell $(( $(date +%s) - T0 )) s"
      done
    done
  done
done
python3 "$(dirname "$0")/ab_table.py" "$OUTDIR"
