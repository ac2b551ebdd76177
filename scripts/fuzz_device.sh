#!/usr/bin/env bash
# Fuzzing campaign on a many-core machine (the device machine's 16 CPU cores), from prebuilt fuzz binaries:
#   scripts/fuzz_device.sh TARBALL SECONDS_PER_PROCESS PROCESSES_PER_TARGET OUTDIR [BUILT_IN]
# TARBALL holds fz/bin/<target> (built with the `fuzz` preset: libFuzzer + ASan + UBSan, -fno-sanitize-recover),
# fz/lib/ (their shared libraries) and fz/corpus/<target>/ (validation/fuzz/corpus). Every target runs
# PROCESSES_PER_TARGET fuzzers at once on one shared corpus, each for SECONDS_PER_PROCESS wall seconds on a
# core of its own; CPU seconds are measured per process (bash `time`, user + sys). Logs, crash reproducers
# and a summary (OUTDIR/summary.csv: target, process, cpu_s, wall_s, executions, edges, features) go to OUTDIR.
# BUILT_IN: the source directory the binaries were built in (their COMMSIM_SOURCE_DIR): the validation targets
# load topologies/library/real/h200x4.topo from there, so it is linked to this checkout when it is absent (without
# it they would only parse, never reach the comparison with the simulator).
set -u
tarball=${1:?tarball} seconds=${2:?seconds} per=${3:?processes per target} out=${4:?outdir} built_in=${5:-}
if [ -n "$built_in" ] && [ ! -e "$built_in/topologies/library/real/h200x4.topo" ]; then
  mkdir -p "$(dirname "$built_in")" && ln -s "$PWD" "$built_in"
fi
work=$(mktemp -d)
tar xJf "$tarball" -C "$work"
export LD_LIBRARY_PATH=$work/fz/lib:${LD_LIBRARY_PATH:-}
mkdir -p "$out"
seeds_of() {  # the seed directories of one target
  case $1 in
    fuzz_topo_matrix) echo "topologies/library/real topologies/tests/fixtures/bad" ;;
    fuzz_nvlink_status) echo "topologies/library/real" ;;
    fuzz_whatif) echo "topologies/library/whatif topologies/tests/fixtures/bad" ;;
    *) echo "$work/fz/corpus/$1" ;;
  esac
}
TIMEFORMAT="%U %S %R"
for bin in "$work"/fz/bin/fuzz_*; do
  case ${FUZZ_ONLY:-all} in all) ;; *) case " $FUZZ_ONLY " in *" $(basename "$bin") "*) ;; *) continue ;; esac ;; esac
  t=$(basename "$bin")
  mkdir -p "$out/$t/corpus"
  for p in $(seq 1 "$per"); do
    ( { time "$bin" -max_total_time="$seconds" -timeout=25 -rss_limit_mb=2048 -max_len=1048576 \
          -artifact_prefix="$out/$t/" -print_final_stats=1 "$out/$t/corpus" $(seeds_of "$t") \
          > "$out/$t/log.$p.txt" 2>&1 ; } 2> "$out/$t/time.$p.txt" ) &
  done
done
wait
echo "target,process,cpu_s,wall_s,executions,edges,features" > "$out/summary.csv"
for d in "$out"/fuzz_*; do
  t=$(basename "$d")
  for log in "$d"/log.*.txt; do
    p=${log##*/log.}; p=${p%.txt}
    read -r u s r < <(tail -1 "$d/time.$p.txt")
    n=$(sed -n 's/^stat::number_of_executed_units: *//p' "$log" | tail -1)
    cov=$(grep -E "^#[0-9]+" "$log" | tail -1 | sed -n 's/.*cov: \([0-9]*\) ft: \([0-9]*\).*/\1,\2/p')
    echo "$t,$p,$(awk -v u="$u" -v s="$s" 'BEGIN{printf "%.1f", u+s}'),$r,${n:-0},${cov:-,}" >> "$out/summary.csv"
  done
done
rm -rf "$out"/fuzz_*/corpus  # the grown corpora stay on the machine; logs, summary and reproducers come back
ls "$out"/fuzz_*/ | grep -E "crash-|timeout-|leak-|oom-" && echo "fuzz_device: problems found" || echo "fuzz_device: no crash, hang, leak or OOM"
