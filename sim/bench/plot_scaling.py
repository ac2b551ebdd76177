#!/usr/bin/env python3
"""Log-log plot of commsim's time against GPUs, one line per workload, from scaling.sh's TSV files.

Usage: sim/bench/plot_scaling.py OUT.svg SCALING-WORKLOAD.tsv [...]   (the series name comes from the file name)
Plots user CPU time (what the simulation itself costs; on a shared machine wall time also counts waiting for a
core); METRIC=wall_s in the environment plots wall time instead.
"""
import csv
import math
import os
import sys


def main() -> None:
    out, files = sys.argv[1], sys.argv[2:]
    metric = os.environ.get("METRIC", "user_s")
    label = "user CPU time" if metric == "user_s" else "wall time"
    series = []
    for f in files:
        with open(f) as fh:
            rows = list(csv.DictReader(fh, delimiter="\t"))
        pts = [(int(r["gpus"]), max(float(r[metric]), 0.01)) for r in rows]
        if pts:
            series.append((os.path.basename(f).removesuffix(".tsv").removeprefix("scaling-"), pts))
    if not series:
        sys.exit("no points")
    colors = ["#1f77b4", "#d62728", "#2ca02c", "#9467bd"]
    W, H, M = 600, 380, 64
    gs = [g for _, pts in series for g, _ in pts]
    ws = [w for _, pts in series for _, w in pts]
    x0, x1 = math.log10(min(gs)), math.log10(max(gs))
    x1 = x1 if x1 > x0 else x0 + 1
    y0, y1 = math.floor(math.log10(min(ws))), math.ceil(math.log10(max(ws)))
    y1 = y1 if y1 > y0 else y0 + 1
    px = lambda g: M + (math.log10(g) - x0) / (x1 - x0) * (W - 2 * M)
    py = lambda w: H - M - (math.log10(w) - y0) / (y1 - y0) * (H - 2 * M)
    names = ", ".join(n for n, _ in series)
    s = [f'<svg xmlns="http://www.w3.org/2000/svg" width="{W}" height="{H}" font-family="sans-serif" font-size="11">',
         f'<rect width="{W}" height="{H}" fill="white"/>',
         f'<text x="{W/2}" y="20" text-anchor="middle" font-size="13">commsim {label}, {names}, HGX H100 clusters (log-log)</text>',
         f'<line x1="{M}" y1="{H-M}" x2="{W-M}" y2="{H-M}" stroke="black"/><line x1="{M}" y1="{M}" x2="{M}" y2="{H-M}" stroke="black"/>']
    for g in sorted(set(gs)):
        s.append(f'<text x="{px(g):.1f}" y="{H-M+15}" text-anchor="middle">{g}</text>')
    for e in range(int(y0), int(y1) + 1):
        s.append(f'<text x="{M-6}" y="{py(10**e)+4:.1f}" text-anchor="end">{10**e:g} s</text>')
        s.append(f'<line x1="{M}" y1="{py(10**e):.1f}" x2="{W-M}" y2="{py(10**e):.1f}" stroke="#ddd"/>')
    for i, (name, pts) in enumerate(series):
        c = colors[i % len(colors)]
        s.append(f'<polyline fill="none" stroke="{c}" stroke-width="2" points="' +
                 " ".join(f"{px(g):.1f},{py(w):.1f}" for g, w in pts) + '"/>')
        s += [f'<circle cx="{px(g):.1f}" cy="{py(w):.1f}" r="3" fill="{c}"/>' for g, w in pts]
        s.append(f'<text x="{M+10}" y="{M+14*i}" fill="{c}">{name}</text>')
    s.append(f'<text x="{W/2}" y="{H-24}" text-anchor="middle">GPUs</text></svg>')
    with open(out, "w") as fh:
        fh.write("\n".join(s) + "\n")


if __name__ == "__main__":
    main()
