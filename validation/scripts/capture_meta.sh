#!/bin/bash
# What a GPU measurement records about its machine start: sourced by the run scripts under validation/.
# meta_start DIR START_ID: host, boot id, CPU, GPUs and their clocks, topology and NCCL library, into DIR/meta/.
# meta_end DIR: the clocks after the runs. Clocks are recorded, never set.
meta_start() {
  local d=$1 start=$2
  mkdir -p "$d/meta"
  {
    echo "start: $start"; date -u; hostname; cat /proc/sys/kernel/random/boot_id; uname -r; nproc
    grep -m1 'model name' /proc/cpuinfo; cat /sys/devices/system/cpu/cpu0/cpufreq/scaling_governor 2>&1
    nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,temperature.gpu,clocks.sm,clocks.mem,power.draw,pstate --format=csv
  } > "$d/meta/host.txt" 2>&1
  nvidia-smi topo -m > "$d/meta/topo_m.txt" 2>&1
  nvidia-smi -q -d CLOCK,PERFORMANCE > "$d/meta/clocks_start.txt" 2>&1
  ls -la /usr/lib/x86_64-linux-gnu/libnccl.so* > "$d/meta/nccl_lib.txt" 2>&1
}
meta_end() {
  nvidia-smi -q -d CLOCK,PERFORMANCE > "$1/meta/clocks_end.txt" 2>&1
}
