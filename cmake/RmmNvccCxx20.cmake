# SPDX-License-Identifier: Apache-2.0
# CMake < 3.27 does not know that nvcc >= 12 takes -std=c++20: without this, CUDA_STANDARD 20 (and
# cuda_std_20) silently compile with nvcc's default, C++17. Include after enabling CUDA.
if(NOT CMAKE_CUDA20_STANDARD_COMPILE_OPTION AND CMAKE_CUDA_COMPILER_VERSION VERSION_GREATER_EQUAL 12.0)
  set(CMAKE_CUDA20_STANDARD_COMPILE_OPTION "-std=c++20")
  set(CMAKE_CUDA20_EXTENSION_COMPILE_OPTION "-std=c++20")
  list(APPEND CMAKE_CUDA_COMPILE_FEATURES cuda_std_20)
  set(CMAKE_CUDA20_COMPILE_FEATURES cuda_std_20)
endif()
