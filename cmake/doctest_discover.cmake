# Read by ctest (through the include file commsim_doctest_discover() generates): registers each doctest case as a test.
#
# Inputs (set by the generated include file): COMMSIM_DOCTEST_TARGET, _EXECUTABLE, _WORKING_DIR, _PROPERTIES,
# _TESTS_FILE, _INCLUDE_FILE, _ADD_TESTS_SCRIPT (doctest's doctestAddTests.cmake), _CMAKE, _SELF (this file).
# Run as `cmake -DCOMMSIM_DOCTEST_FAIL=<text> -P doctest_discover.cmake` it is the failing test that reports a
# discovery problem (an executable not built, a listing that failed, names that do not add up).
if(DEFINED COMMSIM_DOCTEST_FAIL)
  message(FATAL_ERROR "${COMMSIM_DOCTEST_FAIL}")
endif()

# A test named `name` that fails with `text`.
function(commsim_doctest_failing_test name text)
  string(REPLACE ";" " " text "${text}")
  add_test("${name}" "${COMMSIM_DOCTEST_CMAKE}" "-DCOMMSIM_DOCTEST_FAIL=${text}" -P "${COMMSIM_DOCTEST_SELF}")
  set_tests_properties("${name}" PROPERTIES LABELS "${COMMSIM_DOCTEST_TARGET}")
endfunction()

set(_target "${COMMSIM_DOCTEST_TARGET}")
set(_exe "${COMMSIM_DOCTEST_EXECUTABLE}")
set(_tests_file "${COMMSIM_DOCTEST_TESTS_FILE}")
if(NOT EXISTS "${_exe}")
  commsim_doctest_failing_test("${_target}.not_built" "${_exe} does not exist: build the project before running ctest")
  return()
endif()

set(_listed FALSE)
if(NOT EXISTS "${_tests_file}" OR "${_exe}" IS_NEWER_THAN "${_tests_file}"
   OR "${COMMSIM_DOCTEST_INCLUDE_FILE}" IS_NEWER_THAN "${_tests_file}")
  # List the cases with doctest's own script, into a scratch file that becomes the cache only once it checks out.
  set(_listed TRUE)
  set(_scratch "${_tests_file}.new")
  file(REMOVE "${_tests_file}" "${_scratch}")
  execute_process(
    COMMAND "${COMMSIM_DOCTEST_CMAKE}" -D "TEST_TARGET=${_target}" -D "TEST_EXECUTABLE=${_exe}" -D "TEST_EXECUTOR="
            -D "TEST_WORKING_DIR=${COMMSIM_DOCTEST_WORKING_DIR}" -D "TEST_SPEC=" -D "TEST_EXTRA_ARGS="
            -D "TEST_PROPERTIES=${COMMSIM_DOCTEST_PROPERTIES}" -D "TEST_ADD_LABELS=" -D "TEST_PREFIX=" -D "TEST_SUFFIX="
            -D "TEST_LIST=${_target}_TESTS" -D "TEST_JUNIT_OUTPUT_DIR=" -D "CTEST_FILE=${_scratch}"
            -P "${COMMSIM_DOCTEST_ADD_TESTS_SCRIPT}"
    RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(NOT _rc EQUAL 0 OR NOT EXISTS "${_scratch}")
    commsim_doctest_failing_test("${_target}.discovery" "listing the cases of ${_exe} failed (${_rc}): ${_out}")
    return()
  endif()
  execute_process(COMMAND "${_exe}" --count WORKING_DIRECTORY "${COMMSIM_DOCTEST_WORKING_DIR}"
                  RESULT_VARIABLE _rc OUTPUT_VARIABLE _out ERROR_QUIET)
  if(NOT _rc EQUAL 0 OR NOT _out MATCHES "passing the current filters: ([0-9]+)")
    commsim_doctest_failing_test("${_target}.discovery" "${_exe} --count failed (${_rc}): ${_out}")
    return()
  endif()
  set(_expected ${CMAKE_MATCH_1})
  include("${_scratch}")
else()
  include("${_tests_file}")
endif()

# doctestAddTests.cmake splits the listing on ';' (and CMake lists nest in '[...]'): a case name holding either
# would be registered wrongly, so the number of names must be doctest's own count.
set(_problems "")
if(_listed)
  list(LENGTH ${_target}_TESTS _found)
  if(NOT _found EQUAL _expected)
    set(_pieces "")
    foreach(_name IN LISTS ${_target}_TESTS)
      if(_name MATCHES "^ ")  # the part of a name after a semicolon
        string(APPEND _pieces " \"${_name}\"")
      endif()
    endforeach()
    string(APPEND _problems "doctest counts ${_expected} cases in ${_target} but ${_found} names were registered: "
                            "a TEST_CASE name holds a semicolon (write a comma) or an unbalanced square bracket."
                            " Pieces of split names:${_pieces}. ")
  endif()
endif()
# Test names must be unique across every doctest executable: ctest would otherwise keep two tests of one name.
get_property(_names GLOBAL PROPERTY COMMSIM_DOCTEST_NAMES)
get_property(_owners GLOBAL PROPERTY COMMSIM_DOCTEST_OWNERS)
foreach(_name IN LISTS ${_target}_TESTS)
  list(FIND _names "${_name}" _at)
  if(_at GREATER -1)
    list(GET _owners ${_at} _owner)
    string(APPEND _problems "TEST_CASE \"${_name}\" is in ${_owner} and in ${_target}: rename one. ")
  else()
    list(APPEND _names "${_name}")
    list(APPEND _owners "${_target}")
  endif()
endforeach()
set_property(GLOBAL PROPERTY COMMSIM_DOCTEST_NAMES "${_names}")
set_property(GLOBAL PROPERTY COMMSIM_DOCTEST_OWNERS "${_owners}")

if(_problems)
  commsim_doctest_failing_test("${_target}.discovery" "${_problems}")
  if(_listed)
    file(REMOVE "${_scratch}")  # listed again next time
  endif()
elseif(_listed)
  file(RENAME "${_scratch}" "${_tests_file}")
endif()
