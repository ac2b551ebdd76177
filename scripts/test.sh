#!/usr/bin/env bash
# Quick start 2: install what is missing, build, and run every test through ctest; then the same tests again
# under AddressSanitizer and UndefinedBehaviorSanitizer. Set COMMSIM_SKIP_SANITIZERS=1 to skip the second pass.
set -euo pipefail
cd "$(dirname "$0")/.."
# python3 and chromium: the HTML report test renders the report in headless Chromium. Open MPI: the
# commsim-measure --launch mpi build and its test.
COMMSIM_EXTRA_PACKAGES="python3 chromium libopenmpi-dev openmpi-bin"
source scripts/setup.sh
jobs=$(nproc 2>/dev/null || echo 2)
echo "== build and test (preset ci: warnings are errors)"
cmake --preset ci >/dev/null
cmake --build --preset ci -j "$jobs"
ctest --preset ci -j "$jobs"
if [ "${COMMSIM_SKIP_SANITIZERS:-0}" != 1 ]; then
  echo "== build and test (preset debug-asan: AddressSanitizer + UndefinedBehaviorSanitizer)"
  cmake --preset debug-asan >/dev/null
  cmake --build --preset debug-asan -j "$jobs"
  ASAN_OPTIONS=detect_leaks=1:abort_on_error=1 UBSAN_OPTIONS=print_stacktrace=1:halt_on_error=1 \
    ctest --preset debug-asan -j "$jobs"
fi
