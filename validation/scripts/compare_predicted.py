#!/usr/bin/env python3
"""Signed error and MAPE of commsim's predictions against commsim-measure runs: DATA_DIR holds the runs (vm-*/NAME/
results.csv, median of the repetitions per size), each PRED_DIR one NAME.csv per run (a predict.sh output).
Usage: validation/scripts/compare_predicted.py DATA_DIR PRED_DIR [PRED_DIR...] (PRED_DIRs relative to DATA_DIR or
absolute). Sizes a prediction does not have (e.g. 3-GPU runs' rounded sizes) are left out; a run with none is '-'."""
import csv, glob, os, sys

if len(sys.argv) < 3:
    sys.exit(__doc__)
here = os.path.abspath(sys.argv[1])
dirs = [os.path.join(here, d) for d in sys.argv[2:]]
meas = {}
for d in sorted(glob.glob(here + '/vm-*')):
    for r in glob.glob(d + '/*/results.csv'):
        name = os.path.basename(os.path.dirname(r))
        for row in csv.DictReader(open(r)):
            meas.setdefault((name, int(row['bytes'])), []).append(float(row['time_us']))
names = sorted({n for n, _ in meas})
print('| case | ' + ' | '.join(os.path.basename(d.rstrip('/')) for d in dirs) + ' |')
print('| --- |' + ' --- |' * len(dirs))
for n in names:
    cells = []
    for d in dirs:
        pred = {int(r['bytes']): float(r['time_us']) for r in csv.DictReader(open(f'{d}/{n}.csv'))}
        errs = []
        for (m, b), v in sorted(meas.items()):
            if m != n or b not in pred: continue
            v = sorted(v); mm = v[len(v) // 2]
            errs.append(100 * (pred[b] - mm) / mm)
        if not errs:
            cells.append('-')
            continue
        cells.append(f'{sum(abs(e) for e in errs) / len(errs):.1f}% (' + ' '.join(f'{e:+.0f}' for e in errs) + ')')
    print(f'| {n} | ' + ' | '.join(cells) + ' |')
