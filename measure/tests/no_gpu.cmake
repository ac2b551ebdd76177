# Without a GPU (or when CUDA cannot start) a real run stops with a clear message and exit code 2, no crash.
# Where a GPU exists, the check is skipped and says so.
execute_process(COMMAND nvidia-smi -L RESULT_VARIABLE has_gpu OUTPUT_QUIET ERROR_QUIET)
if(has_gpu EQUAL 0)
  message(STATUS "a GPU is present; skipping the no-GPU check")
  return()
endif()
execute_process(COMMAND ${MEASURE} p2p --out ${CMAKE_CURRENT_BINARY_DIR}/nogpu-out RESULT_VARIABLE rc ERROR_VARIABLE err)
if(NOT rc EQUAL 2 OR NOT err MATCHES "no GPU available")
  message(FATAL_ERROR "expected exit 2 with 'no GPU available', got ${rc}:\n${err}")
endif()
