# SPDX-License-Identifier: Apache-2.0
# cmake -DMODE=symbols|closure -DOBJECT_LISTS=<list file>|<list file> [-DNM=nm] [-DCXX=c++ -DOBJDUMP=objdump
#       -DWORK_DIR=dir] -P check_seam.cmake
#
# symbols: fails when an object has an undefined symbol of the CUDA runtime (cuda[A-Z]..., __cuda...)
#          or of the driver (cu[A-Z]...: a direct call that bypasses the driver table).
# closure: links all objects into a shared library with --no-undefined, without CUDA, and fails
#          when that does not link or the library needs libcudart or libcuda.
string(REPLACE "|" ";" lists "${OBJECT_LISTS}")
set(objects "")
foreach(list_file IN LISTS lists)
  file(STRINGS "${list_file}" listed)
  list(APPEND objects ${listed})
endforeach()
list(LENGTH objects count)
if(count LESS 10)
  message(FATAL_ERROR "expected the objects of rmm_core_objects and rmm_config_objects, found ${count}: ${objects}")
endif()

if(MODE STREQUAL "symbols")
  set(offenders "")
  foreach(object IN LISTS objects)
    execute_process(COMMAND "${NM}" -u "${object}" OUTPUT_VARIABLE undefined RESULT_VARIABLE status)
    if(NOT status EQUAL 0)
      message(FATAL_ERROR "${NM} -u ${object} failed (${status})")
    endif()
    string(REGEX MATCHALL "[ \t]U[ \t]+(cuda[A-Z]|__cuda|cu[A-Z])[A-Za-z0-9_]*" found "${undefined}")
    foreach(line IN LISTS found)
      string(REGEX REPLACE "^[ \t]U[ \t]+" "" symbol "${line}")
      get_filename_component(name "${object}" NAME)
      string(APPEND offenders "\n  ${name}: ${symbol}")
    endforeach()
  endforeach()
  if(offenders)
    message(FATAL_ERROR "the allocation path must reach CUDA only through the driver table "
                        "(core/src/detail/cuda_driver.hpp, RMM_CU_TRY), but these objects reference CUDA "
                        "symbols:${offenders}")
  endif()
  message(STATUS "${count} objects, no CUDA runtime or direct driver symbol")
elseif(MODE STREQUAL "closure")
  set(library "${WORK_DIR}/librmm_seam_closure.so")
  file(REMOVE "${library}")
  separate_arguments(link_flags UNIX_COMMAND "${LINK_FLAGS}")  # a sanitizer build's runtime
  execute_process(COMMAND "${CXX}" -shared -o "${library}" ${objects} ${link_flags} -Wl,--no-undefined -pthread -ldl
                  RESULT_VARIABLE status OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "the objects do not link without the CUDA runtime:\n${out}${err}")
  endif()
  execute_process(COMMAND "${OBJDUMP}" -p "${library}" OUTPUT_VARIABLE headers RESULT_VARIABLE status)
  if(NOT status EQUAL 0)
    message(FATAL_ERROR "${OBJDUMP} -p ${library} failed (${status})")
  endif()
  string(REGEX MATCHALL "NEEDED[ \t]+[^\n]+" needed "${headers}")
  string(REGEX REPLACE "NEEDED[ \t]+" "" needed "${needed}")
  foreach(entry IN LISTS needed)
    if(entry MATCHES "^libcuda|^libcudart")
      message(FATAL_ERROR "the objects need ${entry}; they may need only libc, libstdc++, libgcc and libdl: ${needed}")
    endif()
  endforeach()
  message(STATUS "${count} objects link without CUDA; needed: ${needed}")
else()
  message(FATAL_ERROR "MODE must be symbols or closure, not '${MODE}'")
endif()
