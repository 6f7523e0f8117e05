# myattn_probe_dnnl(<result-var>): TRUE when find_package(dnnl CONFIG) can load in this project.
#
# oneDNN is an optional benchmark peer, but its package config can fail a configure that asked
# for it QUIET: Debian's dnnl-config.cmake calls find_package(OpenCL REQUIRED), and libdnnl-dev
# installed without its recommended ocl-icd-opencl-dev has no OpenCL to find. So the package is
# first loaded in a separate configure (cmake/probe-dnnl), with this project's search settings;
# when that fails, the peer is off and one line says why.
function(myattn_probe_dnnl result)
  set(${result} FALSE PARENT_SCOPE)
  # What decides where and whether packages are found travels to the probe.
  set(_args -G "${CMAKE_GENERATOR}" "-DCMAKE_CXX_COMPILER=${CMAKE_CXX_COMPILER}")
  foreach(_var CMAKE_TOOLCHAIN_FILE CMAKE_PREFIX_PATH CMAKE_FIND_ROOT_PATH CMAKE_MODULE_PATH dnnl_DIR
               OpenCL_INCLUDE_DIR OpenCL_LIBRARY TBB_DIR)
    if(DEFINED ${_var})
      list(JOIN ${_var} "\\;" _value)
      list(APPEND _args "-D${_var}=${_value}")
    endif()
  endforeach()
  get_cmake_property(_cache CACHE_VARIABLES)
  foreach(_var IN LISTS _cache)
    if(_var MATCHES "^CMAKE_(DISABLE|REQUIRE)_FIND_PACKAGE_")
      list(APPEND _args "-D${_var}=${${_var}}")
    endif()
  endforeach()

  set(_dir "${CMAKE_BINARY_DIR}/CMakeFiles/myattn-probe-dnnl")
  file(REMOVE_RECURSE "${_dir}")
  execute_process(COMMAND "${CMAKE_COMMAND}" ${_args} -S "${PROJECT_SOURCE_DIR}/cmake/probe-dnnl" -B "${_dir}"
                  RESULT_VARIABLE _status OUTPUT_VARIABLE _out ERROR_VARIABLE _out)
  if(_status EQUAL 0)
    set(${result} TRUE PARENT_SCOPE)
    return()
  endif()
  if(_out MATCHES "Could not find a package configuration file provided by \"dnnl\"")
    return() # not installed: nothing to say (the peer list shows it)
  endif()
  file(WRITE "${_dir}.log" "${_out}")
  # The first line of the package's own error says most (e.g. "Could NOT find OpenCL (...)").
  set(_why "its package config fails")
  if(_out MATCHES "CMake Error[^\n]*:\n(( +[^\n]+\n)+)")
    string(REGEX REPLACE "[ \n]+" " " _why "${CMAKE_MATCH_1}")
    string(STRIP "${_why}" _why)
  endif()
  message(STATUS "myattn_bench: oneDNN peer off: ${_why} (log: ${_dir}.log)")
endfunction()
