# `commsim-measure --list-workloads` passes the startup self-check (every measured registry workload has its
# file in workloads/measure/ and every file a measured registry workload) and prints exactly those files'
# workloads, one per line (STEMS: the file names, a workload's name with '-' written '_').
execute_process(COMMAND ${MEASURE} --list-workloads OUTPUT_VARIABLE out ERROR_VARIABLE err RESULT_VARIABLE rc)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "commsim-measure --list-workloads failed (${rc}):\n${err}")
endif()
string(REPLACE "-" "_" out "${out}")
string(REGEX REPLACE "\n$" "" out "${out}")
string(REPLACE "\n" ";" listed "${out}")
list(SORT listed)
set(files ${STEMS})
list(SORT files)
if(NOT listed STREQUAL files)
  message(FATAL_ERROR "commsim-measure issues [${listed}] but workloads/measure/ holds [${files}]")
endif()
list(LENGTH listed n)
message(STATUS "${n} measured workloads, one file each")
