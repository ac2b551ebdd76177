#!/usr/bin/env python3
"""The new-user walkthrough of issue 15, as a test: what someone coming from nccl-tests and PyTorch types first.

Usage: walkthrough_test.py COMMSIM SOURCE_DIR WORK_DIR [--measure COMMSIM_MEASURE]
1. nccl-tests' flags: `simulate sendrecv -g 4 -b 8 -e 128M -f 2 -n 20 -w 5`, JSON and CSV (+ .meta.json);
2. a what-if cluster: all_reduce over 2 HGX H100 servers with 4 of their 8 NICs (and the 8-NIC baseline);
3. advise over a grid: stages 2,4 x microbatches 4,16 x activations 4MiB,64MiB, 1F1B and interleaved;
4. a dry run with its estimate: `commsim-measure sendrecv --dry-run --topology ...` (when commsim-measure is built);
5. every output above validated against validation/schema/results.schema.json (results, advise, plan).
Each step checks what a user would check by eye (sizes, GPU counts, that 4 NICs cost about 2x, winners and
margins, an estimate with its parts). Exit 0 on success, 1 on a failed check, 77 (skipped) without jsonschema.
"""
import csv
import json
import os
import shutil
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("walkthrough: skipped: no python3 jsonschema module (apt-get install python3-jsonschema)")
    sys.exit(77)

args = sys.argv[1:]
measure = None
if "--measure" in args:
    i = args.index("--measure")
    measure = args[i + 1]
    del args[i:i + 2]
commsim, root, work = (os.path.abspath(a) for a in args[:3])
shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
schema = json.load(open(os.path.join(root, "validation/schema/results.schema.json")))
failures = []


def check(ok, what):
    if not ok:
        failures.append(what)
        print("FAIL", what)


def run(cmd, name):
    r = subprocess.run(cmd, cwd=root, capture_output=True, text=True, timeout=300)
    with open(os.path.join(work, name + ".stdout"), "w") as f:
        f.write(r.stdout)
    if r.returncode != 0:
        failures.append(f"{name}: exit {r.returncode}: {r.stderr.strip()[-400:]}")
        print("FAIL", name, r.returncode, r.stderr[-400:])
    return r


def valid(doc, definition, name):
    ref = {"$schema": schema["$schema"], "$defs": schema["$defs"]}
    ref.update({"$ref": "#/$defs/" + definition} if definition else {"oneOf": schema["oneOf"]})
    errors = sorted(jsonschema.Draft202012Validator(ref).iter_errors(doc), key=lambda e: list(e.absolute_path))
    for e in errors[:5]:
        failures.append(f"{name}: schema: {list(e.absolute_path)}: {e.message[:200]}")
        print("FAIL", name, "schema:", list(e.absolute_path), e.message[:200])
    return not errors


h200 = "topologies/library/real/h200x4.topo"
params = "models/params/h200.toml"

# 1. nccl-tests' flags.
out_json = os.path.join(work, "sendrecv.json")
run([commsim, "simulate", "sendrecv", "--topology", h200, "--params", params, "-g", "4", "-b", "8", "-e", "128M",
     "-f", "2", "-n", "20", "-w", "5", "--format", "json", "-o", out_json], "sendrecv-json")
doc = json.load(open(out_json))
valid(doc, None, "sendrecv.json")
sizes = [row["bytes"] for row in doc["rows"]]
check(sizes[0] == 8 and sizes[-1] == 128 << 20 and len(sizes) == 25, f"-b 8 -e 128M -f 2: sizes {sizes[:3]}..")
out_csv = os.path.join(work, "sendrecv.csv")
run([commsim, "simulate", "sendrecv", "--topology", h200, "--params", params, "-g", "4", "-b", "8", "-e", "128M",
     "--format", "csv", "-o", out_csv], "sendrecv-csv")
rows = list(csv.DictReader(open(out_csv)))
check(len(rows) == 25 and all(float(r["time_us"]) > 0 for r in rows), "sendrecv CSV: 25 rows with times")
valid(json.load(open(out_csv + ".meta.json")) if os.path.exists(out_csv + ".meta.json")
      else json.load(open(os.path.splitext(out_csv)[0] + ".meta.json")), None, "sendrecv CSV sidecar")

# 2. A what-if cluster: 4 of 8 NICs per server.
busbw = {}
for name, topo in (("8nics", "topologies/library/whatif/hgx-h100-2nodes-ndr.toml"),
                   ("4nics", "topologies/library/whatif/hgx-h100-2nodes-ndr-4nics.toml")):
    path = os.path.join(work, f"all_reduce-{name}.json")
    run([commsim, "simulate", "all_reduce", "--topology", topo, "--gpus", "all", "-b", "1G", "-e", "1G",
         "--format", "json", "-o", path], "all_reduce-" + name)
    doc = json.load(open(path))
    valid(doc, None, f"all_reduce-{name}.json")
    busbw[name] = doc["rows"][0]["busbw_gbps"]
ratio = busbw["8nics"] / busbw["4nics"]
check(1.8 <= ratio <= 2.2, f"8 -> 4 NICs should cost about 2x in all_reduce busbw, got {ratio:.2f}x")
# The same cluster with H200s: their fitted set was fitted inside one machine, so across InfiniBand its band
# widens to the datasheet band where that is wider, and the output says so.
path = os.path.join(work, "all_reduce-h200-ib.json")
run([commsim, "simulate", "all_reduce", "--topology", "topologies/library/whatif/hgx-h100-2nodes-ndr.toml",
     "--gpu", "H200", "--gpus", "all", "-b", "1G", "-e", "1G", "--format", "json", "-o", path], "all_reduce-h200-ib")
doc = json.load(open(path))
valid(doc, None, "all_reduce-h200-ib.json")
band = doc["band"]
check(doc["params"] == "h200" and band["kind"] == "fitted, widened", f"H200s over InfiniBand: band {band}")
check(band["bandwidth_below"] >= 0.2 and band["bandwidth_above"] >= 0.55 and "network" in doc["params_note"],
      f"H200s over InfiniBand: the datasheet band from 1 MiB, said in the note: {band}, {doc['params_note']}")
row = doc["rows"][0]
check(row["time_us_lo"] <= row["time_us"] * 0.8 + 1e-6 and row["time_us_hi"] >= row["time_us"] * 1.55 - 1e-6,
      f"H200s over InfiniBand: the row's band {row['time_us_lo']}..{row['time_us_hi']} around {row['time_us']}")

# 3. advise over a grid, both schedules.
for schedule, extra in (("1f1b", []), ("interleaved", ["--chunks", "2"])):
    r = run([commsim, "advise", "pipeline", "--topology", h200, "--params", params, "--stages", "2,4",
             "--microbatches", "4,16", "--activation-bytes", "4MiB,64MiB", "--fwd-us", "500us", "--bwd-us", "1ms",
             "--schedule", schedule, *extra, "--format", "json"], "advise-" + schedule)
    doc = json.loads(r.stdout)
    valid(doc, "advise_pipeline", "advise-" + schedule)
    points = doc["points"]
    check(len(points) >= 8, f"advise {schedule}: a point per stages x microbatches x size, got {len(points)}")
    for p in points:
        check(p["margin_lo_us"] <= p["margin_us"] <= p["margin_hi_us"],
              f"advise {schedule}: the margin lies in its band at {p['activation_bytes']} B")
    if schedule == "interleaved":
        check(any(doc["hazards"]) and any(p["hazards"] for p in points if p["activation_bytes"] == 64 << 20),
              "advise interleaved: the measured hang at 64 MiB is flagged")

# 4. The plan with its cost.
if measure:
    r = run([measure, "sendrecv", "--dry-run", "--topology", h200, "-b", "8", "-e", "128M", "--format", "json"],
            "dry-run")
    doc = json.loads(r.stdout)
    valid(doc, "measure_plan", "dry-run")
    e = doc["estimate"]
    check("total_s" in e and e["low_s"] <= e["total_s"] <= e["high_s"], "dry run: an estimate inside its band")
    check(len(doc["order"]) == doc["configurations"] * doc["reps"], "dry run: every repetition's order")
    parts = e["startup_s"] + e["communicators_s"] + e["drift_s"] + e["operations_s"] + e["per_run_s"] + e["teardown_s"]
    check(abs(parts - e["total_s"]) < 1e-6, "dry run: the parts add up to the total")
else:
    print("walkthrough: step 4 skipped: commsim-measure not built (no CUDA toolkit with NCCL)")

print(f"walkthrough: {len(failures)} problem(s)")
sys.exit(1 if failures else 0)
