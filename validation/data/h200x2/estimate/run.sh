#!/bin/bash
# Issue 15 item 4: commsim-measure's wall-time estimate against the real wall time of the same plans.
# Every plan is first dry-run here with --format json (the estimate, on the bundled h200x4 topology), then run
# for real, timed from outside (date) while metadata.json records the tool's own phases ("wall_clock") and the
# estimate it made from the topology it captured. Two passes, so run-to-run spread is measured.
# Output: /tmp/est/<pass>/<name>{.dry.json,/,.stdout,.stderr} and /tmp/est/walls.csv.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
M=$PWD/.ext/measure/commsim-measure
T=topologies/library/real/h200x4.topo
D=/tmp/est; mkdir -p $D; T0=$(date +%s)
echo "pass,name,rc,wall_s" > $D/walls.csv
run() {  # run PASS NAME ARGS...
  local pass=$1 name=$2; shift 2
  mkdir -p $D/$pass
  "$M" "$@" --dry-run --format json --topology $T > $D/$pass/$name.dry.json 2> $D/$pass/$name.dry.stderr
  local s e rc
  s=$(date +%s.%N)
  timeout 300 "$M" "$@" --out $D/$pass/$name > $D/$pass/$name.stdout 2> $D/$pass/$name.stderr; rc=$?
  e=$(date +%s.%N)
  echo "$pass,$name,$rc,$(awk "BEGIN{print $e-$s}")" >> $D/walls.csv
  echo "$pass $name rc=$rc $(( $(date +%s) - T0 ))s"
}
ws() {  # ws PASS NAME ARGS... (weight-sync: its dry run prints text)
  local pass=$1 name=$2; shift 2
  mkdir -p $D/$pass
  "$M" weight-sync "$@" --dry-run --topology $T > $D/$pass/$name.dry.txt 2>&1
  local s e rc
  s=$(date +%s.%N)
  timeout 300 "$M" weight-sync "$@" --out $D/$pass/$name > $D/$pass/$name.stdout 2> $D/$pass/$name.stderr; rc=$?
  e=$(date +%s.%N)
  echo "$pass,$name,$rc,$(awk "BEGIN{print $e-$s}")" >> $D/walls.csv
  echo "$pass $name rc=$rc $(( $(date +%s) - T0 ))s"
}
for pass in p1 p2; do
  # calibration plans (the tool's own costs are fitted on these)
  run $pass c1_minimal       p2p -g 2 -b 8 -e 8 --reps 1 --drift-seconds 0
  run $pass c2_many_small    p2p -g 2 -b 8 -e 64K --reps 20 --drift-seconds 0
  run $pass c3_large         sendrecv --gpus 0,1 -b 64M -e 1G --reps 5 --drift-seconds 0
  run $pass c4_two_comms     exchange --pair 0,1 --mode overlapped -b 8 -e 8 --reps 1 --drift-seconds 0
  # held-out plans (never used in the fit)
  run $pass h1_all_reduce    all_reduce -g 2 -b 8 -e 1G -f 2 --reps 3 --drift-seconds 2
  run $pass h2_alltoall_op   alltoall --launch single-thread -g 2 --timing per-op -b 1K -e 256M -f 4 --reps 5 --drift-seconds 0
  run $pass h3_pipeline      pipeline --gpus all --activation-bytes 4MiB,64MiB --microbatches 8 --mode batched,sequential --fwd-us 500 --bwd-us 1000 --warmup 2 --iterations 5 --reps 3 --drift-seconds 0
  run $pass h4_exchange_seq  exchange --pair 0,1 --mode sequential -b 8 -e 1G --reps 5 --drift-seconds 0
  run $pass h5_p2p_all       p2p --pairs all -b 8 -e 1G --reps 5 --drift-seconds 2 --gpus all
  run $pass h6_all_gather    all_gather -g 2 -b 1M -e 1G --reps 10 --drift-seconds 0 -n 50 -w 10
  ws  $pass h7_ws_broadcast  --model qwen2.5-32b --from 0 --to 1 --method broadcast --reps 3
  ws  $pass h8_ws_engine     --model llama-3-8b --from 0 --to 1 --method p2p-engine --reps 3
done
nvidia-smi --query-gpu=index,name,clocks.sm,clocks.mem,temperature.gpu --format=csv > $D/gpus.csv 2>&1
echo "estimate runs done in $(( $(date +%s) - T0 )) s"
