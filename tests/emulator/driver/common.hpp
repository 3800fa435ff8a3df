// SPDX-License-Identifier: Apache-2.0
// Shared by every translation unit of the emulated driver (libcuda.so.1).
#pragma once

// Built the way NVIDIA builds its own libraries: with __CUDA_API_VERSION_INTERNAL the toolkit
// headers declare every exported variant under its real name (cuMemAlloc with the 32-bit ABI,
// cuMemAlloc_v2, cuMemcpy and cuMemcpy_ptds, ...), so the compiler checks each definition here
// against the real prototype, and cudaTypedefs.h provides the PFN type for each (name, version).
#define __CUDA_API_VERSION_INTERNAL 1
#include <cuda.h>
#include <cudaTypedefs.h>

#include <cstdint>

// Marks an entry point that leaves the library (the version script decides the final export list).
#define RMM_EMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace rmm_emu {

inline constexpr std::uint64_t KiB = 1024;
inline constexpr std::uint64_t MiB = 1024 * KiB;
inline constexpr std::uint64_t GiB = 1024 * MiB;
inline constexpr std::uint64_t TiB = 1024 * GiB;

// What cuDriverGetVersion reports; cuGetProcAddress refuses newer versions.
inline constexpr int kDriverVersion = 13000;

// Callers keep v far below 2^63, so the sum cannot wrap.
constexpr std::uint64_t round_up(std::uint64_t v, std::uint64_t a) { return (v + a - 1) / a * a; }

}  // namespace rmm_emu
