#!/usr/bin/env bash
# Issue 18's 3- and 4-rank agreement cells on the 4x H200 (the first capture, ab1, had 2 ranks only): the same A/B
# script, RANKS given by the caller, results as one tarball in $OUT. Carry .ext/measure and .ext/nccl-tests.
set -u
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
start="$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)"
dir=/tmp/ab/$start
mkdir -p "$dir"
NCCL_TESTS=.ext/nccl-tests COMMSIM_MEASURE=.ext/measure/commsim-measure timeout ${BUDGET:-520} \
  measure/scripts/ab_nccl_tests.sh "$dir" > "$dir/ab.stdout" 2> "$dir/ab.stderr"
echo "ab exit $?" >> "$dir/ab.stdout"
rm -f "$dir"/*/nccl_debug.*.log
tar czf "$OUT/ab2.tgz" -C /tmp/ab "$start"
tail -40 "$dir/ab.stdout"
echo "start $start"
