#!/usr/bin/env python3
"""intercepts.py on a made-up validate CSV whose times lie on known lines, and its refusal of a CSV that is not one."""
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "intercepts.py")
HEADER = ("family,held_out,workload,mode,gpus,bytes,measured_us,predicted_us,predicted_lo_us,predicted_hi_us,"
          "error_pct,runs,spread_pct,bound,source\n")


def main():
    failures = []
    with tempfile.TemporaryDirectory() as d:
        path = os.path.join(d, "v.csv")
        with open(path, "w") as f:
            f.write(HEADER)
            # all_reduce on 2, 3 and 4 GPUs of one start: measured a = 20, 24, 25 us at 300 GB/s, predicted
            # a = 20, 23, 26 us at 250 GB/s; a knob run and a size outside 8-64 MiB that must not count.
            for gpus, a_meas, a_pred in ((2, 20.0, 20.0), (3, 24.0, 23.0), (4, 25.0, 26.0)):
                ids = " ".join(str(g) for g in range(gpus))
                for mib in (4, 8, 16, 32, 64, 128):
                    size = mib << 20
                    meas = a_meas + size / 300e3 + (50.0 if mib in (4, 128) else 0.0)
                    pred = a_pred + size / 250e3
                    src = f"validation/data/h200x4/coverage/h200x4-2026-11-22a/all_reduce_g0{gpus - 1}_st_r1.json:1"
                    f.write(f"ring,{gpus} GPUs,all_reduce,,{ids},{size},{meas},{pred},0,0,0,3,0,bandwidth,{src}\n")
                    knob = src.replace("_st_r1", "_maxch4_r1")
                    f.write(f"ring,{gpus} GPUs,all_reduce,,{ids},{size},{meas * 3},{pred},0,0,0,3,0,bandwidth,{knob}\n")
        res = subprocess.run([sys.executable, SCRIPT, path], capture_output=True, text=True)
        if res.returncode != 0:
            failures.append(f"exit {res.returncode}: {res.stderr}")
        out = res.stdout
        for want in ("all_reduce      single-thread      2   20.0 |  20.0   300 |  250",
                     "all_reduce      single-thread      4   25.0 |  26.0   300 |  250",
                     "2 -> 3:  +4.0 |  +3.0", "3 -> 4:  +1.0 |  +3.0"):
            if want not in out:
                failures.append(f"missing {want!r} in:\n{out}")

        bad = os.path.join(d, "bad.csv")
        with open(bad, "w") as f:
            f.write(HEADER + "ring,x,all_reduce,,0 1,lots,1,1,0,0,0,3,0,bandwidth,a_g2.json:1\n")
        res = subprocess.run([sys.executable, SCRIPT, bad], capture_output=True, text=True)
        if res.returncode == 0 or "bad.csv:2" not in res.stderr:
            failures.append(f"a bad row not refused with its line: {res.returncode} {res.stderr}")

    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
