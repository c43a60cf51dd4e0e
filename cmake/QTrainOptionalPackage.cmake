# qtrain_find_optional_config(<package> <target>)
#
# Loads the CMake package config of an optional dependency (a benchmark's
# reference library) only if it loads cleanly. A package config can fail the
# whole configure in ways that QUIET does not silence: Debian's
# dnnl-config.cmake calls find_package(OpenCL) as required, and a broken or
# half-installed config may call message(FATAL_ERROR). So the config is first
# loaded in a separate CMake process; only if that succeeds and defines
# <target> is it loaded here. Otherwise <package>_FOUND is false and a status
# line says why, and the caller skips what needs it.
#
# The probe's verdict is cached per <package>_DIR; -D<package>_DIR=... and
# CMAKE_PREFIX_PATH reach the probe as they would reach find_package;
# -DCMAKE_DISABLE_FIND_PACKAGE_<package>=ON skips the package.
include_guard(GLOBAL)

function(qtrain_probe_config package target result_var reason_var)
  set(probe_dir "${CMAKE_BINARY_DIR}/CMakeFiles/qtrain-probe-${package}")
  file(WRITE "${probe_dir}/CMakeLists.txt"
    "cmake_minimum_required(VERSION 3.20)\n"
    "project(qtrain_probe_${package} LANGUAGES C CXX)\n"
    "find_package(${package} CONFIG REQUIRED)\n"
    "if(NOT TARGET ${target})\n"
    "  message(FATAL_ERROR \"the config defines no target ${target}\")\n"
    "endif()\n")
  set(args -S "${probe_dir}" -B "${probe_dir}/build"
    "-DCMAKE_C_COMPILER=${CMAKE_C_COMPILER}"
    "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}")
  if(${package}_DIR)
    list(APPEND args "-D${package}_DIR=${${package}_DIR}")
  endif()
  if(CMAKE_PREFIX_PATH)
    string(REPLACE ";" "\\;" prefix "${CMAKE_PREFIX_PATH}")
    list(APPEND args "-DCMAKE_PREFIX_PATH=${prefix}")
  endif()
  file(REMOVE_RECURSE "${probe_dir}/build")
  execute_process(COMMAND "${CMAKE_COMMAND}" ${args}
    RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(rc EQUAL 0)
    set(${result_var} TRUE PARENT_SCOPE)
    set(${reason_var} "" PARENT_SCOPE)
    return()
  endif()
  # The line of the probe's error that names what is missing, else the
  # first error line, for the status.
  string(REGEX MATCH "Could (NOT|not) find[^\n]*\n?[^\n]*" first "${err}")
  if(NOT first)
    string(REGEX MATCH "CMake Error[^\n]*" first "${err}")
  endif()
  string(REGEX REPLACE "[ \n]+" " " first "${first}")
  string(STRIP "${first}" first)
  if(NOT first)
    set(first "its config failed to load")
  endif()
  set(first "${first}; probe in ${probe_dir}")
  set(${result_var} FALSE PARENT_SCOPE)
  set(${reason_var} "${first}" PARENT_SCOPE)
endfunction()

macro(qtrain_find_optional_config package target)
  set(${package}_FOUND FALSE)
  if(CMAKE_DISABLE_FIND_PACKAGE_${package})
    message(STATUS "${package}: not used (CMAKE_DISABLE_FIND_PACKAGE_${package})")
  else()
    set(_qtrain_probe_key "${${package}_DIR}|${CMAKE_PREFIX_PATH}")
    if(NOT QTRAIN_PROBE_${package}_KEY STREQUAL _qtrain_probe_key)
      qtrain_probe_config(${package} ${target} _qtrain_probe_ok _qtrain_probe_why)
      set(QTRAIN_PROBE_${package}_OK "${_qtrain_probe_ok}" CACHE INTERNAL "")
      set(QTRAIN_PROBE_${package}_WHY "${_qtrain_probe_why}" CACHE INTERNAL "")
      set(QTRAIN_PROBE_${package}_KEY "${_qtrain_probe_key}" CACHE INTERNAL "")
    endif()
    if(QTRAIN_PROBE_${package}_OK)
      find_package(${package} CONFIG QUIET)
    else()
      message(STATUS "${package}: not usable (${QTRAIN_PROBE_${package}_WHY})")
    endif()
  endif()
endmacro()
