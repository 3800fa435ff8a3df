# SPDX-License-Identifier: Apache-2.0
# CCCL 3.5 or newer: cuda::mr::resource_ref, cuda::mr::any_resource and the stream-ordered resource
# concept that rmm's interface is made of, and the Thrust and CUB that go with them. The CUDA 13.0
# toolkit ships CCCL 3.0.1, which has none of these, so the headers come from the nvidia-cuda-cccl
# wheel: scripts/install-deps.sh unpacks it into .deps/cccl, and `pip install` of the Python
# package lists it among its build requirements. Set RMM_CCCL_INCLUDE_DIR to use another copy.
set(RMM_CCCL_MIN_VERSION 3005000)

# The Python interpreters' search paths, where a pip build finds the wheel's headers.
set(rmm_cccl_python_hints)
if(Python_EXECUTABLE)  # set by scikit-build-core: the interpreter running the build
  set(rmm_python_for_cccl "${Python_EXECUTABLE}")
else()
  find_program(rmm_python_for_cccl NAMES python3 python)
endif()
if(rmm_python_for_cccl)
  execute_process(COMMAND "${rmm_python_for_cccl}" -c "import sys; print(';'.join(p for p in sys.path if p))"
                  OUTPUT_VARIABLE rmm_cccl_python_hints OUTPUT_STRIP_TRAILING_WHITESPACE ERROR_QUIET)
endif()

find_path(RMM_CCCL_INCLUDE_DIR cuda/std/__cccl/version.h
  HINTS "${CMAKE_CURRENT_LIST_DIR}/../.deps/cccl" ${rmm_cccl_python_hints}
  PATH_SUFFIXES nvidia/cu13/include/cccl include/cccl
  NO_CMAKE_SYSTEM_PATH NO_SYSTEM_ENVIRONMENT_PATH
  DOC "CCCL 3.5 (or newer) headers: the folder holding cuda/, thrust/ and cub/")
if(NOT RMM_CCCL_INCLUDE_DIR)
  message(FATAL_ERROR "CCCL 3.5 headers not found. Run scripts/install-deps.sh (it unpacks the "
                      "nvidia-cuda-cccl wheel into .deps/cccl), or pass -DRMM_CCCL_INCLUDE_DIR=<folder with cuda/, thrust/, cub/>.")
endif()

file(STRINGS "${RMM_CCCL_INCLUDE_DIR}/cuda/std/__cccl/version.h" rmm_cccl_version_line
     REGEX "^#define CCCL_VERSION [0-9]+")
string(REGEX REPLACE "^#define CCCL_VERSION ([0-9]+).*" "\\1" RMM_CCCL_VERSION "${rmm_cccl_version_line}")
if(NOT RMM_CCCL_VERSION OR RMM_CCCL_VERSION LESS RMM_CCCL_MIN_VERSION)
  message(FATAL_ERROR "CCCL in ${RMM_CCCL_INCLUDE_DIR} is version '${RMM_CCCL_VERSION}'; rmm needs "
                      "${RMM_CCCL_MIN_VERSION} (3.5) or newer. The CUDA 13.0 toolkit's own copy is 3.0.1: run "
                      "scripts/install-deps.sh, or pass -DRMM_CCCL_INCLUDE_DIR=<a CCCL 3.5 include folder> "
                      "(and clear the old value from the build's CMakeCache.txt).")
endif()
message(STATUS "CCCL ${RMM_CCCL_VERSION}: ${RMM_CCCL_INCLUDE_DIR}")

include(${CMAKE_CURRENT_LIST_DIR}/rmm-toolkit-cccl.cmake)
rmm_drop_toolkit_cccl()
