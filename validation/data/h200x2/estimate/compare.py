#!/usr/bin/env python3
"""Issue 15 item 4: commsim-measure's dry-run wall-time estimate against the measured wall time of each plan.

Re-runs every plan of a run.sh output directory as a dry run (the command line its metadata.json or
results.json recorded, with --dry-run --topology) using the commsim-measure given, so the estimate is the
current one, and prints a Markdown table: measured wall (each pass), estimate with its band, error, and whether
the plan was used to fit the tool's costs (c*: calibration) or held out (h*).
Usage: compare.py COMMSIM_MEASURE RUN_DIR [TOPOLOGY]   (exit 1 when a held-out plan falls outside its band)"""
import csv, json, os, re, shlex, subprocess, sys

measure, run_dir = sys.argv[1], sys.argv[2]
topology = sys.argv[3] if len(sys.argv) > 3 else "topologies/library/real/h200x4.topo"
walls = {}
for r in csv.DictReader(open(os.path.join(run_dir, "walls.csv"))):
    walls.setdefault(r["name"], {})[r["pass"]] = float(r["wall_s"])


def dry_run(name, pass_):
    out = os.path.join(run_dir, pass_, name)
    meta = os.path.join(out, "metadata.json")
    if os.path.exists(meta):
        doc = json.load(open(meta))
        argv = shlex.split(doc["command_line"])[1:]
        if not {"-g", "--gpu-count"} & set(argv):  # plan for the GPUs the run had, not the topology's
            argv += ["-g", str(len(doc["gpus"]))]
    else:
        argv = shlex.split(json.load(open(os.path.join(out, "results.json")))["command_line"])[1:]
    i = argv.index("--out")
    argv = argv[:i] + argv[i + 2:]
    if argv[0] == "weight-sync":
        text = subprocess.run([measure] + argv + ["--dry-run", "--topology", topology], check=True,
                              capture_output=True, text=True).stdout
        m = re.search(r"estimated wall time: ([\d.]+) s \(([\d.]+)-([\d.]+) s\)", text)
        return float(m.group(1)), float(m.group(2)), float(m.group(3))
    doc = json.loads(subprocess.run([measure] + argv + ["--dry-run", "--format", "json", "--topology", topology],
                                    check=True, capture_output=True, text=True).stdout)
    e = doc["estimate"]
    return e["total_s"], e["low_s"], e["high_s"]


# The two weight-sync runs fix weight_sync_startup_s and fill_bytes_per_s (measure/src/estimate.cpp).
WEIGHT_SYNC_FITTED = {"h7_ws_broadcast", "h8_ws_engine"}

print("| plan | role | measured wall (s), each pass | estimate (s) | band (s) | error | inside band |")
print("| --- | --- | --- | ---: | --- | --- | --- |")
outside = 0
errors = {"calibration": [], "held out": []}
for name in sorted(walls, key=lambda n: (n[0] != "c", n)):
    total, low, high = dry_run(name, sorted(walls[name])[0])
    role = "calibration" if name.startswith("c") else "held out"
    if name in WEIGHT_SYNC_FITTED:
        role = "calibration"  # the weight-sync costs are fitted on these two; their pushes are simulated
    ws = [walls[name][p] for p in sorted(walls[name])]
    errs = [(total - w) / w * 100 for w in ws]
    errors[role] += [abs(e) for e in errs]
    inside = all(low <= w <= high for w in ws)
    if role == "held out" and not inside:
        outside += 1
    print(f"| {name} | {role} | {', '.join(f'{w:.2f}' for w in ws)} | {total:.2f} | {low:.2f}-{high:.2f} | "
          f"{', '.join(f'{e:+.1f}%' for e in errs)} | {'yes' if inside else 'no'} |")
for role, e in errors.items():
    if e:
        print(f"\n{role}: mean absolute error {sum(e) / len(e):.1f}%, worst {max(e):.1f}% ({len(e)} runs)")
sys.exit(1 if outside else 0)
