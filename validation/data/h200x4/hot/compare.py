#!/usr/bin/env python3
"""Measured per-size times of this directory's runs beside commsim's predictions (predict.sh output dirs given as
arguments): time, the hot GPU's ingress rate (GPU 0; GPU 1 for skew 1.2, whose popularity order puts GPU 1 first)
and the signed error of each prediction."""
import csv, glob, os, sys
here = os.path.dirname(os.path.abspath(__file__))
meas = {}
for d in sorted(glob.glob(here + '/vm-*')):
    for r in glob.glob(d + '/*/results.csv'):
        name = os.path.basename(os.path.dirname(r))
        for row in csv.DictReader(open(r)):
            meas.setdefault((name, int(row['bytes'])), []).append(float(row['time_us']))
# Share of 3 x SIZE that the hot GPU receives, per pattern (rows of the counts files; skew 1.2 from its weights).
def hot_share(k):
    if k == 'skew1.2':
        w = [3 ** -1.2, 1.0, 4 ** -1.2, 2 ** -1.2]  # GPU p's weight 1/(1+order[p])^1.2, order [2, 0, 3, 1]
        tot = sum(w[p] for r in range(4) for p in range(4) if p != r)
        return 3 * w[1] / tot
    rows = [[float(x) for x in l.split()] for l in open(f'{here}/{k}.txt')]
    tot = sum(v for r, row in enumerate(rows) for p, v in enumerate(row) if p != r)
    return sum(rows[r][0] for r in range(4) if r != 0) / tot
dirs = sys.argv[1:]
names = sorted({n for n, _ in meas})
print('| run | size | measured us | hot GB/s | ' + ' | '.join(os.path.basename(d.rstrip('/')) for d in dirs) + ' |')
print('| --- | ---: | ---: | ---: |' + ' ---: |' * len(dirs))
for n in names:
    k = n.rsplit('_ch', 1)[0]
    share = hot_share(k) * 3
    for b in sorted(b for m, b in meas if m == n):
        v = sorted(meas[(n, b)]); m = v[len(v) // 2]
        cells = []
        for d in dirs:
            pred = {int(r['bytes']): float(r['time_us']) for r in csv.DictReader(open(f'{d}/{n}.csv'))}
            cells.append(f'{100 * (pred[b] - m) / m:+.1f}%' if b in pred else '-')
        print(f'| {n} | {b >> 20} MiB | {m:.1f} | {share * b / m / 1e3:.0f} | ' + ' | '.join(cells) + ' |')
