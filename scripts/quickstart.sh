#!/usr/bin/env bash
# Quick start 1: install what is missing, build commsim, and show the bundled 4x H200 machine.
set -euo pipefail
cd "$(dirname "$0")/.."
source scripts/setup.sh
cmake --preset default >/dev/null
cmake --build --preset default --target commsim
echo
./build/default/sim/commsim topo show topologies/library/real/h200x4.topo
