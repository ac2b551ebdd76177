#!/usr/bin/env python3
"""Fits commsim's send/recv model parameters to the committed 4x H200 data (how models/params/h200.toml was made).

Least squares on relative error, each size weighted by the measurement's repeatability (sigma 2% for sizes of
1 MiB and up, 8% below), minimised with Nelder-Mead over the parameters in PARAMS. Every evaluation runs the
`commsim` binary, so the fit sees exactly the model users run. Python standard library only.

  validation/scripts/fit_params.py --commsim build/default/sim/commsim --start models/params/h200.toml \
      --iterations 300 --out /tmp/fitted.toml

The fitted keys are written to --out; merge them into a parameter file by hand and review the validation figures
(models/README.md) before committing. `commsim calibrate` fits commsim-measure directories in C++; this script
remains because it also fits the nccl-tests logs.
"""
import argparse
import csv
import io
import os
import re
import statistics
import subprocess
import sys

ROOT = os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
DATA = os.path.join(ROOT, "validation/data/h200x4")
TOPO = os.path.join(ROOT, "topologies/library/real/h200x4.topo")

# name, section, key, unit ('' for plain numbers), lower bound, upper bound
PARAMS = [
    ("host", "launch_base", "us", 0, 10), ("host", "launch_per_gpu", "us", 0, 8),
    ("kernel", "gap", "us", 0, 12), ("simple", "base_latency", "us", 0, 15), ("simple", "step_overhead", "us", 0, 3),
    ("simple", "channel_latency", "us", 0, 2), ("simple", "channel_bandwidth", "GBps", 10, 40),
    ("simple", "fill_bandwidth", "GBps", 5, 200), ("ll", "base_latency", "us", 0, 15),
    ("ll", "channel_bandwidth", "GBps", 0.5, 40), ("ll", "channel_latency", "us", 0, 2),
    ("p2p", "nvlink_efficiency", "", 0.6, 1.0), ("p2p", "nvlink_saturation", "", 1.5, 40),
    ("p2p", "solo_speedup", "", 0.8, 2.0),
]


def nccl_tests(name):
    rows = {}
    for line in open(os.path.join(DATA, "nccl-tests", name + ".log")):
        p = line.split()
        if len(p) >= 8 and p[0].isdigit() and p[2] == "float" and int(p[0]) > 0:
            rows[int(p[0])] = float(p[5])
    return rows


def median_of(names):
    runs = [nccl_tests(n) for n in names]
    return {s: statistics.median(r[s] for r in runs) for s in runs[0]}


def measured(directory, **match):
    out = {}
    for r in csv.DictReader(open(os.path.join(DATA, "measure", directory, "results.csv"))):
        if all(r[k] == str(v) for k, v in match.items()):
            out[int(r["bytes"])] = float(r["time_us"])
    return out


def cases():
    """(label, measured {bytes: us}, simulate arguments, smallest size used)."""
    return [
        ("nccl-tests sendrecv 0,1", median_of([f"sendrecv_g2_d01_r{i}" for i in (1, 2, 3)]),
         ["sendrecv", "--gpus", "0,1", "--min-bytes", "8B"], 0),
        ("nccl-tests sendrecv 0-3", median_of([f"sendrecv_g4_r{i}" for i in (1, 2, 3)]),
         ["sendrecv", "--gpus", "0-3", "--min-bytes", "8B"], 0),
        ("measure p2p 0->1", measured("p2p_all", src=0, dst=1), ["p2p", "--src", "0", "--dst", "1"], 0),
        ("measure exchange batched", measured("exchange_batched"), ["exchange", "--pair", "0,1", "--mode", "batched"], 0),
        ("measure exchange sequential", measured("exchange_sequential"),
         ["exchange", "--pair", "0,1", "--mode", "sequential"], 0),
        ("measure exchange overlapped", measured("exchange_overlapped"),
         ["exchange", "--pair", "0,1", "--mode", "overlapped"], 1 << 20),
    ]


def simulate(commsim, args, params):
    cmd = [commsim, "simulate"] + args + ["--topology", TOPO, "--params", params, "--format", "csv"]
    out = subprocess.run(cmd, capture_output=True, text=True, check=True).stdout
    rows = (line for line in io.StringIO(out) if not line.startswith("#"))  # "# parameters ...", "# band ..."
    return {int(r["bytes"]): float(r["time_us"]) for r in csv.DictReader(rows)}


def write_params(base_text, x, path):
    """base_text with the fitted keys replaced (or appended to their sections)."""
    text = base_text
    for (section, key, unit, lo, hi), v in zip(PARAMS, x):
        v = min(max(v, lo), hi)
        value = f'"{v:.4g}{unit}"' if unit else f"{v:.4g}"
        pattern = re.compile(rf"(\[{section}\][^\[]*?)^{key} = [^\n#]*", re.M | re.S)
        if pattern.search(text):
            text = pattern.sub(lambda m: m.group(1) + f"{key} = {value} ", text, count=1)
        elif f"[{section}]" in text:
            text = text.replace(f"[{section}]", f"[{section}]\n{key} = {value}", 1)
        else:
            text += f"\n[{section}]\n{key} = {value}\n"
    with open(path, "w") as f:
        f.write(text)


def read_start(text):
    x = []
    for section, key, unit, lo, hi in PARAMS:
        m = re.search(rf"\[{section}\][^\[]*?^{key} = \"?([0-9.e+-]+)", text, re.M | re.S)
        x.append(float(m.group(1)) if m else (lo + hi) / 2)
    return x


def nelder_mead(f, x0, step, iterations):
    n = len(x0)
    pts = [list(x0)] + [[v * (1 + step) if i == j and v else (step if i == j else v) for j, v in enumerate(x0)]
                        for i in range(n)]
    vals = [f(p) for p in pts]
    for it in range(iterations):
        order = sorted(range(n + 1), key=lambda i: vals[i])
        pts, vals = [pts[i] for i in order], [vals[i] for i in order]
        c = [sum(p[j] for p in pts[:-1]) / n for j in range(n)]
        xr = [c[j] + (c[j] - pts[-1][j]) for j in range(n)]
        fr = f(xr)
        if fr < vals[0]:
            xe = [c[j] + 2 * (c[j] - pts[-1][j]) for j in range(n)]
            fe = f(xe)
            pts[-1], vals[-1] = (xe, fe) if fe < fr else (xr, fr)
        elif fr < vals[-2]:
            pts[-1], vals[-1] = xr, fr
        else:
            xc = [c[j] + 0.5 * (pts[-1][j] - c[j]) for j in range(n)]
            fc = f(xc)
            if fc < vals[-1]:
                pts[-1], vals[-1] = xc, fc
            else:
                for i in range(1, n + 1):
                    pts[i] = [pts[0][j] + 0.5 * (pts[i][j] - pts[0][j]) for j in range(n)]
                    vals[i] = f(pts[i])
        if it % 50 == 0:
            print(f"iteration {it}: objective {vals[0]:.4f}", file=sys.stderr)
    i = min(range(n + 1), key=lambda k: vals[k])
    return pts[i], vals[i]


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--commsim", default=os.path.join(ROOT, "build/default/sim/commsim"))
    ap.add_argument("--start", default=os.path.join(ROOT, "models/params/h200.toml"))
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    base = open(a.start).read()
    data = cases()
    scratch = a.out + ".candidate.toml"

    def objective(x):
        write_params(base, x, scratch)
        terms = []
        for _, meas, args, minsize in data:
            pred = simulate(a.commsim, args, scratch)
            for s, t in meas.items():
                if s >= minsize and s in pred:
                    terms.append(((pred[s] - t) / t / (0.02 if s >= 1 << 20 else 0.08)) ** 2)
        return sum(terms) / len(terms)

    x, v = nelder_mead(objective, read_start(base), 0.1, a.iterations)
    x, v = nelder_mead(objective, x, 0.03, max(a.iterations // 3, 1))
    write_params(base, x, a.out)
    os.remove(scratch)
    print(f"objective {v:.4f}; fitted parameters in {a.out}")
    for label, meas, args, minsize in data:
        pred = simulate(a.commsim, args, a.out)
        e = [abs(pred[s] - t) / t * 100 for s, t in meas.items() if s >= minsize and s in pred]
        print(f"  {label:30s} MAPE {sum(e) / len(e):5.1f}%  worst {max(e):5.1f}%")


if __name__ == "__main__":
    main()
