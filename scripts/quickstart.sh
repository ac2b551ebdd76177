#!/usr/bin/env bash
# Quick start 1: install what is missing, build commsim, and run the main job on the bundled 4x H200 machine:
# what commsim infers from its topology, then the predicted nccl-tests sendrecv over all 4 GPUs.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default --target commsim
echo
./build/default/sim/commsim topo show topologies/library/real/h200x4.topo
echo
echo "Predicted nccl-tests sendrecv_perf over GPUs 0-3 (models/params/h200.toml, fitted on this machine):"
./build/default/sim/commsim simulate sendrecv --topology topologies/library/real/h200x4.topo --gpus 0-3 \
  --params models/params/h200.toml --min-bytes 8B
