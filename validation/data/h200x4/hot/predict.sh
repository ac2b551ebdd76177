#!/usr/bin/env bash
# commsim's predictions for run.sh's configurations (thread per GPU, as commsim-measure launches), one CSV per
# configuration in OUT (default predicted/). Usage from the repository root:
# validation/data/h200x4/hot/predict.sh [COMMSIM] [PARAMS] [OUT]
set -euo pipefail
commsim=${1:-build/default/sim/commsim}
params=${2:-models/params/h200.toml}
here=validation/data/h200x4/hot; out=${3:-$here/predicted}
mkdir -p $out
for ch in default 16 8; do
  pats=(skew1.2 hotback fanin3 hotcold hotboth star oneback)
  [ "$ch" = default ] || pats=(skew1.2 hotback fanin3)
  for k in "${pats[@]}"; do
    env=(); [ "$ch" = default ] || env=(--nccl-env NCCL_MAX_NCHANNELS=$ch)
    if [ "$k" = skew1.2 ]; then pat=(--skew 1.2); else pat=(--counts $here/$k.txt); fi
    "$commsim" simulate alltoallv --topology topologies/library/real/h200x4.topo --gpus 0-3 "${pat[@]}" \
      --params "$params" --launch thread-per-gpu --min-bytes 4MiB --max-bytes 1GiB --factor 4 "${env[@]}" \
      --format csv --progress never 2>/dev/null > $out/${k}_ch$ch.csv
  done
done
