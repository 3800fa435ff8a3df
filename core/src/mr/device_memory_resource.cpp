#include "../detail/cuda_driver.hpp"

#include <rmm/error.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <fmt/format.h>

namespace rmm::mr {

void* device_memory_resource::allocate_sync(std::size_t bytes, std::size_t alignment)
{
  auto const stream = cuda_stream_view{};
  void* ptr         = allocate(stream, bytes, alignment);
  try {
    rmm::detail::require_context();
    RMM_CU_TRY(cuStreamSynchronize(stream.value()));
  } catch (...) {
    deallocate(stream, ptr, bytes, alignment);
    throw;
  }
  return ptr;
}

void device_memory_resource::reject_alignment(std::size_t alignment)
{
  if (!is_pow2(alignment)) {
    throw rmm::logic_error{fmt::format("allocation alignment must be a power of two, got {}", alignment)};
  }
  throw rmm::logic_error{
    fmt::format("allocation alignment {} exceeds the {} bytes rmm's resources guarantee; wrap the resource in "
                "an aligned_resource_adaptor for larger alignments",
                alignment,
                CUDA_ALLOCATION_ALIGNMENT)};
}

}  // namespace rmm::mr
