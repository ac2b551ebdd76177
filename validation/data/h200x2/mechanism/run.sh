#!/bin/bash
# Issue 13 item 3 (latency-bound regime from mechanisms) on 2x H200, nccl-tests only, one tarball in $OUT:
#  A. decomposition of the floor: every launch shape with and without CUDA graphs (-G 1 captures the timed
#     iterations into one graph, so the host's enqueue work leaves the timed loop and only the device's time per
#     operation remains). sendrecv, all_reduce, alltoall on GPUs 0,1 with -g 2 (one thread drives both GPUs) and
#     -t 2 (a thread per GPU); all_reduce on one GPU (-g 1); 8 B .. 1 MiB; 3 repeats, interleaved.
#  B. floor states: sendrecv -g 2 8 B .. 4 KiB in 6 processes each unpinned, pinned to cores 0-3 and to core 0.
#  C. PyTorch process-group setup and teardown on world sizes 1 and 2 (issue 15 item 9), pg_setup.py.
# Carry .ext/nccl-tests.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NT=$PWD/.ext/nccl-tests
HERE=$(cd "$(dirname "$0")" && pwd)
start="$(hostname)-$(date -u +%Y%m%dT%H%M%SZ)"
D=/tmp/mech/$start; mkdir -p $D; T0=$(date +%s)
BUDGET=${BUDGET:-540}
{ nvidia-smi -q | grep -E "Product Name|Driver Version|CUDA Version|Serial|UUID|Clocks|Graphics|SM  |Memory  " | head -40
  nvidia-smi topo -m; lscpu; cat /proc/sys/kernel/random/boot_id; uname -a; } > $D/host.txt 2>&1
left() { [ $(( $(date +%s) - T0 )) -lt $BUDGET ]; }
nt() { local name=$1 wl=$2; shift 2; left || { echo "$name skipped (budget)"; return; }
  CUDA_VISIBLE_DEVICES=0,1 timeout 60 $NT/${wl}_perf -c 0 -w 10 -n 50 "$@" > $D/$name.log 2>&1
  echo "$name rc=$? $(( $(date +%s) - T0 ))s"; }
for r in 1 2 3; do
  for wl in sendrecv all_reduce alltoall; do
    for G in 0 1; do
      nt ${wl}_g2_G${G}_r$r $wl -g 2 -t 1 -G $G -b 8 -e 1M -f 4
      nt ${wl}_t2_G${G}_r$r $wl -g 1 -t 2 -G $G -b 8 -e 1M -f 4
    done
  done
  for G in 0 1; do nt all_reduce_g1_G${G}_r$r all_reduce -g 1 -t 1 -G $G -b 8 -e 1M -f 4; done
done
for r in 1 2 3 4 5 6; do
  nt pin_none_r$r sendrecv -g 2 -t 1 -b 8 -e 4K -f 8 -n 200
  left && { CUDA_VISIBLE_DEVICES=0,1 timeout 60 taskset -c 0-3 $NT/sendrecv_perf -c 0 -w 10 -n 200 -g 2 -b 8 -e 4K -f 8 \
    > $D/pin_0-3_r$r.log 2>&1; echo "pin_0-3_r$r rc=$?"; }
  left && { CUDA_VISIBLE_DEVICES=0,1 timeout 60 taskset -c 0 $NT/sendrecv_perf -c 0 -w 10 -n 200 -g 2 -b 8 -e 4K -f 8 \
    > $D/pin_0_r$r.log 2>&1; echo "pin_0_r$r rc=$?"; }
done
for r in 1 2 3; do
  for w in 1 2; do
    left || break
    CUDA_VISIBLE_DEVICES=0,1 timeout 90 python3 $HERE/pg_setup.py --world-size $w --out $D/pg_w${w}_r$r.json \
      > $D/pg_w${w}_r$r.log 2>&1; echo "pg w$w r$r rc=$? $(( $(date +%s) - T0 ))s"
  done
done
tar czf "$OUT/mech.tgz" -C /tmp/mech "$start"
echo "mechanism done in $(( $(date +%s) - T0 )) s, start $start"
