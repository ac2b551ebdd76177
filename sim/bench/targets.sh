#!/usr/bin/env bash
# The large-cluster speed targets of issue 17: one end-to-end run of each case with /usr/bin/time, printed as a
# Markdown table of wall time, user and system CPU, peak memory (max RSS), engine events and flows against the
# target. System time is mostly the kernel zeroing first-touched memory; on a VM it varies several-fold from run
# to run for the same work, so it is printed apart from the simulator's own (user) time.
# Usage: sim/bench/targets.sh [COMMSIM] [CASE...]   (cases: alltoall-1k ws-16k ws-1k ar-16k ws1-1k; default all)
set -euo pipefail
cd "$(dirname "$0")/../.."
commsim=${1:-build/default/sim/commsim}
shift || true
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(alltoall-1k ws-16k ws-1k ar-16k ws1-1k)
k128=topologies/library/whatif/hgx-h100-128nodes-ndr.toml
k2048=topologies/library/whatif/hgx-h100-2048nodes-ndr.toml
one=(--iterations 1 --warmup 0)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| case | GPUs | wall | user CPU | system CPU | peak memory | engine events | flows | target |"
echo "| --- | ---: | ---: | ---: | ---: | ---: | ---: | ---: | --- |"
for c in "${cases[@]}"; do
  case $c in
    alltoall-1k)
      name="alltoall 1 GiB"; gpus=1024; target="<= 3 s, <= 300 MB"
      args=(alltoall --topology $k128 --gpus all --min-bytes 1GiB --max-bytes 1GiB "${one[@]}") ;;
    ws-16k)
      name="weight-sync qwen2.5-32b, 8 -> 16,376"; gpus=16384; target="<= 8 s, <= 1 GB"
      args=(weight-sync --topology $k2048 --model qwen2.5-32b --from 0-7 --to 8-16383 --method broadcast) ;;
    ws-1k)
      name="weight-sync qwen2.5-32b, 8 -> 1,016"; gpus=1024; target="<= 0.5 s"
      args=(weight-sync --topology $k128 --model qwen2.5-32b --from 0-7 --to 8-1023 --method broadcast) ;;
    ws1-1k)
      name="weight-sync qwen2.5-32b, 1 -> 1,023"; gpus=1024; target=""
      args=(weight-sync --topology $k128 --model qwen2.5-32b --from 0 --to 1-1023 --method broadcast) ;;
    ar-16k)
      name="all_reduce 1 GiB"; gpus=16384; target="<= 1 s"
      args=(all_reduce --topology $k2048 --gpus all --min-bytes 1GiB --max-bytes 1GiB "${one[@]}") ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
  esac
  /usr/bin/time -f "%e %U %S %M" -o "$tmp/time" "$commsim" simulate "${args[@]}" --format json > "$tmp/out.json"
  read -r wall user sys kb < "$tmp/time"
  read -r events flows < <(python3 -c "
import json
d=json.load(open('$tmp/out.json'))
print(d['engine_events'], d['engine_flows'])")
  # max RSS: KiB from time(1); printed in MiB and in MB (10^6 bytes), the unit of the issue's targets
  printf '| %s | %d | %.2f s | %.2f s | %.2f s | %d MiB (%d MB) | %d | %d | %s |\n' "$name" "$gpus" "$wall" "$user" "$sys" \
    $((kb / 1024)) $((kb * 1024 / 1000000)) "$events" "$flows" "$target"
done
