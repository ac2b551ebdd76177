#!/usr/bin/env python3
"""Per-configuration MAPE of commsim prediction CSVs (predict.sh output dirs) against the measured results.csv here."""
import csv,glob,os,sys
# MEASURED=DIR reads the machine starts (vm-*) of another directory (default: this one).
here=os.environ.get('MEASURED',os.path.dirname(os.path.abspath(__file__)))
meas={}
# START=vm-... restricts the measured side to one machine start's directory (default: every start, pooled).
for d in sorted(glob.glob(here+'/'+os.environ.get('START','vm-*'))):
    for r in glob.glob(d+'/*/results.csv'):
        name=os.path.basename(os.path.dirname(r))
        for row in csv.DictReader(open(r)):
            meas.setdefault((name,int(row['bytes'])),[]).append(float(row['time_us']))
def load(pdir,name):
    p=f'{pdir}/{name}.csv'; out={}
    for row in csv.DictReader(open(p)): out[int(row['bytes'])]=float(row['time_us'])
    return out
dirs=sys.argv[1:]
print('| pattern | channels | '+' | '.join(os.path.basename(d) for d in dirs)+' |')
print('| --- | --- |'+' ---: |'*len(dirs))
for k in ['k1','k2','k3','fanout3','fanin3','one']:
  for ch in ['default','16','8','4']:
    name=f'{k}_ch{ch}'
    if not all(os.path.exists(f'{d}/{name}.csv') for d in dirs): continue
    cells=[]
    for d in dirs:
        pr=load(d,name); errs=[]; signed=[]
        for b,t in pr.items():
            m=meas.get((name,b))
            if not m: continue
            mm=sorted(m)[len(m)//2] if len(m)%2 else sum(m)/len(m)
            errs.append(abs(t-mm)/mm); signed.append((t-mm)/mm)
        cells.append(f'{100*sum(errs)/len(errs):.1f}% ({100*min(signed):+.0f}..{100*max(signed):+.0f})')
    print(f'| {k} | {ch} | '+' | '.join(cells)+' |')
