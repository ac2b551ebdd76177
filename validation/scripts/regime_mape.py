#!/usr/bin/env python3
"""MAPE, worst error and band coverage per size regime (latency-bound < 1 MiB, bandwidth-bound >= 1 MiB) and
launch, from the CSV that `commsim validate --csv` writes (one file per column of the table).
Usage: validation/scripts/regime_mape.py NAME=FILE.csv [NAME=FILE.csv...]"""
import csv, sys

if len(sys.argv) < 2 or any('=' not in a for a in sys.argv[1:]):
    sys.exit(__doc__)
MIB = 1 << 20
cols = [a.split('=', 1) for a in sys.argv[1:]]


def cell(rows):
    if not rows:
        return '-'
    e = [abs(float(r['error_pct'])) for r in rows]
    inside = sum(float(r['predicted_lo_us']) <= float(r['measured_us']) <= float(r['predicted_hi_us']) for r in rows)
    return f'{sum(e) / len(e):.1f}% / {max(e):.1f}% / {100 * inside / len(rows):.0f}%'


data = {name: list(csv.DictReader(open(path))) for name, path in cols}
print('| sizes | launch | ' + ' | '.join(name for name, _ in cols) + ' |')
print('| --- | --- |' + ' --- |' * len(cols))
for regime, small in (('< 1 MiB', True), ('>= 1 MiB', False)):
    for launch in ('all', 'single-thread', 'thread-per-gpu'):
        cells = []
        for name, _ in cols:
            rows = [r for r in data[name] if (int(r['bytes']) < MIB) == small and
                    (launch == 'all' or (r['mode'] == 'thread-per-gpu') == (launch == 'thread-per-gpu'))]
            cells.append(cell(rows))
        print(f'| {regime} | {launch} | ' + ' | '.join(cells) + ' |')
print('\nEach cell: MAPE / worst / share of measured medians inside the band.')
