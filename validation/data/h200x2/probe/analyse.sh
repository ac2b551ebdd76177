#!/usr/bin/env bash
# The host probe on one machine start: h200.toml alone against h200.toml with host.launch_per_gpu (and
# host.launch_base) refitted on the sendrecv probe, predicting the six collectives' runs (never fitted).
# Usage: validation/data/h200x2/probe/analyse.sh RUNS [COMMSIM]   (RUNS: a run.sh output folder, e.g.
# validation/data/h200x2/probe/58e759a0; prints a Markdown table, ~1 s)
set -euo pipefail
[ $# -ge 1 ] || { sed -n 2,5p "$0" >&2; exit 2; }
D=$(realpath "$1")
cd "$(dirname "$0")/../../../.."
commsim=${2:-build/default/sim/commsim}
T=topologies/library/real/h200x4.topo
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
held=()
for d in "$D"/*_r[123]; do [[ $d == */sendrecv_* ]] || held+=("$d"); done
probe() {  # NAME ROUNDS PARAMS...
  local name=$1 rounds=$2; shift 2
  local dirs=() p=()
  for r in $rounds; do dirs+=("$D/sendrecv_single-thread_r$r" "$D/sendrecv_thread-per-gpu_r$r"); done
  for x in "$@"; do p+=(--param "$x"); done
  if ! "$commsim" calibrate --topology $T --start models/params/h200.toml --measured "${dirs[@]}" \
    --fit 'sendrecv gpus 0,1 single-thread' --fit 'sendrecv gpus 0,1 thread-per-gpu' "${p[@]}" \
    --out "$tmp/$name.toml" > "$tmp/$name.log" 2>&1; then
    echo "$name: calibrate failed: $(tail -1 "$tmp/$name.log")" >&2
    echo "bytes,mode,error_pct,measured_us,predicted_lo_us,predicted_hi_us" > "$tmp/$name.csv"  # no rows: '-'
    return
  fi
  grep -E '^  host\.' "$tmp/$name.log" | sed "s/^/$name: /" >&2 || true
  "$commsim" validate --topology $T --params "$tmp/$name.toml" --measured "${held[@]}" --csv "$tmp/$name.csv" > /dev/null
}
"$commsim" validate --topology $T --params models/params/h200.toml --measured "${held[@]}" --csv "$tmp/h200.csv" > /dev/null
probe r1 1 host.launch_per_gpu
probe r2 2 host.launch_per_gpu
probe r3 3 host.launch_per_gpu
probe all "1 2 3" host.launch_per_gpu
probe all2 "1 2 3" host.launch_per_gpu host.launch_base
python3 validation/scripts/regime_mape.py "h200.toml alone=$tmp/h200.csv" "probe round 1=$tmp/r1.csv" \
  "probe round 2=$tmp/r2.csv" "probe round 3=$tmp/r3.csv" "probe, 3 rounds=$tmp/all.csv" \
  "probe, 3 rounds, + launch_base=$tmp/all2.csv"
