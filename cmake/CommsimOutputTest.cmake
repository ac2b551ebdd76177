# commsim_output_test(): a CTest test that runs a real binary and checks its exit code and output
# (cmake/expect_output.cmake). Regular expressions and substrings are |-separated.
function(commsim_output_test name)
  cmake_parse_arguments(T "" "PROGRAM;ARGS;MATCH;NOT_MATCH;STDERR;LINES;EXIT" "" ${ARGN})
  set(defs -DPROGRAM=${T_PROGRAM} "-DARGS=${T_ARGS}" -DWORKDIR=${PROJECT_SOURCE_DIR})
  foreach(key MATCH NOT_MATCH STDERR LINES EXIT)
    if(DEFINED T_${key})
      list(APPEND defs "-D${key}=${T_${key}}")
    endif()
  endforeach()
  add_test(NAME ${name} COMMAND ${CMAKE_COMMAND} ${defs} -P ${PROJECT_SOURCE_DIR}/cmake/expect_output.cmake)
endfunction()
