#!/usr/bin/env python3
# Adversarial output tests (issue 16): outputs never overwrite inputs, --resume merges only its own plan's
# records, and strings from every input are escaped in every report and quoted in every "regenerate" command.
"""Runs one case (--case NAME) against the real binaries; exit 0 when it holds, 1 with the reason otherwise.

Every case runs in a fresh directory under --work. Run without --case to list the cases.
"""
import argparse
import csv
import hashlib
import html
import io
import json
import os
import re
import shutil
import subprocess
import sys
import time

# A payload for every string field: HTML (a live script, an element with a handler), quotes, shell
# separators, backticks and $(), a Markdown table break and link.
PAYLOAD = "x<script>alert(1)</script><img src=x onerror=alert(2)>\"';touch PWNED;`touch PWNED`$(touch PWNED)|[l](javascript:alert(3))"
# The same without '/', for file and directory names (the results directory is `m;touch PWNED;x`).
NAME_PAYLOAD = "m;touch PWNED;x<script>alert(1)<img src=x onerror=alert(2)>\"'`touch PWNED`$(touch PWNED)|[l]"

ARGS = None


class Fail(Exception):
    pass


def run(cmd, cwd=None, timeout=60):
    p = subprocess.run(cmd, cwd=cwd, capture_output=True, text=True, timeout=timeout)
    return p.returncode, p.stdout, p.stderr


def expect(rc, want, out, err, what):
    if rc != want:
        raise Fail(f"{what}: expected exit {want}, got {rc}\nstdout:\n{out[-3000:]}\nstderr:\n{err[-3000:]}")


def contains(text, parts, what):
    for p in parts:
        if p not in text:
            raise Fail(f"{what}: lacks {p!r}:\n{text[-3000:]}")


def digest(path):
    with open(path, "rb") as f:
        return hashlib.sha256(f.read()).hexdigest()


def src(*parts):
    return os.path.join(ARGS.source_dir, *parts)


def fresh(name):
    d = os.path.join(ARGS.work, name)
    shutil.rmtree(d, ignore_errors=True)
    os.makedirs(d)
    return d


def copy_topology(d, name="h200x4.topo"):
    t = os.path.join(d, name)
    shutil.copy(src("topologies/library/real/h200x4.topo"), t)
    return t


# ---- item 5: outputs never overwrite inputs ---------------------------------------------------------------


def refuse(cmd, protected, flags, cwd):
    """`cmd` must exit 2 naming every flag in `flags`, leaving every file in `protected` as it was."""
    before = {p: digest(p) for p in protected}
    rc, out, err = run(cmd, cwd=cwd)
    expect(rc, 2, out, err, " ".join(cmd[1:3]))
    contains(err, flags, "stderr")
    for p, h in before.items():
        if digest(p) != h:
            raise Fail(f"{p} was changed")
    leftovers = [f for f in os.listdir(os.path.dirname(protected[0])) if ".tmp." in f]
    if leftovers:
        raise Fail(f"temporary files left: {leftovers}")


def case_topo_show_onto_topology():
    d = fresh("topo-show")
    t = copy_topology(d)
    refuse([ARGS.commsim, "topo", "show", t, "-o", t], [t], ["--out", "FILE", "would overwrite"], d)
    os.symlink(t, os.path.join(d, "link.txt"))  # through a symbolic link
    refuse([ARGS.commsim, "topo", "show", "h200x4.topo", "-o", "link.txt"], [t], ["--out", "FILE"], d)
    os.mkdir(os.path.join(d, "sub"))  # through another spelling
    refuse([ARGS.commsim, "topo", "show", "h200x4.topo", "-o", "sub/../h200x4.topo"], [t], ["FILE"], d)
    # The `nvidia-smi nvlink -s` capture read beside the topology, and one given by --nvlink, are inputs too.
    nv = os.path.join(d, "h200x4.nvlink")
    shutil.copy(src("topologies/library/real/h200x4.nvlink"), nv)
    refuse([ARGS.commsim, "topo", "show", t, "-o", nv], [t, nv], ["--out", "its .nvlink file"], d)
    other = os.path.join(d, "other.nvlink")
    shutil.copy(nv, other)
    refuse([ARGS.commsim, "topo", "show", t, "--nvlink", other, "--format", "json", "-o", other], [other],
           ["--out", "--nvlink"], d)


def case_outputs_onto_nested_topology_files():
    # The files a what-if TOML names (topo_file, nvlink_file, the capture beside a topo_file) are inputs too.
    d = fresh("nested")
    os.mkdir(os.path.join(d, "machines"))
    m = copy_topology(os.path.join(d, "machines"), "box.topo")
    nv = os.path.join(d, "machines", "box.nvlink")
    shutil.copy(src("topologies/library/real/h200x4.nvlink"), nv)
    other = os.path.join(d, "other.nvlink")
    shutil.copy(nv, other)
    w = os.path.join(d, "cluster.toml")
    with open(w, "w") as f:
        f.write('[[nodes]]\ntopo_file = "machines/box.topo"\ngpu = "H200"\n'
                '[[nodes]]\ntopo_file = "machines/box.topo"\nnvlink_file = "other.nvlink"\ngpu = "H200"\n'
                '[fabric]\nkind = "ib-ndr"\n')
    refuse([ARGS.commsim, "topo", "show", w, "-o", m], [m, w], ["--out", "topo_file of [[nodes]] 1"], d)
    refuse([ARGS.commsim, "topo", "show", w, "-o", "machines/box.nvlink"], [nv],
           ["--out", "the nvlink capture beside topo_file of [[nodes]] 1"], d)
    refuse([ARGS.commsim, "simulate", "sendrecv", "--topology", w, "--max-bytes", "1KiB", "-o", other], [other],
           ["--out", "nvlink_file of [[nodes]] 2"], d)
    refuse([ARGS.commsim, "simulate", "sendrecv", "--topology", "cluster.toml", "--max-bytes", "1KiB", "--trace",
            "machines/../machines/box.topo"], [m], ["--trace", "topo_file"], d)


def case_topo_show_onto_directory():
    d = fresh("topo-show-dir")
    t = copy_topology(d)
    rc, out, err = run([ARGS.commsim, "topo", "show", t, "-o", d])
    expect(rc, 4, out, err, "topo show -o DIR")
    contains(err, ["is a directory"], "stderr")
    if "Success" in err:
        raise Fail("the message still says 'Success': " + err)


def case_simulate_onto_inputs():
    d = fresh("simulate")
    t = copy_topology(d)
    params = os.path.join(d, "h200.toml")
    shutil.copy(src("models/params/h200.toml"), params)
    base = [ARGS.commsim, "simulate", "sendrecv", "--topology", t, "--params", params, "--max-bytes", "1KiB"]
    refuse(base + ["-o", params], [params, t], ["--out", "--params"], d)
    refuse(base + ["--trace", t], [params, t], ["--trace", "--topology"], d)
    refuse(base + ["-o", os.path.join(d, "x.csv"), "--trace", os.path.join(d, "x.csv")], [params, t],
           ["--trace", "--out", "same file"], d)
    counts = os.path.join(d, "counts.txt")
    with open(counts, "w") as f:
        f.write("0 1 1 1\n1 0 1 1\n1 1 0 1\n1 1 1 0\n")
    refuse([ARGS.commsim, "simulate", "alltoallv", "--topology", t, "--gpus", "0-3", "--counts", counts, "-o",
            counts], [counts], ["--counts", "--out"], d)


def case_validate_onto_inputs():
    d = fresh("validate")
    t = copy_topology(d)
    log = os.path.join(d, "sendrecv.log")
    shutil.copy(src("validation/data/h200x4/nccl-tests/sendrecv_g4_r1.log"), log)
    gpu_map = os.path.join(d, "gpus.csv")
    shutil.copy(src("validation/data/h200x4/meta/gpus.csv"), gpu_map)
    base = [ARGS.commsim, "validate", "--topology", t, "--nccl-tests", log, "--gpu-map", gpu_map]
    refuse(base + ["--report", log], [log, t, gpu_map], ["--report", "--nccl-tests"], d)
    refuse(base + ["--csv", gpu_map], [log, t, gpu_map], ["--csv", "--gpu-map"], d)
    refuse(base + ["--markdown", t], [log, t, gpu_map], ["--markdown", "--topology"], d)
    # A file a manifest lists is an input too.
    man = os.path.join(d, "manifest.csv")
    with open(src("validation/data/h200x4/nccl-tests/manifest.csv")) as f:
        header = f.readline()
        first = f.readline()
    name = first.split(",")[0]
    shutil.copy(src("validation/data/h200x4/nccl-tests", name), os.path.join(d, name))
    with open(man, "w") as f:
        f.write(header + first)
    refuse([ARGS.commsim, "validate", "--topology", t, "--manifest", man, "--markdown", os.path.join(d, name)],
           [os.path.join(d, name), man], ["--markdown", "--manifest"], d)


def case_calibrate_onto_measured():
    d = fresh("calibrate")
    t = copy_topology(d)
    m = os.path.join(d, "p2p_all")
    shutil.copytree(src("validation/data/h200x4/measure/p2p_all"), m)
    refuse([ARGS.commsim, "calibrate", "--topology", t, "--measured", m, "--out", os.path.join(m, "results.json")],
           [os.path.join(m, "results.json")], ["--out", "--measured"], d)
    refuse([ARGS.commsim, "calibrate", "--topology", t, "--measured", m, "--out", t], [t],
           ["--out", "--topology"], d)


def case_sweep_onto_inputs():
    d = fresh("sweep")
    shard = os.path.join(d, "results.csv")
    with open(shard, "w") as f:
        f.write("# commsim-sweep name=x hash=1 shard=0/1 points=0\n")
    refuse([ARGS.commsim, "sweep", "merge", shard, "--out", d], [shard], ["--out", "SHARDS"], d)
    spec = os.path.join(d, "summary.html")  # a spec whose name is an output's
    with open(spec, "w") as f:
        f.write('name = "x"\n[grid]\ntopologies = ["%s"]\nworkloads = ["all_reduce"]\nsizes = ["1KiB"]\n'
                % src("topologies/library/real/h200x4.topo"))
    refuse([ARGS.commsim, "sweep", spec, "--out", d, "--jobs", "1"], [spec], ["--out", "SPEC"], d)
    rc, out, err = run([ARGS.commsim, "sweep", spec, "--out", shard, "--jobs", "1"])
    expect(rc, 4, out, err, "sweep --out FILE")
    contains(err, ["not a directory"], "stderr")


def case_plot_advise_onto_inputs():
    d = fresh("plot")
    tsv = os.path.join(d, "a.tsv")
    shutil.copy(src("sim/tests/plot-a.tsv"), tsv)
    refuse([ARGS.commsim, "plot", tsv, "--x", "gpus", "--y", "user_s", "-o", tsv], [tsv], ["--out", "FILE"], d)
    t = copy_topology(d)
    refuse([ARGS.commsim, "advise", "pipeline", "--topology", t, "--stages", "2", "--microbatches", "2",
            "--activation-bytes", "1MiB", "--fwd-us", "1", "--bwd-us", "1", "-o", t], [t], ["--out", "--topology"], d)


def case_measure_out_onto_counts():
    if not ARGS.measure:
        raise Fail("needs --measure")
    d = fresh("measure-counts")
    out = os.path.join(d, "out")
    os.makedirs(out)
    counts = os.path.join(out, "results.csv")
    with open(counts, "w") as f:
        f.write("0 1 1 1\n1 0 1 1\n1 1 0 1\n1 1 1 0\n")
    refuse([ARGS.measure, "alltoallv", "--dry-run", "-g", "4", "--counts", counts, "--out", out], [counts],
           ["--out", "--counts"], d)


def case_measure_dry_run_limits():
    # Item 3: dry-run planning over thousands of GPUs ends at once, refused with a reason or planned in linear
    # time (every pair of 2,000 GPUs never ended before the plan limit).
    if not ARGS.measure:
        raise Fail("needs --measure")
    d = fresh("measure-limits")
    for args, want, text in ((["p2p", "-g", "2000"], 2, "refused: the plan has 123938000 configurations"),
                             (["p2p", "--gpu-count", "100000"], 2, "more than the 65536 GPUs"),
                             (["p2p", "--gpus", "2000"], 2, "--gpus is a GPU list"),
                             (["all_reduce", "-g", "2000", "--reps", "1"], 0, "")):
        t0 = time.monotonic()
        rc, out, err = run([ARGS.measure, *args, "--dry-run"], cwd=d)
        took = time.monotonic() - t0
        expect(rc, want, out, err, " ".join(args))
        if text:
            contains(err, [text], "stderr")
        if took > 5:
            raise Fail(f"{' '.join(args)} --dry-run took {took:.1f} s")
    # The collective over 2,000 GPUs: one configuration per size (one repetition: one row each), naming all 2,000.
    m = re.search(r"^(\d+) configurations x", out, flags=re.M)
    if not m or int(m.group(1)) < 2 or out.count(",1999\n") != int(m.group(1)):
        raise Fail("all_reduce -g 2000 --dry-run: unexpected plan:\n" + out[:500])


# ---- item 6: --resume merges only its own plan's records ----------------------------------------------------


def measure_dry(d, out, extra=()):
    return run([ARGS.measure, "p2p", "--dry-run", "-g", "2", "--max-bytes", "4B", "--reps", "2", "--out", out,
                "--resume", *extra], cwd=d)


def plan_of(d, out):
    rc, o, err = measure_dry(d, out)
    expect(rc, 0, o, err, "dry run --resume on an empty --out")
    m = re.search(r"plan ([0-9a-f]{16}) starts from scratch", err)
    if not m:
        raise Fail("no plan hash in: " + err)
    if os.path.exists(out):
        raise Fail("a dry run created --out")
    return m.group(1)


def record(plan, config, rep, t=10.0):
    return json.dumps({"config_id": config, "rep": rep, "plan": plan, "machine": "", "workload": "p2p",
                       "failed": False, "error": "", "time_us": t, "iteration_us": [t]}) + "\n"


def case_resume_other_plan():
    if not ARGS.measure:
        raise Fail("needs --measure")
    d = fresh("resume-plan")
    out = os.path.join(d, "out")
    plan = plan_of(d, out)
    # The same flags give the same plan; another seed or GPU count another.
    if plan_of(d, out) != plan:
        raise Fail("the plan hash is not stable")
    rc, o, err = run([ARGS.measure, "p2p", "--dry-run", "-g", "2", "--max-bytes", "4B", "--seed", "7", "--out",
                      out, "--resume"], cwd=d)
    if re.search(r"plan ([0-9a-f]{16})", err).group(1) == plan:
        raise Fail("another seed gives the same plan")
    os.makedirs(out)
    with open(os.path.join(out, "results.jsonl"), "w") as f:
        f.write(record(plan, 0, 0) + record("0123456789abcdef", 1, 0))
    before = digest(os.path.join(out, "results.jsonl"))
    rc, o, err = measure_dry(d, out)
    expect(rc, 2, o, err, "resume onto another plan's records")
    if digest(os.path.join(out, "results.jsonl")) != before:
        raise Fail("a refused resume changed results.jsonl")
    contains(err, ["results.jsonl:2", "another plan", "0123456789abcdef"], "stderr")
    with open(os.path.join(out, "results.jsonl"), "w") as f:  # a record from before plans were recorded
        f.write(json.dumps({"config_id": 0, "rep": 0, "failed": False, "time_us": 1, "iteration_us": [1]}) + "\n")
    rc, o, err = measure_dry(d, out)
    expect(rc, 2, o, err, "resume onto a record without a plan")
    contains(err, ["results.jsonl:1", "did not record its plan"], "stderr")


def case_resume_duplicates_and_torn_line():
    if not ARGS.measure:
        raise Fail("needs --measure")
    d = fresh("resume-dup")
    out = os.path.join(d, "out")
    plan = plan_of(d, out)
    os.makedirs(out)
    jsonl = os.path.join(out, "results.jsonl")
    with open(jsonl, "w") as f:
        f.write(record(plan, 0, 0) + record(plan, 1, 0) + record(plan, 0, 0) + record(plan, 0, 0, 99))
        f.write('{"config_id": 1, "rep": 1, "pla')  # cut short by a crash
    before = digest(jsonl)
    rc, o, err = measure_dry(d, out)
    expect(rc, 0, o, err, "resume with duplicates and a torn line")
    contains(err, ["holds 2 repetition(s) of plan " + plan, "results.jsonl:3: 2 duplicate record(s)",
                   "results.jsonl:5: would drop the torn last line"], "stderr")
    if digest(jsonl) != before:
        raise Fail("a dry run changed results.jsonl")
    # A record before the last that cannot be read is damage, not a crash: exit 3 with its line.
    with open(jsonl, "w") as f:
        f.write(record(plan, 0, 0) + '{"config_id": 1, "re\n' + record(plan, 1, 0))
    rc, o, err = measure_dry(d, out)
    expect(rc, 3, o, err, "resume with a damaged line in the middle")
    contains(err, ["results.jsonl:2:1"], "stderr")
    # A config id outside the plan is not this plan's record.
    with open(jsonl, "w") as f:
        f.write(record(plan, 7, 0) + record(plan, 1, 0))
    rc, o, err = measure_dry(d, out)
    expect(rc, 3, o, err, "resume with a config id outside the plan")
    contains(err, ["results.jsonl:1:1", "not one of this plan's"], "stderr")


# ---- item 7: escaping and quoting everywhere ---------------------------------------------------------------


def check_html(path, what):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    lowered = text.lower()
    for raw in ("<script", "<img", "javascript:alert(3)\""):
        if raw in lowered:
            at = lowered.find(raw)
            raise Fail(f"{what}: raw {raw!r} at {at}: ...{text[max(0, at - 200):at + 200]}...")
    if "&lt;script&gt;alert(1)" not in text:
        raise Fail(f"{what}: the payload does not appear escaped (was the field shown at all?)")
    return text


def check_html_raw(path, what):
    """Like check_html, for pages that need not show the payload."""
    with open(path, encoding="utf-8") as f:
        lowered = f.read().lower()
    for raw in ("<script", "<img"):
        if raw in lowered:
            raise Fail(f"{what}: raw {raw!r}")


def check_markdown(path, what):
    with open(path, encoding="utf-8") as f:
        text = f.read()
    # Outside fenced code blocks (which show text as it is), no HTML may open.
    outside = re.sub(r"^(`{3,})[^\n]*\n.*?\n\1\n", "", text, flags=re.S | re.M)
    for raw in ("<script", "<img"):
        if raw in outside.lower():
            at = outside.lower().find(raw)
            raise Fail(f"{what}: raw {raw!r}: ...{outside[max(0, at - 200):at + 200]}...")
    return text


def paste_and_run(command, what):
    """Runs a "regenerate with" command as a user pasting it into a shell would (with `commsim` this build),
    in an empty directory: it must succeed and must not create anything there."""
    cwd = fresh("paste-" + what)
    script = 'commsim() { "%s" "$@"; }\n%s\n' % (ARGS.commsim, command)
    p = subprocess.run(["bash", "-c", script], cwd=cwd, capture_output=True, text=True, timeout=120)
    if p.returncode != 0:
        raise Fail(f"{what}: the pasted command failed ({p.returncode}):\n{command}\n{p.stderr[-3000:]}")
    made = os.listdir(cwd)
    if made:
        raise Fail(f"{what}: pasting the command created {made}:\n{command}")


def plant_measured(dst):
    """A commsim-measure output directory whose every free-form string field holds the payload."""
    shutil.copytree(src("validation/data/h200x4/measure/exchange_batched"), dst)
    path = os.path.join(dst, "results.json")
    with open(path) as f:
        doc = json.load(f)
    for key in ("command_line", "host", "date", "driver_version", "nvml", "tool"):
        doc[key] = PAYLOAD
    doc["nccl_env"][PAYLOAD] = PAYLOAD
    for g in doc.get("gpus", []):
        g["uuid"] = PAYLOAD
    with open(path, "w") as f:
        json.dump(doc, f)


def case_payloads_in_validate_reports():
    d = fresh("payload-validate")
    base = os.path.join(d, NAME_PAYLOAD)
    os.makedirs(base)
    t = copy_topology(base, NAME_PAYLOAD + ".topo")
    params = os.path.join(base, NAME_PAYLOAD + ".toml")
    shutil.copy(src("models/params/h200.toml"), params)
    log = os.path.join(base, NAME_PAYLOAD + ".log")
    shutil.copy(src("validation/data/h200x4/nccl-tests/sendrecv_g4_r1.log"), log)
    gpu_map = os.path.join(base, NAME_PAYLOAD + ".csv")
    shutil.copy(src("validation/data/h200x4/meta/gpus.csv"), gpu_map)
    measured = os.path.join(base, "m;touch PWNED;x")
    plant_measured(measured)
    outs = {k: os.path.join(base, NAME_PAYLOAD + ext) for k, ext in
            (("report", ".html"), ("markdown", ".md"), ("csv", ".out.csv"))}
    cmd = [ARGS.commsim, "validate", "--topology", t, "--gpu", "H200", "--params", params, "--gpu-map", gpu_map, "--nccl-tests", log,
           "--measured", measured, "--fit-note", PAYLOAD + "\n\n<b>second paragraph</b>", "--report",
           outs["report"], "--markdown", outs["markdown"], "--csv", outs["csv"]]
    rc, out, err = run(cmd, cwd=d, timeout=120)
    expect(rc, 0, out, err, "validate with payloads")
    page = check_html(outs["report"], "report")
    md = check_markdown(outs["markdown"], "markdown")
    if "PWNED" in os.listdir(d) or "PWNED" in os.listdir(base):
        raise Fail("something ran a payload")
    # The HTML and Markdown "regenerate" commands are the same, shell-quoted, and pasting either runs validate.
    m = re.search(r"Regenerate with <code>(.*?)</code>", page, flags=re.S)
    html_cmd = html.unescape(m.group(1))
    mm = re.search(r"Regenerate with:\n\n(`{3,})\n(.*?)\n\1\n", md, flags=re.S)
    if not mm:
        raise Fail("no regenerate block in the Markdown:\n" + md[:2000])
    if mm.group(2) != html_cmd:
        raise Fail(f"the two commands differ:\n{html_cmd}\n{mm.group(2)}")
    paste_and_run(mm.group(2), "validate")
    # The CSV reads back with the payload in the source column, one field.
    with open(outs["csv"], newline="") as f:
        rows = list(csv.reader(f))
    if any(len(r) != len(rows[0]) for r in rows):
        raise Fail("a CSV row has the wrong number of fields")

    # A manifest whose listed run and machine start carry the payload.
    with open(src("validation/data/h200x4/nccl-tests/manifest.csv"), newline="") as f:
        entries = list(csv.reader(f))
    header, first = entries[0], entries[1]
    shutil.copy(src("validation/data/h200x4/nccl-tests", first[0]), os.path.join(base, NAME_PAYLOAD + ".json"))
    first[0] = NAME_PAYLOAD + ".json"
    first[1] = PAYLOAD.replace(",", ";")
    manifest = os.path.join(base, NAME_PAYLOAD + ".manifest.csv")
    with open(manifest, "w", newline="") as f:
        csv.writer(f, lineterminator="\n").writerows([header, first])
    rc, out, err = run([ARGS.commsim, "validate", "--topology", t, "--gpu", "H200", "--manifest", manifest,
                        "--report", outs["report"], "--markdown", outs["markdown"]], cwd=d, timeout=120)
    expect(rc, 0, out, err, "validate --manifest with payloads")
    check_html(outs["report"], "report of a manifest")
    md = check_markdown(outs["markdown"], "markdown of a manifest")
    paste_and_run(re.search(r"Regenerate with:\n\n(`{3,})\n(.*?)\n\1\n", md, flags=re.S).group(2), "manifest")

    # Fields that commsim checks (names of workloads, modes, launches, GPUs): a payload there is refused with
    # exit 2 or 3, or, where it is free text, shown escaped. Either way no output holds it raw.
    def planted(what, edit):
        shutil.rmtree(measured)
        plant_measured(measured)
        path = os.path.join(measured, "results.json")
        with open(path) as f:
            doc = json.load(f)
        edit(doc)
        with open(path, "w") as f:
            json.dump(doc, f)
        for o in outs.values():
            if os.path.exists(o):
                os.remove(o)
        rc, out, err = run([ARGS.commsim, "validate", "--topology", t, "--gpu", "H200", "--measured", measured,
                            "--report", outs["report"], "--markdown", outs["markdown"]], cwd=d, timeout=120)
        print(f"payload in {what}: exit {rc} {err.strip().splitlines()[-1][:160] if rc else ''}")
        if rc not in (0, 2, 3):
            raise Fail(f"validate with a planted {what}: exit {rc}\n{err[-2000:]}")
        if rc == 0:
            check_html_raw(outs["report"], "report")
            check_markdown(outs["markdown"], "markdown")
        elif any(os.path.exists(o) for o in outs.values()):
            raise Fail("a refused input still wrote a report")

    for key in ("workload", "mode", "timing"):
        planted("rows[]." + key, lambda doc, key=key: [r.__setitem__(key, PAYLOAD) for r in doc["rows"]])
    for key in ("launch", "timing", "schema", "workload"):
        planted(key, lambda doc, key=key: doc.__setitem__(key, PAYLOAD))
    for key in ("name", "pci_bus_id"):
        planted("gpus[]." + key, lambda doc, key=key: [g.__setitem__(key, PAYLOAD) for g in doc["gpus"]])
    if "PWNED" in os.listdir(d) or "PWNED" in os.listdir(base):
        raise Fail("something ran a payload")


def case_payloads_in_sweep_summaries():
    d = fresh("payload-sweep")
    spec = os.path.join(d, "spec.toml")
    topo = copy_topology(d, NAME_PAYLOAD + ".topo")
    with open(spec, "w") as f:
        f.write('name = %s\n[grid]\ntopologies = [%s]\nworkloads = ["all_reduce", "sendrecv"]\nsizes = ["1KiB"]\n'
                'gpus = ["0-1"]\n' % (json.dumps(PAYLOAD), json.dumps(topo)))
    rc, out, err = run([ARGS.commsim, "sweep", spec, "--out", os.path.join(d, "whole"), "--jobs", "1"], cwd=d)
    expect(rc, 0, out, err, "sweep with payloads in its name and topology")
    check_html(os.path.join(d, "whole", "summary.html"), "sweep summary.html")
    shards = os.path.join(d, "shards")
    for k in ("0/2", "1/2"):
        rc, out, err = run([ARGS.commsim, "sweep", spec, "--shard", k, "--out", shards, "--jobs", "1"], cwd=d)
        expect(rc, 0, out, err, "sweep shard " + k)
    # Every string column of every shard row, and the sweep's name (in the sidecar metadata), hold the payload.
    for name in sorted(os.listdir(shards)):
        path = os.path.join(shards, name)
        if name.endswith(".meta.json"):
            with open(path) as f:
                meta = json.load(f)
            meta["name"] = PAYLOAD
            with open(path, "w") as f:
                json.dump(meta, f)
            continue
        with open(path, newline="") as f:
            rows = list(csv.reader(f))
        header = rows[0]
        cols = [header.index(c) for c in ("topology", "params", "nccl_env", "gpus", "workload", "algorithm",
                                           "protocol", "error")]
        for r in rows[1:]:
            for col in cols:
                r[col] = PAYLOAD
            # A row with an error is a failed point: its status says so and its time cells are empty.
            r[header.index("status")] = "failed"
            for c in ("time_us", "algbw_gbps", "busbw_gbps"):
                r[header.index(c)] = ""
        with open(path, "w", newline="") as f:
            csv.writer(f, lineterminator="\n").writerows(rows)
    rc, out, err = run([ARGS.commsim, "sweep", "merge", shards, "--out", os.path.join(d, "merged")], cwd=d)
    expect(rc, 0, out, err, "sweep merge of planted shards")
    page = check_html(os.path.join(d, "merged", "summary.html"), "merged summary.html")
    if page.count("&lt;script&gt;alert(1)") < 8:
        raise Fail("some planted shard field is missing from the merged summary")


def case_payloads_in_plot():
    d = fresh("payload-plot")
    tsv = os.path.join(d, NAME_PAYLOAD + ".tsv")
    shutil.copy(src("sim/tests/plot-a.tsv"), tsv)
    out = os.path.join(d, "plot.svg")
    rc, o, err = run([ARGS.commsim, "plot", tsv, "--x", "gpus", "--y", "user_s", "--title", PAYLOAD, "--x-label",
                      PAYLOAD, "--y-label", PAYLOAD, "--y-suffix", PAYLOAD, "-o", out], cwd=d)
    expect(rc, 0, o, err, "plot with payloads")
    check_html(out, "plot.svg")


CASES = {name[len("case_"):]: fn for name, fn in globals().items() if name.startswith("case_")}


def main():
    global ARGS
    ap = argparse.ArgumentParser(description=__doc__)
    ap.add_argument("--commsim", required=True)
    ap.add_argument("--measure", default="")
    ap.add_argument("--source-dir", required=True)
    ap.add_argument("--work", required=True)
    ap.add_argument("--case", default="")
    ARGS = ap.parse_args()
    if not ARGS.case:
        print("\n".join(CASES))
        return 0
    ARGS.work = os.path.abspath(ARGS.work)
    ARGS.source_dir = os.path.abspath(ARGS.source_dir)
    for attr in ("commsim", "measure"):  # the cases run in their own directories
        if os.sep in getattr(ARGS, attr):
            setattr(ARGS, attr, os.path.abspath(getattr(ARGS, attr)))
    os.makedirs(ARGS.work, exist_ok=True)
    try:
        CASES[ARGS.case]()
    except Fail as e:
        print(f"FAIL {ARGS.case}: {e}", file=sys.stderr)
        return 1
    print(f"ok {ARGS.case}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
