#!/usr/bin/env bash
# How wall time and memory grow with cluster size: one simulation per size of HGX H100 clusters on the bundled
# 16,384-GPU fabric (8 NDR rails, 32 nodes per leaf, pods of 256 nodes, 2:1 at the core), from 1 to 2,048 nodes.
# Prints a Markdown table and writes an SVG log-log plot of wall time against GPUs.
# Usage: sim/bench/scaling.sh [COMMSIM] [OUT.svg] [WORKLOAD]   (WORKLOAD: all_reduce (default) or weight-sync)
set -euo pipefail
cd "$(dirname "$0")/../.."
commsim=${1:-build/default/sim/commsim}
svg=${2:-sim/bench/scaling.svg}
workload=${3:-all_reduce}
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| nodes | GPUs | simulated time | wall | peak memory | engine events | flows |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
rows=()
for nodes in 1 2 4 8 16 32 64 128 256 512 1024 2048; do
  topo=$tmp/n$nodes.toml
  printf '[[nodes]]\ncount = %d\npreset = "hgx-h100"\n[fabric]\nkind = "infiniband"\nrails = 8\nnodes_per_leaf = 32\nnodes_per_pod = 256\ncore_oversubscription = "2:1"\n' "$nodes" > "$topo"
  gpus=$((nodes * 8))
  if [ "$workload" = weight-sync ]; then
    [ "$gpus" -ge 16 ] || continue
    args=(weight-sync --model qwen2.5-32b --from 0-7 --to "8-$((gpus - 1))" --method broadcast)
  else
    args=(all_reduce --min-bytes 1GiB --max-bytes 1GiB --iterations 1 --warmup 0)
  fi
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$commsim" simulate "${args[@]}" --topology "$topo" --format json > "$tmp/out.json"
  read -r wall kb < "$tmp/time"
  read -r sim events flows < <(python3 -c "
import json,sys
d=json.load(open('$tmp/out.json'))
if d['workload']=='weight-sync':
    t=[r['time_ms'] for r in d['rows'] if r['timing']=='total_transfer_time'][0]/1e3
else:
    t=d['rows'][0]['time_us']/1e6
print(t, d['engine_events'], d['engine_flows'])")
  printf '| %d | %d | %.4f s | %.2f s | %d MB | %d | %d |\n' "$nodes" "$gpus" "$sim" "$wall" $((kb / 1024)) "$events" "$flows"
  rows+=("$gpus $wall")
done
python3 - "$svg" "$workload" "${rows[@]}" <<'PY'
import math, sys
out, workload, pts = sys.argv[1], sys.argv[2], [tuple(map(float, r.split())) for r in sys.argv[3:]]
pts = [(g, max(w, 0.01)) for g, w in pts]
W, H, M = 560, 360, 60
x0, x1 = math.log10(pts[0][0]), math.log10(pts[-1][0])
y0, y1 = math.floor(math.log10(min(w for _, w in pts))), math.ceil(math.log10(max(w for _, w in pts)))
px = lambda g: M + (math.log10(g) - x0) / (x1 - x0) * (W - 2 * M)
py = lambda w: H - M - (math.log10(w) - y0) / (y1 - y0) * (H - 2 * M)
s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
     f'<rect width="{W}" height="{H}" fill="white"/>',
     f'<text x="{W/2}" y="20" text-anchor="middle" font-size="13">commsim wall time, {workload}, HGX H100 clusters (log-log)</text>',
     f'<line x1="{M}" y1="{H-M}" x2="{W-M}" y2="{H-M}" stroke="black"/><line x1="{M}" y1="{M}" x2="{M}" y2="{H-M}" stroke="black"/>']
for g, _ in pts:
    s.append(f'<text x="{px(g)}" y="{H-M+15}" text-anchor="middle">{int(g)}</text>')
for e in range(int(y0), int(y1) + 1):
    s.append(f'<text x="{M-6}" y="{py(10**e)+4}" text-anchor="end">{10**e:g} s</text>')
    s.append(f'<line x1="{M}" y1="{py(10**e)}" x2="{W-M}" y2="{py(10**e)}" stroke="#ddd"/>')
s.append('<polyline fill="none" stroke="#1f77b4" stroke-width="2" points="' + ' '.join(f'{px(g)},{py(w)}' for g, w in pts) + '"/>')
s += [f'<circle cx="{px(g)}" cy="{py(w)}" r="3" fill="#1f77b4"/>' for g, w in pts]
s.append(f'<text x="{W/2}" y="{H-20}" text-anchor="middle">GPUs</text></svg>')
open(out, 'w').write('\n'.join(s) + '\n')
PY
echo "plot: $svg"
