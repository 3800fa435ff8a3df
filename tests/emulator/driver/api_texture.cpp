// SPDX-License-Identifier: Apache-2.0
// Entry points: texture objects over linear and pitched device memory, as far as creating one
// checks its memory: the address must be device memory aligned to the device's texture alignment
// (an H200 refuses a 256-aligned address with CUDA_ERROR_INVALID_VALUE), and the range must lie in
// the allocation. Nothing is ever read through them (no kernels run here).
#include "common.hpp"
#include "context.hpp"
#include "memory.hpp"
#include "state.hpp"

#include <atomic>
#include <mutex>
#include <set>

using namespace rmm_emu;

namespace {

constexpr std::uint64_t texture_alignment       = 512;  // CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT
constexpr std::uint64_t texture_pitch_alignment = 32;   // CU_DEVICE_ATTRIBUTE_TEXTURE_PITCH_ALIGNMENT

std::mutex& objects_mutex()
{
  static auto* m = new std::mutex;
  return *m;
}

std::set<CUtexObject>& objects()
{
  static auto* live = new std::set<CUtexObject>;
  return *live;
}

/// Whether [ptr, ptr + bytes) is device memory of one allocation, starting aligned.
bool texture_memory(CUdeviceptr ptr, std::uint64_t bytes)
{
  if (ptr == 0 || ptr % texture_alignment != 0 || bytes == 0) { return false; }
  std::lock_guard lock(memory_mutex());
  Allocation const* a = find_allocation(ptr);
  return a != nullptr && device_only(*a) && ptr + bytes <= a->base + a->size;
}

}  // namespace

RMM_EMU_EXPORT CUresult cuTexObjectCreate(CUtexObject* object,
                                          CUDA_RESOURCE_DESC const* resource,
                                          CUDA_TEXTURE_DESC const* texture,
                                          CUDA_RESOURCE_VIEW_DESC const* view)
{
  RMM_EMU_REQUIRE_CONTEXT(ctx);
  (void)ctx;
  if (object == nullptr || resource == nullptr || texture == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  switch (resource->resType) {
    case CU_RESOURCE_TYPE_LINEAR: {
      auto const& linear = resource->res.linear;
      if (view != nullptr || !texture_memory(linear.devPtr, linear.sizeInBytes)) { return CUDA_ERROR_INVALID_VALUE; }
      break;
    }
    case CU_RESOURCE_TYPE_PITCH2D: {
      auto const& pitched = resource->res.pitch2D;
      if (view != nullptr || pitched.pitchInBytes % texture_pitch_alignment != 0 || pitched.height == 0 ||
          !texture_memory(pitched.devPtr, pitched.pitchInBytes * pitched.height)) {
        return CUDA_ERROR_INVALID_VALUE;
      }
      break;
    }
    default: return CUDA_ERROR_NOT_SUPPORTED;  // arrays and mipmapped arrays are not emulated
  }
  static std::atomic<CUtexObject> next{1};
  auto const made = next.fetch_add(1);
  std::lock_guard lock(objects_mutex());
  objects().insert(made);
  *object = made;
  return CUDA_SUCCESS;
}

RMM_EMU_EXPORT CUresult cuTexObjectDestroy(CUtexObject object)
{
  RMM_EMU_REQUIRE_INIT();
  std::lock_guard lock(objects_mutex());
  return objects().erase(object) == 1 ? CUDA_SUCCESS : CUDA_ERROR_INVALID_VALUE;
}
