#!/usr/bin/env bash
# commsim's predictions for run.sh's configurations, written before measuring (issue 13, session 25: the peer
# loss of p2p.peer_ramp / peer_rate_loss, fitted on H200, tested on a machine start it never saw): commsim-measure
# alltoall on GPUs 0-2 and 0-3 (one thread, 1 MiB .. 1 GiB) under NCCL_MAX_NCHANNELS 4, 8, 16 and the default,
# and alltoallv with the --counts files of validation/data/h200x4/peers (a thread per GPU, 4 MiB .. 1 GiB) under
# 16, 8 and the default. One CSV per configuration in OUT/h100 (--gpu H100) and OUT/h200.
# Usage from the repository root: validation/data/h100x4/peers2/predict.sh [COMMSIM] [PARAMS] [OUT]
set -euo pipefail
commsim=${1:-build/default/sim/commsim}
params=${2:-models/params/h200.toml}
out=${3:-validation/data/h100x4/peers2/predicted}
topo=topologies/library/real/h200x4.topo
peers=validation/data/h200x4/peers
for gpu in H100 H200; do
  d=$out/$(echo $gpu | tr A-Z a-z); mkdir -p "$d"
  for c in 4 8 16 default; do
    env=(); [ "$c" = default ] || env=(--nccl-env NCCL_MAX_NCHANNELS=$c)
    for g in 0-2 0-3; do
      "$commsim" simulate alltoall --topology $topo --gpu $gpu --gpus $g --params "$params" --launch single-thread \
        --min-bytes 1MiB --max-bytes 1GiB --factor 2 "${env[@]}" --format csv --progress never 2>/dev/null \
        > "$d/a2a_g${g/-/}_ch$c.csv"
    done
    [ "$c" = 4 ] && continue
    for k in k1 k2 k3 fanout3 fanin3 one; do
      "$commsim" simulate alltoallv --topology $topo --gpu $gpu --gpus 0-3 --counts $peers/$k.txt --params "$params" \
        --launch thread-per-gpu --min-bytes 4MiB --max-bytes 1GiB --factor 4 "${env[@]}" --format csv \
        --progress never 2>/dev/null > "$d/${k}_ch$c.csv"
    done
  done
done
