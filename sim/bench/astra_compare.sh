#!/usr/bin/env bash
# Side by side with ASTRA-sim 2.0's analytical backend (congestion unaware) on a 1 GiB all-reduce over 8, 1,024
# and 16,384 GPUs: wall time and peak memory of each simulator, and the ratio. Runs only where ASTRA-sim is
# present: ASTRA_SIM_ROOT must point at a built checkout (github.com/astra-sim/astra-sim, built with
# ./build/astra_analytical/build.sh); nothing of it is part of this repository.
#
# Not like-for-like: ASTRA-sim gets a 2-D approximation of the same HGX H100 cluster (a switch of 8 GPUs at
# 450 GB/s, then a switch over the machines at 50 GB/s per GPU: 8 NDR rails per machine), native ring
# all-reduce per dimension; commsim simulates the real fabric (NVSwitch, PCIe, NICs, rails, leaves, spines, 2:1
# core) and NCCL's tuner. The predicted times are printed for reference, not as a validation of either.
# Usage: ASTRA_SIM_ROOT=/path/to/astra-sim sim/bench/astra_compare.sh [COMMSIM] [GPUS...]
set -euo pipefail
cd "$(dirname "$0")/../.."
commsim=${1:-build/default/sim/commsim}
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(8 1024 16384)
root=${ASTRA_SIM_ROOT:-}
bin=$root/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware
gen=$root/examples/workload/microbenchmarks/generator_scripts/all_reduce.py
if [ -z "$root" ] || [ ! -x "$bin" ] || [ ! -f "$gen" ]; then
  echo "ASTRA-sim not found: set ASTRA_SIM_ROOT to a checkout built with build/astra_analytical/build.sh" >&2
  echo "(expects $bin and $gen)" >&2
  exit 0
fi
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| GPUs | commsim wall | commsim memory | commsim predicts | ASTRA-sim wall | ASTRA-sim memory | ASTRA-sim predicts | ASTRA-sim / commsim wall |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for gpus in "${sizes[@]}"; do
  nodes=$((gpus / 8))
  [ "$nodes" -ge 1 ] || { echo "GPUs must be a multiple of 8" >&2; exit 2; }
  # commsim: the same clusters as scaling.sh.
  topo=$tmp/n$nodes.toml
  printf '[[nodes]]\ncount = %d\npreset = "hgx-h100"\n[fabric]\nkind = "infiniband"\nrails = 8\nnodes_per_leaf = 32\nnodes_per_pod = 256\ncore_oversubscription = "2:1"\n' "$nodes" > "$topo"
  /usr/bin/time -f "%e %M" -o "$tmp/ctime" "$commsim" simulate all_reduce --topology "$topo" --gpus all \
    --min-bytes 1GiB --max-bytes 1GiB --iterations 1 --warmup 0 --format json > "$tmp/c.json"
  read -r cwall ckb < "$tmp/ctime"
  cpred=$(python3 -c "import json; print(json.load(open('$tmp/c.json'))['rows'][0]['time_us'])")
  # ASTRA-sim: one Chakra all-reduce node per NPU (its own generator), analytical congestion-unaware backend.
  mkdir -p "$tmp/et$gpus"
  (cd "$tmp/et$gpus" && PYTHONPATH=$root python3 "$gen" --npus-count "$gpus" --coll-size 1024 > /dev/null)
  et=$tmp/et$gpus/all_reduce/${gpus}npus_1024MB/all_reduce
  if [ "$nodes" -gt 1 ]; then
    printf 'topology: [ Switch, Switch ]\nnpus_count: [ 8, %d ]\nbandwidth: [ 450.0, 50.0 ]\nlatency: [ 250.0, 2500.0 ]\n' \
      "$nodes" > "$tmp/net.yml"
    impl='["ring", "ring"]'
  else
    printf 'topology: [ Switch ]\nnpus_count: [ 8 ]\nbandwidth: [ 450.0 ]\nlatency: [ 250.0 ]\n' > "$tmp/net.yml"
    impl='["ring"]'
  fi
  cat > "$tmp/sys.json" <<EOF
{"scheduling-policy": "LIFO", "endpoint-delay": 10, "active-chunks-per-dimension": 1,
 "preferred-dataset-splits": 4, "all-reduce-implementation": $impl, "all-gather-implementation": $impl,
 "reduce-scatter-implementation": $impl, "all-to-all-implementation": $impl,
 "collective-optimization": "localBWAware", "local-mem-bw": 1600, "boost-mode": 0}
EOF
  echo '{"memory-type": "NO_MEMORY_EXPANSION"}' > "$tmp/mem.json"
  /usr/bin/time -f "%e %M" -o "$tmp/atime" "$bin" --workload-configuration="$et" \
    --system-configuration="$tmp/sys.json" --network-configuration="$tmp/net.yml" \
    --remote-memory-configuration="$tmp/mem.json" > "$tmp/a.log" 2>&1
  read -r awall akb < "$tmp/atime"
  acycles=$(grep -o 'sys\[0\] finished, [0-9]* cycles' "$tmp/a.log" | grep -o '[0-9]* cycles' | grep -o '[0-9]*' || echo 0)
  ratio=$(python3 -c "print(f'{max($awall, 0.005) / max($cwall, 0.005):.1f}x')")
  printf '| %d | %.2f s | %d MB | %.0f us | %.2f s | %d MB | %.0f us | %s |\n' "$gpus" "$cwall" $((ckb / 1024)) \
    "$cpred" "$awall" $((akb / 1024)) "$(python3 -c "print($acycles / 1e3)")" "$ratio"
done
