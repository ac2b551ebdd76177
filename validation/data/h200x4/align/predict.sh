#!/usr/bin/env bash
# commsim's predictions for cases.txt (thread per GPU, as commsim-measure launches), one CSV per case in OUT.
# Usage from the repository root: validation/data/h200x4/align/predict.sh [COMMSIM] [PARAMS] [OUT]
set -euo pipefail
commsim=${1:-build/default/sim/commsim}
params=${2:-models/params/h200.toml}
here=validation/data/h200x4/align; out=${3:-$here/predicted}
mkdir -p $out
grep -v '^#' $here/cases.txt | while IFS='|' read -r name args; do
  name=$(echo $name)
  "$commsim" simulate alltoallv --topology topologies/library/real/h200x4.topo $args --params "$params" \
    --launch thread-per-gpu --min-bytes 4MiB --max-bytes 1GiB --factor 4 --format csv --progress never \
    2>/dev/null > $out/$name.csv
done
