#!/usr/bin/env bash
# Held-out test of p2p.split3_rate on new machine starts (a4b472e1, 0dd4a3d5): commsim validate of every configuration with
# models/params/h200.toml, MAPE from 1 MiB and the mean signed error of the sizes where three works share a
# channel on 3 GPUs (NCCL_MAX_NCHANNELS=4 from 128 MiB, 8 from 256 MiB, 16 from 512 MiB).
# Usage: validation/data/h200x4/a2a3/analyse.sh [COMMSIM] [PARAMS] [START]   (START: a4b472e1, the default, or
# 0dd4a3d5; unpacks START.tar.xz into a temp dir)
set -euo pipefail
cd "$(dirname "$0")/../../../.."
C=${1:-build/default/sim/commsim}
P=${2:-models/params/h200.toml}
S=${3:-a4b472e1}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
tar -C "$tmp" -xJf "validation/data/h200x4/a2a3/$S.tar.xz"
for g in 012 0123; do
  for c in 4 8 16 default; do
    env=()
    [ "$c" = default ] || env=(--nccl-env "NCCL_MAX_NCHANNELS=$c")
    "$C" validate --topology topologies/library/real/h200x4.topo --params "$P" \
      --measured "$tmp/$S/a2a_g${g}_ch${c}_r1" "$tmp/$S/a2a_g${g}_ch${c}_r2" ${env[@]+"${env[@]}"} \
      --csv "$tmp/g${g}_ch$c.csv" > /dev/null
  done
done
python3 - "$tmp" <<'PY'
import csv, sys
tmp = sys.argv[1]
first = {'4': 128 << 20, '8': 256 << 20, '16': 512 << 20, 'default': None}
every, three = [], []
print('| GPUs | channels | sizes >= 1 MiB | MAPE | three works a channel: sizes, mean signed error |')
print('| --- | --- | ---: | ---: | --- |')
for g in ['012', '0123']:
    for c in ['4', '8', '16', 'default']:
        rows = [r for r in csv.DictReader(open(f'{tmp}/g{g}_ch{c}.csv')) if int(r['bytes']) >= 1 << 20]
        e = [float(r['error_pct']) for r in rows]
        every += e
        a = [float(r['error_pct']) for r in rows
             if g == '012' and first[c] is not None and int(r['bytes']) >= first[c]]
        three += a
        cell = f'{len(a)}, {sum(a) / len(a):+.1f}%' if a else '-'
        print(f'| {",".join(g)} | {c} | {len(e)} | {sum(map(abs, e)) / len(e):.2f}% | {cell} |')
print(f'all sizes from 1 MiB: {sum(map(abs, every)) / len(every):.2f}% MAPE ({len(every)} sizes); '
      f'3-GPU sizes with three works a channel: {sum(map(abs, three)) / len(three):.2f}% ({len(three)} sizes)')
PY
