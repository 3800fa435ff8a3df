// SPDX-License-Identifier: Apache-2.0
// Runtime API: texture objects, handed to the driver's cuTexObjectCreate, which checks the memory.
#include "rt.hpp"

using namespace rmm_emu::rt;

namespace {

/// The driver's element format for a channel description (its widest channel decides).
CUarray_format format_of(cudaChannelFormatDesc const& d)
{
  int const bits = d.x;
  switch (d.f) {
    case cudaChannelFormatKindFloat: return bits == 16 ? CU_AD_FORMAT_HALF : CU_AD_FORMAT_FLOAT;
    case cudaChannelFormatKindSigned:
      return bits == 8 ? CU_AD_FORMAT_SIGNED_INT8 : bits == 16 ? CU_AD_FORMAT_SIGNED_INT16 : CU_AD_FORMAT_SIGNED_INT32;
    default:
      return bits == 8    ? CU_AD_FORMAT_UNSIGNED_INT8
             : bits == 16 ? CU_AD_FORMAT_UNSIGNED_INT16
                          : CU_AD_FORMAT_UNSIGNED_INT32;
  }
}

unsigned channels_of(cudaChannelFormatDesc const& d)
{
  return static_cast<unsigned>((d.x != 0) + (d.y != 0) + (d.z != 0) + (d.w != 0));
}

}  // namespace

RMM_RT_EXPORT cudaError_t cudaCreateTextureObject(cudaTextureObject_t* object,
                                                  cudaResourceDesc const* resource,
                                                  cudaTextureDesc const* texture,
                                                  cudaResourceViewDesc const* view)
{
  RMM_RT_ENTER_CONTEXT();
  if (object == nullptr || resource == nullptr || texture == nullptr) { return record(cudaErrorInvalidValue); }
  if (view != nullptr) { return record(cudaErrorInvalidValue); }  // views apply to arrays only
  CUDA_RESOURCE_DESC res{};
  switch (resource->resType) {
    case cudaResourceTypeLinear:
      res.resType                = CU_RESOURCE_TYPE_LINEAR;
      res.res.linear.devPtr      = reinterpret_cast<CUdeviceptr>(resource->res.linear.devPtr);
      res.res.linear.format      = format_of(resource->res.linear.desc);
      res.res.linear.numChannels = channels_of(resource->res.linear.desc);
      res.res.linear.sizeInBytes = resource->res.linear.sizeInBytes;
      break;
    case cudaResourceTypePitch2D:
      res.resType                  = CU_RESOURCE_TYPE_PITCH2D;
      res.res.pitch2D.devPtr       = reinterpret_cast<CUdeviceptr>(resource->res.pitch2D.devPtr);
      res.res.pitch2D.format       = format_of(resource->res.pitch2D.desc);
      res.res.pitch2D.numChannels  = channels_of(resource->res.pitch2D.desc);
      res.res.pitch2D.width        = resource->res.pitch2D.width;
      res.res.pitch2D.height       = resource->res.pitch2D.height;
      res.res.pitch2D.pitchInBytes = resource->res.pitch2D.pitchInBytes;
      break;
    default: return record(cudaErrorNotSupported);  // arrays and mipmapped arrays are not emulated
  }
  CUDA_TEXTURE_DESC tex{};
  for (int i = 0; i < 3; ++i) { tex.addressMode[i] = static_cast<CUaddress_mode>(texture->addressMode[i]); }
  tex.filterMode = static_cast<CUfilter_mode>(texture->filterMode);
  CUtexObject made{};
  auto const e = result(driver().texObjectCreate(&made, &res, &tex, nullptr));
  if (e == cudaSuccess) { *object = made; }
  return e;
}

RMM_RT_EXPORT cudaError_t cudaDestroyTextureObject(cudaTextureObject_t object)
{
  RMM_RT_ENTER_CONTEXT();
  return result(driver().texObjectDestroy(object));
}
