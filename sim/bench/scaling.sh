#!/usr/bin/env bash
# How wall time and memory grow with cluster size: one simulation per size of HGX H100 clusters on the bundled
# 16,384-GPU fabric (8 NDR rails, 32 nodes per leaf, pods of 256 nodes, 2:1 at the core), from 1 to 2,048 nodes.
# Prints a Markdown table, writes the points to OUT.tsv next to OUT.svg, and an SVG log-log plot of user CPU time
# against GPUs (`commsim plot`, which also draws several workloads' TSVs on one plot: sim/README.md, Speed).
# Usage: sim/bench/scaling.sh [COMMSIM] [OUT.svg] [WORKLOAD] [MAX_GPUS]
#   WORKLOAD: all_reduce (default; 1 GiB over every GPU), alltoall (1 GiB over every GPU) or weight-sync
#   (qwen2.5-32b from GPUs 0-7 to every other GPU). MAX_GPUS: largest cluster (default 16384; an all-to-all
#   moves n^2 flows, so 2048 is its practical top on a 2-core machine with 23 GB).
set -euo pipefail
cd "$(dirname "$0")/../.."
commsim=${1:-build/default/sim/commsim}
svg=${2:-sim/bench/scaling.svg}
workload=${3:-all_reduce}
max_gpus=${4:-16384}
tsv=${svg%.svg}.tsv
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| nodes | GPUs | simulated time | wall | user CPU | peak memory | engine events | flows |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
printf 'gpus\twall_s\tuser_s\tpeak_mb\tevents\tflows\n' > "$tsv"
for nodes in 1 2 4 8 16 32 64 128 256 512 1024 2048; do
  gpus=$((nodes * 8))
  [ "$gpus" -le "$max_gpus" ] || continue
  topo=$tmp/n$nodes.toml
  printf '[[nodes]]\ncount = %d\npreset = "hgx-h100"\n[fabric]\nkind = "infiniband"\nrails = 8\nnodes_per_leaf = 32\nnodes_per_pod = 256\ncore_oversubscription = "2:1"\n' "$nodes" > "$topo"
  case $workload in
    weight-sync)
      [ "$gpus" -ge 16 ] || continue
      args=(weight-sync --model qwen2.5-32b --from 0-7 --to "8-$((gpus - 1))" --method broadcast) ;;
    alltoall) args=(alltoall --gpus all --min-bytes 1GiB --max-bytes 1GiB --iterations 1 --warmup 0) ;;
    *) args=(all_reduce --gpus all --min-bytes 1GiB --max-bytes 1GiB --iterations 1 --warmup 0) ;;
  esac
  /usr/bin/time -f "%e %U %M" -o "$tmp/time" "$commsim" simulate "${args[@]}" --topology "$topo" --format json \
    > "$tmp/out.json"
  read -r wall user kb < "$tmp/time"
  read -r sim events flows < <(python3 -c "
import json,sys
d=json.load(open('$tmp/out.json'))
if d['workload']=='weight-sync':
    t=[r['time_us'] for r in d['rows'] if r['timing']=='total_transfer_time'][0]/1e6
else:
    t=d['rows'][0]['time_us']/1e6
print(t, d['engine_events'], d['engine_flows'])")
  printf '| %d | %d | %.4f s | %.2f s | %.2f s | %d MB | %d | %d |\n' "$nodes" "$gpus" "$sim" "$wall" "$user" \
    $((kb / 1024)) "$events" "$flows"
  printf '%d\t%s\t%s\t%d\t%d\t%d\n' "$gpus" "$wall" "$user" $((kb / 1024)) "$events" "$flows" >> "$tsv"
done
# user CPU time is what the simulation itself costs (on a shared machine wall time also counts waiting for a
# core); a time that rounds to 0.00 s is drawn at 0.01 s, the log axis' floor.
"$commsim" plot "$tsv" --x gpus --y user_s --y-floor 0.01 --x-ticks powers-of-two --y-suffix ' s' \
  --label "$workload" --title "commsim user CPU time, $workload, HGX H100 clusters (log-log)" --x-label GPUs \
  --y-label "user CPU time" -o "$svg"
echo "plot: $svg, points: $tsv"
