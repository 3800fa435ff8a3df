// SPDX-License-Identifier: Apache-2.0
// What a program can ask about memory cudaMalloc gave it, and the allocation calls next to it:
// pointer attributes, address ranges, buffer ids, pitched and 3D allocations, pinned and
// registered host memory, memory information, copies between blocks.

#include "conformance.hpp"

#include <cstring>
#include <set>
#include <vector>

using namespace conformance;

namespace {

template <class T>
CUresult attribute(T* value, CUpointer_attribute which, void const* ptr)
{
  return cuPointerGetAttribute(value, which, reinterpret_cast<CUdeviceptr>(ptr));
}

/// "CUDA_SUCCESS,1": the call's answer, then the value it wrote. The value is read from 8 zeroed
/// bytes, whatever width the driver writes (a boolean, an int, a bitmask).
std::string answer(CUpointer_attribute which, void const* ptr)
{
  unsigned long long value = 0;
  auto const result        = attribute(&value, which, ptr);
  return name_of(result) + "," + std::to_string(value);
}

void pointer_attributes()
{
  void* block = nullptr;
  require(cudaMalloc(&block, 3000), "cudaMalloc");
  auto* const inside = static_cast<char*>(block) + 1000;

  CUdeviceptr start = 0;
  std::size_t range = 0;
  require(attribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, inside), "cuPointerGetAttribute(RANGE_START)");
  require(attribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, inside), "cuPointerGetAttribute(RANGE_SIZE)");
  check("attribute.range_start_is_block", reinterpret_cast<void*>(start) == block);
  check("attribute.range_size", std::to_string(range));

  unsigned int memory_type = 0;
  int ordinal              = -1;
  int managed              = -1;
  require(attribute(&memory_type, CU_POINTER_ATTRIBUTE_MEMORY_TYPE, inside), "cuPointerGetAttribute(MEMORY_TYPE)");
  require(attribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, inside), "cuPointerGetAttribute(DEVICE_ORDINAL)");
  require(attribute(&managed, CU_POINTER_ATTRIBUTE_IS_MANAGED, inside), "cuPointerGetAttribute(IS_MANAGED)");
  check("attribute.memory_type", std::to_string(memory_type));
  check("attribute.device_ordinal", std::to_string(ordinal));
  check("attribute.is_managed", std::to_string(managed));

  // The same through cuPointerGetAttributes, several at once.
  CUpointer_attribute which[] = {CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, CU_POINTER_ATTRIBUTE_RANGE_SIZE,
                                 CU_POINTER_ATTRIBUTE_MEMORY_TYPE};
  CUdeviceptr start2          = 0;
  std::size_t range2          = 0;
  unsigned int type2          = 0;
  void* data[]                = {&start2, &range2, &type2};
  require(cuPointerGetAttributes(3, which, data, reinterpret_cast<CUdeviceptr>(inside)), "cuPointerGetAttributes");
  check("attributes.range_start_is_block", reinterpret_cast<void*>(start2) == block);
  check("attributes.range_size", std::to_string(range2));
  check("attributes.memory_type", std::to_string(type2));

  cudaPointerAttributes runtime{};
  require(cudaPointerGetAttributes(&runtime, inside), "cudaPointerGetAttributes");
  check("runtime_attributes.type", std::to_string(static_cast<int>(runtime.type)));
  check("runtime_attributes.device", std::to_string(runtime.device));
  check("runtime_attributes.device_pointer_is_pointer", runtime.devicePointer == inside);

  // Facts about how the memory is made (virtual memory management or not): libraries such as
  // NCCL choose how to share a buffer by them.
  fact("attribute.is_legacy_cuda_ipc_capable", answer(CU_POINTER_ATTRIBUTE_IS_LEGACY_CUDA_IPC_CAPABLE, inside));
  fact("attribute.allowed_handle_types", answer(CU_POINTER_ATTRIBUTE_ALLOWED_HANDLE_TYPES, inside));
  // cudaMalloc memory can be used by the hardware decompression engine (the driver's documentation
  // of cuMemBatchDecompressAsync); a pool's own physical memory only when made for it.
  fact("attribute.is_hw_decompress_capable", answer(CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE, inside));
  CUmemGenericAllocationHandle retained{};
  auto const retain = cuMemRetainAllocationHandle(&retained, inside);
  fact("retain_allocation_handle", name_of(retain));
  if (retain == CUDA_SUCCESS) { (void)cuMemRelease(retained); }

  require(cudaFree(block), "cudaFree");
}

/// Every allocation has its own buffer id, also one made at an address freed before: caches of
/// registrations (NCCL, UCX) tell a new allocation from the old one by it.
void buffer_ids()
{
  std::set<unsigned long long> seen;
  bool distinct = true;
  for (int i = 0; i < 20; ++i) {
    void* p = nullptr;
    require(cudaMalloc(&p, 1 << 16), "cudaMalloc");
    unsigned long long id = 0;
    require(attribute(&id, CU_POINTER_ATTRIBUTE_BUFFER_ID, p), "cuPointerGetAttribute(BUFFER_ID)");
    distinct = distinct && seen.insert(id).second;
    require(cudaFree(p), "cudaFree");
  }
  check("buffer_id.new_for_every_allocation", distinct);
}

void pitched_and_3d()
{
  void* pitched     = nullptr;
  std::size_t pitch = 0;
  if (auto const e = cudaMallocPitch(&pitched, &pitch, 1000, 10); e == cudaErrorNotSupported) {
    fact("pitch", "not supported by this CUDA");  // the emulator: the same in both runs
    (void)cudaGetLastError();
    return;
  } else {
    require(e, "cudaMallocPitch");
  }
  check("pitch.pitch", std::to_string(pitch));
  fact("pitch.alignment", alignment_of(pitched));
  require(cudaMemset2D(pitched, pitch, 7, 1000, 10), "cudaMemset2D");
  require(cudaFree(pitched), "cudaFree(pitched)");

  cudaPitchedPtr volume{};
  require(cudaMalloc3D(&volume, cudaExtent{300, 4, 3}), "cudaMalloc3D");
  check("malloc3d.pitch", std::to_string(volume.pitch));
  require(cudaFree(volume.ptr), "cudaFree(3D)");

  CUdeviceptr driver_pitched = 0;
  std::size_t driver_pitch   = 0;
  require(cuMemAllocPitch(&driver_pitched, &driver_pitch, 1000, 10, 4), "cuMemAllocPitch");
  check("cuMemAllocPitch.pitch", std::to_string(driver_pitch));
  require(cuMemFree(driver_pitched), "cuMemFree(pitched)");
}

void host_memory()
{
  void* pinned = nullptr;
  require(cudaMallocHost(&pinned, 1 << 20), "cudaMallocHost");
  void* device = nullptr;
  require(cudaMalloc(&device, 1 << 20), "cudaMalloc");
  std::memset(pinned, 0x3C, 1 << 20);
  require(cudaMemcpy(device, pinned, 1 << 20, cudaMemcpyHostToDevice), "cudaMemcpy H2D");
  std::memset(pinned, 0, 1 << 20);
  require(cudaMemcpy(pinned, device, 1 << 20, cudaMemcpyDeviceToHost), "cudaMemcpy D2H");
  check("pinned.round_trip", static_cast<unsigned char*>(pinned)[12345] == 0x3C);
  require(cudaFreeHost(pinned), "cudaFreeHost");

  std::vector<char> pageable(1 << 20, 0x4D);
  auto const registered = cudaHostRegister(pageable.data(), pageable.size(), cudaHostRegisterDefault);
  check("host_register", name_of(registered));
  if (registered == cudaSuccess) {
    require(cudaMemcpy(device, pageable.data(), pageable.size(), cudaMemcpyHostToDevice), "cudaMemcpy registered");
    require(cudaHostUnregister(pageable.data()), "cudaHostUnregister");
  }
  (void)cudaGetLastError();
  require(cudaFree(device), "cudaFree");
}

void copies_between_blocks()
{
  void* a = nullptr;
  void* b = nullptr;
  require(cudaMalloc(&a, 5000), "cudaMalloc");
  require(cudaMalloc(&b, 7000), "cudaMalloc");
  require(cudaMemset(a, 0x6E, 5000), "cudaMemset");
  require(cudaMemcpy(static_cast<char*>(b) + 1000, a, 5000, cudaMemcpyDeviceToDevice), "cudaMemcpy D2D");
  unsigned char last = 0;
  require(cudaMemcpy(&last, static_cast<char*>(b) + 5999, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check("copy.device_to_device", last == 0x6E);
  require(cudaFree(a), "cudaFree");
  require(cudaFree(b), "cudaFree");
}

void memory_information()
{
  std::size_t free_before = 0, total = 0;
  require(cudaMemGetInfo(&free_before, &total), "cudaMemGetInfo");
  void* p = nullptr;
  require(cudaMalloc(&p, std::size_t{256} << 20), "cudaMalloc 256 MiB");
  std::size_t free_during = 0;
  require(cudaMemGetInfo(&free_during, &total), "cudaMemGetInfo");
  require(cudaFree(p), "cudaFree");
  std::size_t free_after = 0;
  require(cudaMemGetInfo(&free_after, &total), "cudaMemGetInfo");
  check("memory_info.allocation_shows", free_during + (std::size_t{200} << 20) <= free_before);
  check("memory_info.free_shows", free_after + (std::size_t{16} << 20) >= free_before);
}

void peer_access()
{
  int devices = 0;
  require(cudaGetDeviceCount(&devices), "cudaGetDeviceCount");
  fact("devices", devices);
  if (devices < 2) { return; }
  int can = 0;
  require(cudaDeviceCanAccessPeer(&can, 1, 0), "cudaDeviceCanAccessPeer");
  if (can == 0) { return; }
  void* on0 = nullptr;
  require(cudaMalloc(&on0, 1 << 20), "cudaMalloc (device 0)");
  require(cudaMemset(on0, 0x71, 1 << 20), "cudaMemset");
  require(cudaSetDevice(1), "cudaSetDevice(1)");
  auto const enabled = cudaDeviceEnablePeerAccess(0, 0);
  fact("peer.enable", name_of(enabled));
  void* on1 = nullptr;
  require(cudaMalloc(&on1, 1 << 20), "cudaMalloc (device 1)");
  require(cudaMemcpyPeer(on1, 1, on0, 0, 1 << 20), "cudaMemcpyPeer");
  unsigned char byte = 0;
  require(cudaMemcpy(&byte, on1, 1, cudaMemcpyDeviceToHost), "cudaMemcpy");
  check("peer.copy", byte == 0x71);
  require(cudaFree(on0), "cudaFree (device 0's, device 1 current)");
  require(cudaFree(on1), "cudaFree");
  require(cudaSetDevice(0), "cudaSetDevice(0)");
}

}  // namespace

int main()
{
  require(cudaFree(nullptr), "cudaFree(nullptr)");
  pointer_attributes();
  buffer_ids();
  pitched_and_3d();
  host_memory();
  copies_between_blocks();
  memory_information();
  peer_access();
  return 0;
}
