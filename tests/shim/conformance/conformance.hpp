// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the conformance programs print. Each is an ordinary CUDA program, knowing nothing of rmm,
// that checks what cudaMalloc and its relatives promise, and prints
//   check NAME=VALUE   what must be the same with and without the shim (conformance_test.cpp
//                      compares the two runs line by line)
//   fact NAME=VALUE    what was measured (addresses' alignment, codes the driver chose), for people
// A call that fails where it must not prints `FAIL: ...` and the program exits 2.

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>

namespace conformance {

inline void check(std::string const& name, std::string const& value)
{
  std::printf("check %s=%s\n", name.c_str(), value.c_str());
  std::fflush(stdout);
}

inline void check(std::string const& name, bool ok) { check(name, std::string{ok ? "ok" : "bad"}); }

template <class T>
void fact(std::string const& name, T const& value)
{
  if constexpr (std::is_convertible_v<T, std::string>) {
    std::printf("fact %s=%s\n", name.c_str(), std::string{value}.c_str());
  } else {
    std::printf("fact %s=%s\n", name.c_str(), std::to_string(value).c_str());
  }
  std::fflush(stdout);
}

inline std::string name_of(cudaError_t e) { return cudaGetErrorName(e); }

inline std::string name_of(CUresult r)
{
  char const* name = nullptr;
  if (cuGetErrorName(r, &name) != CUDA_SUCCESS || name == nullptr) { return "CUresult " + std::to_string(r); }
  return name;
}

[[noreturn]] inline void fail(std::string const& call, std::string const& error)
{
  std::printf("FAIL: %s returned %s\n", call.c_str(), error.c_str());
  std::fflush(stdout);
  std::exit(2);
}

/// Exits when a call that must succeed fails.
inline void require(cudaError_t e, char const* call)
{
  if (e != cudaSuccess) { fail(call, name_of(e)); }
}
inline void require(CUresult r, char const* call)
{
  if (r != CUDA_SUCCESS) { fail(call, name_of(r)); }
}

/// The largest power of two dividing `address` (up to 1 GiB).
inline std::uint64_t alignment_of(void const* ptr)
{
  auto const address      = reinterpret_cast<std::uintptr_t>(ptr);
  std::uint64_t alignment = 1;
  while (alignment < (std::uint64_t{1} << 30) && address % (alignment * 2) == 0) { alignment *= 2; }
  return alignment;
}

}  // namespace conformance
