#include "stream_identity.hpp"

#include "../../detail/cuda_driver.hpp"

#include <array>
#include <atomic>
#include <cstddef>

namespace rmm::mr::detail {

namespace {

/// The driver's answer, on the common path of every operation on a user stream: one driver call,
/// through a pointer looked up once.
std::uint64_t ask_driver(cudaStream_t stream)
{
  static auto const get_id = rmm::detail::cuda_driver_table().cuStreamGetId;
  unsigned long long id    = 0;
  if (auto const status = get_id(stream, &id); status != CUDA_SUCCESS) [[unlikely]] {
    rmm::detail::throw_cu_error(status, "cuStreamGetId(stream, &id)", __FILE__, __LINE__);
  }
  return id;
}

}  // namespace

std::uint64_t stream_id(cudaStream_t stream, int device)
{
  bool const legacy                    = stream == cudaStream_t{} || stream == cudaStreamLegacy;
  bool const per_thread                = stream == cudaStreamPerThread;
  constexpr std::size_t cached_devices = 64;
  if ((legacy || per_thread) && device >= 0 && static_cast<std::size_t>(device) < cached_devices) {
    // Fixed for the thread's life on that device: one driver call per thread, not per operation.
    // Stored plus one, so that 0 means "not asked yet".
    thread_local std::array<std::array<std::uint64_t, 2>, cached_devices> known{};
    auto& slot = known[static_cast<std::size_t>(device)][per_thread ? 1 : 0];
    if (slot == 0) {
      // A default stream is the current context's: make sure there is one (a user stream carries
      // its own).
      rmm::detail::require_context();
      slot = ask_driver(stream) + 1;
    }
    return slot - 1;
  }
  return ask_driver(stream);
}

std::uint64_t thread_token() noexcept
{
  static std::atomic<std::uint64_t> next{1};
  thread_local std::uint64_t const token = next.fetch_add(1, std::memory_order_relaxed);
  return token;
}

}  // namespace rmm::mr::detail
