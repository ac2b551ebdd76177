#!/usr/bin/env python3
"""The least MAPE any deterministic prediction can reach against medians of k processes, from many-process runs.

Reads directories of run_coverage.sh phase lat9 (nine nccl-tests processes a configuration, listed in a coverage
manifest.csv: file,start,workload,gpus,launch,nccl_env,repeat; runs with an NCCL knob are skipped). For every
configuration (start, workload, GPUs, launch) and size below --below bytes, the processes' out-of-place times (what
`commsim validate` reads) give every median of k of them (all combinations: 84 for k = 3 of 9). A prediction is
one number per configuration, start and size; the number that misses those medians least (mean |median / c - 1|,
c searched over the medians and a fine grid between them) is the best any model can do that knows that
configuration's own nine processes ("known configuration").

Each single-thread process sits on one of two host floors (analyse.py --modes), and how many of a configuration's
processes land on the slow one is itself a draw: 3 of 9 for one configuration, 7 of 9 for the next on the same
start. A model knows a start at most through its other configurations, so the second floor ("known start") gives
the predictor each configuration's two levels (its fast and its slow processes' times; a level with no process is
the other scaled by the start's slow/fast floor ratio) and the start's slow share p (pooled over its
configurations of that launch mode), and draws each of the k processes slow with probability p: the median of k
such draws has an exact distribution, and the number that misses it least is that floor. A process is slow when
its floor (median out-of-place time, 8 B-4 KiB) is more than --gap above its configuration's fastest.

The coverage data and the held-out tables score one median of three processes a configuration, so with k = 3
these are the floors under their latency-bound MAPE where the start is known (the ring, pair, knob, collective
and launch families); the machine-start family adds the start's own shift on top (noise_floor.py). Prints, per
start and launch mode and over all, both floors for each k, and what the median of all processes scores.

Usage: median_floor.py [--below BYTES] [--k 1,3,5] [--gap 0.2] DIR...
"""
import argparse
import collections
import csv
import itertools
import json
import math
import os
import statistics
import sys


def out_of_place_times(path):
    """Size (bytes) -> out-of-place time (us) of one nccl-tests JSON (-J) file."""
    try:
        with open(path) as f:
            results = json.load(f)["results"]
        return {int(r["size"]): float(r["out_of_place"]["time"]) for r in results}
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise SystemExit(f"{path}: not an nccl-tests JSON result: {e}")


def least_mape(dist):
    """The least expected |m / c - 1| (percent) over c for a discrete distribution [(value, probability)]."""
    values = sorted(v for v, _ in dist)
    lo, hi = values[0], values[-1]
    candidates = set(values)
    candidates.update(lo + (hi - lo) * i / 400 for i in range(401))
    return min(mape_at(dist, c) for c in candidates)


def mape_at(dist, c):
    """Expected |m / c - 1| (percent) of predicting c for a distribution [(value, probability)]."""
    return 100 * sum(w * abs(v / c - 1) for v, w in dist)


def median_distribution(mixture, k):
    """Exact distribution of the median of k (odd) independent draws from a discrete `mixture` [(value, weight)]."""
    support = sorted(mixture)
    need = k // 2 + 1  # the median is <= v when at least this many draws are
    out, below, previous = [], 0.0, 0.0
    for v, w in support:
        below = min(1.0, below + w)
        at_most = sum(math.comb(k, j) * below**j * (1 - below) ** (k - j) for j in range(need, k + 1))
        out.append((v, at_most - previous))
        previous = at_most
    return out


def floor_of(times):
    """A process's floor (us): the median of its out-of-place times from 1 B to 4 KiB."""
    small = [t for s, t in times.items() if 0 < s <= 4096]
    return statistics.median(small) if small else None


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("dirs", nargs="+", metavar="DIR")
    ap.add_argument("--below", type=int, default=1 << 20, help="sizes below this many bytes (default 1 MiB)")
    ap.add_argument("--k", default="1,3,5", help="processes per median, odd, comma separated (default 1,3,5)")
    ap.add_argument("--gap", type=float, default=0.2, help="a process is slow this far above the fastest (0.2)")
    args = ap.parse_args()
    ks = [int(x) for x in args.k.split(",")]
    if any(k < 1 or k % 2 == 0 for k in ks):
        raise SystemExit(f"--k {args.k}: every k must be odd and positive (a median of k processes)")

    # (start, workload, gpus, launch) -> list of {size: time}
    runs = collections.defaultdict(list)
    for d in args.dirs:
        manifest = os.path.join(d, "manifest.csv")
        try:
            with open(manifest, newline="") as f:
                reader = csv.DictReader(f)
                for line, row in enumerate(reader, start=2):
                    try:
                        if row["nccl_env"]:
                            continue
                        key = (row["start"], row["workload"], row["gpus"], row["launch"])
                        runs[key].append(out_of_place_times(os.path.join(d, row["file"])))
                    except KeyError as e:
                        raise SystemExit(f"{manifest}:{line}: missing column {e}")
        except OSError as e:
            raise SystemExit(f"{manifest}: {e}")

    # Each process slow or fast; per (start, launch): the slow share and the slow/fast floor ratio.
    slow_of = {}
    pooled = collections.defaultdict(lambda: [0, 0, []])  # (start, launch) -> [slow, total, ratios]
    for key, procs in runs.items():
        floors = [floor_of(p) for p in procs]
        if None in floors:
            raise SystemExit(f"{key}: a process has no size from 1 B to 4 KiB, so no floor")
        fastest = min(floors)
        slow_of[key] = [f > fastest * (1 + args.gap) for f in floors]
        acc = pooled[(key[0], key[3])]
        acc[0] += sum(slow_of[key])
        acc[1] += len(floors)
        slow = [f for f, s in zip(floors, slow_of[key]) if s]
        fast = [f for f, s in zip(floors, slow_of[key]) if not s]
        if slow and fast:
            acc[2].append(statistics.median(slow) / statistics.median(fast))

    # (scope, k) -> [least MAPEs]; [median-predictor MAPEs]; [least MAPEs knowing the start only]
    least = collections.defaultdict(list)
    centre = collections.defaultdict(list)
    start_only = collections.defaultdict(list)
    share_of = {}  # scope -> its start's slow processes / processes, printed as p
    skipped = 0
    for key, procs in sorted(runs.items()):
        start, workload, gpus, launch = key
        slow_n, total, ratios = pooled[(start, launch)]
        share = slow_n / total
        ratio = statistics.median(ratios) if ratios else 1.0
        sizes = set.intersection(*(set(p) for p in procs))
        for size in sorted(s for s in sizes if 0 < s < args.below):
            times = [p[size] for p in procs]
            slow = [t for t, s in zip(times, slow_of[key]) if s] or [t * ratio for t in times]
            fast = [t for t, s in zip(times, slow_of[key]) if not s] or [t / ratio for t in times]
            mixture = [(t, share / len(slow)) for t in slow] + [(t, (1 - share) / len(fast)) for t in fast]
            for k in ks:
                if k > len(times):
                    skipped += 1
                    continue
                medians = [statistics.median(c) for c in itertools.combinations(times, k)]
                uniform = [(m, 1 / len(medians)) for m in medians]
                best = least_mape(uniform)
                at_median = mape_at(uniform, statistics.median(medians))
                known_start = least_mape(median_distribution(mixture, k))
                share_of[f"{start} {launch}"] = f"{slow_n}/{total}"
                for scope in ("all", f"{start} {launch}", f"all {launch}"):
                    least[(scope, k)].append(best)
                    centre[(scope, k)].append(at_median)
                    start_only[(scope, k)].append(known_start)

    if not least:
        raise SystemExit("no configuration with a size below --below in " + " ".join(args.dirs))
    counts = ", ".join(sorted({str(len(p)) for p in runs.values()}))
    print(f"sizes below {args.below} B, {counts} processes a configuration; the least MAPE one prediction a size reaches"
          " against medians of k processes:")
    print("knowing the configuration's own processes; predicting the median of them all; knowing only the start's"
          " slow share (p) and the configuration's two levels")
    print(f"{'scope':40} {'k':>2} {'sizes':>6} {'known configuration':>20} {'at the median':>14} {'known start':>12}  p")
    for (scope, k) in sorted(least, key=lambda x: (x[0] != "all", x[0], x[1])):
        v, c, o = least[(scope, k)], centre[(scope, k)], start_only[(scope, k)]
        print(f"{scope:40} {k:>2} {len(v):>6} {statistics.mean(v):>19.1f}% {statistics.mean(c):>13.1f}%"
              f" {statistics.mean(o):>11.1f}%  {share_of.get(scope, '')}")
    if skipped:
        print(f"({skipped} size and k pairs skipped: fewer processes than k)", file=sys.stderr)
    return 0


if __name__ == "__main__":
    sys.exit(main())
