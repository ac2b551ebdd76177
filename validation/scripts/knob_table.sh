#!/usr/bin/env bash
# Per-knob accuracy of a parameter set on the NCCL-knob runs of start h200x4-2026-11-22a (models/README.md, "NCCL knobs").
# Usage: validation/scripts/knob_table.sh BEFORE.toml AFTER.toml [path/to/commsim]   (prints a Markdown table)
set -euo pipefail
cd "$(dirname "$0")/../.."
commsim=${3:-build/default/sim/commsim}
before=$1; after=$2; tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
C=validation/data/h200x4/coverage/h200x4-2026-11-22a
v() { "$commsim" validate --topology topologies/library/real/h200x4.topo --params $1 --gpu-map validation/data/h200x4/meta/gpus.csv --nccl-env $2 --nccl-tests ${@:3} --csv $tmp/v.csv >/dev/null 2>&1; python3 -c "
import csv
r=list(csv.DictReader(open('$tmp/v.csv')))
def m(rows): return '%.1f%%'%(sum(abs(float(x['error_pct'])) for x in rows)/len(rows)) if rows else '-'
lat=[x for x in r if int(x['bytes'])<(1<<20)]; bw=[x for x in r if int(x['bytes'])>=(1<<20)]
print(m(lat),'/',m(bw),end='')"; }
echo "| knob (workloads) | role | before: < 1 MiB / >= 1 MiB MAPE | after |"; echo "| --- | --- | --- | --- |"
for k in "maxch1:NCCL_MAX_NCHANNELS=1:fitted (channel rate)" "maxch2:NCCL_MAX_NCHANNELS=2:held out" "maxch4:NCCL_MAX_NCHANNELS=4:held out" "maxch8:NCCL_MAX_NCHANNELS=8:held out" "maxch16:NCCL_MAX_NCHANNELS=16:held out" "minch32:NCCL_MIN_NCHANNELS=32:held out" "protoLL:NCCL_PROTO=LL:held out" "protoLL128:NCCL_PROTO=LL128:held out" "protoSimple:NCCL_PROTO=Simple:held out" "Tree:NCCL_ALGO=Tree:fitted (tree_efficiency)" "Ring:NCCL_ALGO=Ring:held out" "p2pdisable:NCCL_P2P_DISABLE=1:held out" "shmdisable:NCCL_SHM_DISABLE=1:held out" "buff1M:NCCL_BUFFSIZE=1048576:held out" "buff16M:NCCL_BUFFSIZE=16777216:held out"; do IFS=: read n e f <<< "$k"; files=$(ls $C/*_g0123_${n}_r*.log); wls=$(for x in $files; do basename $x | sed 's/_g0123.*//'; done | sort -u | tr '\n' ',' | sed 's/,$//;s/,/, /g'); echo "| $e ($wls) | $f | $(v $before $e $files) | $(v $after $e $files) |"; done
