#!/bin/bash
# Coverage capture on the lent 4x H200 (issue 13/18): nccl-tests over ring sizes, pairs, launch modes and NCCL knobs.
# Usage (on the GPU machine, from the repository root, nccl-tests binaries in .ext/nccl-tests):
#   validation/data/h200x4/coverage/run_coverage.sh START_ID BUDGET_S PHASE...
# START_ID names this machine start (h200x4-2026-11-22a); BUDGET_S stops launching new runs once that many seconds
# have passed; PHASE is one or more of: probe base-g base-t base-t2 pairs knobs knobs-t knobs2 a2a lat9 tree tree2. Writes /tmp/cov/START_ID/ with one nccl-tests
# text log and JSON (-J) per run, manifest.csv (file,start,workload,gpus,launch,nccl_env,repeat) and meta/.
# REPEATS=N (default 3) runs every configuration of base-g, base-t, base-t2, knobs2 and knobs-t in N processes
# (session 41: five, so medians of five can be scored); the probe's repeats are then numbered N+1 to N+3.
set -u
START=$1; BUDGET=$2; shift 2
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
NT=${NT:-$PWD/.ext/nccl-tests}  # the nccl-tests binaries (NT=... overrides)
REPEATS=${REPEATS:-3}
case $REPEATS in ''|*[!0-9]*|0) echo "REPEATS=$REPEATS: a positive whole number of processes" >&2; exit 2 ;; esac
REPS=$(seq -s ' ' 1 "$REPEATS")
D=/tmp/cov/$START; mkdir -p "$D/meta"
T0=$(date +%s)
NGPU=$(nvidia-smi -L 2>/dev/null | grep -c '^GPU')
M=$D/manifest.csv
[ -f "$M" ] || echo "file,start,workload,gpus,launch,nccl_env,repeat" > "$M"

# Metadata of this start: which machine, its clocks before the runs.
{
  echo "start: $START"; date -u; hostname; cat /proc/sys/kernel/random/boot_id; uname -r
  nvidia-smi --query-gpu=index,name,uuid,pci.bus_id,driver_version,temperature.gpu,clocks.sm,clocks.mem,power.draw,pstate --format=csv
} > "$D/meta/host.txt" 2>&1
nvidia-smi topo -m > "$D/meta/topo_m.txt" 2>&1
nvidia-smi -q -d CLOCK,PERFORMANCE > "$D/meta/clocks_start.txt" 2>&1
ls -la /usr/lib/x86_64-linux-gnu/libnccl.so* > "$D/meta/nccl_lib.txt" 2>&1

left() { [ $(( $(date +%s) - T0 )) -lt "$BUDGET" ]; }
# run NAME WORKLOAD GPUS LAUNCH ENV REPEAT ARGS...: one nccl-tests process.
run() {
  local name=$1 wl=$2 gpus=$3 launch=$4 env=$5 rep=$6; shift 6
  left || return 0
  local n dev
  case $gpus in
    *-*) dev=$(seq -s, "${gpus%-*}" "${gpus#*-}") ;;
    *) dev=$gpus ;;
  esac
  n=$(echo "$dev" | tr ',' '\n' | wc -l)
  # Skip configurations that need a GPU this machine lacks.
  local top; top=$(echo "$dev" | tr ',' '\n' | sort -n | tail -1)
  [ "$top" -lt "$NGPU" ] || return 0
  local shape
  if [ "$launch" = single-thread ]; then shape="-g $n -t 1"; else shape="-g 1 -t $n"; fi
  # shellcheck disable=SC2086
  env CUDA_VISIBLE_DEVICES=$dev $env timeout 120 "$NT/${wl}_perf" $shape -c 0 -J "$D/$name.json" "$@" \
    > "$D/$name.log" 2>&1
  local rc=$?
  echo "$name rc=$rc $(( $(date +%s) - T0 ))s"
  local cell=$gpus; case $gpus in *,*) cell="\"$gpus\"" ;; esac  # a GPU list with commas is quoted
  [ $rc -eq 0 ] && echo "$name.json,$START,$wl,$cell,$launch,$env,$rep" >> "$M"
}
FULL="-b 8 -e 1G -f 2 -w 5 -n 20"
KNOB="-b 8 -e 1G -f 4 -w 5 -n 20"

for phase in "$@"; do
  case $phase in
    base-g)  # every workload on ring sizes 2, 3, 4, one thread driving every GPU (nccl-tests -g N)
      for rep in $REPS; do
        for g in 0-1 0-2 0-3; do
          for wl in sendrecv all_reduce all_gather reduce_scatter broadcast reduce alltoall; do
            run "${wl}_g${g/-/}_st_r$rep" $wl $g single-thread "" $rep $FULL
          done
        done
      done ;;
    base-t)  # a thread per GPU (nccl-tests -t N)
      for rep in $REPS; do
        for g in 0-1 0-2 0-3; do
          for wl in sendrecv all_reduce alltoall all_gather; do
            run "${wl}_g${g/-/}_tpg_r$rep" $wl $g thread-per-gpu "" $rep $FULL
          done
        done
      done ;;
    probe)  # the probed-start family's probe: sendrecv on GPUs 0,1 in both launch modes
      for rep in 1 2 3; do
        # repeats REPEATS+1 to REPEATS+3 in the manifest: the same configurations as base-g's and base-t's sendrecv
        run "sendrecv_g01_probe_st_r$rep" sendrecv 0-1 single-thread "" $((rep + REPEATS)) $FULL
        run "sendrecv_g01_probe_tpg_r$rep" sendrecv 0-1 thread-per-gpu "" $((rep + REPEATS)) $FULL
      done ;;
    base-t2)  # a thread per GPU for the collectives base-t leaves out (session 27: the launch family's
      # one-thread fold had no thread-per-GPU row of them to fit their efficiencies on)
      for rep in $REPS; do
        for g in 0-1 0-2 0-3; do
          for wl in reduce_scatter broadcast reduce; do
            run "${wl}_g${g/-/}_tpg_r$rep" $wl $g thread-per-gpu "" $rep $FULL
          done
        done
      done ;;
    knobs-t)  # knob what-ifs with a thread per GPU (session 27), on GPUs 0-3 or, on a 2-GPU machine, 0,1
      g=0-3; [ "$NGPU" -ge 4 ] || g=0-1
      for rep in $REPS; do
        for c in 2 8; do
          for wl in all_reduce all_gather; do
            run "${wl}_g${g/-/}_maxch${c}_tpg_r$rep" $wl $g thread-per-gpu "NCCL_MAX_NCHANNELS=$c" $rep $KNOB
          done
        done
        for wl in all_reduce all_gather; do
          run "${wl}_g${g/-/}_protoLL128_tpg_r$rep" $wl $g thread-per-gpu "NCCL_PROTO=LL128" $rep $KNOB
        done
        run "all_reduce_g${g/-/}_Tree_tpg_r$rep" all_reduce $g thread-per-gpu "NCCL_ALGO=Tree" $rep $KNOB
        run "all_reduce_g${g/-/}_p2pdisable_tpg_r$rep" all_reduce $g thread-per-gpu "NCCL_P2P_DISABLE=1" $rep $KNOB
      done ;;
    pairs)  # other pairs and subsets
      for rep in 1 2 3; do
        # Pairs are named p02 and subsets by every GPU (g123): base-g's g02 is GPUs 0-2.
        for g in 0,2 1,3 2,3; do
          run "sendrecv_p${g//,/}_st_r$rep" sendrecv $g single-thread "" $rep $FULL
        done
        run "sendrecv_g123_st_r$rep" sendrecv 1-3 single-thread "" $rep $FULL
        run "all_reduce_g123_st_r$rep" all_reduce 1-3 single-thread "" $rep $FULL
      done ;;
    knobs2)  # the same knobs on GPUs 0,1 (a 2-GPU machine)
      for rep in $REPS; do
        for p in LL LL128 Simple; do
          for wl in sendrecv all_reduce; do
            run "${wl}_g01_proto${p}_r$rep" $wl 0-1 single-thread "NCCL_PROTO=$p" $rep $KNOB
          done
        done
        run "all_reduce_g01_Tree_r$rep" all_reduce 0-1 single-thread "NCCL_ALGO=Tree" $rep $KNOB
        for c in 1 4 16; do
          for wl in sendrecv all_reduce; do
            run "${wl}_g01_maxch${c}_r$rep" $wl 0-1 single-thread "NCCL_MAX_NCHANNELS=$c" $rep $KNOB
          done
        done
        for wl in sendrecv all_reduce; do
          run "${wl}_g01_p2pdisable_r$rep" $wl 0-1 single-thread "NCCL_P2P_DISABLE=1" $rep $KNOB
          run "${wl}_g01_buff1M_r$rep" $wl 0-1 single-thread "NCCL_BUFFSIZE=1048576" $rep $KNOB
        done
      done ;;
    knobs)  # NCCL knob what-ifs on GPUs 0-3, one thread
      for rep in 1 2 3; do
        for kv in NCCL_ALGO=Ring NCCL_ALGO=Tree; do
          run "all_reduce_g0123_${kv#*=}_r$rep" all_reduce 0-3 single-thread "$kv" $rep $KNOB
        done
        for p in LL LL128 Simple; do
          for wl in all_reduce all_gather; do
            run "${wl}_g0123_proto${p}_r$rep" $wl 0-3 single-thread "NCCL_PROTO=$p" $rep $KNOB
          done
        done
        for c in 1 2 4 8 16; do
          for wl in sendrecv all_reduce all_gather; do
            run "${wl}_g0123_maxch${c}_r$rep" $wl 0-3 single-thread "NCCL_MAX_NCHANNELS=$c" $rep $KNOB
          done
        done
        for wl in sendrecv all_reduce; do
          run "${wl}_g0123_minch32_r$rep" $wl 0-3 single-thread "NCCL_MIN_NCHANNELS=32" $rep $KNOB
          run "${wl}_g0123_p2pdisable_r$rep" $wl 0-3 single-thread "NCCL_P2P_DISABLE=1" $rep $KNOB
          run "${wl}_g0123_shmdisable_r$rep" $wl 0-3 single-thread "NCCL_SHM_DISABLE=1" $rep $KNOB
          run "${wl}_g0123_buff1M_r$rep" $wl 0-3 single-thread "NCCL_BUFFSIZE=1048576" $rep $KNOB
          run "${wl}_g0123_buff16M_r$rep" $wl 0-3 single-thread "NCCL_BUFFSIZE=16777216" $rep $KNOB
        done
      done ;;
    a2a)  # alltoall's channels on 3 and 4 GPUs (4-GPU alltoall was predicted 10-20% fast from 8 MiB)
      for rep in 1 2; do
        for c in 4 8 16; do
          for g in 0-2 0-3; do
            run "alltoall_g${g/-/}_maxch${c}_r$rep" alltoall $g single-thread "NCCL_MAX_NCHANNELS=$c" $rep $FULL
          done
        done
      done ;;
    lat9)  # the latency-bound sizes in nine processes a configuration, so a median of many processes can be
      # scored (a process's floor is one of two levels for its life); 2 and 4 GPUs, both launch modes. Its
      # runs go to $D/lat9/ with a manifest of their own: they repeat base-g's and base-t's configurations
      # (repeats 1-9), and in one call with those phases the same run names overwrote their logs (session 40).
      D0=$D; M0=$M; D=$D0/lat9; M=$D/manifest.csv; mkdir -p "$D"
      [ -f "$M" ] || echo "file,start,workload,gpus,launch,nccl_env,repeat" > "$M"
      for rep in 1 2 3 4 5 6 7 8 9; do
        for g in 0-1 0-3; do
          for wl in sendrecv all_reduce all_gather alltoall broadcast; do
            run "${wl}_g${g/-/}_st_r$rep" $wl $g single-thread "" $rep -b 8 -e 1M -f 2 -w 5 -n 20
          done
          for wl in sendrecv all_reduce alltoall; do
            run "${wl}_g${g/-/}_tpg_r$rep" $wl $g thread-per-gpu "" $rep -b 8 -e 1M -f 2 -w 5 -n 20
          done
        done
      done
      D=$D0; M=$M0 ;;
    tree)  # NCCL_ALGO=Tree under each protocol on 2 and 4 GPUs, and on 3 GPUs as NCCL picks it (session 29:
      # the chain's pipeline fill; 3 GPUs were never measured under Tree). One run with NCCL's tuning log.
      for rep in 1 2 3; do
        for g in 0-1 0-3; do
          for p in LL LL128 Simple; do
            run "all_reduce_g${g/-/}_Tree_proto${p}_r$rep" all_reduce $g single-thread "NCCL_ALGO=Tree NCCL_PROTO=$p" $rep $FULL
          done
        done
        run "all_reduce_g02_Tree_r$rep" all_reduce 0-2 single-thread "NCCL_ALGO=Tree" $rep $FULL
      done
      if left && [ "$NGPU" -ge 4 ]; then
        env CUDA_VISIBLE_DEVICES=0,1,2,3 NCCL_ALGO=Tree NCCL_DEBUG=INFO NCCL_DEBUG_SUBSYS=TUNING timeout 120 \
          "$NT/all_reduce_perf" -g 4 -t 1 -c 0 -b 8 -e 1G -f 2 -w 1 -n 1 > "$D/meta/tree_tuning_g0123.log" 2>&1
      fi ;;
    tree2)  # Tree's rate limit: channel limits under NCCL_ALGO=Tree, 3 GPUs under Simple, the trees NCCL builds
      for rep in 1 2 3; do
        for c in 4 12; do
          run "all_reduce_g03_Tree_maxch${c}_r$rep" all_reduce 0-3 single-thread "NCCL_ALGO=Tree NCCL_MAX_NCHANNELS=$c" $rep $KNOB
        done
        run "all_reduce_g02_Tree_protoSimple_r$rep" all_reduce 0-2 single-thread "NCCL_ALGO=Tree NCCL_PROTO=Simple" $rep $KNOB
      done
      for g in 0-2 0-3; do
        left || break
        env CUDA_VISIBLE_DEVICES=$(seq -s, "${g%-*}" "${g#*-}") NCCL_ALGO=Tree NCCL_DEBUG=INFO \
          NCCL_DEBUG_SUBSYS=INIT,GRAPH,TUNING timeout 120 "$NT/all_reduce_perf" -g "$(( ${g#*-} + 1 ))" -t 1 -c 0 \
          -b 8 -e 1G -f 4 -w 1 -n 1 > "$D/meta/tree_graph_g${g/-/}.log" 2>&1
      done ;;
    *) echo "unknown phase $phase" >&2 ;;
  esac
done
nvidia-smi -q -d CLOCK,PERFORMANCE > "$D/meta/clocks_end.txt" 2>&1
echo "coverage $START done in $(( $(date +%s) - T0 )) s"
