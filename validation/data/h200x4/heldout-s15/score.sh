#!/usr/bin/env bash
# Scores a parameter set on this directory's runs: MAPE below and from 1 MiB per run, with `commsim validate`
# (the _ch8 runs with NCCL_MAX_NCHANNELS=8). Usage from the repository root:
#   validation/data/h200x4/heldout-s15/score.sh [COMMSIM] [PARAMS]
set -euo pipefail
commsim=${1:-build/default/sim/commsim}
params=${2:-models/params/h200.toml}
T=topologies/library/real/h200x4.topo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| run | sizes < 1 MiB | MAPE < 1 MiB | sizes >= 1 MiB | MAPE >= 1 MiB |"
echo "| --- | ---: | ---: | ---: | ---: |"
for dir in validation/data/h200x4/heldout-s15/vm-*/*/; do
  n=$(basename "$dir")
  env=()
  case $n in *_ch8) env=(--nccl-env NCCL_MAX_NCHANNELS=8) ;; esac
  "$commsim" validate --topology $T --params "$params" --measured "$dir" "${env[@]}" --csv "$tmp/rows.csv" > /dev/null 2>&1
  python3 - "$tmp/rows.csv" "$n" <<'PY'
import csv, sys
rows = list(csv.DictReader(open(sys.argv[1])))
lo = [abs(float(r["error_pct"])) for r in rows if int(r["bytes"]) < 1 << 20]
hi = [abs(float(r["error_pct"])) for r in rows if int(r["bytes"]) >= 1 << 20]
f = lambda v: f"{sum(v) / len(v):.1f}%" if v else "-"
print(f"| {sys.argv[2]} | {len(lo)} | {f(lo)} | {len(hi)} | {f(hi)} |")
PY
done
