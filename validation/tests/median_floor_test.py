#!/usr/bin/env python3
"""median_floor.py on made-up nine-process runs whose floors have closed forms, and its refusals of bad input."""
import json
import os
import subprocess
import sys
import tempfile

SCRIPT = os.path.join(os.path.dirname(os.path.abspath(__file__)), "..", "scripts", "median_floor.py")


def write_run(path, level):
    """An nccl-tests JSON whose out-of-place time is `level` us at every size from 8 B to 512 KiB."""
    results = [{"size": 8 << i, "out_of_place": {"time": level}} for i in range(17)]
    with open(path, "w") as f:
        json.dump({"results": results}, f)


def run(args):
    return subprocess.run([sys.executable, SCRIPT] + args, capture_output=True, text=True)


def row(out, scope, k):
    for line in out.splitlines():
        if line.startswith(scope + " ") and line.split()[len(scope.split())] == str(k):
            return [float(x.rstrip("%")) for x in line.split()[len(scope.split()) + 2:len(scope.split()) + 5]]
    raise AssertionError(f"no row for {scope} k={k} in:\n{out}")


def main():
    failures = []

    def check(name, got, want, tol=0.051):
        if abs(got - want) > tol:
            failures.append(f"{name}: got {got}, want {want}")

    with tempfile.TemporaryDirectory() as d:
        # Nine processes, three of them 1.4x slower at every size: the slow share is 3/9.
        with open(os.path.join(d, "manifest.csv"), "w") as m:
            m.write("file,start,workload,gpus,launch,nccl_env,repeat\n")
            for r in range(9):
                name = f"sendrecv_r{r}.json"
                write_run(os.path.join(d, name), 14.0 if r < 3 else 10.0)
                m.write(f"{name},s1,sendrecv,0-1,single-thread,,{r + 1}\n")
        res = run(["--k", "1,3", d])
        if res.returncode != 0:
            failures.append(f"exit {res.returncode}: {res.stderr}")
        else:
            # k = 1: predicting the fast level misses the three slow ones by 40%: 3/9 x 40 = 13.3%.
            known, at_median, start = row(res.stdout, "all", 1)
            check("k=1 known configuration", known, 100 * 3 / 9 * 0.4)
            check("k=1 known start", start, 100 * 3 / 9 * 0.4)
            # k = 3 from the nine: a triple's median is slow when two or three of its processes are;
            # C(3,2) C(6,1) + C(3,3) = 19 of 84 triples.
            known, at_median, start = row(res.stdout, "all", 3)
            check("k=3 known configuration", known, 100 * 19 / 84 * 0.4)
            check("k=3 at the median", at_median, 100 * 19 / 84 * 0.4)
            # Independent draws, slow with p = 1/3: P(median slow) = 3p^2(1-p) + p^3 = 7/27.
            check("k=3 known start", start, 100 * 7 / 27 * 0.4)

        # Even k is refused; so is a manifest row whose file is missing, naming the file.
        res = run(["--k", "2", d])
        if res.returncode == 0 or "odd" not in res.stderr:
            failures.append(f"--k 2 not refused: {res.returncode} {res.stderr}")
        with open(os.path.join(d, "manifest.csv"), "a") as m:
            m.write("missing.json,s1,sendrecv,0-1,single-thread,,10\n")
        res = run([d])
        if res.returncode == 0 or "missing.json" not in res.stderr:
            failures.append(f"missing file not named: {res.returncode} {res.stderr}")

    for f in failures:
        print("FAIL", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
