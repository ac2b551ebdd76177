#!/usr/bin/env python3
"""MAPE, worst error and band coverage per size regime (latency-bound < 1 MiB, bandwidth-bound >= 1 MiB, and
from 32 MiB) and launch, from the CSV that `commsim validate --csv` writes (one file per column of the table).
Usage: validation/scripts/regime_mape.py [--mean-error] [--exclude 'WORKLOAD|GPUS|MODE' ...] NAME=FILE.csv...
  --mean-error  each cell also gives the mean signed error (measured slower than predicted: negative)
  --exclude     drops one configuration's rows (e.g. the probe rows a set was fitted on: 'sendrecv|0 1|' and
                'sendrecv|0 1|thread-per-gpu'), repeatable"""
import csv, sys

args = sys.argv[1:]
signed = False
excluded = set()
cols = []
while args:
    a = args.pop(0)
    if a == '--mean-error':
        signed = True
    elif a == '--exclude' and args:
        key = tuple(args.pop(0).split('|'))
        if len(key) != 3:
            sys.exit("--exclude takes WORKLOAD|GPUS|MODE, e.g. 'sendrecv|0 1|thread-per-gpu'")
        excluded.add(key)
    elif '=' in a and not a.startswith('--'):
        cols.append(a.split('=', 1))
    else:
        sys.exit(__doc__)
if not cols:
    sys.exit(__doc__)
MIB = 1 << 20


def cell(rows):
    if not rows:
        return '-'
    err = [float(r['error_pct']) for r in rows]
    e = [abs(x) for x in err]
    inside = sum(float(r['predicted_lo_us']) <= float(r['measured_us']) <= float(r['predicted_hi_us']) for r in rows)
    text = f'{sum(e) / len(e):.1f}% / {max(e):.1f}% / {100 * inside / len(rows):.0f}%'
    return text + (f' / {sum(err) / len(err):+.1f}%' if signed else '')


data = {}
for name, path in cols:
    rows = list(csv.DictReader(open(path)))
    for key in excluded:
        if not any((r['workload'], r['gpus'], r['mode']) == key for r in rows):
            sys.exit(f"{path}: --exclude '{'|'.join(key)}' matches no row (GPUs are space-separated: 'sendrecv|0 1|')")
    data[name] = [r for r in rows if (r['workload'], r['gpus'], r['mode']) not in excluded]
print('| sizes | launch | ' + ' | '.join(name for name, _ in cols) + ' |')
print('| --- | --- |' + ' --- |' * len(cols))
regimes = (('< 1 MiB', lambda b: b < MIB), ('>= 1 MiB', lambda b: b >= MIB), ('>= 32 MiB', lambda b: b >= 32 * MIB))
for regime, within in regimes:
    for launch in ('all', 'single-thread', 'thread-per-gpu'):
        cells = []
        for name, _ in cols:
            rows = [r for r in data[name] if within(int(r['bytes'])) and
                    (launch == 'all' or ('thread-per-gpu' in r['mode'].split()) == (launch == 'thread-per-gpu'))]
            cells.append(cell(rows))
        print(f'| {regime} | {launch} | ' + ' | '.join(cells) + ' |')
print('\nEach cell: MAPE / worst / share of measured medians inside the band' +
      (' / mean signed error.' if signed else '.'))
