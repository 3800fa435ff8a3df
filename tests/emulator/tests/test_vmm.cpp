// SPDX-License-Identifier: Apache-2.0
// Virtual memory management through driver entry points obtained from the runtime
// (cudaGetDriverEntryPointByVersion), as a library that does not link libcuda reaches them.
#include "emu_test.hpp"

#include <cuda.h>
#include <cudaTypedefs.h>
#include <dlfcn.h>

#include <atomic>
#include <cstring>
#include <thread>
#include <vector>

namespace {

constexpr std::size_t kMiB  = std::size_t{1} << 20;
constexpr std::size_t kGran = 2 * kMiB;

struct Vmm {
  PFN_cuMemGetAllocationGranularity_v10020 granularity;
  PFN_cuMemAddressReserve_v10020 reserve;
  PFN_cuMemAddressFree_v10020 address_free;
  PFN_cuMemCreate_v10020 create;
  PFN_cuMemRelease_v10020 release;
  PFN_cuMemMap_v10020 map;
  PFN_cuMemUnmap_v10020 unmap;
  PFN_cuMemSetAccess_v10020 set_access;
  PFN_cuMemGetAccess_v10020 get_access;
  PFN_cuMemRetainAllocationHandle_v11000 retain;
  PFN_cuMemGetAllocationPropertiesFromHandle_v10020 properties;
  PFN_cuMemGetAddressRange_v3020 address_range;
  PFN_cuPointerGetAttribute_v4000 pointer_attribute;
  PFN_cuDeviceGetAttribute_v2000 device_attribute;
};

// The versions a library built against CUDA 12/13 headers asks for.
Vmm const& vmm()
{
  static Vmm const table = [] {
    Vmm v{};
    v.granularity = emu::driver_entry<PFN_cuMemGetAllocationGranularity_v10020>("cuMemGetAllocationGranularity", 12000);
    v.reserve     = emu::driver_entry<PFN_cuMemAddressReserve_v10020>("cuMemAddressReserve", 12000);
    v.address_free = emu::driver_entry<PFN_cuMemAddressFree_v10020>("cuMemAddressFree", 12000);
    v.create       = emu::driver_entry<PFN_cuMemCreate_v10020>("cuMemCreate", 12000);
    v.release      = emu::driver_entry<PFN_cuMemRelease_v10020>("cuMemRelease", 12000);
    v.map          = emu::driver_entry<PFN_cuMemMap_v10020>("cuMemMap", 12000);
    v.unmap        = emu::driver_entry<PFN_cuMemUnmap_v10020>("cuMemUnmap", 12000);
    v.set_access   = emu::driver_entry<PFN_cuMemSetAccess_v10020>("cuMemSetAccess", 12000);
    v.get_access   = emu::driver_entry<PFN_cuMemGetAccess_v10020>("cuMemGetAccess", 12000);
    v.retain       = emu::driver_entry<PFN_cuMemRetainAllocationHandle_v11000>("cuMemRetainAllocationHandle", 12000);
    v.properties   = emu::driver_entry<PFN_cuMemGetAllocationPropertiesFromHandle_v10020>(
      "cuMemGetAllocationPropertiesFromHandle", 12000);
    v.address_range     = emu::driver_entry<PFN_cuMemGetAddressRange_v3020>("cuMemGetAddressRange", 12000);
    v.pointer_attribute = emu::driver_entry<PFN_cuPointerGetAttribute_v4000>("cuPointerGetAttribute", 12000);
    v.device_attribute  = emu::driver_entry<PFN_cuDeviceGetAttribute_v2000>("cuDeviceGetAttribute", 12000);
    return v;
  }();
  return table;
}

CUmemAllocationProp device_prop(int device)
{
  CUmemAllocationProp prop{};
  prop.type          = CU_MEM_ALLOCATION_TYPE_PINNED;
  prop.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  prop.location.id   = device;
  return prop;
}

CUmemAccessDesc read_write(int device)
{
  CUmemAccessDesc d{};
  d.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  d.location.id   = device;
  d.flags         = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  return d;
}

void* vp(CUdeviceptr p) { return reinterpret_cast<void*>(p); }

class EmulatorVmm : public ::testing::Test {
 protected:
  void SetUp() override
  {
    emu::control();
    v_ = &vmm();
    ASSERT_NE(v_->create, nullptr);
    ASSERT_NE(v_->retain, nullptr);
    ASSERT_NE(v_->device_attribute, nullptr);
    live_ = emu::control().live_allocations(-1, RMM_EMU_KIND_VMM);
  }
  void TearDown() override
  {
    EXPECT_EQ(emu::control().live_allocations(-1, RMM_EMU_KIND_VMM), live_) << "VMM allocations leaked";
    (void)cudaGetLastError();
  }

  CUmemGenericAllocationHandle create(std::size_t size, int device = 0)
  {
    auto const prop                = device_prop(device);
    CUmemGenericAllocationHandle h = 0;
    EXPECT_EQ(v_->create(&h, size, &prop, 0), CUDA_SUCCESS);
    return h;
  }
  CUdeviceptr reserve(std::size_t size)
  {
    CUdeviceptr p = 0;
    EXPECT_EQ(v_->reserve(&p, size, 0, 0, 0), CUDA_SUCCESS);
    return p;
  }

  Vmm const* v_   = nullptr;
  long long live_ = 0;
};

TEST_F(EmulatorVmm, DeviceAttributes)
{
  // CUDA 13's cudaDeviceAttr has no enumerator for it (102 is a gap); the emulated runtime passes
  // the number through to the driver. Ask the driver, as a library should.
  int value           = 0;
  auto const vmm_attr = static_cast<cudaDeviceAttr>(CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED);
  ASSERT_CUDA(cudaDeviceGetAttribute(&value, vmm_attr, 0));
  EXPECT_EQ(value, 1);
  EXPECT_EQ(v_->device_attribute(&value, CU_DEVICE_ATTRIBUTE_VIRTUAL_MEMORY_MANAGEMENT_SUPPORTED, 1), CUDA_SUCCESS);
  EXPECT_EQ(value, 1);
  EXPECT_EQ(v_->device_attribute(&value, CU_DEVICE_ATTRIBUTE_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR_SUPPORTED, 0),
            CUDA_SUCCESS);
  EXPECT_EQ(value, 1);
  EXPECT_EQ(v_->device_attribute(&value, CU_DEVICE_ATTRIBUTE_GPU_DIRECT_RDMA_WITH_CUDA_VMM_SUPPORTED, 0), CUDA_SUCCESS);
  EXPECT_EQ(value, 1);
}

TEST_F(EmulatorVmm, Granularity)
{
  auto prop     = device_prop(0);
  std::size_t g = 0;
  ASSERT_EQ(v_->granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_SUCCESS);
  EXPECT_EQ(g, kGran);
  g = 0;
  ASSERT_EQ(v_->granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_RECOMMENDED), CUDA_SUCCESS);
  EXPECT_EQ(g, kGran);
  EXPECT_EQ(v_->granularity(&g, &prop, static_cast<CUmemAllocationGranularity_flags>(7)), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->granularity(nullptr, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
  prop.location.id = 9;
  EXPECT_EQ(v_->granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_DEVICE);
  prop      = device_prop(0);
  prop.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  EXPECT_EQ(v_->granularity(&g, &prop, CU_MEM_ALLOC_GRANULARITY_MINIMUM), CUDA_ERROR_INVALID_VALUE);
}

// The usual order: reserve, create, map, set access, use, unmap, release, free.
TEST_F(EmulatorVmm, ReserveMapUseUnmapReleaseFree)
{
  CUdeviceptr const va = reserve(4 * kGran);
  auto const h1        = create(kGran);
  auto const h2        = create(2 * kGran);
  ASSERT_EQ(v_->map(va, kGran, 0, h1, 0), CUDA_SUCCESS);
  ASSERT_EQ(v_->map(va + kGran, 2 * kGran, 0, h2, 0), CUDA_SUCCESS);
  // One call for both mappings (the range is made of whole mappings).
  auto const access = read_write(0);
  ASSERT_EQ(v_->set_access(va, 3 * kGran, &access, 1), CUDA_SUCCESS);
  unsigned long long flags = 0;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  EXPECT_EQ(v_->get_access(&flags, &loc, va + 3 * kGran - 1), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_READWRITE);
  loc.id = 1;
  EXPECT_EQ(v_->get_access(&flags, &loc, va), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_MEM_ACCESS_FLAGS_PROT_NONE);

  // Use through the runtime: a set and copies across the boundary of the two mappings.
  ASSERT_CUDA(cudaMemset(vp(va), 0x5a, 3 * kGran));
  std::vector<unsigned char> host(kGran);
  for (std::size_t i = 0; i < host.size(); ++i) { host[i] = static_cast<unsigned char>(i * 7); }
  CUdeviceptr const straddle = va + kGran - kGran / 2;  // half in each mapping
  ASSERT_CUDA(cudaMemcpy(vp(straddle), host.data(), host.size(), cudaMemcpyHostToDevice));
  std::vector<unsigned char> back(kGran + 2);
  ASSERT_CUDA(cudaMemcpy(back.data(), vp(straddle - 1), back.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(back.front(), 0x5a);
  EXPECT_EQ(back.back(), 0x5a);
  EXPECT_EQ(std::memcmp(back.data() + 1, host.data(), host.size()), 0);
  // Device to device, across the boundary, and an async copy on a stream.
  ASSERT_CUDA(cudaMemcpy(vp(va + 2 * kGran), vp(straddle), kGran, cudaMemcpyDeviceToDevice));
  cudaStream_t s = nullptr;
  ASSERT_CUDA(cudaStreamCreate(&s));
  std::fill(back.begin(), back.end(), 0);
  ASSERT_CUDA(cudaMemcpyAsync(back.data(), vp(va + 2 * kGran), kGran, cudaMemcpyDefault, s));
  ASSERT_CUDA(cudaStreamSynchronize(s));
  ASSERT_CUDA(cudaStreamDestroy(s));
  EXPECT_EQ(std::memcmp(back.data(), host.data(), kGran), 0);
  // But not past the last mapping.
  EXPECT_EQ(cudaMemset(vp(va + 2 * kGran), 0, 2 * kGran), cudaErrorInvalidValue);

  // The mapping that holds a pointer, and its handle.
  CUdeviceptr base = 0;
  std::size_t size = 0;
  ASSERT_EQ(v_->address_range(&base, &size, va + kGran + 12345), CUDA_SUCCESS);
  EXPECT_EQ(base, va + kGran);
  EXPECT_EQ(size, 2 * kGran);
  CUmemGenericAllocationHandle retained = 0;
  ASSERT_EQ(v_->retain(&retained, vp(va + 3 * kGran - 1)), CUDA_SUCCESS);
  EXPECT_EQ(retained, h2);
  EXPECT_EQ(v_->release(retained), CUDA_SUCCESS);
  CUmemAllocationProp prop{};
  ASSERT_EQ(v_->properties(&prop, h2), CUDA_SUCCESS);
  EXPECT_EQ(prop.type, CU_MEM_ALLOCATION_TYPE_PINNED);
  EXPECT_EQ(prop.location.id, 0);

  EXPECT_EQ(v_->unmap(va, 3 * kGran), CUDA_SUCCESS);  // several whole mappings at once
  EXPECT_EQ(v_->release(h1), CUDA_SUCCESS);
  EXPECT_EQ(v_->release(h2), CUDA_SUCCESS);
  EXPECT_EQ(v_->address_free(va, 4 * kGran), CUDA_SUCCESS);
}

TEST_F(EmulatorVmm, MapsAnAllocationFromItsStartOnly)
{
  // As the H200's driver: a mapping starts at offset 0 of its allocation ("currently must be
  // zero"); any other offset is not supported.
  CUdeviceptr const va = reserve(2 * kGran);
  auto const h         = create(2 * kGran);
  EXPECT_EQ(v_->map(va, kGran, kGran, h, 0), CUDA_ERROR_NOT_SUPPORTED);  // its second half
  ASSERT_EQ(v_->map(va, 2 * kGran, 0, h, 0), CUDA_SUCCESS);
  auto const access = read_write(0);
  ASSERT_EQ(v_->set_access(va, 2 * kGran, &access, 1), CUDA_SUCCESS);
  EXPECT_CUDA(cudaMemset(vp(va), 1, 2 * kGran));
  EXPECT_EQ(v_->unmap(va, 2 * kGran), CUDA_SUCCESS);
  EXPECT_EQ(v_->release(h), CUDA_SUCCESS);
  EXPECT_EQ(v_->address_free(va, 2 * kGran), CUDA_SUCCESS);
}

TEST_F(EmulatorVmm, FreshMappingsArePoisoned)
{
  CUdeviceptr const va = reserve(kGran);
  auto const h         = create(kGran);
  auto const access    = read_write(0);
  ASSERT_EQ(v_->map(va, kGran, 0, h, 0), CUDA_SUCCESS);
  ASSERT_EQ(v_->set_access(va, kGran, &access, 1), CUDA_SUCCESS);
  std::vector<unsigned char> back(16);
  ASSERT_CUDA(cudaMemcpy(back.data(), vp(va), back.size(), cudaMemcpyDeviceToHost));
  EXPECT_EQ(back, std::vector<unsigned char>(back.size(), 0xCD));
  ASSERT_EQ(v_->unmap(va, kGran), CUDA_SUCCESS);
  EXPECT_EQ(v_->release(h), CUDA_SUCCESS);
  EXPECT_EQ(v_->address_free(va, kGran), CUDA_SUCCESS);
}

TEST_F(EmulatorVmm, ReservationErrors)
{
  CUdeviceptr p = 0;
  EXPECT_EQ(v_->reserve(&p, kGran + 4096, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);  // size
  EXPECT_EQ(v_->reserve(&p, 0, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->reserve(&p, kGran, 3 * kGran, 0, 0), CUDA_ERROR_INVALID_VALUE);  // not a power of two
  EXPECT_EQ(v_->reserve(&p, kGran, 4096, 0, 0), CUDA_ERROR_INVALID_VALUE);       // below the granularity
  EXPECT_EQ(v_->reserve(&p, kGran, 0, 0, 1), CUDA_ERROR_INVALID_VALUE);          // flags
  EXPECT_EQ(v_->reserve(nullptr, kGran, 0, 0, 0), CUDA_ERROR_INVALID_VALUE);
  // A large alignment is honoured.
  ASSERT_EQ(v_->reserve(&p, kGran, 1024 * kMiB, 0, 0), CUDA_SUCCESS);
  EXPECT_EQ(p % (1024 * kMiB), 0u);
  EXPECT_EQ(v_->address_free(p, kGran * 2), CUDA_ERROR_INVALID_VALUE);  // not the reserved size
  EXPECT_EQ(v_->address_free(p + kGran, kGran), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->address_free(p, kGran), CUDA_SUCCESS);
  EXPECT_EQ(v_->address_free(p, kGran), CUDA_ERROR_INVALID_VALUE);  // already freed
}

TEST_F(EmulatorVmm, AddressHintIsHonouredWhenFree)
{
  CUdeviceptr const first = reserve(4 * kGran);
  ASSERT_EQ(v_->address_free(first, 4 * kGran), CUDA_SUCCESS);
  CUdeviceptr a = 0;
  CUdeviceptr b = 0;
  ASSERT_EQ(v_->reserve(&a, 2 * kGran, 0, first, 0), CUDA_SUCCESS);
  ASSERT_EQ(v_->reserve(&b, 2 * kGran, 0, first + 2 * kGran, 0), CUDA_SUCCESS);  // extends `a` in place
  EXPECT_EQ(a, first);
  EXPECT_EQ(b, first + 2 * kGran);
  CUdeviceptr c = 0;
  ASSERT_EQ(v_->reserve(&c, 2 * kGran, 0, a, 0), CUDA_SUCCESS);  // taken: placed elsewhere
  EXPECT_NE(c, a);
  for (auto p : {a, b, c}) { EXPECT_EQ(v_->address_free(p, 2 * kGran), CUDA_SUCCESS); }
}

TEST_F(EmulatorVmm, CreateErrors)
{
  CUmemGenericAllocationHandle h = 0;
  auto prop                      = device_prop(0);
  EXPECT_EQ(v_->create(&h, kGran + 512, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->create(&h, 0, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->create(&h, kGran, &prop, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->create(nullptr, kGran, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->create(&h, kGran, nullptr, 0), CUDA_ERROR_INVALID_VALUE);
  prop.location.id = 2;  // two devices
  EXPECT_EQ(v_->create(&h, kGran, &prop, 0), CUDA_ERROR_INVALID_DEVICE);
  prop      = device_prop(0);
  prop.type = CU_MEM_ALLOCATION_TYPE_INVALID;
  EXPECT_EQ(v_->create(&h, kGran, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  prop               = device_prop(0);
  prop.location.type = CU_MEM_LOCATION_TYPE_INVALID;
  EXPECT_EQ(v_->create(&h, kGran, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  // Unknown handles.
  EXPECT_EQ(v_->release(0x1234), CUDA_ERROR_INVALID_VALUE);
  CUmemAllocationProp out{};
  EXPECT_EQ(v_->properties(&out, 0x1234), CUDA_ERROR_INVALID_VALUE);
}

TEST_F(EmulatorVmm, MapErrors)
{
  CUdeviceptr const va = reserve(4 * kGran);
  auto const h         = create(2 * kGran);
  EXPECT_EQ(v_->map(va, kGran + 4096, 0, h, 0), CUDA_ERROR_INVALID_VALUE);           // misaligned size
  EXPECT_EQ(v_->map(va + 4096, kGran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);           // misaligned address
  EXPECT_EQ(v_->map(va, kGran, 4096, h, 0), CUDA_ERROR_INVALID_VALUE);               // misaligned offset
  EXPECT_EQ(v_->map(va, kGran, kGran, h, 0), CUDA_ERROR_NOT_SUPPORTED);              // any other offset
  EXPECT_EQ(v_->map(va, 4 * kGran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);              // larger than the allocation
  EXPECT_EQ(v_->map(va, kGran, 0, h, 1), CUDA_ERROR_INVALID_VALUE);                  // flags
  EXPECT_EQ(v_->map(va, kGran, 0, 0x1234, 0), CUDA_ERROR_INVALID_VALUE);             // unknown handle
  EXPECT_EQ(v_->map(va + 3 * kGran, 2 * kGran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);  // runs past the reservation
  // Outside any reservation: device memory from cudaMalloc, and host memory.
  void* d = nullptr;
  ASSERT_CUDA(cudaMalloc(&d, 4 * kGran));
  auto const inside = (reinterpret_cast<CUdeviceptr>(d) + kGran - 1) / kGran * kGran;
  EXPECT_EQ(v_->map(inside, kGran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_CUDA(cudaFree(d));
  std::vector<unsigned char> host(3 * kGran);
  auto const host_aligned = (reinterpret_cast<CUdeviceptr>(host.data()) + kGran - 1) / kGran * kGran;
  EXPECT_EQ(v_->map(host_aligned, kGran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);

  // Mapped already, wholly or in part.
  ASSERT_EQ(v_->map(va + kGran, 2 * kGran, 0, h, 0), CUDA_SUCCESS);
  EXPECT_EQ(v_->map(va + kGran, 2 * kGran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->map(va, 2 * kGran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->map(va + 2 * kGran, 2 * kGran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  // A second mapping of the same allocation elsewhere is fine.
  ASSERT_EQ(v_->map(va, kGran, 0, h, 0), CUDA_SUCCESS);

  // Unmapping: whole mappings only, and only mapped ones.
  EXPECT_EQ(v_->unmap(va + kGran, kGran), CUDA_ERROR_INVALID_VALUE);      // half a mapping
  EXPECT_EQ(v_->unmap(va + 3 * kGran, kGran), CUDA_ERROR_INVALID_VALUE);  // not mapped
  EXPECT_EQ(v_->unmap(va, 4 * kGran), CUDA_ERROR_INVALID_VALUE);          // runs into the unmapped tail
  EXPECT_EQ(v_->unmap(va, kGran), CUDA_SUCCESS);
  EXPECT_EQ(v_->unmap(va, kGran), CUDA_ERROR_INVALID_VALUE);
  // Released while mapped: the handle lives on for new mappings and questions until the last
  // mapping goes, as an H100's driver (580) answers; a second release is refused.
  EXPECT_EQ(v_->release(h), CUDA_SUCCESS);
  EXPECT_EQ(v_->release(h), CUDA_ERROR_INVALID_VALUE);
  CUmemAllocationProp out{};
  EXPECT_EQ(v_->properties(&out, h), CUDA_SUCCESS);
  EXPECT_EQ(v_->map(va, kGran, 0, h, 0), CUDA_SUCCESS);
  EXPECT_EQ(emu::control().live_allocations(-1, RMM_EMU_KIND_VMM), live_ + 1);
  EXPECT_EQ(v_->unmap(va, 3 * kGran), CUDA_SUCCESS);  // both mappings
  EXPECT_EQ(emu::control().live_allocations(-1, RMM_EMU_KIND_VMM), live_);
  // Mapped nowhere: gone.
  EXPECT_EQ(v_->map(va, kGran, 0, h, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->properties(&out, h), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->address_free(va, 4 * kGran), CUDA_SUCCESS);
}

TEST_F(EmulatorVmm, NoAccessBeforeSetAccess)
{
  CUdeviceptr const va = reserve(3 * kGran);
  auto const h         = create(kGran);
  auto const h2        = create(kGran);
  std::vector<unsigned char> host(kGran);
  // Reserved but unmapped: neither copies nor sets.
  EXPECT_EQ(cudaMemset(vp(va), 0, 16), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host.data(), vp(va), 16, cudaMemcpyDefault), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(vp(va), host.data(), 16, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  // Mapped, no access yet.
  ASSERT_EQ(v_->map(va, kGran, 0, h, 0), CUDA_SUCCESS);
  EXPECT_EQ(cudaMemset(vp(va), 0, 16), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(host.data(), vp(va), 16, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemsetAsync(vp(va), 0, 16, nullptr), cudaErrorInvalidValue);
  int flags = -1;
  EXPECT_EQ(v_->pointer_attribute(&flags, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, va), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_POINTER_ATTRIBUTE_ACCESS_FLAG_NONE);

  // Access descriptors are checked; a range must be whole, mapped mappings.
  auto access = read_write(0);
  EXPECT_EQ(v_->set_access(va, kGran / 2, &access, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->set_access(va, 2 * kGran, &access, 1), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(v_->set_access(va, kGran, &access, 0), CUDA_ERROR_INVALID_VALUE);
  access.location.id = 7;
  EXPECT_EQ(v_->set_access(va, kGran, &access, 1), CUDA_ERROR_INVALID_DEVICE);
  access       = read_write(0);
  access.flags = static_cast<CUmemAccess_flags>(2);
  EXPECT_EQ(v_->set_access(va, kGran, &access, 1), CUDA_ERROR_INVALID_VALUE);

  // Read-only: copies out work, sets and copies in do not.
  access.flags = CU_MEM_ACCESS_FLAGS_PROT_READ;
  ASSERT_EQ(v_->set_access(va, kGran, &access, 1), CUDA_SUCCESS);
  EXPECT_CUDA(cudaMemcpy(host.data(), vp(va), 16, cudaMemcpyDeviceToHost));
  EXPECT_EQ(cudaMemset(vp(va), 0, 16), cudaErrorInvalidValue);
  EXPECT_EQ(cudaMemcpy(vp(va), host.data(), 16, cudaMemcpyHostToDevice), cudaErrorInvalidValue);
  // Read-write on another device counts too (the emulator does not tell the devices apart).
  access = read_write(1);
  ASSERT_EQ(v_->set_access(va, kGran, &access, 1), CUDA_SUCCESS);
  EXPECT_CUDA(cudaMemset(vp(va), 0, 16));
  EXPECT_EQ(v_->pointer_attribute(&flags, CU_POINTER_ATTRIBUTE_ACCESS_FLAGS, va), CUDA_SUCCESS);
  EXPECT_EQ(flags, CU_POINTER_ATTRIBUTE_ACCESS_FLAG_READWRITE);

  // A copy that runs from an accessible mapping into one without access, or into a hole, fails.
  ASSERT_EQ(v_->map(va + kGran, kGran, 0, h2, 0), CUDA_SUCCESS);
  EXPECT_EQ(cudaMemcpy(host.data(), vp(va + kGran / 2), kGran, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);
  access = read_write(0);
  ASSERT_EQ(v_->set_access(va + kGran, kGran, &access, 1), CUDA_SUCCESS);
  EXPECT_CUDA(cudaMemcpy(host.data(), vp(va + kGran / 2), kGran, cudaMemcpyDeviceToHost));
  EXPECT_EQ(cudaMemcpy(host.data(), vp(va + 2 * kGran - 8), 16, cudaMemcpyDeviceToHost), cudaErrorInvalidValue);

  // Unmapped again: access is gone with the mapping.
  ASSERT_EQ(v_->unmap(va, kGran), CUDA_SUCCESS);
  ASSERT_EQ(v_->map(va, kGran, 0, h, 0), CUDA_SUCCESS);
  EXPECT_EQ(cudaMemset(vp(va), 0, 16), cudaErrorInvalidValue);
  unsigned long long f = 1;
  CUmemLocation loc{CU_MEM_LOCATION_TYPE_DEVICE, 0};
  EXPECT_EQ(v_->get_access(&f, &loc, va), CUDA_SUCCESS);
  EXPECT_EQ(f, 0u);
  EXPECT_EQ(v_->get_access(&f, &loc, va + 2 * kGran), CUDA_ERROR_INVALID_VALUE);  // not mapped

  EXPECT_EQ(v_->release(h), CUDA_SUCCESS);
  EXPECT_EQ(v_->release(h2), CUDA_SUCCESS);
  // Freeing the reservation takes its remaining mappings with it.
  EXPECT_EQ(v_->address_free(va, 3 * kGran), CUDA_SUCCESS);
}

TEST_F(EmulatorVmm, CapacityAccounting)
{
  ASSERT_CUDA(cudaSetDevice(1));
  std::size_t free0 = 0;
  std::size_t total = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free0, &total));
  long long const used0  = emu::control().device_used_bytes(1);
  long long const bytes0 = emu::control().live_bytes(1, RMM_EMU_KIND_VMM);
  auto const h           = create(4 * kGran, 1);
  std::size_t free1      = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free1, &total));
  EXPECT_EQ(free1, free0 - 4 * kGran);
  EXPECT_EQ(emu::control().device_used_bytes(1), used0 + static_cast<long long>(4 * kGran));
  EXPECT_EQ(emu::control().live_bytes(1, RMM_EMU_KIND_VMM), bytes0 + static_cast<long long>(4 * kGran));
  EXPECT_EQ(emu::control().live_allocations(0, RMM_EMU_KIND_VMM), 0);  // it belongs to device 1

  CUdeviceptr const va = reserve(4 * kGran);
  ASSERT_EQ(v_->map(va, 4 * kGran, 0, h, 0), CUDA_SUCCESS);
  ASSERT_EQ(v_->release(h), CUDA_SUCCESS);  // still mapped: the memory stays
  ASSERT_CUDA(cudaMemGetInfo(&free1, &total));
  EXPECT_EQ(free1, free0 - 4 * kGran);
  ASSERT_EQ(v_->unmap(va, 4 * kGran), CUDA_SUCCESS);  // now it goes
  ASSERT_CUDA(cudaMemGetInfo(&free1, &total));
  EXPECT_EQ(free1, free0);
  EXPECT_EQ(emu::control().live_bytes(1, RMM_EMU_KIND_VMM), bytes0);
  EXPECT_EQ(v_->address_free(va, 4 * kGran), CUDA_SUCCESS);

  // More than the device has (16 GiB by default): out of memory, nothing touched.
  CUmemGenericAllocationHandle big = 0;
  auto const prop                  = device_prop(1);
  EXPECT_EQ(v_->create(&big, total + kGran, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
  // Physical handles and cudaMalloc share the capacity.
  ASSERT_EQ(v_->create(&big, total - kGran, &prop, 0), CUDA_SUCCESS);
  void* d = nullptr;
  EXPECT_EQ(cudaMalloc(&d, 2 * kGran), cudaErrorMemoryAllocation);
  (void)cudaGetLastError();
  EXPECT_CUDA(cudaMalloc(&d, kGran));
  EXPECT_CUDA(cudaFree(d));
  EXPECT_EQ(v_->release(big), CUDA_SUCCESS);
  ASSERT_CUDA(cudaMemGetInfo(&free1, &total));
  EXPECT_EQ(free1, free0);
  ASSERT_CUDA(cudaSetDevice(0));
}

TEST_F(EmulatorVmm, FaultInjectionAppliesToCreate)
{
  auto const prop                = device_prop(0);
  CUmemGenericAllocationHandle h = 0;
  {
    emu::Knob above("RMM_EMU_FAIL_ALLOC_ABOVE", "2MiB");
    EXPECT_EQ(v_->create(&h, 2 * kGran, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);
    ASSERT_EQ(v_->create(&h, kGran, &prop, 0), CUDA_SUCCESS);
    EXPECT_EQ(v_->release(h), CUDA_SUCCESS);
  }
  auto const attempts = emu::control().allocation_attempts();
  {
    emu::Knob nth("RMM_EMU_FAIL_ALLOC_NTH", "2");  // the second attempt from now
    ASSERT_EQ(v_->create(&h, kGran, &prop, 0), CUDA_SUCCESS);
    CUmemGenericAllocationHandle h2 = 0;
    EXPECT_EQ(v_->create(&h2, kGran, &prop, 0), CUDA_ERROR_OUT_OF_MEMORY);  // the second attempt, once
    ASSERT_EQ(v_->create(&h2, kGran, &prop, 0), CUDA_SUCCESS);
    EXPECT_EQ(v_->release(h), CUDA_SUCCESS);
    EXPECT_EQ(v_->release(h2), CUDA_SUCCESS);
  }
  EXPECT_EQ(emu::control().allocation_attempts(), attempts + 3);
  // Invalid requests are not attempts.
  EXPECT_EQ(v_->create(&h, kGran + 1, &prop, 0), CUDA_ERROR_INVALID_VALUE);
  EXPECT_EQ(emu::control().allocation_attempts(), attempts + 3);
}

TEST_F(EmulatorVmm, PointerAttributesAndFree)
{
  CUdeviceptr const va = reserve(2 * kGran);
  auto const h         = create(kGran, 1);
  ASSERT_EQ(v_->map(va + kGran, kGran, 0, h, 0), CUDA_SUCCESS);
  auto const access = read_write(1);
  ASSERT_EQ(v_->set_access(va + kGran, kGran, &access, 1), CUDA_SUCCESS);

  cudaPointerAttributes attr{};
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, vp(va + kGran + 100)));
  EXPECT_EQ(attr.type, cudaMemoryTypeDevice);
  EXPECT_EQ(attr.device, 1);
  EXPECT_EQ(attr.devicePointer, vp(va + kGran + 100));
  EXPECT_EQ(attr.hostPointer, nullptr);
  CUdeviceptr start = 0;
  ASSERT_EQ(v_->pointer_attribute(&start, CU_POINTER_ATTRIBUTE_RANGE_START_ADDR, va + kGran + 100), CUDA_SUCCESS);
  EXPECT_EQ(start, va + kGran);
  std::size_t range = 0;
  ASSERT_EQ(v_->pointer_attribute(&range, CU_POINTER_ATTRIBUTE_RANGE_SIZE, va + kGran), CUDA_SUCCESS);
  EXPECT_EQ(range, kGran);
  int ordinal = -1;
  ASSERT_EQ(v_->pointer_attribute(&ordinal, CU_POINTER_ATTRIBUTE_DEVICE_ORDINAL, va + kGran), CUDA_SUCCESS);
  EXPECT_EQ(ordinal, 1);
  // Reserved, not mapped: CUDA does not know the address.
  ASSERT_CUDA(cudaPointerGetAttributes(&attr, vp(va)));
  EXPECT_EQ(attr.type, cudaMemoryTypeUnregistered);
  EXPECT_EQ(v_->address_range(&start, &range, va), CUDA_ERROR_NOT_FOUND);

  // Not cudaFree's to free, whatever the pointer.
  EXPECT_EQ(cudaFree(vp(va + kGran)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFree(vp(va)), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFreeAsync(vp(va + kGran), nullptr), cudaErrorInvalidValue);
  EXPECT_EQ(cudaFreeHost(vp(va + kGran)), cudaErrorInvalidValue);
  ASSERT_CUDA(cudaDeviceSynchronize());
  EXPECT_CUDA(cudaMemset(vp(va + kGran), 0, kGran));  // still there

  EXPECT_EQ(v_->unmap(va + kGran, kGran), CUDA_SUCCESS);
  EXPECT_EQ(v_->release(h), CUDA_SUCCESS);
  EXPECT_EQ(v_->address_free(va, 2 * kGran), CUDA_SUCCESS);
}

// cuMemCreate's decompress usage is what makes a mapping usable by the decompression engine.
TEST_F(EmulatorVmm, HardwareDecompressCapabilityFollowsTheUsage)
{
  CUdeviceptr const va                    = reserve(2 * kGran);
  auto prop                               = device_prop(0);
  prop.allocFlags.usage                   = CU_MEM_CREATE_USAGE_HW_DECOMPRESS;
  CUmemGenericAllocationHandle for_engine = 0;
  ASSERT_EQ(v_->create(&for_engine, kGran, &prop, 0), CUDA_SUCCESS);
  auto const plain = create(kGran);
  ASSERT_EQ(v_->map(va, kGran, 0, for_engine, 0), CUDA_SUCCESS);
  ASSERT_EQ(v_->map(va + kGran, kGran, 0, plain, 0), CUDA_SUCCESS);
  bool capable = false;
  ASSERT_EQ(v_->pointer_attribute(&capable, CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE, va + 100), CUDA_SUCCESS);
  EXPECT_TRUE(capable);
  ASSERT_EQ(v_->pointer_attribute(&capable, CU_POINTER_ATTRIBUTE_IS_HW_DECOMPRESS_CAPABLE, va + kGran), CUDA_SUCCESS);
  EXPECT_FALSE(capable);
  EXPECT_EQ(v_->unmap(va, 2 * kGran), CUDA_SUCCESS);
  EXPECT_EQ(v_->release(for_engine), CUDA_SUCCESS);
  EXPECT_EQ(v_->release(plain), CUDA_SUCCESS);
  EXPECT_EQ(v_->address_free(va, 2 * kGran), CUDA_SUCCESS);
}

TEST_F(EmulatorVmm, LiveAllocationCounts)
{
  auto const& ctl      = emu::control();
  long long const all  = ctl.live_allocations(-1, RMM_EMU_KIND_ALL);
  auto const h         = create(2 * kGran);
  CUdeviceptr const va = reserve(4 * kGran);
  ASSERT_EQ(v_->map(va, 2 * kGran, 0, h, 0), CUDA_SUCCESS);
  ASSERT_EQ(v_->map(va + 2 * kGran, 2 * kGran, 0, h, 0), CUDA_SUCCESS);  // mapped twice, counted once
  EXPECT_EQ(ctl.live_allocations(0, RMM_EMU_KIND_VMM), live_ + 1);
  EXPECT_EQ(ctl.live_bytes(0, RMM_EMU_KIND_VMM), static_cast<long long>(2 * kGran));
  EXPECT_EQ(ctl.live_allocations(-1, RMM_EMU_KIND_ALL), all + 1);
  EXPECT_EQ(ctl.live_allocations(-1, RMM_EMU_KIND_ALL & ~RMM_EMU_KIND_VMM), all);
  EXPECT_EQ(v_->release(h), CUDA_SUCCESS);
  EXPECT_EQ(v_->unmap(va, 2 * kGran), CUDA_SUCCESS);
  EXPECT_EQ(ctl.live_allocations(0, RMM_EMU_KIND_VMM), live_ + 1);  // one mapping left
  EXPECT_EQ(v_->address_free(va, 4 * kGran), CUDA_SUCCESS);         // unmaps it
  EXPECT_EQ(ctl.live_allocations(0, RMM_EMU_KIND_VMM), live_);
}

// How a library that does not link libcuda finds these functions.
TEST_F(EmulatorVmm, EntryPointsThroughTheRuntime)
{
  void* lib = dlopen("libcuda.so.1", RTLD_NOLOAD | RTLD_NOW);
  ASSERT_NE(lib, nullptr);
  struct Case {
    char const* symbol;
    unsigned introduced;
  };
  for (auto const& c :
       {Case{"cuMemAddressReserve", 10020}, Case{"cuMemAddressFree", 10020}, Case{"cuMemCreate", 10020},
        Case{"cuMemRelease", 10020}, Case{"cuMemMap", 10020}, Case{"cuMemUnmap", 10020}, Case{"cuMemSetAccess", 10020},
        Case{"cuMemGetAccess", 10020}, Case{"cuMemGetAllocationGranularity", 10020},
        Case{"cuMemGetAllocationPropertiesFromHandle", 10020}, Case{"cuMemRetainAllocationHandle", 11000}}) {
    for (unsigned version : {c.introduced, 12000u, 13000u}) {
      for (unsigned long long flags : {cudaEnableDefault, cudaEnableLegacyStream, cudaEnablePerThreadDefaultStream}) {
        void* fn = nullptr;
        cudaDriverEntryPointQueryResult status{};
        EXPECT_CUDA(cudaGetDriverEntryPointByVersion(c.symbol, &fn, version, flags, &status)) << c.symbol;
        EXPECT_EQ(status, cudaDriverEntryPointSuccess);
        EXPECT_EQ(fn, dlsym(lib, c.symbol)) << c.symbol << " " << version;  // unversioned names
      }
    }
    void* fn = reinterpret_cast<void*>(0x1);
    cudaDriverEntryPointQueryResult status{};
    EXPECT_EQ(cudaGetDriverEntryPointByVersion(c.symbol, &fn, c.introduced - 10, cudaEnableDefault, &status),
              cudaErrorSymbolNotFound);
    EXPECT_EQ(status, cudaDriverEntryPointVersionNotSufficent) << c.symbol;
    EXPECT_EQ(fn, nullptr);
  }
  void* fn = reinterpret_cast<void*>(0x1);
  cudaDriverEntryPointQueryResult status{};
  EXPECT_EQ(cudaGetDriverEntryPointByVersion("cuMemNoSuchThing", &fn, 12000, cudaEnableDefault, &status),
            cudaErrorSymbolNotFound);
  EXPECT_EQ(status, cudaDriverEntryPointSymbolNotFound);
  EXPECT_EQ(fn, nullptr);
  // Newer than the driver (13.0): refused, as documented.
  EXPECT_EQ(cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 13010, cudaEnableDefault, &status),
            cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetDriverEntryPointByVersion("cuMemCreate", &fn, 12000, 8, &status), cudaErrorInvalidValue);
  EXPECT_EQ(cudaGetDriverEntryPointByVersion(nullptr, &fn, 12000, cudaEnableDefault, &status), cudaErrorInvalidValue);
  (void)cudaGetLastError();
#pragma GCC diagnostic push
#pragma GCC diagnostic ignored "-Wdeprecated-declarations"
  ASSERT_CUDA(cudaGetDriverEntryPoint("cuMemMap", &fn, cudaEnableDefault, &status));
  EXPECT_EQ(status, cudaDriverEntryPointSuccess);
  EXPECT_EQ(fn, dlsym(lib, "cuMemMap"));
  ASSERT_CUDA(cudaGetDriverEntryPoint("cuMemRetainAllocationHandle", &fn, cudaEnableDefault, nullptr));
  EXPECT_EQ(fn, dlsym(lib, "cuMemRetainAllocationHandle"));
  EXPECT_EQ(cudaGetDriverEntryPoint("cuMemNoSuchThing", &fn, cudaEnableDefault, &status), cudaErrorSymbolNotFound);
  EXPECT_EQ(status, cudaDriverEntryPointSymbolNotFound);
#pragma GCC diagnostic pop
  (void)cudaGetLastError();
  dlclose(lib);
}

// Threads mapping, using and unmapping disjoint parts of one reservation (and their own).
TEST_F(EmulatorVmm, ManyThreadsMapDisjointRanges)
{
  constexpr int kThreads      = 8;
  constexpr int kIterations   = 40;
  constexpr std::size_t kSlot = 2 * kGran;  // two mappings per slot, copied across
  std::size_t free0           = 0;
  std::size_t total           = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free0, &total));
  CUdeviceptr const shared = reserve(kThreads * kSlot);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([this, t, shared, &failures] {
      auto const& v    = *v_;
      auto const fail  = [&failures] { failures.fetch_add(1); };
      int const device = t % 2;
      if (cudaSetDevice(device) != cudaSuccess) { return fail(); }
      auto const prop   = device_prop(device);
      auto const access = read_write(device);
      // A window across the boundary of the two mappings (small: sanitizer builds check every byte).
      constexpr std::size_t kWindow = 64 * 1024;
      std::vector<unsigned char> in(kWindow);
      std::vector<unsigned char> out(kWindow);
      for (int i = 0; i < kIterations; ++i) {
        bool const own = i % 3 == 2;  // now and then a reservation of its own
        CUdeviceptr va = shared + static_cast<CUdeviceptr>(t) * kSlot;
        if (own && v.reserve(&va, kSlot, 0, 0, 0) != CUDA_SUCCESS) { return fail(); }
        CUmemGenericAllocationHandle h[2] = {};
        for (int k = 0; k < 2; ++k) {
          if (v.create(&h[k], kGran, &prop, 0) != CUDA_SUCCESS) { return fail(); }
          if (v.map(va + k * kGran, kGran, 0, h[k], 0) != CUDA_SUCCESS) { return fail(); }
          if (v.release(h[k]) != CUDA_SUCCESS) { return fail(); }  // freed at unmap
        }
        if (v.set_access(va, kSlot, &access, 1) != CUDA_SUCCESS) { return fail(); }
        auto const value = static_cast<unsigned char>(t * 31 + i);
        std::memset(in.data(), value, in.size());
        in[kWindow / 2 - 1]      = static_cast<unsigned char>(value + 1);
        in[kWindow / 2]          = static_cast<unsigned char>(value + 2);
        CUdeviceptr const window = va + kGran - kWindow / 2;
        if (cudaMemset(vp(window), 0, kWindow) != cudaSuccess) { return fail(); }
        if (cudaMemcpyAsync(vp(window), in.data(), kWindow, cudaMemcpyHostToDevice, cudaStreamPerThread) !=
              cudaSuccess ||
            cudaMemcpyAsync(out.data(), vp(window), kWindow, cudaMemcpyDeviceToHost, cudaStreamPerThread) !=
              cudaSuccess ||
            cudaStreamSynchronize(cudaStreamPerThread) != cudaSuccess) {
          return fail();
        }
        if (out != in) { return fail(); }
        if (v.unmap(va, kSlot) != CUDA_SUCCESS) { return fail(); }
        if (own && v.address_free(va, kSlot) != CUDA_SUCCESS) { return fail(); }
      }
    });
  }
  for (auto& th : threads) { th.join(); }
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(v_->address_free(shared, kThreads * kSlot), CUDA_SUCCESS);
  std::size_t free1 = 0;
  ASSERT_CUDA(cudaMemGetInfo(&free1, &total));
  EXPECT_EQ(free1, free0);
}

TEST(EmulatorVmmProcess, UnmapUnderQueuedWorkAborts)
{
  auto const r = emu::run_child({emu::child_path(), "vmm-unmap-under-work"});
  EXPECT_EQ(r.exit_code, -1) << r.out << r.err;  // killed by SIGABRT
  EXPECT_EQ(r.out, "reserve 0\ncreate 0\nmap 0\naccess 0\nmemset cudaSuccess\nunmap 0\n");
  EXPECT_NE(r.err.find("reached VMM memory"), std::string::npos) << r.err;
}

}  // namespace
