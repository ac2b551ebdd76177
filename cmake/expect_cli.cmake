# CLI error check: runs ${COMMSIM} with ARGS (space-separated) in WORKDIR; the exit code must be EXIT and stderr must
# contain every |-separated substring of EXPECT. No crash, no hang (30 s timeout).
string(REPLACE "|" ";" expected "${EXPECT}")
separate_arguments(args UNIX_COMMAND "${ARGS}")
execute_process(COMMAND ${COMMSIM} ${args} WORKING_DIRECTORY ${WORKDIR} OUTPUT_VARIABLE out ERROR_VARIABLE err
                RESULT_VARIABLE rc TIMEOUT 30)
if(NOT rc STREQUAL EXIT)
  message(FATAL_ERROR "expected exit code ${EXIT}, got '${rc}'\nstdout:\n${out}\nstderr:\n${err}")
endif()
foreach(s IN LISTS expected)
  string(FIND "${err}" "${s}" pos)
  if(pos EQUAL -1)
    message(FATAL_ERROR "stderr lacks '${s}':\n${err}")
  endif()
endforeach()
