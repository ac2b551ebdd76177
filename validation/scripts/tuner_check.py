#!/usr/bin/env python3
"""Compares NCCL's own tuner decisions (NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING logs) with commsim's.

NCCL 2.28 logs, on rank 0, one line per collective call (src/enqueue.cc):
  <Func>: <bytes> Bytes -> Algo <ALGO> proto <PROTO> channel{Lo..Hi}={lo..hi}
where <bytes> is the call's count times the type size: the whole buffer for AllReduce, Broadcast and Reduce, one
rank's share (buffer / nranks) for AllGather and ReduceScatter. For every distinct (function, bytes) this runs
`commsim simulate <collective> --format csv` on the same GPUs and knobs and compares algorithm, protocol and
channel count. Prints the mismatches and the agreement; exits 1 on a malformed log or a failed simulate.

Usage: validation/scripts/tuner_check.py --topology T --gpus 0,1 [--commsim BIN] [--min-choice PCT]
       [--min-channels PCT] LOG[@KEY=VALUE,...] ...
With --min-choice / --min-channels it exits 1 when the agreement falls below them (a CI guard).
"""
import argparse
import csv
import io
import re
import subprocess
import sys

LINE = re.compile(r"NCCL INFO (\w+): (\d+) Bytes -> Algo (\w+) proto (\w+) channel\{Lo\.\.Hi\}=\{(\d+)\.\.(\d+)\}")
FUNCS = {"AllReduce": "all_reduce", "AllGather": "all_gather", "ReduceScatter": "reduce_scatter",
         "Broadcast": "broadcast", "Reduce": "reduce"}
PER_RANK = {"AllGather", "ReduceScatter"}


def read_log(path):
    """{(func, bytes): (algo, proto, channels)} from one log; a line that starts like a decision but does not parse
    is an error naming the file and line."""
    out = {}
    with open(path, errors="replace") as f:
        for no, line in enumerate(f, 1):
            if "Bytes -> Algo" not in line:
                continue
            m = LINE.search(line)
            if not m or m.group(1) not in FUNCS:
                sys.exit(f"{path}:{no}: error: unreadable NCCL tuning line: {line.strip()}")
            func, nbytes = m.group(1), int(m.group(2))
            out[(func, nbytes)] = (m.group(3).lower(), m.group(4).lower(), int(m.group(6)) - int(m.group(5)) + 1)
    return out


def main():
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--topology", required=True)
    ap.add_argument("--gpus", required=True, help="the GPUs the logged communicator spans, as for simulate")
    ap.add_argument("--commsim", default="build/default/sim/commsim")
    ap.add_argument("--min-choice", type=float, default=0, help="least %% of algorithm+protocol agreement")
    ap.add_argument("--min-channels", type=float, default=0, help="least %% of full agreement, channels included")
    ap.add_argument("logs", nargs="+", help="LOG or LOG@KEY=VALUE,... (the NCCL knobs the run was made with)")
    a = ap.parse_args()
    nranks = len(a.gpus.split(","))  # a list of GPUs, as nccl-tests -g N ran them
    total = same_choice = same_all = 0
    for spec in a.logs:
        path, _, env = spec.partition("@")
        decisions = read_log(path)
        if not decisions:
            sys.exit(f"{path}: error: no NCCL tuning lines (run with NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING)")
        by_func = {}
        for (func, nbytes), d in decisions.items():
            by_func.setdefault(func, {})[nbytes * (nranks if func in PER_RANK else 1)] = d
        misses = []
        for func, sizes in sorted(by_func.items()):
            cmd = [a.commsim, "simulate", FUNCS[func], "--topology", a.topology, "--gpus", a.gpus,
                   "--min-bytes", f"{min(sizes)}B", "--max-bytes", f"{max(sizes)}B", "--format", "csv"]
            for kv in filter(None, env.split(",")):
                cmd += ["--nccl-env", kv]
            r = subprocess.run(cmd, capture_output=True, text=True)
            if r.returncode != 0:
                sys.exit(f"{path}: error: {' '.join(cmd)} failed: {r.stderr.strip()}")
            sim = {int(row["bytes"]): (row["algorithm"].lower(), row["protocol"].lower(), int(row["channels"]))
                   for row in csv.DictReader(io.StringIO("\n".join(l for l in r.stdout.splitlines()
                                                                    if not l.startswith("#"))))}
            for nbytes, d in sorted(sizes.items()):
                s = sim.get(nbytes)
                if s is None:
                    continue
                total += 1
                same_choice += s[:2] == d[:2]
                same_all += s == d
                if s != d:
                    misses.append(f"  {FUNCS[func]} {nbytes} B: NCCL {d[0]}/{d[1]}/{d[2]} ch, commsim {s[0]}/{s[1]}/{s[2]} ch")
        print(f"{path}{' (' + env + ')' if env else ''}: {len(misses)} of {len(decisions)} decisions differ")
        if misses:
            print("\n".join(misses))
    if total == 0:
        sys.exit("error: no logged size was simulated")
    choice, full = 100.0 * same_choice / total, 100.0 * same_all / total
    print(f"algorithm and protocol: {same_choice} of {total} ({choice:.1f}%) as NCCL chose; "
          f"with the channel count too: {same_all} of {total} ({full:.1f}%)")
    if choice < a.min_choice or full < a.min_channels:
        sys.exit(f"error: agreement below --min-choice {a.min_choice}% or --min-channels {a.min_channels}%")


if __name__ == "__main__":
    main()
