#!/usr/bin/env bash
# Wall and CPU time of one commsim command under several binaries, run alternately ROUNDS times each (on a
# shared machine the same binary's time varies 1.5-2x within minutes; alternating spreads that over all of
# them), printed as the minimum and median per binary.
# Usage: sim/bench/ab_time.sh ROUNDS "ARGS" BIN...
#   e.g. sim/bench/ab_time.sh 9 "simulate all_reduce --topology T.toml --gpus all -b 1GiB -e 1GiB" OLD NEW
set -euo pipefail
[ $# -ge 3 ] || { echo "usage: $0 ROUNDS \"ARGS\" BIN..." >&2; exit 2; }
rounds=$1
args=$2
shift 2
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
for _ in $(seq "$rounds"); do
  for b in "$@"; do
    # shellcheck disable=SC2086  # ARGS is a command line to split
    /usr/bin/time -f "%e %U %S" -o "$tmp/t" "$b" $args > /dev/null 2> "$tmp/err" ||
      { echo "$b failed:" >&2; cat "$tmp/err" >&2; exit 1; }
    echo "$b $(cat "$tmp/t")" >> "$tmp/all"
  done
done
python3 - "$tmp/all" <<'PY'
import collections, statistics, sys
runs = collections.defaultdict(list)
for line in open(sys.argv[1]):
    b, wall, user, system = line.split()
    runs[b].append((float(wall), float(user), float(system)))
for b, v in runs.items():
    wall = [x[0] for x in v]
    user = [x[1] for x in v]
    print(f"{b}: wall min {min(wall):.2f} s, median {statistics.median(wall):.2f} s | user min {min(user):.2f} s, "
          f"median {statistics.median(user):.2f} s ({len(v)} runs)")
PY
