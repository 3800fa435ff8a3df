#include <rmm/error.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <fmt/format.h>

namespace rmm::mr {

void* device_memory_resource::do_allocate_sync(std::size_t bytes)
{
  auto const stream = cuda_stream_view{};
  void* ptr         = do_allocate(bytes, stream);
  try {
    stream.synchronize();
  } catch (...) {
    do_deallocate(ptr, bytes, stream);
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
