# SPDX-License-Identifier: Apache-2.0
# The shim exports exactly what shim/src/driver/entry_points.def lists: every hook and control function,
# and nothing else (a symbol of the resource library leaking out would clash with another librmm in
# the process; a listed hook missing would leave the driver's function in place unnoticed).
# Usage: cmake -DNM=<nm> -DLIBRARY=<librmm_shim.so> -DEXPORTS_MAP=<generated exports.map> -P check_exports.cmake
execute_process(COMMAND "${NM}" -D --defined-only "${LIBRARY}" OUTPUT_VARIABLE nm_output RESULT_VARIABLE nm_status)
if(NOT nm_status EQUAL 0)
  message(FATAL_ERROR "${NM} -D ${LIBRARY} failed (${nm_status})")
endif()
string(REGEX MATCHALL "[0-9a-fA-F]+ [TWi] [A-Za-z_][A-Za-z0-9_]*" exported_lines "${nm_output}")
set(exported "")
foreach(line IN LISTS exported_lines)
  string(REGEX REPLACE "^[0-9a-fA-F]+ [TWi] " "" symbol "${line}")
  list(APPEND exported "${symbol}")
endforeach()

file(STRINGS "${EXPORTS_MAP}" map_lines REGEX "^[ \t]*[A-Za-z_][A-Za-z0-9_]*;")
set(listed "")
foreach(line IN LISTS map_lines)
  string(REGEX REPLACE "^[ \t]*([A-Za-z_][A-Za-z0-9_]*);.*" "\\1" symbol "${line}")
  list(APPEND listed "${symbol}")
endforeach()

list(LENGTH listed listed_count)
if(listed_count LESS 40)
  message(FATAL_ERROR "${EXPORTS_MAP} lists ${listed_count} symbols: the generated list looks truncated")
endif()
set(missing ${listed})
list(REMOVE_ITEM missing ${exported})
set(unlisted ${exported})
list(REMOVE_ITEM unlisted ${listed})
if(missing OR unlisted)
  message(FATAL_ERROR "librmm_shim.so's exports differ from shim/src/driver/entry_points.def\n"
                      "  listed but not exported: ${missing}\n  exported but not listed: ${unlisted}")
endif()
message(STATUS "${listed_count} symbols listed, all exported, nothing else")
