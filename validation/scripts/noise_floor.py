#!/usr/bin/env python3
"""How well the machine's own measurements predict an unmeasured machine start: the noise floor under held-out MAPE.

Reads the CSV of `commsim validate --cross-validate --family start --csv FILE` (every held-out row of the
machine-start family: measured median, commsim's held-out prediction, the start it belongs to). For every
configuration (workload, NCCL knob or launch, GPUs, size) measured on two or more starts, each start's median is
"predicted" by the median of the same configuration's medians on the *other* starts: no model, the best a
predictor that has never seen the start can do if it knew every other start exactly. Its MAPE beside commsim's
held-out MAPE on the same rows tells how much of the error is the machine (start to start) and how much is the
model. A second column predicts each by the median of every start's medians, its own included: a constant per
configuration that has seen the start, which misses only by the starts' spread around their centre. Prints a
Markdown table per size regime (< 1 MiB, >= 1 MiB) and launch mode.

Usage: validation/scripts/noise_floor.py HELDOUT_START_CSV
"""
import collections
import csv
import statistics
import sys


def main() -> int:
    if len(sys.argv) != 2:
        print(__doc__, file=sys.stderr)
        return 2
    with open(sys.argv[1], newline="") as f:
        rows = [r for r in csv.DictReader(f) if r.get("family", "start") == "start"]
    if not rows:
        print(f"{sys.argv[1]}: no rows of the machine-start family", file=sys.stderr)
        return 1
    by_config = collections.defaultdict(dict)
    for r in rows:
        by_config[(r["workload"], r["mode"], r["gpus"], int(r["bytes"]))][r["held_out"]] = r
    # (regime, launch) -> [oracle errors], [model errors], [all-starts centre errors]
    cells = collections.defaultdict(lambda: ([], [], []))
    for config, starts in by_config.items():
        if len(starts) < 2:
            continue
        for start, r in starts.items():
            measured = float(r["measured_us"])
            others = statistics.median(float(o["measured_us"]) for s, o in starts.items() if s != start)
            oracle = abs(others - measured) / measured * 100
            # The median of every start's median, this start's included: a constant per configuration that has
            # seen this start too. What it misses is the spread of the starts around their common centre.
            centre = statistics.median(float(o["measured_us"]) for o in starts.values())
            seen = abs(centre - measured) / measured * 100
            model = abs(float(r["error_pct"]))
            regime = "< 1 MiB" if config[3] < (1 << 20) else ">= 1 MiB"
            launch = "thread per GPU" if r["mode"] == "thread-per-gpu" else "one thread (incl. knob runs)"
            for key in ((regime, "all"), (regime, launch)):
                cells[key][0].append(oracle)
                cells[key][1].append(model)
                cells[key][2].append(seen)
    print("| sizes | launch | medians | other starts' medians: MAPE | every start's median, this one's included: MAPE"
          " | commsim held out: MAPE |")
    print("| --- | --- | ---: | ---: | ---: | ---: |")
    for (regime, launch) in sorted(cells, key=lambda k: (k[0] != "< 1 MiB", k[1] != "all", k[1])):
        oracle, model, seen = cells[(regime, launch)]
        print(f"| {regime} | {launch} | {len(oracle)} | {statistics.mean(oracle):.1f}% | {statistics.mean(seen):.1f}%"
              f" | {statistics.mean(model):.1f}% |")
    return 0


if __name__ == "__main__":
    sys.exit(main())
