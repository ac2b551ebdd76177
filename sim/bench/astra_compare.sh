#!/usr/bin/env bash
# Side by side with ASTRA-sim 2.0's analytical backend (congestion unaware) on a 1 GiB all-reduce over 8, 1,024
# and 16,384 GPUs: wall time, user CPU time and peak memory of each simulator, the predicted times, the ratios, and
# the machine's 1-minute load average before each row (the timings are only as good as the machine is idle).
# Runs only where ASTRA-sim is present: ASTRA_SIM_ROOT must point at a built checkout (github.com/astra-sim/astra-sim
# with its submodules, built with build/astra_analytical/build.sh -t congestion_unaware or the same steps by hand);
# nothing of it is part of this repository. ASTRA_SIM_PYTHON names a Python 3 that has the protobuf module (ASTRA-sim's
# trace generator imports chakra's et_def_pb2; default python3).
#
# Not like-for-like: ASTRA-sim gets a 2-D approximation of the same HGX H100 cluster (a switch of 8 GPUs at
# 450 GB/s, then a switch over the machines at 50 GB/s per GPU: 8 NDR rails per machine), native ring
# all-reduce per dimension; commsim simulates the real fabric (NVSwitch, PCIe, NICs, rails, leaves, spines, 2:1
# core) and NCCL's tuner. The predicted times are printed for reference, not as a validation of either.
# ASTRA_SIM_TIMEOUT=SECONDS stops an ASTRA-sim run after that much wall time; its row then gives lower bounds
# (">") measured up to the stop, and no ASTRA-sim prediction.
# Exit status: 0 (also when ASTRA-sim is absent: it says so), 2 usage, 6 when either simulator failed.
# Usage: ASTRA_SIM_ROOT=/path/to/astra-sim sim/bench/astra_compare.sh [COMMSIM] [GPUS...]
set -euo pipefail
cd "$(dirname "$0")/../.."
commsim=$(realpath "${1:-build/default/sim/commsim}")
shift || true
sizes=("$@")
[ ${#sizes[@]} -gt 0 ] || sizes=(8 1024 16384)
root=${ASTRA_SIM_ROOT:+$(realpath "$ASTRA_SIM_ROOT")}
py=${ASTRA_SIM_PYTHON:-python3}
limit=${ASTRA_SIM_TIMEOUT:-0}
[[ $limit =~ ^[0-9]+$ ]] || { echo "ASTRA_SIM_TIMEOUT must be whole seconds (got '$limit')" >&2; exit 2; }
bin=$root/build/astra_analytical/build/bin/AstraSim_Analytical_Congestion_Unaware
gen=$root/examples/workload/microbenchmarks/generator_scripts/all_reduce.py
if [ -z "$root" ] || [ ! -x "$bin" ] || [ ! -f "$gen" ]; then
  echo "ASTRA-sim not found: set ASTRA_SIM_ROOT to a checkout built with build/astra_analytical/build.sh" >&2
  echo "(expects $bin and $gen)" >&2
  exit 0
fi
"$py" -c 'import google.protobuf' 2> /dev/null || {
  echo "$py cannot import google.protobuf (ASTRA-sim's trace generator needs it): set ASTRA_SIM_PYTHON" >&2
  exit 2
}
for gpus in "${sizes[@]}"; do
  if ! [[ $gpus =~ ^[0-9]+$ ]] || [ "$gpus" -lt 8 ] || [ $((gpus % 8)) -ne 0 ]; then
    echo "GPUs must be a multiple of 8 (got '$gpus')" >&2
    exit 2
  fi
done
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT
echo "| GPUs | load | commsim wall | commsim user CPU | commsim memory | commsim predicts | ASTRA-sim wall | ASTRA-sim user CPU | ASTRA-sim memory | ASTRA-sim predicts | ASTRA-sim / commsim wall | ASTRA-sim / commsim user CPU |"
echo "| ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: | ---: |"
for gpus in "${sizes[@]}"; do
  nodes=$((gpus / 8))
  read -r load _ < /proc/loadavg
  # commsim: the same clusters as scaling.sh.
  topo=$tmp/n$nodes.toml
  printf '[[nodes]]\ncount = %d\npreset = "hgx-h100"\n[fabric]\nkind = "infiniband"\nrails = 8\nnodes_per_leaf = 32\nnodes_per_pod = 256\ncore_oversubscription = "2:1"\n' "$nodes" > "$topo"
  /usr/bin/time -f "%e %U %M" -o "$tmp/ctime" "$commsim" simulate all_reduce --topology "$topo" --gpus all \
    --min-bytes 1GiB --max-bytes 1GiB --iterations 1 --warmup 0 --format json > "$tmp/c.json" || {
    echo "commsim failed at $gpus GPUs" >&2
    exit 6
  }
  read -r cwall cuser ckb < "$tmp/ctime"
  cpred=$(python3 -c "import json; print(json.load(open('$tmp/c.json'))['rows'][0]['time_us'])")
  # ASTRA-sim: one Chakra all-reduce node per NPU (its own generator), analytical congestion-unaware backend.
  mkdir -p "$tmp/et$gpus"
  (cd "$tmp/et$gpus" && PYTHONPATH=$root "$py" "$gen" --npus-count "$gpus" --coll-size 1024 > /dev/null)
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
  # Run in $tmp: ASTRA-sim writes its logs under ./log/. /usr/bin/time measures `timeout` and so ASTRA-sim, which
  # it waits for; GNU time puts a "Command exited with non-zero status" line before the figures when it fails.
  stop=()
  [ "$limit" -eq 0 ] || stop=(timeout -s TERM "$limit")
  arc=0
  (cd "$tmp" && /usr/bin/time -f "%e %U %M" -o "$tmp/atime" "${stop[@]}" "$bin" --workload-configuration="$et" \
    --system-configuration="$tmp/sys.json" --network-configuration="$tmp/net.yml" \
    --remote-memory-configuration="$tmp/mem.json" > "$tmp/a.log" 2>&1) || arc=$?
  read -r awall auser akb < <(tail -n 1 "$tmp/atime")
  if [ "$arc" -eq 124 ] && [ "$limit" -gt 0 ]; then
    ratios=$(python3 -c "r = lambda a, c: f'> {a / c:.0f}x' if min(a, c) >= 0.02 else 'n/a'; print(r($awall, $cwall) + ',' + r($auser, $cuser))")
    printf '| %d | %s | %.2f s | %.2f s | %d MB | %.0f us | > %.1f s (stopped) | > %.1f s | >= %d MB | n/a | %s | %s |\n' \
      "$gpus" "$load" "$cwall" "$cuser" $((ckb / 1024)) "$cpred" "$awall" "$auser" $((akb / 1024)) \
      "${ratios%,*}" "${ratios#*,}"
    continue
  fi
  [ "$arc" -eq 0 ] || {
    echo "ASTRA-sim failed at $gpus GPUs (exit $arc):" >&2
    tail -n 20 "$tmp/a.log" >&2
    exit 6
  }
  # Ticks of the analytical backend are nanoseconds.
  acycles=$(grep -o 'sys\[0\] finished, [0-9]* cycles' "$tmp/a.log" | grep -o '[0-9][0-9]*' | tail -n 1 || true)
  [ -n "$acycles" ] || {
    echo "ASTRA-sim printed no 'sys[0] finished, N cycles' line at $gpus GPUs:" >&2
    tail -n 20 "$tmp/a.log" >&2
    exit 6
  }
  # /usr/bin/time counts in 10 ms steps: a ratio against less than 20 ms is not printed.
  ratios=$(python3 -c "r = lambda a, c: f'{a / c:.1f}x' if min(a, c) >= 0.02 else 'n/a'; print(r($awall, $cwall), r($auser, $cuser))")
  printf '| %d | %s | %.2f s | %.2f s | %d MB | %.0f us | %.2f s | %.2f s | %d MB | %.0f us | %s | %s |\n' "$gpus" "$load" \
    "$cwall" "$cuser" $((ckb / 1024)) "$cpred" "$awall" "$auser" $((akb / 1024)) "$(python3 -c "print($acycles / 1e3)")" \
    "${ratios% *}" "${ratios#* }"
done
