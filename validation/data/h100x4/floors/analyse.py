#!/usr/bin/env python3
"""Per-process latency floors of nccl-tests runs: is a floor's run-to-run spread the process or the machine?

For each run (one nccl-tests process) the floor is the median of its out-of-place times from 8 B to 4 KiB. Prints,
per configuration (workload, GPUs, launch) and variant, every process's floor in run order and the spread
(largest / smallest - 1), and, with --modes, how many processes sit in the slow mode (a floor more than
--gap of the configuration's fastest process above it).

With --summary, one line per directory and launch instead: processes in the slow mode, and the median over
configurations with processes in both modes of (slowest-mode median / fast-mode median).

Usage: analyse.py [--modes | --summary] [--gap 0.2] DIR...
  DIR holds nccl-tests JSON files (-J) and either variants.csv (run_floors.sh: file,workload,gpus,launch,repeat,
  variant) or a coverage manifest.csv (file,start,workload,gpus,launch,nccl_env,repeat; its runs with no NCCL
  knob are read, as variant "base").
"""
import collections
import csv
import json
import os
import statistics
import sys


def floor_of(path: str) -> float:
    with open(path) as f:
        results = json.load(f)["results"]
    times = [r["out_of_place"]["time"] for r in results if r["size"] <= 4096]
    if not times:
        raise ValueError(f"{path}: no size <= 4 KiB")
    return statistics.median(times)


def runs_of(d: str):
    """(workload, gpus, launch, variant, repeat, floor) for every run of directory d."""
    variants = os.path.join(d, "variants.csv")
    manifest = os.path.join(d, "manifest.csv")
    if os.path.exists(variants):
        rows = list(csv.DictReader(open(variants, newline="")))
    elif os.path.exists(manifest):
        rows = [dict(r, variant="base") for r in csv.DictReader(open(manifest, newline="")) if not r["nccl_env"]]
    else:
        raise FileNotFoundError(f"{d}: neither variants.csv nor manifest.csv")
    for r in rows:
        yield (r["workload"], r["gpus"], r["launch"], r["variant"], int(r["repeat"]),
               floor_of(os.path.join(d, r["file"])))


def main(argv) -> int:
    modes = "--modes" in argv
    summary = "--summary" in argv
    gap = 0.2
    args = [a for a in argv if a not in ("--modes", "--summary")]
    if "--gap" in args:
        i = args.index("--gap")
        gap = float(args[i + 1])
        del args[i:i + 2]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    for d in args:
        by = collections.defaultdict(list)
        for wl, gpus, launch, variant, rep, fl in runs_of(d):
            by[(wl, gpus, launch)].append((variant, rep, fl))
        if summary:
            for launch in sorted({k[2] for k in by}):
                slow = total = 0
                ratios = []
                for (wl, gpus, la), runs in by.items():
                    if la != launch:
                        continue
                    floors = [fl for v, _, fl in runs if v == "base"]
                    if len(floors) < 2:
                        continue
                    fastest = min(floors)
                    fast = [fl for fl in floors if fl <= fastest * (1 + gap)]
                    slow_ones = [fl for fl in floors if fl > fastest * (1 + gap)]
                    slow += len(slow_ones)
                    total += len(floors)
                    if slow_ones:
                        ratios.append(statistics.median(slow_ones) / statistics.median(fast))
                ratio = f"{statistics.median(ratios):.2f}" if ratios else "-"
                print(f"{d} {launch}: {slow} of {total} processes in the slow mode; slow / fast {ratio} "
                      f"(median of {len(ratios)} configurations)")
            continue
        print(f"## {d}\n")
        print("| workload | GPUs | launch | variant | floors, one per process (us) | spread |"
              + (" slow mode |" if modes else ""))
        print("| --- | --- | --- | --- | --- | ---: |" + (" ---: |" if modes else ""))
        for (wl, gpus, launch), runs in sorted(by.items()):
            fastest = min(fl for _, _, fl in runs)
            for variant in sorted({v for v, _, _ in runs}, key=lambda v: (v != "base", v)):
                floors = [fl for v, _, fl in sorted(runs, key=lambda x: x[1]) if v == variant]
                cells = " ".join(f"{fl:.1f}" for fl in floors)
                line = (f"| {wl} | {gpus} | {launch} | {variant} | {cells} | "
                        f"{(max(floors) / min(floors) - 1) * 100:.0f}% |")
                if modes:
                    slow = sum(fl > fastest * (1 + gap) for fl in floors)
                    line += f" {slow} of {len(floors)} |"
                print(line)
        print()
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
