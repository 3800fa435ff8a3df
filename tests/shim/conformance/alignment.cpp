// SPDX-License-Identifier: Apache-2.0
// cudaMalloc's alignment, as programs rely on it: every result is aligned to at least the device's
// texture alignment (a texture object over linear memory needs it), whatever the size and however
// the memory was asked for.

#include "conformance.hpp"

#include <algorithm>
#include <vector>

using namespace conformance;

namespace {

/// How each size class comes back: the smallest alignment over a few allocations.
void measure(char const* how, std::size_t size, void* (*allocate)(std::size_t), void (*release)(void*))
{
  std::vector<void*> blocks;
  std::uint64_t smallest = std::uint64_t{1} << 30;
  for (int i = 0; i < 6; ++i) {
    void* p  = allocate(size);
    smallest = std::min(smallest, alignment_of(p));
    blocks.push_back(p);
  }
  for (void* p : blocks) { release(p); }
  fact(std::string{"alignment."} + how + "." + std::to_string(size), smallest);
}

void* runtime_malloc(std::size_t size)
{
  void* p = nullptr;
  require(cudaMalloc(&p, size), "cudaMalloc");
  return p;
}
void runtime_free(void* p) { require(cudaFree(p), "cudaFree"); }

void* driver_malloc(std::size_t size)
{
  CUdeviceptr p = 0;
  require(cuMemAlloc(&p, size), "cuMemAlloc");
  return reinterpret_cast<void*>(p);
}
void driver_free(void* p) { require(cuMemFree(reinterpret_cast<CUdeviceptr>(p)), "cuMemFree"); }

cudaStream_t async_stream = nullptr;
void* async_malloc(std::size_t size)
{
  void* p = nullptr;
  require(cudaMallocAsync(&p, size, async_stream), "cudaMallocAsync");
  return p;
}
void async_free(void* p) { require(cudaFreeAsync(p, async_stream), "cudaFreeAsync"); }

/// A texture object over `bytes` of linear memory at `p`.
cudaError_t texture_over(void* p, std::size_t bytes)
{
  cudaResourceDesc resource{};
  resource.resType                = cudaResourceTypeLinear;
  resource.res.linear.devPtr      = p;
  resource.res.linear.desc        = cudaCreateChannelDesc(32, 0, 0, 0, cudaChannelFormatKindFloat);
  resource.res.linear.sizeInBytes = bytes;
  cudaTextureDesc texture{};
  texture.readMode = cudaReadModeElementType;
  cudaTextureObject_t object{};
  auto const e = cudaCreateTextureObject(&object, &resource, &texture, nullptr);
  if (e == cudaSuccess) { require(cudaDestroyTextureObject(object), "cudaDestroyTextureObject"); }
  return e;
}

}  // namespace

int main()
{
  require(cudaFree(nullptr), "cudaFree(nullptr)");
  cudaDeviceProp prop{};
  require(cudaGetDeviceProperties(&prop, 0), "cudaGetDeviceProperties");
  fact("texture_alignment", prop.textureAlignment);
  auto const required = std::max<std::size_t>(256, prop.textureAlignment);
  require(cudaStreamCreateWithFlags(&async_stream, cudaStreamNonBlocking), "cudaStreamCreateWithFlags");

  std::size_t const sizes[] = {1,       100,           256,     257,     512,     1000,     4096,     65536,
                               1 << 20, (2 << 20) - 1, 2 << 20, 3 << 20, 8 << 20, 64 << 20, 256 << 20};
  for (auto size : sizes) {
    measure("cudaMalloc", size, runtime_malloc, runtime_free);
    measure("cuMemAlloc", size, driver_malloc, driver_free);
    measure("cudaMallocAsync", size, async_malloc, async_free);
  }
  require(cudaStreamSynchronize(async_stream), "cudaStreamSynchronize");

  // Odd sizes one after another: what a sub-allocator packs tightly unless it keeps the alignment.
  int misaligned[3]    = {0, 0, 0};
  int textures_refused = 0;
  std::vector<void*> runtime_blocks, driver_blocks, async_blocks;
  for (int i = 0; i < 100; ++i) {
    std::size_t const size = 100 + 37 * static_cast<std::size_t>(i);
    runtime_blocks.push_back(runtime_malloc(size));
    driver_blocks.push_back(driver_malloc(size));
    async_blocks.push_back(async_malloc(size));
    misaligned[0] += alignment_of(runtime_blocks.back()) < required;
    misaligned[1] += alignment_of(driver_blocks.back()) < required;
    misaligned[2] += alignment_of(async_blocks.back()) < required;
    require(cudaStreamSynchronize(async_stream), "cudaStreamSynchronize");
    textures_refused += texture_over(runtime_blocks.back(), size / 4 * 4) != cudaSuccess;
    textures_refused += texture_over(async_blocks.back(), size / 4 * 4) != cudaSuccess;
  }
  check("misaligned.cudaMalloc", std::to_string(misaligned[0]));
  check("misaligned.cuMemAlloc", std::to_string(misaligned[1]));
  check("misaligned.cudaMallocAsync", std::to_string(misaligned[2]));
  check("texture_objects_refused", std::to_string(textures_refused));

  // The address range of a block is the block, from any pointer into it.
  CUdeviceptr base  = 0;
  std::size_t size  = 0;
  auto* const block = static_cast<char*>(runtime_blocks[10]);
  require(cuMemGetAddressRange(&base, &size, reinterpret_cast<CUdeviceptr>(block + 17)), "cuMemGetAddressRange");
  check("address_range.base_is_block", reinterpret_cast<char*>(base) == block);
  check("address_range.size", std::to_string(size));

  for (void* p : runtime_blocks) { runtime_free(p); }
  for (void* p : driver_blocks) { driver_free(p); }
  for (void* p : async_blocks) { async_free(p); }
  require(cudaStreamSynchronize(async_stream), "cudaStreamSynchronize");
  require(cudaStreamDestroy(async_stream), "cudaStreamDestroy");
  return 0;
}
