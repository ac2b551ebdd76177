#!/bin/bash
# Issue 18, the 2-8 MiB difference (commsim-measure up to ~4.8% faster than nccl-tests): nccl-tests times each size
# after a single untimed operation, commsim-measure after --warmup 5. Changes one thing: commsim-measure --warmup 1
# against 5, and nccl-tests -n 20 against -n 100 (a first slow operation weighs 5x less), 2-rank sendrecv, thread
# per GPU, pipelined, 512 KiB .. 32 MiB. Output /tmp/ab6/.
set -u
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:${LD_LIBRARY_PATH:-}
NT=$PWD/.ext/nccl-tests; CM=$PWD/.ext/measure/commsim-measure
D=/tmp/ab6; mkdir -p $D; T0=$(date +%s)
cm() { local name=$1; shift; $CM sendrecv --gpus 0,1 --timing pipelined --min-bytes 512KiB --max-bytes 32MiB --factor 4 \
  --reps 5 --drift-seconds 0 --out $D/$name "$@" > $D/$name.stdout 2>&1; echo "$name rc=$? $(( $(date +%s) - T0 ))s"; }
for r in 1 2 3; do
  CUDA_VISIBLE_DEVICES=0,1 $NT/sendrecv_perf -g 1 -t 2 -b 512K -e 32M -f 4 -w 5 -n 20 -c 0 > $D/nt_n20_r$r.log 2>&1
  CUDA_VISIBLE_DEVICES=0,1 $NT/sendrecv_perf -g 1 -t 2 -b 512K -e 32M -f 4 -w 5 -n 100 -c 0 > $D/nt_n100_r$r.log 2>&1
  cm cm_w5_r$r --warmup 5 --seed $r
  cm cm_w1_r$r --warmup 1 --seed $r
done
