#!/usr/bin/env bash
# Instructions per run of an engine_bench case, counted by callgrind: deterministic where wall time on a shared
# machine is not. The count is marginal between two run lengths (set-up and first-run costs cancel) and inclusive
# of Runtime::run, the Runtime's constructor and its destructor.
# Usage: sim/bench/instructions.sh [ENGINE_BENCH] [FILTER]
#   default: build/default/sim/engine_bench 'Contention.*bytes:1048576/reuse:0'
set -euo pipefail
cd "$(dirname "$0")/../.."
bench=${1:-build/default/sim/engine_bench}
filter=${2:-'Contention.*bytes:1048576/reuse:0'}
command -v valgrind > /dev/null || { echo "instructions.sh: valgrind is not installed" >&2; exit 2; }
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
# count MIN_TIME: "instructions runs" of the Runtime functions over one benchmark process.
count() {
  valgrind --tool=callgrind --callgrind-out-file="$tmp/cg" "$bench" --benchmark_filter="$filter" \
    --benchmark_min_time="$1" > /dev/null 2>&1
  callgrind_annotate --tree=calling "$tmp/cg" 2>/dev/null |
    grep -E '>   [^ ]*commsim::sim::Runtime::(run\(|Runtime\(|~Runtime)' |
    awk '{ gsub(",", "", $1); s += $1 } /Runtime::run\(/ { match($0, /\([0-9]+x\)/); n = substr($0, RSTART + 1, RLENGTH - 3) }
         END { print s, n }'
}
read -r s1 n1 < <(count 0.1)
read -r s2 n2 < <(count 0.6)
[ "$n2" -gt "$n1" ] || { echo "instructions.sh: no more runs in the longer measurement ($n1, $n2)" >&2; exit 1; }
echo "$filter: $(( (s2 - s1) / (n2 - n1) )) instructions a run (runs: $n1, $n2)"
