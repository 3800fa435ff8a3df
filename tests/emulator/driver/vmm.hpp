// SPDX-License-Identifier: Apache-2.0
// Virtual memory management (cuMemAddressReserve / cuMemCreate / cuMemMap / cuMemSetAccess ...).
//
// A reservation is a PROT_NONE, MAP_NORESERVE range of host address space. A physical allocation
// (cuMemCreate) is bookkeeping: its size counts against the device's capacity until it is
// released and no longer mapped. A mapping replaces part of a reservation with fresh anonymous
// read-write pages (two mappings of one handle do not share bytes), until the allocation is
// exported (cuMemExportToShareableHandle, for one that asked for the POSIX file descriptor type):
// from then on its memory is a memfd that every mapping of it shares, and so does every process
// that imports it (cuMemImportFromShareableHandle), as CUDA IPC of such memory does. Each mapping
// is entered in the table
// of live allocations as MemKind::vmm, which gives it pointer attributes, cuMemGetAddressRange and
// bounds checks. Copies and sets reach a mapping only once cuMemSetAccess granted access to it;
// they may run across adjacent mappings.
#pragma once

#include "common.hpp"
#include "memory.hpp"

#include <cstdint>
#include <shared_mutex>

namespace rmm_emu {

class Context;

// cuMemGetAllocationGranularity, minimum and recommended alike (an H200's large page).
inline constexpr std::uint64_t kVmmGranularity = 2 * MiB;

// Fresh mappings read kFreshPoison in their first kVmmPoisonLimit bytes (zero after): a pool grown
// in 2 MiB steps would otherwise touch half of all the memory it maps.
inline constexpr std::uint64_t kVmmPoisonLimit = 64 * KiB;

// Held shared by queued copies and sets that touch mapped memory while they run, exclusively while
// mappings are torn down. Taken before memory_mutex(), never after it.
std::shared_mutex& vmm_mapping_mutex();

// ---- callers hold memory_mutex() ----
// True when addr lies in a reservation (mapped or not).
bool vmm_reserved(std::uint64_t addr);
// [addr, addr + bytes) is covered by adjacent mappings, each accessible (READ for reads,
// READWRITE for writes) to some device. addr lies in a mapping.
CUresult vmm_check_span(std::uint64_t addr, std::uint64_t bytes, bool write);
// [addr, addr + bytes) is still covered by adjacent mappings (what a queued operation re-checks).
bool vmm_span_mapped(std::uint64_t addr, std::uint64_t bytes);
// CU_POINTER_ATTRIBUTE_ACCESS_FLAGS of the mapping at `base`: the widest access any device has.
int vmm_pointer_access_flags(std::uint64_t base);
// Whether the physical allocation mapped at `base` was made for hardware decompression
// (cuMemCreate's usage CU_MEM_CREATE_USAGE_HW_DECOMPRESS).
bool vmm_pointer_hw_decompress(std::uint64_t base);
// Physical allocations still holding memory (unreleased, or released but mapped), for the control API.
void vmm_live_stats(int device, LiveStats& stats);

// A queued operation found VMM memory unmapped under it: a GPU reports an illegal address. Prints
// why on stderr and aborts.
[[noreturn]] void vmm_fault(char const* what, std::uint64_t addr, std::uint64_t bytes);

// The same where sticky faults are on (RMM_EMU_STICKY_FAULTS): `ctx` keeps CUDA_ERROR_ILLEGAL_ADDRESS
// and the operation is dropped. Otherwise as vmm_fault.
void vmm_fault_context(Context& ctx, char const* what, std::uint64_t addr, std::uint64_t bytes);

}  // namespace rmm_emu
