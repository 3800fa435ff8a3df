# SPDX-License-Identifier: Apache-2.0
# Warning flags for every target the project compiles itself (not for consumers of rmm::rmm).
add_library(rmm_warnings INTERFACE)
target_compile_options(rmm_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-Wall -Wextra -Wpedantic -Wshadow -Wnon-virtual-dtor -Wcast-align
                              -Wunused -Woverloaded-virtual -Wdouble-promotion>
  $<$<COMPILE_LANGUAGE:CUDA>:-Xcompiler=-Wall,-Wextra --Werror=cross-execution-space-call>
  $<$<AND:$<BOOL:${RMM_WARNINGS_AS_ERRORS}>,$<COMPILE_LANGUAGE:C,CXX>>:-Werror>
  $<$<AND:$<BOOL:${RMM_WARNINGS_AS_ERRORS}>,$<COMPILE_LANGUAGE:CUDA>>:-Werror=all-warnings -Xcompiler=-Werror>)
# Messages that name a source (RMM failure at: FILE:LINE) name it by its path in the project, not
# by where the build machine keeps it.
target_compile_options(rmm_warnings INTERFACE
  $<$<COMPILE_LANGUAGE:C,CXX>:-fmacro-prefix-map=${PROJECT_SOURCE_DIR}/=>)
