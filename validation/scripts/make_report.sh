#!/usr/bin/env bash
# Regenerates validation/reports/h200x4/ (HTML, Markdown, CSV, the screenshot) from the committed 4x H200 data.
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
  --fit-note "models/params/h200.toml: the send/recv sections were fitted (validation/scripts/fit_params.py) on nccl-tests sendrecv over GPUs 0,1 and 0-3, commsim-measure p2p 0->1 and the three exchange modes on 0,1; the [collective] section was fitted (commsim calibrate) on the nccl-tests all_reduce, all_gather, reduce_scatter, broadcast and reduce sweeps on 2 and 4 GPUs and commsim-measure's collective sweeps; host.launch_per_op from the latency floor of nccl-tests alltoall on 4 GPUs against sendrecv's; p2p.split_rate (commsim calibrate) on the 2x H200 alltoall runs of validation/data/h200x2/alltoall-channels from 32 MiB; p2p.solo_speedup (commsim calibrate) on the one-pair alltoallv runs with 8 channels of validation/data/h200x4/peers from 16 MiB. Held out, used only to validate: the other 11 p2p pairs, commsim-measure sendrecv and alltoall, nccl-tests alltoall, the commsim-measure reduce sweeps, the 1F1B and interleaved pipeline steps (commsim-measure and PyTorch) and the qwen2.5-32b weight pushes (broadcast, bucketed broadcast, PyTorch broadcast, copy-engine P2P engine)." \
  --nccl-tests $D/nccl-tests/sendrecv_g2_d01_r*.log $D/nccl-tests/sendrecv_g4_r*.log \
               $D/nccl-tests/alltoall_g2.log $D/nccl-tests/alltoall_g4.log \
               $D/nccl-tests/{all_reduce,all_gather,reduce_scatter,broadcast,reduce}_g{2,4}.log \
  --measured $D/measure/p2p_all $D/measure/exchange_sequential $D/measure/exchange_overlapped \
             $D/measure/exchange_batched $D/measure/sendrecv_g2 $D/measure/sendrecv_g4 $D/measure/alltoall_g4 \
             $D/measure/{all_reduce,all_gather,reduce_scatter,broadcast}_g4 $D/measure/reduce_g{2,4} \
             $D/measure/pipeline_1f1b_timeline $D/measure/pipeline_1f1b_nccl \
             $D/measure/pipeline_interleaved_v{2,4}_{seq_batched,overlapped_4MiB} \
             $D/measure/weight_sync_qwen32b_{broadcast,broadcast_bucket64MiB,broadcast_bucket256MiB,broadcast_bucket1GiB,p2p-engine} \
  --torch $D/torch/pipeline_1f1b_torch.json $D/torch/weight_sync_broadcast_qwen32b.json \
  --report $out/report.html --markdown $out/summary.md --csv $out/rows.csv
# screenshot.png: the top of the report as headless Chromium renders it (nothing fetched: the page is offline).
browser="$(command -v chromium || command -v chromium-browser || command -v google-chrome || true)"
if [ -n "$browser" ]; then
  profile="$(mktemp -d)"
  "$browser" --headless --no-sandbox --disable-gpu --no-first-run --user-data-dir="$profile" \
    --host-resolver-rules="MAP * ~NOTFOUND" --hide-scrollbars --window-size=1300,2000 \
    --screenshot="$root/$out/screenshot.png" "file://$root/$out/report.html" >/dev/null 2>&1
  rm -rf "$profile"
  echo "make_report.sh: $out/screenshot.png regenerated with $browser"
else
  echo "make_report.sh: no Chromium, so $out/screenshot.png was not regenerated (apt-get install chromium)" >&2
fi
