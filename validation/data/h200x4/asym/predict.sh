#!/usr/bin/env bash
# commsim's predictions for run.sh's configurations (thread per GPU), one CSV per configuration in OUT.
# Usage from the repository root: validation/data/h200x4/asym/predict.sh [COMMSIM] [PARAMS] [OUT]
set -euo pipefail
commsim=${1:-build/default/sim/commsim}
params=${2:-models/params/h200.toml}
here=validation/data/h200x4/asym; out=${3:-$here/predicted}
mkdir -p $out
for ch in ${CHANNELS:-default 8}; do
  for k in ${CASES:-asym1 asym075 asym05 asym025}; do
    env=(); [ "$ch" = default ] || env=(--nccl-env NCCL_MAX_NCHANNELS=$ch)
    "$commsim" simulate alltoallv --topology topologies/library/real/h200x4.topo --gpus 0-3 --counts $here/$k.txt \
      --params "$params" --launch thread-per-gpu --min-bytes 4MiB --max-bytes 1GiB --factor 4 "${env[@]}" \
      --format csv --progress never 2>/dev/null > $out/${k}_ch$ch.csv
  done
done
