#include "hook_table.hpp"

#include "driver_hooks.hpp"

#include <array>
#include <atomic>
#include <cstring>

namespace rmm::shim {

namespace {

constexpr int current = INT_MAX;

// Versions: the CUDA version that introduced the ABI each wrapper has (cuda.h's _v2 forms of the
// memory functions came with 3.2; cuGetProcAddress gained its status argument in 12.0).
// clang-format off
std::array<wrapped_entry_point, 33> const table{{
  {"cuGetProcAddress", 11030, 12000, false, "cuGetProcAddress", reinterpret_cast<void*>(&::legacy_cuGetProcAddress)},
  {"cuGetProcAddress", 12000, current, false, "cuGetProcAddress_v2", reinterpret_cast<void*>(&::cuGetProcAddress_v2)},
  {"cuMemAlloc", 3020, current, false, "cuMemAlloc_v2", reinterpret_cast<void*>(&::cuMemAlloc_v2)},
  {"cuMemFree", 3020, current, false, "cuMemFree_v2", reinterpret_cast<void*>(&::cuMemFree_v2)},
  {"cuMemAllocAsync", 11020, current, false, "cuMemAllocAsync", reinterpret_cast<void*>(&::cuMemAllocAsync)},
  {"cuMemAllocAsync", 11020, current, true, "cuMemAllocAsync_ptsz", reinterpret_cast<void*>(&::cuMemAllocAsync_ptsz)},
  {"cuMemFreeAsync", 11020, current, false, "cuMemFreeAsync", reinterpret_cast<void*>(&::cuMemFreeAsync)},
  {"cuMemFreeAsync", 11020, current, true, "cuMemFreeAsync_ptsz", reinterpret_cast<void*>(&::cuMemFreeAsync_ptsz)},
  // Device memory the shim does not serve: wrapped only to count it in the report.
  {"cuMemAllocManaged", 6000, current, false, "cuMemAllocManaged", reinterpret_cast<void*>(&::cuMemAllocManaged)},
  {"cuMemAllocFromPoolAsync", 11020, current, false, "cuMemAllocFromPoolAsync",
   reinterpret_cast<void*>(&::cuMemAllocFromPoolAsync)},
  {"cuMemAllocFromPoolAsync", 11020, current, true, "cuMemAllocFromPoolAsync_ptsz",
   reinterpret_cast<void*>(&::cuMemAllocFromPoolAsync_ptsz)},
  {"cuMemCreate", 10020, current, false, "cuMemCreate", reinterpret_cast<void*>(&::cuMemCreate)},
  {"cuMemGetInfo", 3020, current, false, "cuMemGetInfo_v2", reinterpret_cast<void*>(&::cuMemGetInfo_v2)},
  {"cuMemGetAddressRange", 3020, current, false, "cuMemGetAddressRange_v2",
   reinterpret_cast<void*>(&::cuMemGetAddressRange_v2)},
  {"cuIpcGetMemHandle", 4010, current, false, "cuIpcGetMemHandle", reinterpret_cast<void*>(&::cuIpcGetMemHandle)},
  {"cuIpcOpenMemHandle", 4010, 11000, false, "cuIpcOpenMemHandle", reinterpret_cast<void*>(&::legacy_cuIpcOpenMemHandle)},
  {"cuIpcOpenMemHandle", 11000, current, false, "cuIpcOpenMemHandle_v2",
   reinterpret_cast<void*>(&::cuIpcOpenMemHandle_v2)},
  {"cuIpcCloseMemHandle", 4010, current, false, "cuIpcCloseMemHandle",
   reinterpret_cast<void*>(&::cuIpcCloseMemHandle)},
  {"cuDeviceSetMemPool", 11020, current, false, "cuDeviceSetMemPool", reinterpret_cast<void*>(&::cuDeviceSetMemPool)},
  {"cuStreamCreate", 2000, current, false, "cuStreamCreate", reinterpret_cast<void*>(&::cuStreamCreate)},
  {"cuStreamCreateWithPriority", 5050, current, false, "cuStreamCreateWithPriority",
   reinterpret_cast<void*>(&::cuStreamCreateWithPriority)},
  {"cuStreamDestroy", 4000, current, false, "cuStreamDestroy_v2", reinterpret_cast<void*>(&::cuStreamDestroy_v2)},
  // Captures: while one is in progress the shim leaves the legacy default stream alone.
  {"cuStreamBeginCapture", 10010, current, false, "cuStreamBeginCapture_v2",
   reinterpret_cast<void*>(&::cuStreamBeginCapture_v2)},
  {"cuStreamBeginCapture", 10010, current, true, "cuStreamBeginCapture_v2_ptsz",
   reinterpret_cast<void*>(&::cuStreamBeginCapture_v2_ptsz)},
  {"cuStreamEndCapture", 10000, current, false, "cuStreamEndCapture", reinterpret_cast<void*>(&::cuStreamEndCapture)},
  {"cuStreamEndCapture", 10000, current, true, "cuStreamEndCapture_ptsz",
   reinterpret_cast<void*>(&::cuStreamEndCapture_ptsz)},
  // What a program asks about memory the shim handed out is answered for the block.
  {"cuPointerGetAttribute", 4000, current, false, "cuPointerGetAttribute",
   reinterpret_cast<void*>(&::cuPointerGetAttribute)},
  {"cuPointerGetAttributes", 7000, current, false, "cuPointerGetAttributes",
   reinterpret_cast<void*>(&::cuPointerGetAttributes)},
  {"cuMemRetainAllocationHandle", 11000, current, false, "cuMemRetainAllocationHandle",
   reinterpret_cast<void*>(&::cuMemRetainAllocationHandle)},
  // A reset destroys the device's memory: what the shim keeps for it is forgotten.
  {"cuDevicePrimaryCtxReset", 7000, 11000, false, "cuDevicePrimaryCtxReset",
   reinterpret_cast<void*>(&::legacy_cuDevicePrimaryCtxReset)},
  {"cuDevicePrimaryCtxReset", 11000, current, false, "cuDevicePrimaryCtxReset_v2",
   reinterpret_cast<void*>(&::cuDevicePrimaryCtxReset_v2)},
  // The stream flavour of these two does not matter: one wrapper serves both requests.
  {"cuStreamCreate", 2000, current, true, "", reinterpret_cast<void*>(&::cuStreamCreate)},
  {"cuStreamDestroy", 4000, current, true, "", reinterpret_cast<void*>(&::cuStreamDestroy_v2)},
}};
// clang-format on

std::array<std::array<std::atomic<std::uint64_t>, 2>, table.size()> installed{};

std::size_t index_of(wrapped_entry_point const& entry) noexcept
{
  return static_cast<std::size_t>(&entry - table.data());
}

}  // namespace

std::span<wrapped_entry_point const> wrapped_entry_points() noexcept { return table; }

wrapped_entry_point const* wrapper_for_proc(char const* name, int version, cuuint64_t flags) noexcept
{
  bool const per_thread           = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  wrapped_entry_point const* same = nullptr;  // the default flavour's row, for a per-thread request
  for (auto const& entry : table) {
    if (version < entry.first_version || version >= entry.end_version || entry.base_name != name) { continue; }
    if (entry.per_thread == per_thread) { return &entry; }
    if (!entry.per_thread) { same = &entry; }
  }
  // Asked for its per-thread flavour, an entry point without a stream argument (it has no row of
  // that flavour here) is the same function as the default one: the driver answers with that.
  return per_thread ? same : nullptr;
}

wrapped_entry_point const* wrapper_for_symbol(char const* name) noexcept
{
  for (auto const& entry : table) {
    if (!entry.exported_name.empty() && entry.exported_name == name) { return &entry; }
  }
  return nullptr;
}

void note_installed(wrapped_entry_point const& entry, found_through how) noexcept
{
  installed[index_of(entry)][static_cast<std::size_t>(how)].fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t times_installed(wrapped_entry_point const& entry, found_through how) noexcept
{
  return installed[index_of(entry)][static_cast<std::size_t>(how)].load(std::memory_order_relaxed);
}

}  // namespace rmm::shim
