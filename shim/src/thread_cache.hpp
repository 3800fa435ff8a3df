#pragma once

// One freed block per thread, for the commonest thing a program does with device memory: free a
// block and allocate one of the same size next (a cudaMalloc/cudaFree pair in a loop, a step's
// temporaries). A cudaFree served in the legacy stream's order parks its block here instead of
// handing it to the stack, and the thread's next cudaMalloc of exactly that size on that device
// takes it back without reaching the stack: no lock, no arena, no free list. It is the reuse the
// stack would have made, in the same order (the legacy stream's).
//
// A parked block is never held longer than the thread's next call that cannot use it: an
// allocation of another size, or one the legacy order does not serve, gives it to the stack first,
// so the stack never grows for memory a thread merely parked. A thread that ends gives its block
// back. A forked child forgets the parent's (the parent's pools are not the child's).

#include <cstddef>
#include <cstdint>
#include <optional>

namespace rmm::shim {

struct parked_block {
  std::uintptr_t ptr;
  std::size_t size;
  int device;
};

namespace detail {
/// The calling thread's cache: trivially destructible, so reaching it costs no guard; the thread's
/// end is seen through a pthread key instead (registered with the thread's first park).
struct parked_slot {
  void const* owner;  // the state the block belongs to; null when nothing is parked
  parked_block block;
  bool registered;
};
inline thread_local parked_slot parked{};
/// Makes sure the thread's parked block goes back when the thread ends. False when that cannot be
/// arranged (out of memory): then nothing may be parked.
[[nodiscard]] bool register_thread_end(parked_slot& slot) noexcept;
}  // namespace detail

class thread_cache {
 public:
  /// Larger blocks are not parked: a thread that frees one and goes idle would keep it from
  /// every other thread.
  static constexpr std::size_t max_bytes = std::size_t{16} << 20;

  /// The calling thread's parked block if it is `size` bytes on `device` and belongs to `owner`
  /// (the shim's state: a forked child's is a new one); taken out of the cache.
  [[nodiscard]] static std::optional<parked_block> take(void const* owner, int device, std::size_t size) noexcept
  {
    auto& s = detail::parked;
    if (s.owner != owner || s.block.size != size || s.block.device != device) { return std::nullopt; }
    s.owner = nullptr;
    return s.block;
  }

  /// Whatever the calling thread has parked for `owner`; taken out of the cache.
  [[nodiscard]] static std::optional<parked_block> take_any(void const* owner) noexcept
  {
    auto& s = detail::parked;
    if (s.owner == nullptr) { return std::nullopt; }
    bool const ours = s.owner == owner;
    s.owner         = nullptr;
    if (!ours) { return std::nullopt; }  // a forked child's copy of its parent's block: forgotten
    return s.block;
  }

  /// Parks `block` for `owner`. Returns the block the caller gives back instead: the one `block`
  /// displaces, or `block` itself when it cannot be parked (too large, or no memory to watch the
  /// thread's end with).
  [[nodiscard]] static std::optional<parked_block> park(void const* owner, parked_block block) noexcept
  {
    auto& s = detail::parked;
    if (block.size > max_bytes || (!s.registered && !detail::register_thread_end(s))) { return block; }
    auto displaced = take_any(owner);
    s.owner        = owner;
    s.block        = block;
    return displaced;
  }

  /// Bytes the calling thread has parked on `device` for `owner`.
  [[nodiscard]] static std::size_t parked_bytes(void const* owner, int device) noexcept
  {
    auto const& s = detail::parked;
    return s.owner == owner && s.block.device == device ? s.block.size : 0;
  }
};

}  // namespace rmm::shim
