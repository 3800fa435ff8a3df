// SPDX-License-Identifier: Apache-2.0
// The rest of NVIDIA's libcudart.so.13 exports: present so that any program linked against the real
// library loads, and each fails loudly (once, on stderr) with cudaErrorNotSupported when called.
//
// No CUDA header here on purpose: the stubs take no parameters (the caller's arguments are simply
// ignored, which the x86-64 calling convention allows) and return an int-sized status.
#include <atomic>
#include <cstdio>

namespace rmm_emu::rt {
int stub_status();                 // cudaErrorCudartUnloading after exit, else records cudaErrorNotSupported
void note_once(char const* what);  // defined in init.cpp
}  // namespace rmm_emu::rt

#define RMM_RT_UNIMPLEMENTED(name)                                                                                     \
  extern "C" __attribute__((visibility("default"))) int name()                                                         \
  {                                                                                                                    \
    static std::atomic<bool> said{false};                                                                              \
    if (!said.exchange(true)) { ::rmm_emu::rt::note_once(#name " is not emulated; returning cudaErrorNotSupported"); } \
    return ::rmm_emu::rt::stub_status();                                                                               \
  }

#include "unimplemented.inc"
