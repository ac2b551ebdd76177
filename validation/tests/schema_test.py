#!/usr/bin/env python3
"""Result schema test: real outputs of commsim and commsim-measure validate against validation/schema/results.schema.json.

Usage: schema_test.py COMMSIM SOURCE_DIR WORK_DIR
Simulate outputs (JSON, CSV metadata) and sweep outputs (results.csv rows, results.meta.json) are produced here;
commsim-measure outputs are the committed ones under validation/data (results.json, metadata.json; `commsim-measure
--dry-run` prints its plan and writes no result file). Then outputs that break the schema's rules (a time in
milliseconds, a failed sweep point with a time) must be refused, so the test can fail.
"""
import csv
import glob
import json
import os
import shutil
import subprocess
import sys

try:
    import jsonschema
except ImportError:
    print("schema_test: skipped: no python3 jsonschema module (apt-get install python3-jsonschema)")
    sys.exit(77)

commsim, root, work = sys.argv[1], sys.argv[2], sys.argv[3]
schema = json.load(open(os.path.join(root, "validation/schema/results.schema.json")))
jsonschema.Draft202012Validator.check_schema(schema)
validator = jsonschema.Draft202012Validator(schema)

failures = []
checked = 0


def errors_of(v, doc):
    return sorted(v.iter_errors(doc), key=lambda e: list(e.absolute_path))


def definition(name):
    return jsonschema.Draft202012Validator(
        {"$schema": schema["$schema"], "$defs": schema["$defs"], "$ref": "#/$defs/" + name})


# The definition a document claims by its tag, for a readable message when it fails the whole schema.
CLAIMED = {("commsim.results/2", "commsim"): "simulate_results",
           ("commsim.results/2", "commsim-measure"): "measure_results",
           ("commsim.results_meta/2", "commsim"): "simulate_csv_meta",
           ("commsim.sweep_meta/1", None): "sweep_meta",
           ("commsim.measure_meta/2", "commsim-measure"): "measure_meta",
           ("commsim.results/1", "commsim-measure"): "measure_results_v1",
           ("commsim.weight_sync/1", None): "measure_weight_sync_v1",
           (None, "commsim-measure"): "measure_meta_v1"}


# A row of a sweep's results.csv, read as JSON (the schema's $defs/sweep_row).
sweep_row = definition("sweep_row")


def check(doc, what, v=validator):
    global checked
    checked += 1
    errs = errors_of(v, doc)
    if not errs:
        return
    if v is validator and isinstance(doc, dict):
        tag = (doc.get("schema"), doc.get("tool"))
        claimed = CLAIMED.get(tag) or CLAIMED.get((tag[0], None))
        if not claimed:
            failures.append(f"{what}: no definition for schema {tag[0]!r} with tool {tag[1]!r}")
            return
        errs = errors_of(definition(claimed), doc) or errs
    best = jsonschema.exceptions.best_match(errs)
    failures.append(f"{what}: {best.message[:300]} at $.{'.'.join(map(str, best.absolute_path))}")


def refused(doc, what, v=validator):
    if not errors_of(v, doc):
        failures.append(f"the schema accepts {what}")


def run(args):
    r = subprocess.run([commsim] + args, cwd=root, capture_output=True, text=True)
    if r.returncode != 0:
        failures.append(f"commsim {' '.join(args)} exited {r.returncode}: {r.stderr.strip()}")
    return r


def csv_value(text):
    if text == "":
        return None
    for conv in (int, float):
        try:
            return conv(text)
        except ValueError:
            pass
    return text


shutil.rmtree(work, ignore_errors=True)
os.makedirs(work)
H200 = ["--topology", "topologies/library/real/h200x4.topo", "--params", "models/params/h200.toml"]
simulations = {
    "sendrecv": ["sendrecv", "-g", "4", "-b", "8", "-e", "1M", "-f", "64"],
    "all_reduce": ["all_reduce", "-g", "4", "-b", "1K", "-e", "64M", "-f", "64"],
    "p2p": ["p2p", "--src", "0", "--dst", "1", "-b", "1K", "-e", "1M", "-f", "32"],
    "exchange": ["exchange", "--pair", "0,1", "--mode", "batched", "-b", "1K", "-e", "1M", "-f", "32"],
    "pipeline": ["pipeline", "--stages", "4", "--microbatches", "4", "--activation-bytes", "4MiB",
                 "--fwd-us", "500us", "--bwd-us", "1ms"],
    "weight-sync": ["weight-sync", "--model", "llama-3-8b", "--from", "0", "--to", "1-3", "--method", "broadcast"],
}
sim_docs = {}
for name, args in simulations.items():
    r = run(["simulate"] + args[:1] + H200 + args[1:] + ["--format", "json"])
    if r.returncode == 0:
        sim_docs[name] = json.loads(r.stdout)
        check(sim_docs[name], f"simulate {name} --format json")
    out = os.path.join(work, f"{name}.csv")
    if run(["simulate"] + args[:1] + H200 + args[1:] + ["--format", "csv", "-o", out]).returncode == 0:
        check(json.load(open(os.path.join(work, f"{name}.meta.json"))), f"simulate {name} {name}.meta.json")

# Sweeps: one that succeeds, one with failed points (exit 6).
for spec, extra, code in (("sim/tests/sweep-small.toml", ["-b", "8", "-e", "1M", "-f", "16", "-g", "4"], 0),
                          ("sim/tests/sweep-fails.toml", [], 6)):
    out = os.path.join(work, os.path.basename(spec) + ".out")
    r = subprocess.run([commsim, "sweep", spec] + extra + ["--jobs", "2", "--out", out], cwd=root,
                       capture_output=True, text=True)
    if r.returncode != code:
        failures.append(f"sweep {spec} exited {r.returncode}, expected {code}: {r.stderr.strip()}")
        continue
    check(json.load(open(os.path.join(out, "results.meta.json"))), f"{spec}: results.meta.json")
    with open(os.path.join(out, "results.csv"), newline="") as f:
        rows = [{k: csv_value(v) for k, v in row.items()} for row in csv.DictReader(f)]
    if not rows:
        failures.append(f"{spec}: results.csv has no rows")
    for i, row in enumerate(rows):
        row["gpus"] = str(row["gpus"]) if row["gpus"] is not None else None
        check(row, f"{spec}: results.csv row {i + 1}", sweep_row)
    if code == 6 and not any(r["status"] == "failed" for r in rows):
        failures.append(f"{spec}: no row has status failed")
    if code == 6 and rows:
        bad = dict(next(r for r in rows if r["status"] == "failed"), time_us=0.0)
        refused(bad, "a failed sweep point with a time of 0", sweep_row)
        bad = dict(next(r for r in rows if r["status"] == "failed"), time_us_lo=1.0)
        refused(bad, "a failed sweep point with a band", sweep_row)
    if rows and any(r["status"] == "ok" for r in rows):
        bad = dict(next(r for r in rows if r["status"] == "ok"), time_us_hi=None)
        refused(bad, "a sweep point without its band", sweep_row)

# commsim-measure: every committed results.json and metadata.json.
measured = sorted(glob.glob(os.path.join(root, "validation/data/**/results.json"), recursive=True) +
                  glob.glob(os.path.join(root, "validation/data/**/metadata.json"), recursive=True))
if len(measured) < 20:
    failures.append(f"only {len(measured)} commsim-measure files under validation/data")
for path in measured:
    check(json.load(open(path)), os.path.relpath(path, root))

# The rules bite: renamed units and mislabelled versions are refused.
if "weight-sync" in sim_docs:
    doc = json.loads(json.dumps(sim_docs["weight-sync"]))
    for row in doc["rows"]:
        row["time_ms"] = row.pop("time_us", 0) / 1e3
    refused(doc, "a simulate row with time_ms")
if "sendrecv" in sim_docs:
    doc = json.loads(json.dumps(sim_docs["sendrecv"]))
    doc.setdefault("units", {})["time_us"] = "ms"
    refused(doc, "time_us labelled ms")
    doc = json.loads(json.dumps(sim_docs["sendrecv"]))
    doc["rows"][0]["bytes"] = 1.5
    refused(doc, "a fractional byte count")
    for bad in (-1.0, "12.5"):
        doc = json.loads(json.dumps(sim_docs["sendrecv"]))
        doc["rows"][0]["time_us_lo"] = bad
        refused(doc, f"a band cell of {bad!r}")
if "weight-sync" in sim_docs:
    rows = sim_docs["weight-sync"]["rows"]
    if not any(r.get("time_us_lo") is None for r in rows) or not any(r.get("time_us_lo") for r in rows):
        failures.append("weight-sync: its [setup] constants should have null band cells and its simulated rows numbers")
v1 = os.path.join(root, "validation/data/h200x4/measure/weight_sync_qwen32b_broadcast/results.json")
doc = json.load(open(v1))
doc["schema"] = "commsim.results/2"
refused(doc, "a weight-sync run in seconds tagged commsim.results/2")

print(f"schema_test: {checked} documents and rows checked, {len(failures)} problem(s)")
for f in failures[:40]:
    print("  " + f)
sys.exit(1 if failures else 0)
