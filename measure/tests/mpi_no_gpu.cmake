# Under mpirun with no GPU, every rank stops with a clear message and the job ends (MPI_Abort) with a
# non-zero status instead of leaving ranks waiting in a collective (whichever rank reports first: MPI_Abort may
# end the others before they print). Skipped where a GPU exists.
execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE has_gpu OUTPUT_QUIET ERROR_QUIET)
if(has_gpu EQUAL 0)
  message(STATUS "a GPU is present; skipping the MPI no-GPU check")
  return()
endif()
# Root in containers and 2 ranks on small machines: allow both (Open MPI's documented variables).
set(ENV{OMPI_ALLOW_RUN_AS_ROOT} 1)
set(ENV{OMPI_ALLOW_RUN_AS_ROOT_CONFIRM} 1)
set(ENV{OMPI_MCA_rmaps_base_oversubscribe} 1)
execute_process(COMMAND ${MPIEXEC} ${NP_FLAG} 2 ${MEASURE} all_reduce --launch mpi --out ${OUT}
                RESULT_VARIABLE rc ERROR_VARIABLE err OUTPUT_VARIABLE out TIMEOUT 120)
if(rc EQUAL 0 OR NOT "${err}${out}" MATCHES "rank [0-9]+\\): no GPU available" OR rc MATCHES "timeout")
  message(FATAL_ERROR "expected a non-zero exit with 'rank R): no GPU available', got '${rc}':\n${err}\n${out}")
endif()
