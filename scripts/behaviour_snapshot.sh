#!/usr/bin/env bash
# Writes what commsim and commsim-measure print for a fixed set of commands into OUT/, so that a restructuring
# can be shown to change no behaviour: run it before and after, then `diff -r BEFORE AFTER`.
# Usage: scripts/behaviour_snapshot.sh OUT [--full] [--build build/default]
#   --full  also runs the held-out cross-validation (about 2.5 minutes on 2 cores) and the bundled sweep.
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)"
cd "$root"
out="" full=0 build=build/default
while [ $# -gt 0 ]; do
  case "$1" in
    --full) full=1 ;;
    --build) build="$2"; shift ;;
    *) out="$1" ;;
  esac
  shift
done
[ -n "$out" ] || { echo "usage: $0 OUT [--full] [--build DIR]" >&2; exit 2; }
mkdir -p "$out"
out="$(cd "$out" && pwd)"
C="$root/$build/sim/commsim"
M="$root/$build/measure/commsim-measure"
H=topologies/library/real/h200x4.topo
P=models/params/h200.toml
D=validation/data/h200x4
n=0
# run NAME ARGS...: stdout, stderr and the exit code of one command, each in its own file. Paths written into
# the outputs are the repository-relative ones, so two checkouts compare equal.
run() {
  local name="$1"; shift
  n=$((n + 1))
  set +e
  "$@" >"$out/$name.out" 2>"$out/$name.err"
  echo $? >"$out/$name.rc"
  set -e
}
sim() { local name="$1"; shift; run "$name" "$C" "$@"; }

# Every workload, every output format.
for f in table csv json; do
  sim p2p-$f simulate p2p --topology $H --src 0 --dst 1 --params $P --format $f
  sim sendrecv-$f simulate sendrecv --topology $H --gpus 0-3 --params $P --format $f
  sim alltoall-$f simulate alltoall --topology $H --gpus 0-3 --format $f --launch thread-per-gpu
  sim exchange-$f simulate exchange --topology $H --pair 0,1 --mode batched --params $P --format $f
  for op in all_reduce all_gather reduce_scatter broadcast reduce; do
    sim $op-$f simulate $op --topology $H --gpus 0-3 --params $P --format $f --factor 4
  done
  sim pipeline-$f simulate pipeline --topology $H --stages 4 --microbatches 4,8 --activation-bytes 4MiB,64MiB \
    --fwd-us 500 --bwd-us 1000 --params $P --format $f
  sim interleaved-$f simulate pipeline --topology $H --stages 4 --microbatches 8 --activation-bytes 16MiB \
    --fwd-us 500 --bwd-us 1000 --schedule interleaved --chunks 2 --framework torch --format $f
  sim weight-sync-bc-$f simulate weight-sync --topology $H --model qwen2.5-32b --from 0 --to 1-3 --method broadcast \
    --bucket-bytes 256MiB --params $P --format $f
  sim weight-sync-ce-$f simulate weight-sync --topology $H --model llama-3-8b --from 0 --to 1-3 --method p2p-engine \
    --params $P --format $f
  sim model-broadcast-$f simulate broadcast --topology $H --gpus 0-3 --model llama-3-8b --bucket-bytes 64MiB --format $f
  sim grad-sync-$f simulate grad-sync --topology topologies/library/whatif/hgx-h100-2nodes-ndr.toml --model llama-3-8b \
    --gpus all --baseline-nccl-env NCCL_IB_DISABLE=1 --format $f
done
sim p2p-pairs simulate p2p --topology $H --pairs all --factor 64 --format csv
sim p2p-shm simulate p2p --topology topologies/library/real/pcie8-server.topo --gpu L40S --src 0 --dst 4 --factor 16
sim knobs simulate all_reduce --topology $H --gpus 0-3 --nccl-env NCCL_ALGO=Tree --nccl-env NCCL_PROTO=Simple --format csv
sim single-thread simulate sendrecv --topology $H --gpus 0,2 --launch single-thread --format csv --cost-model ideal
sim trace simulate exchange --topology $H --pair 0,1 --mode overlapped --max-bytes 1MiB --factor 64 \
  --trace "$out/trace.json" --format csv
sim advise advise pipeline --topology $H --params $P --stages 4 --microbatches 16 --activation-bytes 64MiB \
  --fwd-us 500 --bwd-us 1000
sim model-list model list
sim topo-json topo show $H --format json
# Errors.
sim err-workload simulate gossip --topology $H
sim err-mode simulate exchange --topology $H --pair 0,1 --mode parallel
sim err-gpus simulate sendrecv --topology $H --gpus 0-7

# Validation and calibration on the committed data (the accuracy figures).
sim validate-report validate --topology $H --params $P --gpu-map $D/meta/gpus.csv \
  --nccl-tests $D/nccl-tests/sendrecv_g2_d01_r*.log $D/nccl-tests/sendrecv_g4_r*.log $D/nccl-tests/alltoall_g4.log \
               $D/nccl-tests/{all_reduce,all_gather,reduce_scatter,broadcast,reduce}_g{2,4}.log \
  --measured $D/measure/p2p_all $D/measure/exchange_{sequential,overlapped,batched} $D/measure/sendrecv_g2 \
             $D/measure/alltoall_g4 $D/measure/reduce_g2 $D/measure/pipeline_1f1b_nccl \
             $D/measure/pipeline_interleaved_v2_seq_batched $D/measure/weight_sync_qwen32b_{broadcast,p2p-engine} \
  --torch $D/torch/pipeline_1f1b_torch.json $D/torch/weight_sync_broadcast_qwen32b.json \
  --markdown "$out/validate.md" --csv "$out/validate.csv"
sim validate-pipelined validate --topology $H --params $P \
  --measured validation/data/h200x2/measure-pipelined/h200x2-2026-11-22a/{p2p_all,exchange_batched,pipeline_per_op}
sim validate-manifest validate --topology $H --manifest validation/data/h200x2/coverage/h200x2-2026-11-22a/manifest.csv
sim calibrate calibrate --topology $H --start models/params/nccl-default.toml --measured $D/measure/exchange_batched \
  $D/measure/p2p_all --param simple.base_latency --param simple.channel_bandwidth --out "$out/calibrated.toml"
sim calibrate-coll calibrate --topology $H --start models/params/nccl-default.toml \
  --nccl-tests $D/nccl-tests/all_reduce_g4.log --nccl-tests $D/nccl-tests/all_gather_g4.log \
  --param collective.simple_base_latency --fit all_reduce --fit all_gather --out "$out/calibrated-coll.toml"
for w in p2p sendrecv exchange all_reduce broadcast pipeline weight-sync grad-sync; do
  sim help-$w simulate $w --help
done
sim help-sweep sweep --help
sim help-validate validate --help
sim help-calibrate calibrate --help

# commsim-measure's plans (CPU only) where it is built.
if [ -x "$M" ]; then
  for w in p2p sendrecv exchange all_reduce all_gather reduce_scatter alltoall broadcast reduce pipeline; do
    extra=()
    case $w in
      exchange) extra=(--pair 0,1 --mode batched) ;;
      pipeline) extra=(--microbatches 4,8 --activation-bytes 4MiB --fwd-us 500 --bwd-us 1000 --mode batched,overlapped) ;;
    esac
    run measure-dry-$w "$M" $w --dry-run -g 4 --out /nonexistent "${extra[@]}"
  done
  run measure-help "$M" --help
  for w in p2p sendrecv exchange all_reduce alltoall broadcast pipeline weight-sync; do
    run measure-help-$w "$M" $w --help
  done
fi

if [ $full = 1 ]; then
  sim sweep sweep sim/sweeps/whatif-grid.toml --out "$out/sweep" --jobs 2
  sim heldout validate --topology $H --params models/params/nccl-default.toml \
    --manifest $D/nccl-tests/manifest.csv $D/coverage/h200x4-2026-11-22a/manifest.csv \
      validation/data/h200x2/coverage/h200x2-2026-11-22a/manifest.csv --cross-validate \
    --param host.launch_per_gpu --param simple.base_latency --param simple.channel_bandwidth \
    --param ll.base_latency --param ll.channel_bandwidth --param p2p.nvlink_efficiency \
    --param collective.ll_base_latency --param collective.simple_base_latency \
    --markdown "$out/heldout.md" --json "$out/heldout.json"
fi
# Wall-clock figures and versions differ from run to run: drop the lines and fields that carry them.
for f in "$out"/*.out "$out"/*.err "$out"/*.md "$out"/*.json; do
  [ -f "$f" ] || continue
  sed -i -E -e 's/"commsim_version": "[^"]*"/"commsim_version": "-"/' -e "s|$out|OUT|g" \
    -e '/wall|elapsed|seconds on this|ETA/d' "$f"
done
echo "$n commands -> $out"
