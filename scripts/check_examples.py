#!/usr/bin/env python3
"""Runs every example command that commsim's --help texts and the READMEs' code blocks show, and checks its exit.

Usage: scripts/check_examples.py COMMSIM [--measure COMMSIM_MEASURE] [--list] [--only SUBSTRING]

Examples come from two places: the EXAMPLE(S) sections of `commsim --help` (and `commsim-measure --help`, when
--measure names a built one) and of every subcommand's --help (found by walking the Subcommands lists), and the
```sh code blocks of every tracked README*.md whose lines invoke `commsim` or `commsim-measure` (continuation
lines joined). commsim-measure examples run only with --dry-run (no GPU here); the others are listed as skipped. Each runs from a scratch copy of the repository made of links to its files,
so relative inputs resolve and outputs (--out DIR, -o FILE) land in scratch. An example passes when it
exits 0, or the code EXPECTED_CODES gives for it. Examples that cannot run here are listed as skipped, with the
reason (SKIPS). Exit status: 0 all ran as documented, 1 some failed, 2 usage.
"""
import os
import re
import shlex
import shutil
import subprocess
import sys
import tempfile
import time

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))

# Placeholders of the help texts, replaced by a real file so the example runs.
SUBSTITUTIONS = [
    (r"(--topology|--baseline-topology) (T\.topo|T|FILE|my-node\.topo)(?=\s|$)",
     r"\1 topologies/library/real/h200x4.topo"),
    (r"^commsim topo show my-node\.topo", "commsim topo show topologies/library/real/h200x4.topo"),
]

# (substring of the example, reason): examples that cannot run in a test, and why. The first match wins.
SKIPS = [
    ("sbatch ", "needs a Slurm cluster"),
    ("mpirun ", "needs an MPI launch"),
    ("srun ", "needs a Slurm cluster"),
    ("...", "elided flags ('...'): a template, not a command"),
    ("|", "lists alternatives (a|b): a template, not a command"),
    ("SPEC.toml", "placeholder spec file"),
    ("spec.toml", "placeholder spec file"),
    ("LOG", "placeholder log file"),
    ("A.tsv", "placeholder data files"),
    ("<", "placeholder in angle brackets"),
    ("sweep merge shards", "merges the shard files that the launcher examples before it write"),
    ("DIR", "placeholder directory"),
    ("BEFORE.toml", "placeholder parameter file"),
    ("/shared/", "a cluster's shared file system"),
    ("--cross-validate", "slow (about 140 s on 2 cores): the held-out figures, checked by validation.accuracy"),
    ("make_report.sh", "regenerates committed reports (validation.report tests cover it)"),
]

# (substring, exit code): examples documented to end with a code other than 0.
EXPECTED_CODES = [
    ("sweep sim/tests/sweep-fails.toml", 6),
]


def help_examples(commsim, tool="commsim"):
    """Every `commsim ...` line in the EXAMPLE(S) sections of every --help, with the command that printed it."""
    out = []
    seen = set()
    todo = [[]]
    while todo:
        path = todo.pop(0)
        if tuple(path) in seen:
            continue
        seen.add(tuple(path))
        r = subprocess.run([commsim, *path, "--help"], capture_output=True, text=True, cwd=ROOT)
        if r.returncode != 0:
            out.append((tool + " " + " ".join(path) + " --help", tool + " " + " ".join(path) + " --help"))
            continue
        section = None
        for line in r.stdout.splitlines():
            stripped = line.strip()
            if re.match(r"^[A-Z][A-Z ()]+:?$", stripped) or stripped in ("Subcommands:", "Options:"):
                section = stripped.rstrip(":").upper()
                continue
            if section == "SUBCOMMANDS":
                m = re.match(r"^ {1,4}([a-z][a-z0-9_-]*)(\s{2,}|$)", line)  # not wrapped description lines
                if m:
                    todo.append(path + [m.group(1)])
            elif section in ("EXAMPLE", "EXAMPLES") and stripped.startswith(tool + " "):
                cmd = stripped
                # Help lines end with a description after two or more spaces.
                cmd = re.split(r"\s{2,}", cmd)[0]
                cmd = cmd.split("  #")[0].split(" # ")[0].strip()
                out.append((cmd, tool + " " + " ".join(path) + " --help"))
            elif section in ("EXAMPLE", "EXAMPLES") and out and line.startswith("    ") and \
                    out[-1][0].endswith("\\"):
                out[-1] = (out[-1][0][:-1].rstrip() + " " + stripped, out[-1][1])
    return out


def readme_examples():
    """Every line of a ```sh / ```bash / ``` block of a tracked README*.md that starts with `commsim`."""
    files = subprocess.run(["git", "ls-files", "*README*.md"], capture_output=True, text=True,
                           cwd=ROOT).stdout.split()
    out = []
    for f in files:
        lines = open(os.path.join(ROOT, f), encoding="utf-8").read().splitlines()
        in_block = False
        i = 0
        while i < len(lines):
            line = lines[i]
            if line.strip().startswith("```"):
                in_block = not in_block
                i += 1
                continue
            if in_block:
                text = line.strip()
                if text.startswith("$ "):
                    text = text[2:]
                start = i
                # Continuations: a trailing backslash, or (in usage summaries) an indented next line.
                while i + 1 < len(lines) and (text.endswith("\\") or (
                        lines[i + 1].startswith((" ", "\t")) and lines[i + 1].strip() and
                        not lines[i + 1].strip().startswith("```") and
                        not re.match(r"^[a-z]+:", lines[i + 1].strip()))):  # "common: ..." describes, not continues
                    i += 1
                    text = text.rstrip("\\").rstrip() + " " + lines[i].strip()
                if re.match(r"^(\./)?(build/[a-z]+/(sim|measure)/)?commsim(-measure)? ", text):
                    text = re.sub(r"^(\./)?(build/[a-z]+/(sim|measure)/)?commsim", "commsim", text)
                    text = text.split("  #")[0].split(" # ")[0].strip()
                    text = re.sub(r"\s{2,}\([^()]*\)$", "", text)  # a trailing description in parentheses
                    out.append((text, "%s:%d" % (f, start + 1)))
            i += 1
    return out


def main():
    args = sys.argv[1:]
    if not args:
        print(__doc__, file=sys.stderr)
        return 2
    commsim = os.path.abspath(args[0])
    only = None
    if "--only" in args:
        only = args[args.index("--only") + 1]
    measure = None
    if "--measure" in args:
        measure = os.path.abspath(args[args.index("--measure") + 1])
        if not os.path.exists(measure):
            measure = None  # not built (no CUDA or NCCL at configure time)
    examples = help_examples(commsim) + (help_examples(measure, "commsim-measure") if measure else [])
    examples += readme_examples()
    scratch = tempfile.mkdtemp(prefix="commsim-examples-")
    # A tree of real directories and linked files: inputs resolve, and an output written over a repository file
    # (write_file_atomic renames a new file into place) replaces the link in scratch, never the file.
    for name in os.listdir(ROOT):
        if name.startswith(".") or name == "build":
            continue
        src = os.path.join(ROOT, name)
        if os.path.isdir(src):
            subprocess.run(["cp", "-rs", src, os.path.join(scratch, name)], check=True)
        else:
            os.symlink(src, os.path.join(scratch, name))
    bindir = os.path.join(scratch, ".bin")
    os.mkdir(bindir)
    os.symlink(commsim, os.path.join(bindir, "commsim"))
    if measure:
        os.symlink(measure, os.path.join(bindir, "commsim-measure"))
    env = dict(os.environ, PATH=bindir + os.pathsep + os.environ.get("PATH", ""),
               D="validation/data/h200x4")  # models/README.md: "Reproduce ... with (D=validation/data/h200x4)"
    failed, ran, skipped = [], 0, []
    done = set()
    try:
        for cmd, source in examples:
            for pattern, repl in SUBSTITUTIONS:
                cmd = re.sub(pattern, repl, cmd)
            if only and only not in cmd:
                continue
            # A pipe into another tool (`... --format dot | dot -Tsvg`): the commsim part is the example.
            cmd = re.split(r" \| (?=dot |jq |head |grep |less )", cmd)[0]
            # Optional parts of a usage line ([--root R], 0[-7]) are left out: what remains must run.
            while re.search(r"\[[^\[\]]*\]", cmd):
                cmd = re.sub(r"\s*\[[^\[\]]*\]", "", cmd)
            if cmd in done:
                continue
            done.add(cmd)
            reason = None
            if cmd.startswith("commsim-measure"):
                if not measure:
                    reason = "commsim-measure is not built here (it needs CUDA and NCCL at configure time)"
                elif "--dry-run" not in cmd:
                    reason = "needs GPUs (commsim-measure runs NCCL on real devices; only --dry-run runs here)"
            reason = reason or next((why for key, why in SKIPS if key in cmd), None)
            if not reason:
                try:
                    tokens = shlex.split(cmd)
                except ValueError:
                    tokens = cmd.split()
                placeholder = [t for t in tokens[1:] if re.fullmatch(r"[A-Z][A-Z_]*[A-Z](\.[a-z]+)?", t)]
                if placeholder:
                    reason = "placeholder %s: a template, not a command" % placeholder[0]
            if reason:
                skipped.append((cmd, source, reason))
                continue
            if "--list" in args:
                print("would run: %s   (%s)" % (cmd, source))
                continue
            expected = next((code for key, code in EXPECTED_CODES if key in cmd), 0)
            t0 = time.time()
            try:
                # Through bash: the READMEs use brace expansion and globs.
                r = subprocess.run(["bash", "-c", cmd], capture_output=True, text=True, cwd=scratch, env=env,
                                   timeout=600)
                code, err = r.returncode, r.stderr
            except subprocess.TimeoutExpired:
                code, err = "timeout", ""
            ran += 1
            status = "ok" if code == expected else "FAILED"
            print("%-6s %5.1fs  exit %s  %s   (%s)" % (status, time.time() - t0, code, cmd, source))
            if code != expected:
                failed.append((cmd, source, code, expected, err.strip().splitlines()[-3:]))
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    for cmd, source, reason in skipped:
        print("skipped  %s   (%s): %s" % (cmd, source, reason))
    print("%d example(s) ran, %d skipped, %d failed" % (ran, len(skipped), len(failed)))
    for cmd, source, code, expected, err in failed:
        print("FAILED: %s (%s): exit %s, documented %s" % (cmd, source, code, expected), file=sys.stderr)
        for line in err:
            print("    " + line, file=sys.stderr)
    return 1 if failed else 0


if __name__ == "__main__":
    sys.exit(main())
