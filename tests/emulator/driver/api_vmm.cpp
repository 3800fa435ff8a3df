// SPDX-License-Identifier: Apache-2.0
// Entry points: virtual memory management (reservations, physical allocations, mappings, access),
// and the tables behind them (see vmm.hpp). Everything is guarded by memory_mutex(); tearing a
// mapping down also holds vmm_mapping_mutex() exclusively, so no queued copy is inside it then.
#include "vmm.hpp"

#include "config.hpp"
#include "context.hpp"
#include "device.hpp"
#include "memory.hpp"
#include "state.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <string_view>
#include <vector>

using namespace rmm_emu;

namespace {

struct Physical {
  CUmemAllocationProp prop{};
  int device         = 0;
  std::uint64_t size = 0;
  unsigned refs      = 1;  // cuMemCreate + cuMemRetainAllocationHandle - cuMemRelease
  unsigned mappings  = 0;  // live cuMemMap mappings of it
  // Once exported (or imported), the memory is a memfd, which every mapping shares, in this
  // process and in those it was exported to; until then (-1) each mapping is anonymous memory of
  // its own, which the kernel makes faster than shared memory.
  int fd        = -1;
  bool imported = false;  // another process's (cuMemImportFromShareableHandle): not this device's capacity
};

// The name of the emulator's memfds, by which an imported descriptor is recognised.
constexpr char kMemfdName[] = "rmm-emu-physical";

struct Mapping {
  std::uint64_t base                  = 0;
  std::uint64_t size                  = 0;
  CUmemGenericAllocationHandle handle = 0;
  std::uint64_t read                  = 0;  // devices (bit per ordinal) granted READ or READWRITE
  std::uint64_t write                 = 0;  // devices granted READWRITE
};

// Never destroyed (see settings()).
std::map<CUmemGenericAllocationHandle, Physical>& physicals()
{
  static auto* m = new std::map<CUmemGenericAllocationHandle, Physical>;
  return *m;
}
std::map<std::uint64_t, std::uint64_t>& reservations()  // base -> size
{
  static auto* m = new std::map<std::uint64_t, std::uint64_t>;
  return *m;
}
std::map<std::uint64_t, Mapping>& mappings()  // by base
{
  static auto* m = new std::map<std::uint64_t, Mapping>;
  return *m;
}

// Handles are opaque numbers, never reused, so a stale or made-up one is recognised.
std::atomic<CUmemGenericAllocationHandle> g_next_handle{0x100000001ull};

constexpr int kFlagsNone      = CU_MEM_ACCESS_FLAGS_PROT_NONE;
constexpr int kFlagsRead      = CU_MEM_ACCESS_FLAGS_PROT_READ;
constexpr int kFlagsReadWrite = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;

bool aligned(std::uint64_t v) { return v % kVmmGranularity == 0; }

std::uint64_t page_size()
{
  static std::uint64_t const page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  return page;
}

// ---- callers hold memory_mutex() ----

// The reservation holding addr: (base, size), or end().
std::map<std::uint64_t, std::uint64_t>::iterator reservation_of(std::uint64_t addr)
{
  auto& r = reservations();
  auto it = r.upper_bound(addr);
  if (it == r.begin()) { return r.end(); }
  --it;
  return addr < it->first + it->second ? it : r.end();
}

Mapping* mapping_of(std::uint64_t addr)
{
  auto& m = mappings();
  auto it = m.upper_bound(addr);
  if (it == m.begin()) { return nullptr; }
  --it;
  return addr < it->second.base + it->second.size ? &it->second : nullptr;
}

// The mappings making up exactly [ptr, ptr + size), in order: whole mappings, each starting where
// the previous one ends. Empty when the range is anything else.
std::vector<Mapping*> whole_mappings(std::uint64_t ptr, std::uint64_t size)
{
  std::vector<Mapping*> run;
  auto& m                 = mappings();
  std::uint64_t cursor    = ptr;
  std::uint64_t const end = ptr + size;
  while (cursor < end) {
    auto it = m.find(cursor);
    if (it == m.end() || it->second.size > end - cursor) { return {}; }
    run.push_back(&it->second);
    cursor += it->second.size;
  }
  return run;
}

// Physical memory goes back to the device once no reference and no mapping is left.
void settle(CUmemGenericAllocationHandle handle)
{
  auto it = physicals().find(handle);
  if (it == physicals().end()) { return; }
  Physical const& p = it->second;
  if (p.refs != 0 || p.mappings != 0) { return; }
  if (p.fd >= 0) { ::close(p.fd); }
  if (!p.imported) { return_device_capacity(*device(p.device), p.size); }
  physicals().erase(it);
}

// Back to PROT_NONE: the pages and their contents are gone.
void unmap_pages(std::uint64_t base, std::uint64_t size)
{
  void* p = ::mmap(reinterpret_cast<void*>(base), size, PROT_NONE,
                   MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    ::madvise(reinterpret_cast<void*>(base), size, MADV_DONTNEED);
    ::mprotect(reinterpret_cast<void*>(base), size, PROT_NONE);
  }
}

void unmap_one(Mapping const& m)
{
  unmap_pages(m.base, m.size);
  erase_allocation(m.base);
  auto const handle = m.handle;
  mappings().erase(m.base);  // m dangles from here
  if (auto it = physicals().find(handle); it != physicals().end()) { --it->second.mappings; }
  settle(handle);
}

// A memfd of `bytes` for a physical allocation shared with another process, its first bytes
// poisoned as a fresh mapping's are; -1 when the system has none to give.
int shared_memory(std::uint64_t bytes)
{
  int const fd = ::memfd_create(kMemfdName, MFD_CLOEXEC);
  if (fd < 0) { return -1; }
  std::vector<unsigned char> poison(std::min<std::uint64_t>(bytes, kVmmPoisonLimit), kFreshPoison);
  if (::ftruncate(fd, static_cast<off_t>(bytes)) != 0 ||
      ::pwrite(fd, poison.data(), poison.size(), 0) != static_cast<ssize_t>(poison.size())) {
    ::close(fd);
    return -1;
  }
  return fd;
}

// Whether `fd` is a memfd the emulator made (in this process or another).
bool emulator_memory(int fd)
{
  char target[64]          = {};
  auto const link          = "/proc/self/fd/" + std::to_string(fd);
  auto const n             = ::readlink(link.c_str(), target, sizeof target - 1);
  std::string const prefix = std::string{"/memfd:"} + kMemfdName;
  return n > 0 && std::string_view{target, static_cast<std::size_t>(n)}.starts_with(prefix);
}

// cuMemCreate / cuMemGetAllocationGranularity: what the emulator can allocate.
CUresult check_prop(CUmemAllocationProp const& prop)
{
  if (prop.type != CU_MEM_ALLOCATION_TYPE_PINNED) { return CUDA_ERROR_INVALID_VALUE; }
  switch (prop.location.type) {
    case CU_MEM_LOCATION_TYPE_DEVICE: break;
    case CU_MEM_LOCATION_TYPE_HOST:
    case CU_MEM_LOCATION_TYPE_HOST_NUMA: return CUDA_ERROR_NOT_SUPPORTED;  // host-located VMM: not emulated
    default: return CUDA_ERROR_INVALID_VALUE;
  }
  if (device(prop.location.id) == nullptr) { return CUDA_ERROR_INVALID_DEVICE; }
  unsigned const known = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR | CU_MEM_HANDLE_TYPE_FABRIC;
  if ((static_cast<unsigned>(prop.requestedHandleTypes) & ~known) != 0) { return CUDA_ERROR_INVALID_VALUE; }
  return CUDA_SUCCESS;
}

CUresult check_device_location(CUmemLocation const& loc)
{
  if (loc.type != CU_MEM_LOCATION_TYPE_DEVICE) { return CUDA_ERROR_INVALID_VALUE; }
  return device(loc.id) != nullptr ? CUDA_SUCCESS : CUDA_ERROR_INVALID_DEVICE;
}

}  // namespace

namespace rmm_emu {

std::shared_mutex& vmm_mapping_mutex()
{
  static auto* m = new std::shared_mutex;
  return *m;
}

bool vmm_reserved(std::uint64_t addr) { return reservation_of(addr) != reservations().end(); }

CUresult vmm_check_span(std::uint64_t addr, std::uint64_t bytes, bool write)
{
  std::uint64_t const end = addr + bytes;
  Mapping const* m        = mapping_of(addr);
  while (m != nullptr) {
    if ((write ? m->write : m->read) == 0) { return CUDA_ERROR_INVALID_VALUE; }  // no access granted yet
    std::uint64_t const next = m->base + m->size;
    if (next >= end) { return CUDA_SUCCESS; }
    auto it = mappings().find(next);
    m       = it != mappings().end() ? &it->second : nullptr;
  }
  return CUDA_ERROR_INVALID_VALUE;
}

bool vmm_span_mapped(std::uint64_t addr, std::uint64_t bytes)
{
  std::uint64_t const end = addr + bytes;
  Mapping const* m        = mapping_of(addr);
  while (m != nullptr) {
    std::uint64_t const next = m->base + m->size;
    if (next >= end) { return true; }
    auto it = mappings().find(next);
    m       = it != mappings().end() ? &it->second : nullptr;
  }
  return false;
}

int vmm_pointer_access_flags(std::uint64_t base)
{
  auto it = mappings().find(base);
  if (it == mappings().end()) { return CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE; }
  if (it->second.write != 0) { return CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE; }
  if (it->second.read != 0) { return CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READ; }
  return CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE;
}

bool vmm_pointer_hw_decompress(std::uint64_t base)
{
  auto it = mappings().find(base);
  if (it == mappings().end()) { return false; }
  auto phys = physicals().find(it->second.handle);
  return phys != physicals().end() && (phys->second.prop.allocFlags.usage & CU_MEM_CREATE_USAGE_HW_DECOMPRESS) != 0;
}

void vmm_live_stats(int dev, LiveStats& stats)
{
  for (auto const& [handle, p] : physicals()) {
    if ((dev >= 0 && p.device != dev) || p.imported) { continue; }
    ++stats.count;
    stats.bytes += static_cast<long long>(p.size);
  }
}

void vmm_fault(char const* what, std::uint64_t addr, std::uint64_t bytes)
{
  std::fprintf(stderr,
               "rmm CUDA emulator: a queued %s reached VMM memory [0x%llx, +%llu) after it was unmapped "
               "(cuMemUnmap does not wait for queued work; a GPU would report an illegal address). Aborting.\n",
               what, static_cast<unsigned long long>(addr), static_cast<unsigned long long>(bytes));
  std::abort();
}

void vmm_fault_context(Context& ctx, char const* what, std::uint64_t addr, std::uint64_t bytes)
{
  if (settings().sticky_faults.load() == 0) { vmm_fault(what, addr, bytes); }
  auto expected = CUDA_SUCCESS;
  (void)ctx.fault.compare_exchange_strong(expected, CUDA_ERROR_ILLEGAL_ADDRESS);
}

}  // namespace rmm_emu

// ---- granularity and physical allocations ----

RMM_EMU_EXPORT CUresult cuMemGetAllocationGranularity(size_t* granularity,
                                                      CUmemAllocationProp const* prop,
                                                      CUmemAllocationGranularity_flags option)
{
  RMM_EMU_REQUIRE_INIT();
  if (granularity == nullptr || prop == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (option != CU_MEM_ALLOC_GRANULARITY_MINIMUM && option != CU_MEM_ALLOC_GRANULARITY_RECOMMENDED) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (auto r = check_prop(*prop); r != CUDA_SUCCESS) { return r; }
  *granularity = kVmmGranularity;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemCreate(CUmemGenericAllocationHandle* handle,
                                    size_t size,
                                    CUmemAllocationProp const* prop,
                                    unsigned long long flags)
{
  RMM_EMU_REQUIRE_INIT();
  if (handle == nullptr || prop == nullptr || flags != 0) { return CUDA_ERROR_INVALID_VALUE; }
  if (auto r = check_prop(*prop); r != CUDA_SUCCESS) { return r; }
  if (size == 0 || !aligned(size)) { return CUDA_ERROR_INVALID_VALUE; }
  if (inject_allocation_failure(size)) { return CUDA_ERROR_OUT_OF_MEMORY; }
  Device& dev = *device(prop->location.id);
  std::lock_guard lock(memory_mutex());
  if (auto r = take_device_capacity(dev, size); r != CUDA_SUCCESS) { return r; }
  Physical p;
  p.prop       = *prop;
  p.device     = dev.ordinal();
  p.size       = size;
  auto const h = g_next_handle.fetch_add(1);
  physicals().emplace(h, p);
  *handle = h;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemRelease(CUmemGenericAllocationHandle handle)
{
  RMM_EMU_REQUIRE_INIT();
  std::lock_guard lock(memory_mutex());
  auto it = physicals().find(handle);
  // Undefined on a GPU; here an unknown or already released handle is refused.
  if (it == physicals().end() || it->second.refs == 0) { return CUDA_ERROR_INVALID_VALUE; }
  --it->second.refs;
  settle(handle);  // deferred while mapped: the last cuMemUnmap gives the memory back
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemRetainAllocationHandle(CUmemGenericAllocationHandle* handle, void* addr)
{
  RMM_EMU_REQUIRE_INIT();
  if (handle == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  Mapping const* m = mapping_of(reinterpret_cast<std::uint64_t>(addr));
  if (m == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  ++physicals().at(m->handle).refs;  // a mapped allocation is always in the table
  *handle = m->handle;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemGetAllocationPropertiesFromHandle(CUmemAllocationProp* prop,
                                                               CUmemGenericAllocationHandle handle)
{
  RMM_EMU_REQUIRE_INIT();
  if (prop == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  auto it = physicals().find(handle);  // released but still mapped: alive, as on a GPU
  if (it == physicals().end()) { return CUDA_ERROR_INVALID_VALUE; }
  *prop = it->second.prop;
  return CUDA_SUCCESS;
}

namespace {

// Turns `p`'s memory into a memfd at its first export: its mappings' contents are copied in and
// the mappings replaced by views of it. Callers hold vmm_mapping_mutex() exclusively (no queued
// copy is inside a mapping) and memory_mutex().
bool make_shareable(CUmemGenericAllocationHandle handle, Physical& p)
{
  if (p.fd >= 0) { return true; }
  int const fd = shared_memory(p.size);
  if (fd < 0) { return false; }
  bool copied = false;
  for (auto const& [base, m] : mappings()) {
    if (m.handle != handle) { continue; }
    auto* at = reinterpret_cast<void*>(base);
    if (!copied && ::pwrite(fd, at, m.size, 0) != static_cast<ssize_t>(m.size)) {
      ::close(fd);
      return false;
    }
    copied = true;
    if (::mmap(at, m.size, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_SHARED, fd, 0) == MAP_FAILED) {
      std::fprintf(stderr, "rmm CUDA emulator: cannot make a mapping shareable (mmap: %s). Aborting.\n",
                   std::strerror(errno));
      std::abort();  // the mapping is gone: a GPU would never lose it
    }
  }
  p.fd = fd;
  return true;
}

}  // namespace

// A POSIX file descriptor for another process to import: a duplicate of the allocation's memfd,
// which the importer maps to the same bytes. The allocation must have asked for the type.
RMM_EMU_EXPORT CUresult cuMemExportToShareableHandle(void* shareable,
                                                     CUmemGenericAllocationHandle handle,
                                                     CUmemAllocationHandleType type,
                                                     unsigned long long flags)
{
  RMM_EMU_REQUIRE_INIT();
  if (shareable == nullptr || flags != 0) { return CUDA_ERROR_INVALID_VALUE; }
  std::unique_lock mappings_lock(vmm_mapping_mutex());
  std::lock_guard lock(memory_mutex());
  auto it = physicals().find(handle);  // released but still mapped: alive, as on a GPU
  if (it == physicals().end()) { return CUDA_ERROR_INVALID_VALUE; }
  if (type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR ||
      (it->second.prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) == 0) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (!make_shareable(handle, it->second)) { return CUDA_ERROR_OUT_OF_MEMORY; }
  int const fd = ::fcntl(it->second.fd, F_DUPFD_CLOEXEC, 0);
  if (fd < 0) { return CUDA_ERROR_OUT_OF_MEMORY; }
  *static_cast<int*>(shareable) = fd;
  return CUDA_SUCCESS;
}

// The allocation behind a descriptor another process exported. The descriptor stays the caller's
// (the driver keeps a duplicate). Only the emulator's own memfds are accepted.
RMM_EMU_EXPORT CUresult cuMemImportFromShareableHandle(CUmemGenericAllocationHandle* handle,
                                                       void* os_handle,
                                                       CUmemAllocationHandleType type)
{
  RMM_EMU_REQUIRE_INIT();
  if (handle == nullptr || type != CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) { return CUDA_ERROR_INVALID_VALUE; }
  int const given = static_cast<int>(reinterpret_cast<std::intptr_t>(os_handle));
  struct stat info {};
  if (given < 0 || ::fstat(given, &info) != 0 || !S_ISREG(info.st_mode) || info.st_size <= 0 ||
      !aligned(static_cast<std::uint64_t>(info.st_size)) || !emulator_memory(given)) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  Context* ctx = current_context();
  Physical p;
  p.prop.type                 = CU_MEM_ALLOCATION_TYPE_PINNED;
  p.prop.location.type        = CU_MEM_LOCATION_TYPE_DEVICE;
  p.prop.location.id          = ctx != nullptr ? ctx->device().ordinal() : 0;
  p.prop.requestedHandleTypes = CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR;
  p.device                    = p.prop.location.id;
  p.size                      = static_cast<std::uint64_t>(info.st_size);
  p.imported                  = true;
  p.fd                        = ::fcntl(given, F_DUPFD_CLOEXEC, 0);
  if (p.fd < 0) { return CUDA_ERROR_OUT_OF_MEMORY; }
  std::lock_guard lock(memory_mutex());
  auto const h = g_next_handle.fetch_add(1);
  physicals().emplace(h, p);
  *handle = h;
  return CUDA_SUCCESS;
}

// ---- address reservations ----

RMM_EMU_EXPORT CUresult
cuMemAddressReserve(CUdeviceptr* ptr, size_t size, size_t alignment, CUdeviceptr addr, unsigned long long flags)
{
  RMM_EMU_REQUIRE_INIT();
  if (ptr == nullptr || size == 0 || flags != 0) { return CUDA_ERROR_INVALID_VALUE; }
  if (!aligned(size) || addr % page_size() != 0) { return CUDA_ERROR_INVALID_VALUE; }
  if (alignment == 0) { alignment = kVmmGranularity; }
  if ((alignment & (alignment - 1)) != 0 || !aligned(alignment)) { return CUDA_ERROR_INVALID_VALUE; }
  constexpr std::uint64_t kLimit = std::uint64_t{1} << 47;  // the user half of an x86-64 address space
  if (size > kLimit || alignment > kLimit) { return CUDA_ERROR_OUT_OF_MEMORY; }
  constexpr int kFlags = MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE;
  std::uint64_t base   = 0;
  // The hint is honoured when that range is free (a pool can then extend a reservation in place).
  if (addr != 0 && addr % alignment == 0) {
    void* p = ::mmap(reinterpret_cast<void*>(addr), size, PROT_NONE, kFlags | MAP_FIXED_NOREPLACE, -1, 0);
    if (p != MAP_FAILED) {
      if (reinterpret_cast<std::uint64_t>(p) == addr) {
        base = addr;
      } else {
        ::munmap(p, size);  // a kernel without MAP_FIXED_NOREPLACE placed it elsewhere
      }
    }
  }
  if (base == 0) {
    void* p = ::mmap(nullptr, size + alignment, PROT_NONE, kFlags, -1, 0);
    if (p == MAP_FAILED) { return CUDA_ERROR_OUT_OF_MEMORY; }
    auto const raw = reinterpret_cast<std::uint64_t>(p);
    base           = round_up(raw, alignment);
    if (base > raw) { ::munmap(p, base - raw); }
    if (raw + size + alignment > base + size) {
      ::munmap(reinterpret_cast<void*>(base + size), raw + size + alignment - (base + size));
    }
  }
  std::lock_guard lock(memory_mutex());
  reservations().emplace(base, size);
  *ptr = base;
  return CUDA_SUCCESS;
}

// Only a whole reservation. Mappings still in it are unmapped first: the documentation requires
// nothing about them, and CUDA is reported to accept this order (ROCm/ROCR-Runtime#257).
RMM_EMU_EXPORT CUresult cuMemAddressFree(CUdeviceptr ptr, size_t size)
{
  RMM_EMU_REQUIRE_INIT();
  if (ptr == 0 || size == 0) { return CUDA_ERROR_INVALID_VALUE; }
  std::unique_lock mappings_lock(vmm_mapping_mutex());
  std::lock_guard lock(memory_mutex());
  auto it = reservations().find(ptr);
  if (it == reservations().end() || it->second != size) { return CUDA_ERROR_INVALID_VALUE; }
  auto& m = mappings();
  for (auto mi = m.lower_bound(ptr); mi != m.end() && mi->first < ptr + size;) {
    Mapping const victim = mi->second;
    ++mi;
    unmap_one(victim);
  }
  ::munmap(reinterpret_cast<void*>(ptr), size);
  reservations().erase(it);
  return CUDA_SUCCESS;
}

// ---- mappings ----

RMM_EMU_EXPORT CUresult
cuMemMap(CUdeviceptr ptr, size_t size, size_t offset, CUmemGenericAllocationHandle handle, unsigned long long flags)
{
  RMM_EMU_REQUIRE_INIT();
  if (ptr == 0 || size == 0 || flags != 0) { return CUDA_ERROR_INVALID_VALUE; }
  if (!aligned(ptr) || !aligned(size) || !aligned(offset)) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock(memory_mutex());
  // A handle the program released is still alive while its memory is mapped somewhere: an H100's
  // driver (580) maps and exports it then; once the last mapping went, it is gone.
  auto pi = physicals().find(handle);
  if (pi == physicals().end()) { return CUDA_ERROR_INVALID_VALUE; }
  Physical& phys = pi->second;
  if (offset > phys.size || size > phys.size - offset) { return CUDA_ERROR_INVALID_VALUE; }
  if (offset != 0) { return CUDA_ERROR_NOT_SUPPORTED; }  // as the driver: "currently must be zero"
  // Inside one reservation ...
  auto ri = reservation_of(ptr);
  if (ri == reservations().end() || size > ri->first + ri->second - ptr) { return CUDA_ERROR_INVALID_VALUE; }
  // ... and not mapped yet, not even in part.
  if (mapping_of(ptr) != nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (auto next = mappings().upper_bound(ptr); next != mappings().end() && next->first < ptr + size) {
    return CUDA_ERROR_INVALID_VALUE;
  }
  void* p = phys.fd >= 0 ? ::mmap(reinterpret_cast<void*>(ptr), size, PROT_READ | PROT_WRITE, MAP_FIXED | MAP_SHARED,
                                  phys.fd, static_cast<off_t>(offset))
                         : ::mmap(reinterpret_cast<void*>(ptr), size, PROT_READ | PROT_WRITE,
                                  MAP_FIXED | MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) { return CUDA_ERROR_OUT_OF_MEMORY; }
  if (phys.fd < 0) { std::memset(p, kFreshPoison, std::min<std::uint64_t>(size, kVmmPoisonLimit)); }
  ++phys.mappings;
  mappings().emplace(ptr, Mapping{ptr, size, handle, 0, 0});
  insert_allocation({ptr, size, size, MemKind::vmm, phys.device, nullptr,
                     static_cast<unsigned>(phys.prop.requestedHandleTypes), false, next_buffer_id()});
  return CUDA_SUCCESS;
}

// Whole mappings only (one or several adjacent ones). Does not wait for queued work, like CUDA:
// work still queued on the range is a bug, which the emulator reports by aborting when it runs.
RMM_EMU_EXPORT CUresult cuMemUnmap(CUdeviceptr ptr, size_t size)
{
  RMM_EMU_REQUIRE_INIT();
  if (ptr == 0 || size == 0) { return CUDA_ERROR_INVALID_VALUE; }
  std::unique_lock mappings_lock(vmm_mapping_mutex());
  std::lock_guard lock(memory_mutex());
  auto const run = whole_mappings(ptr, size);
  if (run.empty()) { return CUDA_ERROR_INVALID_VALUE; }
  std::vector<Mapping> victims;
  for (auto const* m : run) { victims.push_back(*m); }
  for (auto const& m : victims) { unmap_one(m); }
  return CUDA_SUCCESS;
}

// ---- access ----

RMM_EMU_EXPORT CUresult cuMemSetAccess(CUdeviceptr ptr, size_t size, CUmemAccessDesc const* desc, size_t count)
{
  RMM_EMU_REQUIRE_INIT();
  if (ptr == 0 || size == 0 || desc == nullptr || count == 0) { return CUDA_ERROR_INVALID_VALUE; }
  for (std::size_t i = 0; i < count; ++i) {
    if (auto r = check_device_location(desc[i].location); r != CUDA_SUCCESS) { return r; }
    int const f = desc[i].flags;
    if (f != kFlagsNone && f != kFlagsRead && f != kFlagsReadWrite) { return CUDA_ERROR_INVALID_VALUE; }
  }
  std::lock_guard lock(memory_mutex());
  auto const run = whole_mappings(ptr, size);
  if (run.empty()) { return CUDA_ERROR_INVALID_VALUE; }
  for (auto* m : run) {
    for (std::size_t i = 0; i < count; ++i) {
      std::uint64_t const bit = std::uint64_t{1} << desc[i].location.id;
      m->read &= ~bit;
      m->write &= ~bit;
      if (desc[i].flags == kFlagsRead || desc[i].flags == kFlagsReadWrite) { m->read |= bit; }
      if (desc[i].flags == kFlagsReadWrite) { m->write |= bit; }
    }
  }
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuMemGetAccess(unsigned long long* flags, CUmemLocation const* location, CUdeviceptr ptr)
{
  RMM_EMU_REQUIRE_INIT();
  if (flags == nullptr || location == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (auto r = check_device_location(*location); r != CUDA_SUCCESS) { return r; }
  std::lock_guard lock(memory_mutex());
  Mapping const* m = mapping_of(ptr);
  if (m == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  std::uint64_t const bit = std::uint64_t{1} << location->id;
  *flags                  = (m->write & bit) != 0 ? kFlagsReadWrite : (m->read & bit) != 0 ? kFlagsRead : kFlagsNone;
  return CUDA_SUCCESS;
}

// ---- CUDA IPC of cudaMalloc memory ----
// Not emulated (allocations of cuMemAlloc are private host memory): refused as a driver refuses
// memory it cannot share. Memory of cuMemCreate with a POSIX file descriptor type is shared above.

RMM_EMU_EXPORT CUresult cuIpcGetMemHandle(CUipcMemHandle* handle, CUdeviceptr)
{
  RMM_EMU_REQUIRE_INIT();
  return handle == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}

RMM_EMU_EXPORT CUresult cuIpcOpenMemHandle_v2(CUdeviceptr* ptr, CUipcMemHandle, unsigned int)
{
  RMM_EMU_REQUIRE_INIT();
  return ptr == nullptr ? CUDA_ERROR_INVALID_VALUE : CUDA_ERROR_NOT_SUPPORTED;
}

RMM_EMU_EXPORT CUresult cuIpcOpenMemHandle(CUdeviceptr* ptr, CUipcMemHandle handle, unsigned int flags)
{
  return cuIpcOpenMemHandle_v2(ptr, handle, flags);
}

RMM_EMU_EXPORT CUresult cuIpcCloseMemHandle(CUdeviceptr)
{
  RMM_EMU_REQUIRE_INIT();
  return CUDA_ERROR_INVALID_VALUE;  // nothing was opened
}
