// SPDX-License-Identifier: Apache-2.0
// A program that maps its own physical memory (cuMemCreate / cuMemMap), as XLA's platform
// allocator does, run under the shim by physical_cache_test: which cuMemCreate gets back a handle
// the program released, and which must not. Prints `key=value` lines; a failed call prints
// `FAIL: ...` and exits 2.

#include <cuda.h>

#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {

void check(CUresult result, char const* call)
{
  if (result != CUDA_SUCCESS) {
    char const* name = nullptr;
    (void)cuGetErrorName(result, &name);
    std::printf("FAIL: %s returned %s\n", call, name != nullptr ? name : "an unknown error");
    std::fflush(stdout);
    std::exit(2);
  }
}

CUmemAllocationProp device_properties(CUmemAllocationHandleType handle_types = CU_MEM_HANDLE_TYPE_NONE)
{
  CUmemAllocationProp prop{};
  prop.type                 = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type        = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id          = 0;
  prop.requestedHandleTypes = handle_types;
  return prop;
}

std::size_t granularity()
{
  auto const prop   = device_properties();
  std::size_t bytes = 0;
  check(cuMemGetAllocationGranularity(&bytes, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM),
        "cuMemGetAllocationGranularity");
  return bytes;
}

CUmemGenericAllocationHandle create(std::size_t bytes, CUmemAllocationProp const& prop = device_properties())
{
  CUmemGenericAllocationHandle handle{};
  check(cuMemCreate(&handle, bytes, &prop, 0), "cuMemCreate");
  return handle;
}

/// An address range of `bytes`, `handle` mapped at it, readable and writable.
CUdeviceptr map(CUmemGenericAllocationHandle handle, std::size_t bytes)
{
  CUdeviceptr address = 0;
  check(cuMemAddressReserve(&address, bytes, 0, 0, 0), "cuMemAddressReserve");
  check(cuMemMap(address, bytes, 0, handle, 0), "cuMemMap");
  CUmemAccessDesc access{};
  access.location = device_properties().location;
  access.flags    = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  check(cuMemSetAccess(address, bytes, &access, 1), "cuMemSetAccess");
  return address;
}

void unmap(CUdeviceptr address, std::size_t bytes)
{
  check(cuMemUnmap(address, bytes), "cuMemUnmap");
  check(cuMemAddressFree(address, bytes), "cuMemAddressFree");
}

/// Whether the memory at `address` holds what is written to it.
bool usable(CUdeviceptr address, std::size_t bytes)
{
  std::vector<unsigned char> pattern(bytes);
  for (std::size_t i = 0; i < bytes; ++i) { pattern[i] = static_cast<unsigned char>(i * 7 + 1); }
  std::vector<unsigned char> back(bytes);
  return cuMemcpyHtoD(address, pattern.data(), bytes) == CUDA_SUCCESS &&
         cuMemcpyDtoH(back.data(), address, bytes) == CUDA_SUCCESS && back == pattern;
}

void print(char const* key, bool value) { std::printf("%s=%d\n", key, value ? 1 : 0); }

/// A handle is handed out again only once it is released and unmapped, and only for its size.
int reuse()
{
  auto const g     = granularity();
  auto const first = create(g);
  auto const at    = map(first, g);
  check(cuMemRelease(first), "cuMemRelease");  // still mapped: its memory stays in use
  auto const while_mapped = create(g);
  print("not_reused_while_mapped", while_mapped != first);
  print("still_usable_after_release", usable(at, g));
  unmap(at, g);
  auto const larger = create(2 * g);
  print("not_reused_for_another_size", larger != first);
  auto const again = create(g);
  print("reused_once_unmapped", again == first);
  auto const again_at = map(again, g);
  print("reused_handle_usable", usable(again_at, g));
  // Freeing the reservation unmaps as well.
  check(cuMemRelease(again), "cuMemRelease");
  if (cuMemAddressFree(again_at, g) != CUDA_SUCCESS) { unmap(again_at, g); }  // a driver may want it unmapped first
  auto const after_address_free = create(g);
  print("reused_after_address_free", after_address_free == first);
  print("release_twice_refused", cuMemRelease(after_address_free) == CUDA_SUCCESS &&
                                   cuMemRelease(after_address_free) == CUDA_ERROR_INVALID_VALUE);
  for (auto h : {while_mapped, larger}) { check(cuMemRelease(h), "cuMemRelease"); }
  return 0;
}

/// A reference taken with cuMemRetainAllocationHandle keeps the handle the program's.
int retain()
{
  auto const g      = granularity();
  auto const handle = create(g);
  auto const at     = map(handle, g);
  check(cuMemRelease(handle), "cuMemRelease");
  CUmemGenericAllocationHandle retained{};
  check(cuMemRetainAllocationHandle(&retained, reinterpret_cast<void*>(at)), "cuMemRetainAllocationHandle");
  print("retained_same_handle", retained == handle);
  unmap(at, g);
  auto const other = create(g);
  print("not_reused_while_retained", other != handle);
  CUmemAllocationProp prop{};
  print("properties_of_retained",
        cuMemGetAllocationPropertiesFromHandle(&prop, retained) == CUDA_SUCCESS && prop.location.id == 0);
  check(cuMemRelease(retained), "cuMemRelease (the retained reference)");
  auto const again = create(g);
  print("reused_after_last_release", again == handle);
  for (auto h : {other, again}) { check(cuMemRelease(h), "cuMemRelease"); }
  return 0;
}

/// An exported allocation may live on in another process: its handle is never handed out again.
int exported()
{
  auto const g      = granularity();
  auto const prop   = device_properties(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  auto const handle = create(g, prop);
  int fd            = -1;
  check(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0),
        "cuMemExportToShareableHandle");
  ::close(fd);
  check(cuMemRelease(handle), "cuMemRelease");
  auto const again = create(g, prop);
  print("exported_not_reused", again != handle);
  check(cuMemRelease(again), "cuMemRelease");
  return 0;
}

std::string name_of(CUresult result)
{
  char const* name = nullptr;
  return cuGetErrorName(result, &name) == CUDA_SUCCESS && name != nullptr ? name : std::to_string(result);
}

/// A handle the program released lives on while its memory is mapped: the driver maps and
/// exports it then (as measured on an H100, driver 580). Once nothing maps it, the driver has
/// destroyed it: a call on it is a use after free there (the H100's driver crashed in cuMemMap),
/// and so it is for one that escaped the cache (it goes back to the driver). One the cache keeps is
/// probed with `probe_gone`: the cache must refuse it, so that a kept handle is never mapped or
/// exported behind its back.
int released_handle(bool probe_gone)
{
  auto const g    = granularity();
  auto const prop = device_properties(CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
  // Released while mapped, then mapped a second time and exported: it escaped.
  auto const handle = create(g, prop);
  auto const at     = map(handle, g);
  check(cuMemRelease(handle), "cuMemRelease");  // still mapped: the memory stays in use
  CUdeviceptr other = 0;
  check(cuMemAddressReserve(&other, g, 0, 0, 0), "cuMemAddressReserve");
  auto const mapped_again = cuMemMap(other, g, 0, handle, 0);
  std::printf("map_while_mapped=%s\n", name_of(mapped_again).c_str());
  int fd = -1;
  std::printf("export_while_mapped=%s\n",
              name_of(cuMemExportToShareableHandle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)).c_str());
  if (fd >= 0) { ::close(fd), fd = -1; }
  if (mapped_again == CUDA_SUCCESS) { check(cuMemUnmap(other, g), "cuMemUnmap"); }
  unmap(at, g);  // mapped nowhere: gone
  // Released and unmapped without escaping: the cache keeps it for the next create.
  auto const kept    = create(g, prop);
  auto const kept_at = map(kept, g);
  check(cuMemRelease(kept), "cuMemRelease");
  unmap(kept_at, g);
  if (probe_gone) {  // the kept one: the escaped one went back to the driver, and is destroyed
    std::printf("map_kept=%s\n", name_of(cuMemMap(other, g, 0, kept, 0)).c_str());
    std::fflush(stdout);
    std::printf("export_kept=%s\n",
                name_of(cuMemExportToShareableHandle(&fd, kept, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0)).c_str());
    if (fd >= 0) { ::close(fd), fd = -1; }
  }
  check(cuMemAddressFree(other, g), "cuMemAddressFree");
  auto const again    = create(g, prop);
  auto const again_at = map(again, g);
  print("new_allocation_usable", usable(again_at, g));
  unmap(again_at, g);
  check(cuMemRelease(again), "cuMemRelease");
  return 0;
}

std::size_t device_free_bytes()
{
  std::size_t free_bytes = 0;
  std::size_t total      = 0;
  check(cuMemGetInfo(&free_bytes, &total), "cuMemGetInfo");
  return free_bytes;
}

/// Creates granules for three quarters of the device's free memory and releases them all (kept by
/// the cache); returns the free memory before.
std::size_t create_and_release_three_quarters()
{
  auto const g          = granularity();
  auto const free_bytes = device_free_bytes();
  std::vector<CUmemGenericAllocationHandle> handles;
  for (std::size_t i = 0; i < free_bytes / g * 3 / 4; ++i) { handles.push_back(create(g)); }
  for (auto h : handles) { check(cuMemRelease(h), "cuMemRelease"); }
  return free_bytes;
}

/// Released allocations of one size must not make a larger one fail: the cache gives them back.
int out_of_memory()
{
  auto const free_bytes = create_and_release_three_quarters();
  print("released_memory_counts_as_free", device_free_bytes() >= free_bytes);
  auto const g    = granularity();
  auto const half = free_bytes / g / 2 * g;  // more than the device has beside the kept granules
  CUmemGenericAllocationHandle large{};
  auto const prop = device_properties();
  print("large_allocation_served", cuMemCreate(&large, half, &prop, 0) == CUDA_SUCCESS);
  check(cuMemRelease(large), "cuMemRelease");
  return 0;
}

/// Nor an allocation the shim's stack serves (cuMemAlloc).
int served_after_release()
{
  auto const free_bytes = create_and_release_three_quarters();
  CUdeviceptr block     = 0;
  print("served_allocation", cuMemAlloc(&block, free_bytes / 2) == CUDA_SUCCESS);
  if (block != 0) { check(cuMemFree(block), "cuMemFree"); }
  return 0;
}

/// A size the program stops asking for does not stay kept: after some hundred creates of another
/// size, the allocation went back to the driver.
int expiry()
{
  auto const g     = granularity();
  auto const first = create(g);
  check(cuMemRelease(first), "cuMemRelease");
  for (int i = 0; i < 600; ++i) { check(cuMemRelease(create(2 * g)), "cuMemRelease (another size)"); }
  auto const again = create(g);
  print("expired_not_reused", again != first);
  check(cuMemRelease(again), "cuMemRelease");
  return 0;
}

/// cuMemCreate and cuMemRelease in a loop, as a program with one buffer a step.
int loop()
{
  auto const g = granularity();
  for (int step = 0; step < 100; ++step) {
    auto const handle = create(g);
    auto const at     = map(handle, g);
    check(cuMemRelease(handle), "cuMemRelease");
    unmap(at, g);
  }
  return 0;
}

}  // namespace

int main(int argc, char** argv)
{
  check(cuInit(0), "cuInit");
  CUdevice device{};
  check(cuDeviceGet(&device, 0), "cuDeviceGet");
  CUcontext context{};
  check(cuDevicePrimaryCtxRetain(&context, device), "cuDevicePrimaryCtxRetain");
  check(cuCtxSetCurrent(context), "cuCtxSetCurrent");
  std::string const scenario = argc > 1 ? argv[1] : "";
  int status                 = 64;
  if (scenario == "reuse") {
    status = reuse();
  } else if (scenario == "retain") {
    status = retain();
  } else if (scenario == "exported") {
    status = exported();
  } else if (scenario == "released-handle" || scenario == "released-handle-gone") {
    status = released_handle(scenario == "released-handle-gone");
  } else if (scenario == "out-of-memory") {
    status = out_of_memory();
  } else if (scenario == "served-after-release") {
    status = served_after_release();
  } else if (scenario == "expiry") {
    status = expiry();
  } else if (scenario == "loop") {
    status = loop();
  } else {
    std::printf(
      "usage: physical_client "
      "reuse|retain|exported|released-handle[-gone]|out-of-memory|served-after-release|expiry|loop\n");
  }
  std::fflush(stdout);
  return status;
}
