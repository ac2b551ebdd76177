#!/usr/bin/env python3
"""Agreement table of commsim-measure against nccl-tests (issue 18), from the folder ab_nccl_tests.sh wrote.

Per cell (workload, GPUs, launch, timing): nccl-tests' median over its runs of the out-of-place time column beside
commsim-measure's median over its runs (each run's time_us is already the median of its repetitions), per size.
Latency-bound sizes (< 1 MiB): the median absolute difference in us, against 0.5 us or the measured run-to-run
spread, whichever is larger. Bandwidth-bound sizes (>= 1 MiB): the largest relative difference, against 1% or the
spread. Prints a Markdown table, writes agreement.csv beside the data, and exits 1 when a cell misses its target.
"""
import csv
import glob
import os
import re
import statistics
import sys

NT_ROW = re.compile(r"^\s+(\d+)\s+\d+\s+\w+\s+\S+\s+-?\d+\s+([\d.]+)\s")
MIB = 1 << 20


def nccl_tests_times(path):
    """size -> out-of-place time (us) of one nccl-tests text log."""
    out = {}
    with open(path) as f:
        for line in f:
            m = NT_ROW.match(line)
            if m:
                out.setdefault(int(m.group(1)), float(m.group(2)))
    return out


def measure_times(folder):
    """size -> time_us of one commsim-measure run (results.csv)."""
    out = {}
    path = os.path.join(folder, "results.csv")
    if not os.path.exists(path):
        return out
    with open(path) as f:
        for row in csv.DictReader(f):
            if int(row["reps"]) > 0:
                out[int(row["bytes"])] = float(row["time_us"])
    return out


def spread(values):
    return max(values) - min(values) if len(values) > 1 else 0.0


def main(folder):
    cells = sorted({re.sub(r"^nt_(.*)_r\d+\.log$", r"\1", os.path.basename(p))
                    for p in glob.glob(os.path.join(folder, "nt_*_r*.log"))})
    if not cells:
        print(f"ab_table: no nccl-tests logs (nt_*_r*.log) in {folder}", file=sys.stderr)
        return 2
    rows, failures = [], 0
    print("| workload | GPUs | launch | timing | floor nccl-tests / commsim-measure (us) | < 1 MiB: median abs diff "
          "(us) / allowed | >= 1 MiB: median / largest diff (%) / allowed | verdict |")
    print("| --- | --- | --- | --- | --- | --- | --- | --- |")
    for cell in cells:
        nt_runs = [nccl_tests_times(p) for p in sorted(glob.glob(os.path.join(folder, f"nt_{cell}_r*.log")))]
        cm_runs = [measure_times(p) for p in sorted(glob.glob(os.path.join(folder, f"cm_{cell}_r*")))
                   if os.path.isdir(p)]
        nt_runs = [r for r in nt_runs if r]
        cm_runs = [r for r in cm_runs if r]
        wl, gpus, launch, timing = re.match(r"(\w+?)_g(\d+)_(single-thread|thread-per-gpu)_(\S+)", cell).groups()
        if not nt_runs or not cm_runs:
            print(f"| {wl} | {gpus} | {launch} | {timing} | missing data | | | FAIL |")
            failures += 1
            continue
        sizes = sorted(set.intersection(*[set(r) for r in nt_runs + cm_runs]))
        lat, bw = [], []
        for s in sizes:
            nt = [r[s] for r in nt_runs]
            cm = [r[s] for r in cm_runs]
            a, b = statistics.median(nt), statistics.median(cm)
            allowed_spread = max(spread(nt), spread(cm))
            rows.append({"workload": wl, "gpus": gpus, "launch": launch, "timing": timing, "bytes": s,
                         "nccl_tests_us": a, "commsim_measure_us": b, "diff_us": b - a,
                         "diff_pct": 100 * (b - a) / a, "nccl_tests_spread_us": spread(nt),
                         "commsim_measure_spread_us": spread(cm), "nccl_tests_runs": len(nt),
                         "commsim_measure_runs": len(cm)})
            (lat if s < MIB else bw).append((s, a, b, allowed_spread))
        ok = True
        lat_txt = bw_txt = "-"
        if lat:
            med = statistics.median(abs(b - a) for _, a, b, _ in lat)
            allowed = max(0.5, statistics.median(sp for *_, sp in lat))
            ok &= med <= allowed
            lat_txt = f"{med:.2f} / {allowed:.2f}"
        if bw:
            rel = [100 * (b - a) / a for _, a, b, _ in bw]
            worst = max(rel, key=abs)
            # Each size within 1%, or within the larger run-to-run spread of the two tools at that size.
            bad = [s for (s, a, b, sp) in bw if abs(b - a) > max(0.01 * a, sp)]
            ok &= not bad
            bw_txt = f"{statistics.median(rel):+.2f} / {worst:+.2f} / 1% or spread" + (
                f" (over at {', '.join(str(s) for s in bad)} B)" if bad else "")
        floor_nt = statistics.median(r[sizes[0]] for r in nt_runs) if sizes else float("nan")
        floor_cm = statistics.median(r[sizes[0]] for r in cm_runs) if sizes else float("nan")
        failures += 0 if ok else 1
        print(f"| {wl} | {gpus} | {launch} | {timing} | {floor_nt:.2f} / {floor_cm:.2f} | {lat_txt} | {bw_txt} | "
              f"{'ok' if ok else 'FAIL'} |")
    with open(os.path.join(folder, "agreement.csv"), "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0].keys()) if rows else ["workload"])
        w.writeheader()
        w.writerows(rows)
    print(f"\n{len(cells) - failures} of {len(cells)} cells within the targets")
    return 1 if failures else 0


if __name__ == "__main__":
    if len(sys.argv) != 2:
        print("usage: ab_table.py FOLDER", file=sys.stderr)
        sys.exit(2)
    sys.exit(main(sys.argv[1]))
