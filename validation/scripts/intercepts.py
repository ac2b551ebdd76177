#!/usr/bin/env python3
"""Where a collective's time at mid sizes comes from: the line through its measured and predicted times per GPU count.

Reads the CSV of `commsim validate ... --csv FILE` (with or without --cross-validate). For every machine start,
workload, launch mode and GPU count of the runs with no NCCL knob, fits time = a + bytes / B by least squares
over the sizes from --lo to --hi (default 8-64 MiB, where the GPU, not the host, sets the time and a ring's
last slice still grows with the size), once on the measured medians and once on the predictions. Prints a, the
intercept (us), and B, the marginal rate (GB/s), side by side, then, per workload and launch, how a changes from
2 to 3 and from 3 to 4 GPUs on the starts that measured both (measured against predicted). A model whose
latency grows by a fixed cost per ring step shows the same change twice; the machine may not.

Usage: intercepts.py VALIDATE_CSV [--lo BYTES] [--hi BYTES]
"""
import argparse
import collections
import csv
import re
import statistics
import sys

START = re.compile(r"(h[0-9]+x[0-9]+-\d{4}-\d\d-\d\d[a-z]?)")
# Runs with no knob: nccl-tests' own names (<workload>_g<N>.json) or the coverage ones
# (<workload>_g0<K>_st|tpg_r<R>.json); knob runs carry the knob in the name and are left out.
PLAIN = re.compile(r"^[a-z_]+_(g\d\.json|g0\d+_(st|tpg)_r\d+\.json)")


def line(points):
    """Least-squares (a, B): time (us) = a + bytes / (B GB/s); None with fewer than three sizes."""
    if len(points) < 3:
        return None
    n = len(points)
    mx = sum(b for b, _ in points) / n
    my = sum(t for _, t in points) / n
    sxx = sum((b - mx) ** 2 for b, _ in points)
    sxy = sum((b - mx) * (t - my) for b, t in points)
    if sxx <= 0 or sxy <= 0:
        return None
    slope = sxy / sxx  # us per byte
    return my - slope * mx, 1 / slope / 1e3


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("csv")
    ap.add_argument("--lo", type=int, default=8 << 20, help="smallest size fitted, bytes (default 8 MiB)")
    ap.add_argument("--hi", type=int, default=64 << 20, help="largest size fitted, bytes (default 64 MiB)")
    args = ap.parse_args()
    if not 0 < args.lo < args.hi:
        raise SystemExit(f"--lo {args.lo} --hi {args.hi}: need 0 < lo < hi")

    points = collections.defaultdict(lambda: ([], []))
    try:
        with open(args.csv, newline="") as f:
            reader = csv.DictReader(f)
            for lineno, r in enumerate(reader, start=2):
                try:
                    name = r["source"].split("/")[-1]
                    size = int(r["bytes"])
                    measured, predicted = float(r["measured_us"]), float(r["predicted_us"])
                    workload, mode, gpus = r["workload"], r["mode"] or "single-thread", len(r["gpus"].split())
                except (KeyError, ValueError, AttributeError) as e:
                    raise SystemExit(f"{args.csv}:{lineno}: not a row of commsim validate --csv: {e}")
                if not PLAIN.match(name) or not args.lo <= size <= args.hi:
                    continue
                m = START.search(r["source"])
                start = m.group(1) if m else "first start (" + "/".join(r["source"].split("/")[-3:-1]) + ")"
                meas, pred = points[(start, workload, mode, gpus)]
                meas.append((size, measured))
                pred.append((size, predicted))
    except OSError as e:
        raise SystemExit(f"{args.csv}: {e}")

    fits = {}
    print(f"time = a + bytes / B over {args.lo >> 20}-{args.hi >> 20} MiB, runs with no NCCL knob; measured | predicted")
    print(f"{'start':32} {'workload':15} {'launch':15} {'GPUs':>4} {'a (us)':>14} {'B (GB/s)':>12}")
    for key in sorted(points):
        meas, pred = (line(p) for p in points[key])
        if meas is None or pred is None:
            continue
        fits[key] = (meas, pred)
        print(f"{key[0]:32} {key[1]:15} {key[2]:15} {key[3]:>4} {meas[0]:6.1f} | {pred[0]:5.1f} "
              f"{meas[1]:5.0f} | {pred[1]:4.0f}")
    if not fits:
        raise SystemExit(f"{args.csv}: no run with no knob has three sizes from {args.lo} to {args.hi} bytes")

    print("\nchange of a with the GPU count, median over starts that measured both: measured | predicted (us)")
    steps = collections.defaultdict(list)
    for (start, workload, mode, gpus), (meas, pred) in fits.items():
        nxt = fits.get((start, workload, mode, gpus + 1))
        if nxt:
            steps[(workload, mode, gpus)].append((nxt[0][0] - meas[0], nxt[1][0] - pred[0]))
    for (workload, mode, gpus), d in sorted(steps.items()):
        print(f"{workload:15} {mode:15} {gpus} -> {gpus + 1}: {statistics.median(m for m, _ in d):+5.1f} | "
              f"{statistics.median(p for _, p in d):+5.1f}   ({len(d)} start{'s' if len(d) > 1 else ''})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
