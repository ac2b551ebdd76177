# Fuzz-regression check: `commsim topo show INPUT` must end with exit code 0 (parsed) or 3 (input error), never a
# crash, a sanitizer report or a hang.
execute_process(COMMAND ${COMMSIM} topo show ${INPUT} --format json OUTPUT_QUIET ERROR_VARIABLE err
                RESULT_VARIABLE rc TIMEOUT 30)
if(NOT (rc STREQUAL "0" OR rc STREQUAL "3"))
  message(FATAL_ERROR "commsim ended with '${rc}' on ${INPUT}:\n${err}")
endif()
