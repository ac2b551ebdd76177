#!/usr/bin/env bash
# commsim's predictions for run.sh's configurations (thread per GPU, as commsim-measure launches), one CSV per
# configuration in OUT (default predicted/). Usage from the repository root:
# validation/data/h200x4/peers/predict.sh [COMMSIM] [PARAMS] [OUT]
set -euo pipefail
commsim=${1:-build/default/sim/commsim}
params=${2:-models/params/h200.toml}
here=validation/data/h200x4/peers; out=${3:-$here/predicted}
mkdir -p $out
for ch in default 16 8 4; do
  for k in k1 k2 k3 fanout3 fanin3 one; do
    env=(); [ "$ch" = default ] || env=(--nccl-env NCCL_MAX_NCHANNELS=$ch)
    "$commsim" simulate alltoallv --topology topologies/library/real/h200x4.topo --gpus 0-3 --counts $here/$k.txt \
      --params "$params" --launch thread-per-gpu --min-bytes 4MiB --max-bytes 1GiB --factor 4 "${env[@]}" \
      --format csv --progress never 2>/dev/null > $out/${k}_ch$ch.csv
  done
done
