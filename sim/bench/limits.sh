#!/usr/bin/env bash
# Work limits of issue 16: inputs whose cost used to grow with the square or cube of their size, each run once
# with /usr/bin/time and printed as a Markdown table of exit code, wall time and peak memory (max RSS).
# Usage: sim/bench/limits.sh [COMMSIM] [CASE...]
#   cases: wide-header matrix-1024 matrix-2000 show-3000 json-3000 simulate-3000 allreduce-3000
#          pipeline-100k pipeline-10k urandom (default: all)
# Every case must end in seconds under 1 GB: handled (exit 0) or refused at once with a reason (exit 2-4).
set -euo pipefail
cd "$(dirname "$0")/../.."
commsim=${1:-build/default/sim/commsim}
shift || true
cases=("$@")
[ ${#cases[@]} -gt 0 ] || cases=(wide-header matrix-1024 matrix-2000 show-3000 json-3000 simulate-3000
  allreduce-3000 pipeline-100k pipeline-10k urandom)
tmp=$(mktemp -d)
trap 'rm -rf "$tmp"' EXIT

# An `nvidia-smi topo -m` matrix of N GPUs on one NVSwitch (NV18 everywhere), or only its header line.
matrix() {  # N FILE [header-only]
  python3 - "$@" <<'PY'
import sys
n, path = int(sys.argv[1]), sys.argv[2]
with open(path, "w") as f:
    f.write("\t" + "\t".join(f"GPU{i}" for i in range(n)) + "\tCPU Affinity\tNUMA Affinity\n")
    if len(sys.argv) > 3:
        f.write("GPU0\t X\n")
    else:
        for r in range(n):
            f.write(f"GPU{r}\t" + "\t".join(" X " if c == r else "NV18" for c in range(n)) + "\t0-63\t0\n")
PY
}
cat > "$tmp/cluster-3000.toml" <<'TOML'
# 3,000 HGX H100 machines (24,000 GPUs), one leaf per rail: each leaf has 3,000 ports.
[[nodes]]
count = 3000
preset = "hgx-h100"
[fabric]
kind = "infiniband"
link_bandwidth = "400Gbps"
TOML
printf '[[nodes]]\ntopo_file = "/dev/urandom"\n' > "$tmp/urandom.toml"

echo "| case | input | exit | wall | peak memory | first line of stderr |"
echo "| --- | --- | ---: | ---: | ---: | --- |"
for c in "${cases[@]}"; do
  case $c in
    wide-header)
      matrix 10000 "$tmp/wide.topo" header-only
      input="topo -m header of 10,000 GPU columns ($(($(stat -c %s "$tmp/wide.topo") / 1024)) KiB)"
      args=(topo show "$tmp/wide.topo" --gpu H100) ;;
    matrix-1024)
      matrix 1024 "$tmp/m1024.topo"
      input="topo -m matrix of 1,024 GPUs ($(($(stat -c %s "$tmp/m1024.topo") / 1024)) KiB)"
      args=(topo show "$tmp/m1024.topo" --gpu H100 -o "$tmp/m1024.txt") ;;
    matrix-2000)
      matrix 2000 "$tmp/m2000.topo"
      input="topo -m matrix of 2,000 GPUs ($(($(stat -c %s "$tmp/m2000.topo") / 1024)) KiB)"
      args=(topo show "$tmp/m2000.topo" --gpu H100) ;;
    show-3000)
      input="3,000 machines, 24,000 GPUs: topo show"
      args=(topo show "$tmp/cluster-3000.toml" -o "$tmp/show.txt") ;;
    json-3000)
      input="3,000 machines: topo show --format json"
      args=(topo show "$tmp/cluster-3000.toml" --format json -o "$tmp/show.json") ;;
    simulate-3000)
      input="3,000 machines: sendrecv GPU 0 -> 23999, 1 KiB-1 GiB"
      args=(simulate sendrecv --topology "$tmp/cluster-3000.toml" --gpus 0,23999 --min-bytes 1KiB --max-bytes 1GiB
        -o "$tmp/sim.csv") ;;
    allreduce-3000)
      input="3,000 machines: all_reduce over 24,000 GPUs, 1 GiB"
      args=(simulate all_reduce --topology "$tmp/cluster-3000.toml" --gpus all --min-bytes 1GiB --max-bytes 1GiB
        --iterations 1 --warmup 0 -o "$tmp/ar.csv") ;;
    pipeline-100k)
      input="pipeline, 4 stages, 100,000 microbatches"
      args=(simulate pipeline --topology topologies/library/real/h200x4.topo --gpus 0-3 --microbatches 100000
        --activation-bytes 1MiB --fwd-us 100 --bwd-us 200 --mode batched --iterations 1 --warmup 0) ;;
    pipeline-10k)
      input="pipeline, 4 stages, 10,000 microbatches (the limit)"
      args=(simulate pipeline --topology topologies/library/real/h200x4.topo --gpus 0-3 --microbatches 10000
        --activation-bytes 1MiB --fwd-us 100 --bwd-us 200 --mode batched --iterations 1 --warmup 0 -o "$tmp/pp.csv") ;;
    urandom)
      input="what-if TOML with topo_file = \"/dev/urandom\""
      args=(topo show "$tmp/urandom.toml") ;;
    *) echo "unknown case $c" >&2; exit 2 ;;
  esac
  set +e
  /usr/bin/time -f "%e %M" -o "$tmp/time" "$commsim" "${args[@]}" > /dev/null 2> "$tmp/err"
  rc=$?
  set -e
  read -r wall kb < <(tail -1 "$tmp/time")
  first=$( (grep -v '^commsim: warning' "$tmp/err" || true) | head -1 | cut -c1-150 | sed "s|$tmp/||g; s/|/\\\\|/g")
  printf '| %s | %s | %s | %s s | %s MB |%s |\n' "$c" "$input" "$rc" "$wall" "$((kb / 1024))" " ${first}"
done
