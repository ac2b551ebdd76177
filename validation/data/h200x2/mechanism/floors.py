"""Each run's floor (median time over 8 B .. 4 KiB, out of place) per configuration of a mechanism run folder: python3 floors.py DIR."""
import re,sys,glob,os,statistics,collections
D=sys.argv[1]
def parse(f):
    out={}
    for line in open(f):
        p=line.split()
        if len(p)>=8 and p[0].isdigit():
            try: out[int(p[0])]=float(p[5])
            except: pass
    return out
runs=collections.defaultdict(list)
for f in sorted(glob.glob(D+'/*.log')):
    n=os.path.basename(f)[:-4]
    key=re.sub(r'_r\d+$','',n)
    t=parse(f)
    if t: runs[key].append(statistics.median([v for s,v in t.items() if 0<s<=4096]))
for k in sorted(runs):
    v=runs[k]; print('%-22s n=%d median %.2f  min %.2f max %.2f   [%s]'%(k,len(v),statistics.median(v),min(v),max(v),' '.join('%.1f'%x for x in v)))
