#!/bin/bash
# Session 3: the MPI launch (one rank per GPU under mpirun) against the thread launch, same configurations.
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
export OMPI_ALLOW_RUN_AS_ROOT=1 OMPI_ALLOW_RUN_AS_ROOT_CONFIRM=1
export LD_LIBRARY_PATH=$PWD/.ext/measure:$LD_LIBRARY_PATH
M=$PWD/.ext/measure/commsim-measure
D=/tmp/mpi; mkdir -p $D
MPI="mpirun -np 4 --bind-to none -x NCCL_NVLS_ENABLE -x TORCH_SYMM_MEM_DISABLE_MULTICAST -x NVSHMEM_DISABLE_NVLS -x LD_LIBRARY_PATH"
T0=$(date +%s)
run() { local name=$1; shift; echo "== $name $(date +%T)"; timeout 240 "$@" --out $D/$name > $D/$name.stdout 2> $D/$name.stderr; echo "rc=$? $(tail -1 $D/$name.stderr)"; }
AR="all_reduce --gpus all --min-bytes 8B --max-bytes 1GiB --factor 4 --reps 5 --drift-seconds 2"
P2P="p2p --min-bytes 1B --max-bytes 1GiB --factor 4 --reps 3 --drift-seconds 2"
PIPE="pipeline --gpus all --activation-bytes 4MiB,64MiB --microbatches 8 --mode sequential,batched --warmup 2 --iters 5 --reps 3 --drift-seconds 2"
run mpi_all_reduce_g4 $MPI $M $AR --launch mpi
run thread_all_reduce_g4 $M $AR
run mpi_p2p $MPI $M $P2P --launch mpi
run thread_p2p $M $P2P
run mpi_pipeline $MPI $M $PIPE --launch mpi
run thread_pipeline $M $PIPE
# More ranks than GPUs: a clear error and a non-zero exit, no hang.
echo "== too_many_ranks"; timeout 60 mpirun -np 5 --oversubscribe --bind-to none -x LD_LIBRARY_PATH $M all_reduce --launch mpi --out $D/too_many > $D/too_many_ranks.txt 2>&1; echo "rc=$?" | tee -a $D/too_many_ranks.txt
echo "total $(( $(date +%s) - T0 )) s"
tar czf $OUT/s3mpi.tar.gz -C /tmp mpi
