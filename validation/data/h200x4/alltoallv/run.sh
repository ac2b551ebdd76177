#!/usr/bin/env bash
# alltoallv (issue 14 item 7) on the lent H200 machine: commsim-measure alltoallv without and with a skew, alltoall
# beside it, and nccl-tests alltoall_perf as the reference floor. Run from the repository root on the device with
# .ext/measure (commsim-measure + libtomlplusplus) and .ext/nccl-tests carried; results in $OUT/alltoallv.tgz.
set -uo pipefail
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
M=.ext/measure/commsim-measure
n=$(nvidia-smi -L | wc -l)
g=0-$((n - 1))
start="$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)"
d=$OUT/$start
mkdir -p "$d"
nvidia-smi > "$d/nvidia-smi.txt" 2>&1
nvidia-smi topo -m > "$d/topo.txt" 2>&1
sizes=(--min-bytes 1KiB --max-bytes 1GiB --factor 4 --reps 5 --drift-seconds 5)
for skew in 0 1.2; do
  $M alltoallv --gpus $g --skew $skew "${sizes[@]}" --out "$d/alltoallv_g${n}_skew$skew" \
    > "$d/alltoallv_g${n}_skew$skew.stdout" 2> "$d/alltoallv_g${n}_skew$skew.stderr"
  echo "alltoallv skew $skew: exit $?" | tee -a "$d/exit_codes.txt"
done
$M alltoall --gpus $g "${sizes[@]}" --out "$d/alltoall_g$n" > "$d/alltoall_g$n.stdout" 2> "$d/alltoall_g$n.stderr"
echo "alltoall: exit $?" | tee -a "$d/exit_codes.txt"
.ext/nccl-tests/alltoall_perf -b 1K -e 1G -f 4 -t $n -g 1 > "$d/nccl-tests_alltoall_t$n.log" 2>&1
echo "nccl-tests alltoall_perf: exit $?" | tee -a "$d/exit_codes.txt"
rm -f "$d"/*/nccl_debug.*.log
tar czf "$OUT/alltoallv.tgz" -C "$OUT" "$start"
rm -rf "$d"
echo "start $start"
