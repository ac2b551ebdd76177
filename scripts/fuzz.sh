#!/usr/bin/env bash
# Fuzz one reader for a given CPU time: scripts/fuzz.sh TARGET SECONDS
#   TARGET: fuzz_topo_matrix | fuzz_nvlink_status | fuzz_whatif           (topologies/fuzz/)
#           fuzz_nccl_tests_text | fuzz_nccl_tests_json | fuzz_measured_results | fuzz_resume_store |
#           fuzz_params | fuzz_sweep_spec                                  (validation/fuzz/)
#   FUZZ_NICE=N runs the fuzzer under `nice -n N` (default 0); FUZZ_NO_BUILD=1 skips building it;
#   FUZZ_TIMEOUT=S: an input running S wall seconds is a hang (default 10; raise it under nice on a busy machine,
#   where a unit of 0.5 CPU s can take 20 wall s).
# Builds the `fuzz` preset with clang, seeds the corpus from the bundled topologies and test fixtures (the
# validation targets from validation/fuzz/corpus/TARGET/), and leaves crashes in fuzz-out/TARGET/ (reproduce
# with: build/fuzz/<folder>/fuzz/TARGET fuzz-out/TARGET/crash-*).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
if [ "${FUZZ_NO_BUILD:-0}" != 1 ]; then  # FUZZ_NO_BUILD=1: the target is built already (another build runs)
  cmake --preset fuzz >/dev/null
  cmake --build --preset fuzz --target "$target"
fi
out=fuzz-out/$target
mkdir -p "$out/corpus" "$out/seeds"
bin=build/fuzz/topologies/fuzz/$target
case $target in
  fuzz_topo_matrix) cp topologies/library/real/*.topo topologies/tests/fixtures/bad/*.topo "$out/seeds/" ;;
  fuzz_nvlink_status) cp topologies/library/real/*.nvlink topologies/tests/fixtures/bad/*.nvlink "$out/seeds/" 2>/dev/null || true ;;
  fuzz_whatif) cp topologies/library/whatif/*.toml topologies/tests/fixtures/bad/*.toml "$out/seeds/" ;;
  fuzz_nccl_tests_text | fuzz_nccl_tests_json | fuzz_measured_results | fuzz_resume_store | fuzz_params | fuzz_sweep_spec)
    bin=build/fuzz/validation/fuzz/$target
    cp "validation/fuzz/corpus/$target"/* "$out/seeds/" ;;
  *) echo "unknown target $target" >&2; exit 2 ;;
esac
# Large inputs are allowed (-max_len 1 MiB): the readers' own limits (core/limits.hpp) are what is tested.
# The run goes in slices of at most FUZZ_SLICE wall seconds (default 300), each resuming from the corpus, until the
# fuzzer has used SECONDS of CPU time (user + sys, measured by /usr/bin/time): on a shared machine a wall-clock
# limit says little about how much fuzzing was done. FUZZ_WALL=1 makes SECONDS wall time instead (one slice);
# FUZZ_MAX_WALL=N stops after the slice that passes N wall seconds even if SECONDS of CPU were not reached.
: > "$out/log.txt"
cpu=0 wall=0 execs=0
while :; do
  slice=${FUZZ_SLICE:-300}
  if [ "${FUZZ_WALL:-0}" = 1 ]; then slice=$seconds; fi
  nice -n "${FUZZ_NICE:-0}" /usr/bin/time -f "%U %S %e" -o "$out/time.txt" \
    "$bin" -max_total_time="$slice" -timeout="${FUZZ_TIMEOUT:-10}" -rss_limit_mb=2048 -max_len=1048576 -artifact_prefix="$out/" \
    -print_final_stats=1 "$out/corpus" "$out/seeds" > "$out/slice.txt" 2>&1 || true
  cat "$out/slice.txt" >> "$out/log.txt"
  grep -E "^#[0-9]+.*DONE|ERROR|SUMMARY" "$out/slice.txt" || true
  read -r user sys elapsed < <(tail -1 "$out/time.txt")
  cpu=$(awk -v a="$cpu" -v u="$user" -v s="$sys" 'BEGIN { printf "%.1f", a + u + s }')
  wall=$(awk -v a="$wall" -v e="$elapsed" 'BEGIN { printf "%.1f", a + e }')
  n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$out/slice.txt" | tail -1)
  execs=$((execs + ${n:-0}))
  cov=$(grep -E "^#[0-9]+" "$out/slice.txt" | tail -1 | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/\1 \/ \2/p')
  echo "fuzz: $target: ${cpu} CPU s, ${wall} wall s, ${execs} executions, coverage (edges / features) ${cov:-?}"
  if [ "${FUZZ_WALL:-0}" = 1 ] || awk -v c="$cpu" -v t="$seconds" 'BEGIN { exit !(c >= t) }'; then break; fi
  if [ -n "${FUZZ_MAX_WALL:-}" ] && awk -v w="$wall" -v m="$FUZZ_MAX_WALL" 'BEGIN { exit !(w >= m) }'; then
    echo "fuzz: $target: stopped at FUZZ_MAX_WALL=${FUZZ_MAX_WALL} wall s before reaching ${seconds} CPU s"; break
  fi
  if find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'leak-*' -o -name 'oom-*' \) | grep -q .; then break; fi
done
found=$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'leak-*' -o -name 'oom-*' \))
if [ -n "$found" ]; then
  echo "fuzz: $target found problems (the log is $out/log.txt):"; echo "$found"; exit 1
fi
echo "fuzz: $target ran ${cpu} CPU s (${wall} wall s, ${execs} executions) with no crash"
