#!/usr/bin/env python3
"""A new machine start predicted from a host probe, scored against medians of many processes (issue 13).

Reads a coverage manifest whose configurations were each measured in several processes (run_coverage.sh phase
lat9: nine). The probe is `sendrecv` on GPUs 0-1 in both launch modes, as in the probed-start protocol (--probe names
others); it is fitted, never scored. For the probe taken from every process and from each group of --group consecutive repeats
(1-3, 4-6, 7-9), `commsim calibrate` refits --probe-param (default host.launch_per_gpu) from --params (and, as a
baseline, --params is also used as given, no probe), and
`commsim validate` predicts every other row, scored once against the median of all processes and once against
each group's median. Prints, per probe, the MAPE and band coverage of the sizes below --below bytes.

Usage: many_process_probe.py COMMSIM MANIFEST [--params FILE] [--gpu H100] [--topology FILE]
                             [--probe 'WORKLOAD GPUS LAUNCH' ...] [--probe-param section.key ...] [--group 3] [--loss squared] [--below 1048576]
                             [--keep DIR] [--max-mape PCT] [--min-coverage PCT]
"""
import argparse
import csv
import os
import shutil
import subprocess
import sys
import tempfile
import tomllib


def write_manifest(path, header, rows):
    with open(path, "w", newline="") as f:
        w = csv.writer(f)
        w.writerow(header)
        for r in rows:
            w.writerow([r[h] for h in header])


def score(csv_path, below):
    rows = [r for r in csv.DictReader(open(csv_path)) if int(r["bytes"]) < below]
    if not rows:
        raise SystemExit(f"{csv_path}: no size below {below} bytes")
    mape = sum(abs(float(r["error_pct"])) for r in rows) / len(rows)
    inside = sum(float(r["predicted_lo_us"]) <= float(r["measured_us"]) <= float(r["predicted_hi_us"]) for r in rows)
    return mape, 100.0 * inside / len(rows), len(rows)


def main(argv):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("commsim")
    ap.add_argument("manifest")
    ap.add_argument("--params", default="models/params/h200.toml")
    ap.add_argument("--gpu", default="H100")
    ap.add_argument("--topology", default="topologies/library/real/h200x4.topo")
    ap.add_argument("--probe-param", action="append", default=None)
    ap.add_argument("--probe", action="append", default=None, metavar="'WORKLOAD GPUS LAUNCH'",
                    help="a probe configuration as in the manifest, e.g. 'all_reduce 0-1 single-thread' "
                         "(default: sendrecv 0-1 in both launch modes)")
    ap.add_argument("--group", type=int, default=3)
    ap.add_argument("--loss", default="squared", help="calibrate's --loss for the probe fit (squared, soft-l1)")
    ap.add_argument("--below", type=int, default=1 << 20)
    ap.add_argument("--keep", help="write the manifests, fits and joined CSVs here instead of a temporary folder")
    ap.add_argument("--max-mape", type=float, help="exit 1 if the probe from every process misses the median of "
                    "every process by more than this MAPE (%%) below --below (a CI guard)")
    ap.add_argument("--min-coverage", type=float, help="exit 1 if its band covers fewer of those sizes (%%)")
    a = ap.parse_args(argv)
    probe_params = a.probe_param or ["host.launch_per_gpu"]
    src = os.path.abspath(a.manifest)
    try:
        with open(src, newline="") as f:
            reader = csv.DictReader(f)
            header = reader.fieldnames
            rows = list(reader)
    except OSError as e:
        raise SystemExit(f"{src}: cannot read the manifest: {e.strerror}")
    need = {"file", "start", "workload", "gpus", "launch", "nccl_env", "repeat"}
    if not header or not need <= set(header):
        raise SystemExit(f"{src}:1: a manifest needs the columns {','.join(sorted(need))}")
    if not rows:
        raise SystemExit(f"{src}: no runs")
    repeats = sorted({int(r["repeat"]) for r in rows})
    groups = [repeats[i:i + a.group] for i in range(0, len(repeats), a.group)]
    if len(groups) < 2:
        raise SystemExit(f"{src}: {len(repeats)} repeats make fewer than two groups of {a.group}")
    probes = [tuple(p.split()) for p in (a.probe or ["sendrecv 0-1 single-thread", "sendrecv 0-1 thread-per-gpu"])]
    for p in probes:
        if len(p) != 3:
            raise SystemExit(f"--probe '{' '.join(p)}': expected 'WORKLOAD GPUS LAUNCH'")
    # A manifest names GPUs 0,1 as "0-1" or "0,1".
    is_probe = lambda r: (r["workload"], "0-1" if r["gpus"] == "0,1" else r["gpus"], r["launch"]) in probes \
        and not r["nccl_env"]
    sets = {"all": repeats}
    sets.update({f"r{g[0]}-{g[-1]}": g for g in groups})
    work = a.keep or tempfile.mkdtemp(prefix="probe-")
    os.makedirs(work, exist_ok=True)
    # The split manifests go to the work folder, their files named by absolute path.
    base = os.path.dirname(src)
    for r in rows:
        r["file"] = os.path.join(base, r["file"])
    failed = []
    try:
        for name, reps in sets.items():
            for kind, keep in (("probe", True), ("rest", False)):
                path = os.path.join(work, f"{kind}_{name}.csv")
                write_manifest(path, header, [r for r in rows if is_probe(r) == keep and int(r["repeat"]) in reps])
        print(f"{src}: {len(rows)} runs, repeats {repeats[0]}-{repeats[-1]}; probe refits "
              f"{', '.join(probe_params)} from {a.params}; sizes below {a.below} B\n")
        print("| probe from | fitted | " + " | ".join(f"scored on the median of {len(r)} ({n})" for n, r in sets.items())
              + " |")
        print("| --- | --- |" + " --- |" * len(sets))
        for pname in ["none"] + list(sets):
            fit = os.path.join(work, f"fit_{pname}.toml")
            if pname == "none":  # the parameter set as given, no probe
                shutil.copyfile(a.params, fit)
            cmd = [a.commsim, "calibrate", "--topology", a.topology, "--gpu", a.gpu, "--start", a.params,
                   "--manifest", os.path.join(work, f"probe_{pname}.csv"), "--out", fit,
                   "--loss", a.loss]
            for p in probe_params:
                cmd += ["--param", p]
            out = subprocess.run(cmd, capture_output=True, text=True) if pname != "none" else None
            if out is not None and out.returncode != 0:
                raise SystemExit(f"calibrate failed ({out.returncode}): {out.stderr.strip()}")
            with open(fit, "rb") as f:
                table = tomllib.load(f)
            fitted = [f"{p} {table[p.split('.')[0]][p.split('.')[1]]}" for p in probe_params]
            cells = []
            for sname in sets:
                joined = os.path.join(work, f"v_{pname}_{sname}.csv")
                cmd = [a.commsim, "validate", "--topology", a.topology, "--gpu", a.gpu, "--params", fit,
                       "--manifest", os.path.join(work, f"rest_{sname}.csv"), "--csv", joined]
                out = subprocess.run(cmd, capture_output=True, text=True)
                if out.returncode != 0:
                    raise SystemExit(f"validate failed ({out.returncode}): {out.stderr.strip()}")
                mape, cov, n = score(joined, a.below)
                cells.append(f"{mape:.1f}% (band covers {cov:.0f}% of {n})")
                if pname == "all" and sname == "all":
                    if a.max_mape is not None and mape > a.max_mape:
                        failed.append(f"MAPE {mape:.2f}% > {a.max_mape}%")
                    if a.min_coverage is not None and cov < a.min_coverage:
                        failed.append(f"band coverage {cov:.1f}% < {a.min_coverage}%")
            label = "no probe" if pname == "none" else pname
            print(f"| {label} | {'; '.join(fitted)} | " + " | ".join(cells) + " |")
    finally:
        if not a.keep:
            shutil.rmtree(work, ignore_errors=True)
    if failed:
        print("FAILED (probe from every process, scored on the median of every process): " + "; ".join(failed))
        return 1
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
