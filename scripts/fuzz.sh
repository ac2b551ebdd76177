#!/usr/bin/env bash
# Fuzz one parser for a given time: scripts/fuzz.sh TARGET SECONDS
#   TARGET: fuzz_topo_matrix | fuzz_nvlink_status | fuzz_whatif
# Builds the `fuzz` preset with clang, seeds the corpus from the bundled topologies and test fixtures, and
# leaves crashes in fuzz-out/TARGET/ (reproduce with: build/fuzz/topologies/fuzz/TARGET fuzz-out/TARGET/crash-*).
set -euo pipefail
cd "$(dirname "$0")/.."
target=${1:?usage: scripts/fuzz.sh TARGET SECONDS}
seconds=${2:?usage: scripts/fuzz.sh TARGET SECONDS}
cmake --preset fuzz >/dev/null
cmake --build --preset fuzz --target "$target"
out=fuzz-out/$target
mkdir -p "$out/corpus" "$out/seeds"
case $target in
  fuzz_topo_matrix) cp topologies/library/real/*.topo topologies/tests/fixtures/bad/*.topo "$out/seeds/" ;;
  fuzz_nvlink_status) cp topologies/library/real/*.nvlink topologies/tests/fixtures/bad/*.nvlink "$out/seeds/" 2>/dev/null || true ;;
  fuzz_whatif) cp topologies/library/whatif/*.toml topologies/tests/fixtures/bad/*.toml "$out/seeds/" ;;
  *) echo "unknown target $target" >&2; exit 2 ;;
esac
"build/fuzz/topologies/fuzz/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 -max_len=16384 \
  -artifact_prefix="$out/" -print_final_stats=1 "$out/corpus" "$out/seeds" 2>&1 | tee "$out/log.txt" | grep -E "^#[0-9]+.*(DONE|pulse)|ERROR|SUMMARY|stat::" || true
found=$(find "$out" -maxdepth 1 -type f \( -name 'crash-*' -o -name 'timeout-*' -o -name 'leak-*' -o -name 'oom-*' \))
if [ -n "$found" ]; then
  echo "fuzz: $target found problems (the log is $out/log.txt):"; echo "$found"; exit 1
fi
echo "fuzz: $target ran ${seconds}s with no crash"
