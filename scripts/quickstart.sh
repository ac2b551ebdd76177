#!/usr/bin/env bash
# Quick start 1: install what is missing, build commsim, and run the main job on the bundled 4x H200 machine:
# what commsim infers from its topology, the predicted nccl-tests sendrecv over all 4 GPUs, and which P2P mode a
# 4-stage pipeline should use there.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default --target commsim
# commsim-measure (measure/) is configured only where the CUDA toolkit and NCCL are found.
measure_built=0
if cmake --build --preset default --target help | grep -q "commsim-measure"; then
  echo "CUDA and NCCL found: building commsim-measure too (it measures the same workloads on real GPUs)"
  cmake --build --preset default --target commsim-measure
  measure_built=1
else
  echo "commsim-measure not built: no CUDA toolkit with NCCL found (install them to measure; commsim needs neither)"
fi
echo
./build/default/sim/commsim topo show topologies/library/real/h200x4.topo
echo
echo "Predicted nccl-tests sendrecv_perf over GPUs 0-3 (models/params/h200.toml, fitted on this machine):"
./build/default/sim/commsim simulate sendrecv --topology topologies/library/real/h200x4.topo --gpus 0-3 \
  --params models/params/h200.toml --min-bytes 8B
echo
echo "Which P2P mode should a 4-stage Megatron 1F1B pipeline use here (64 MiB activations, 16 microbatches)?"
./build/default/sim/commsim advise pipeline --topology topologies/library/real/h200x4.topo \
  --params models/params/h200.toml --stages 4 --microbatches 16 --activation-bytes 64MiB --fwd-us 500 --bwd-us 1000
if [ "$measure_built" = 1 ]; then
  echo
  echo "What measuring sendrecv over the 4 GPUs would run and cost there (a dry run: no GPU is touched):"
  ./build/default/measure/commsim-measure sendrecv --dry-run --topology topologies/library/real/h200x4.topo \
    -b 8 -e 128M --format csv > /dev/null
fi
