#!/usr/bin/env bash
# Regenerates validation/reports/h200x4/ (HTML, Markdown, CSV) from the committed 4x H200 data.
# Usage: validation/scripts/make_report.sh [path/to/commsim]   (default build/default/sim/commsim)
set -euo pipefail
root="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"
cd "$root"
commsim="${1:-build/default/sim/commsim}"
D=validation/data/h200x4
out=validation/reports/h200x4
mkdir -p "$out"
"$commsim" validate --topology topologies/library/real/h200x4.topo --params models/params/h200.toml \
  --gpu-map $D/meta/gpus.csv \
  --fit-note "models/params/h200.toml was fitted (validation/scripts/fit_params.py) on nccl-tests sendrecv over GPUs 0,1 and 0-3, commsim-measure p2p 0->1 and the three exchange modes on 0,1. Held out, used only to validate: the other 11 p2p pairs, commsim-measure sendrecv and alltoall, nccl-tests alltoall." \
  --nccl-tests $D/nccl-tests/sendrecv_g2_d01_r*.log $D/nccl-tests/sendrecv_g4_r*.log \
               $D/nccl-tests/alltoall_g2.log $D/nccl-tests/alltoall_g4.log \
  --measured $D/measure/p2p_all $D/measure/exchange_sequential $D/measure/exchange_overlapped \
             $D/measure/exchange_batched $D/measure/sendrecv_g2 $D/measure/sendrecv_g4 $D/measure/alltoall_g4 \
  --report $out/report.html --markdown $out/summary.md --csv $out/rows.csv
