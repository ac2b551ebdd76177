# Layer order of the commsim libraries: fails, naming file and line, where a library includes a header from above or beside it.
#
#   cmake -P cmake/check_layers.cmake          (from the repository root; CTest runs it as layers.include_order)
#
# Layers, bottom-up; a library may include its own headers and those of any lower layer, never a higher one and
# never a library of its own layer:
#   0  core/                                   commsim/core/
#   1  models/                                 commsim/models/
#   1  workloads/                              commsim/workloads/
#      workloads/sim/<name>.cpp belong to sim (layer 3), workloads/measure/<name>.cpp to measure (layer 2)
#   2  topologies/                             commsim/topo/
#   2  measure/                                commsim/measure/
#   3  sim/ (engine, workloads, sweep, bench)  commsim/sim/
#   4  validation/                             commsim/validation/
#   5  sim/cli/ and measure/cli/: the commsim and commsim-measure tools, may include anything
# Every C++/CUDA file under a library folder counts, its tests/ (and fuzz/, bench/) included: tests hold to their
# library's rule; their own helpers (`#include "tiny_topology.hpp"`) are not commsim/<x>/ headers and are not checked.
# A `commsim/<x>/` folder that is no library's is an error too, so that a new library is placed in the order here.
cmake_minimum_required(VERSION 3.25)
if(NOT DEFINED SOURCE_DIR)
  get_filename_component(SOURCE_DIR "${CMAKE_CURRENT_LIST_DIR}/.." ABSOLUTE)
endif()

# Library folders: folder | library | layer. A file belongs to the longest folder that holds it.
set(FOLDERS
  "core|core|0"
  "models|models|1"
  "workloads|workloads|1"
  "workloads/measure|measure|2"
  "workloads/sim|sim|3"
  "topologies|topo|2"
  "measure|measure|2"
  "sim|sim|3"
  "validation|validation|4"
  "sim/cli|cli|5"
  "measure/cli|cli|5")
# Header folders: commsim/<name>/ | library.
set(HEADER_FOLDERS "core|core" "models|models" "workloads|workloads" "topo|topo" "measure|measure" "sim|sim"
                   "validation|validation")

# Known breaches, allowed until they are fixed: file | included header | why. Each one is printed on every run.
# Empty this list as they go; an entry that no longer matches anything is reported so it can be removed.
set(ALLOWED)

foreach(entry IN LISTS FOLDERS)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 folder)
  list(GET parts 1 library)
  list(GET parts 2 layer)
  set(layer_of_${library} ${layer})
endforeach()
foreach(entry IN LISTS HEADER_FOLDERS)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 name)
  list(GET parts 1 library)
  set(library_of_header_${name} ${library})
endforeach()

# Each file, once, with the library of the longest folder holding it.
set(files)
foreach(entry IN LISTS FOLDERS)
  string(REPLACE "|" ";" parts "${entry}")
  list(GET parts 0 folder)
  list(GET parts 1 library)
  if(NOT IS_DIRECTORY "${SOURCE_DIR}/${folder}")
    continue()  # workloads/ before it exists
  endif()
  file(GLOB_RECURSE found RELATIVE "${SOURCE_DIR}" "${SOURCE_DIR}/${folder}/*.hpp" "${SOURCE_DIR}/${folder}/*.h"
       "${SOURCE_DIR}/${folder}/*.hh" "${SOURCE_DIR}/${folder}/*.cpp" "${SOURCE_DIR}/${folder}/*.cc"
       "${SOURCE_DIR}/${folder}/*.cxx" "${SOURCE_DIR}/${folder}/*.cu" "${SOURCE_DIR}/${folder}/*.cuh"
       "${SOURCE_DIR}/${folder}/*.inl" "${SOURCE_DIR}/${folder}/*.ipp")
  foreach(file IN LISTS found)
    string(LENGTH "${folder}" length)
    if(NOT DEFINED owner_length_of_${file} OR length GREATER owner_length_of_${file})
      set(owner_length_of_${file} ${length})
      set(owner_of_${file} ${library})
    endif()
    list(APPEND files "${file}")
  endforeach()
endforeach()
list(REMOVE_DUPLICATES files)
list(SORT files)

set(violations)
set(allowed_hits)
set(allowed_used)
foreach(file IN LISTS files)
  set(library ${owner_of_${file}})
  file(READ "${SOURCE_DIR}/${file}" text)
  # One list element per line, whatever the line holds (CMake lists treat ; \ [ ] specially).
  string(REPLACE "\\" "<bs>" text "${text}")
  string(REPLACE ";" "<sc>" text "${text}")
  string(REPLACE "[" "<lb>" text "${text}")
  string(REPLACE "]" "<rb>" text "${text}")
  string(REPLACE "\n" ";" lines "${text}")
  set(number 0)
  foreach(line IN LISTS lines)
    math(EXPR number "${number} + 1")
    if(NOT line MATCHES "^[ \t]*#[ \t]*include[ \t]*[<\"]([^>\"]+)[>\"]")
      continue()
    endif()
    set(header "${CMAKE_MATCH_1}")
    if(NOT header MATCHES "(^|/)commsim/([A-Za-z0-9_]+)/")
      continue()
    endif()
    set(name "${CMAKE_MATCH_2}")
    set(where "${file}:${number}")
    if(library STREQUAL "cli")
      continue()
    endif()
    if(NOT DEFINED library_of_header_${name})
      list(APPEND violations "${where}: ${library} includes ${header}, and commsim/${name}/ is no library's header folder (place it in cmake/check_layers.cmake)")
      continue()
    endif()
    set(target ${library_of_header_${name}})
    if(target STREQUAL library OR layer_of_${target} LESS layer_of_${library})
      continue()
    endif()
    if(layer_of_${target} EQUAL layer_of_${library})
      set(why "${target} is beside it (both layer ${layer_of_${library}})")
    else()
      set(why "${target} is above it (layer ${layer_of_${target}} over ${layer_of_${library}})")
    endif()
    set(is_allowed FALSE)
    foreach(entry IN LISTS ALLOWED)
      string(REPLACE "|" ";" parts "${entry}")
      list(GET parts 0 allowed_file)
      list(GET parts 1 allowed_header)
      list(GET parts 2 reason)
      if(allowed_file STREQUAL file AND allowed_header STREQUAL header)
        set(is_allowed TRUE)
        list(APPEND allowed_hits "${where}: ${library} includes ${header}: ${why}. Allowed for now: ${reason}")
        list(APPEND allowed_used "${entry}")
      endif()
    endforeach()
    if(NOT is_allowed)
      list(APPEND violations "${where}: ${library} includes ${header}: ${why}")
    endif()
  endforeach()
endforeach()

list(LENGTH files checked)
foreach(hit IN LISTS allowed_hits)
  message("${hit}")
endforeach()
foreach(entry IN LISTS ALLOWED)
  if(NOT entry IN_LIST allowed_used)
    string(REPLACE "|" ";" parts "${entry}")
    list(GET parts 0 allowed_file)
    list(GET parts 1 allowed_header)
    message("allow-list entry ${allowed_file} -> ${allowed_header} matches no include any more: "
            "remove it from cmake/check_layers.cmake")
  endif()
endforeach()
if(violations)
  foreach(violation IN LISTS violations)
    message("${violation}")
  endforeach()
  list(LENGTH violations count)
  message(FATAL_ERROR "${count} include(s) break the layer order (cmake/check_layers.cmake lists the layers)")
endif()
message("layer order holds in ${checked} files")
