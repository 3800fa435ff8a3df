// SPDX-License-Identifier: Apache-2.0
#pragma once

// The block a thread freed last, kept for that thread's next allocation: the commonest thing a
// program does with device memory is to free a block and allocate one of the same size next (a
// cudaMalloc/cudaFree pair in a loop, a step's temporaries). A cudaFree served in the legacy
// stream's order keeps its block here (one per thread and device) instead of handing it to the
// stack, and the thread's next cudaMalloc of exactly that size on that device takes it back
// without reaching the stack: no lock, no arena, no free list. It is the reuse the stack would
// have made, in the same order (the legacy stream's).
//
// A kept block goes back to the stack when its thread makes a request on that device that the
// block cannot serve, when the thread ends, and when anyone needs the memory: before a stack
// grows, when the program asks for memory back, and its bytes count as free for cudaMemGetInfo.
// Each block is one atomic word, so another thread can take it at any time: the owning thread
// takes it with one atomic exchange and keeps one with a plain store into an empty word. A forked
// child forgets every kept block (the parent's pools are not the child's).

#include "devices.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>

namespace rmm::shim {

struct kept_block {
  std::uintptr_t ptr;
  std::size_t size;
  int device;
  std::uint8_t region{0};  ///< its tag (regions.hpp); a thread keeps untagged blocks only
};

namespace detail {
/// A thread's kept blocks, one word per device: the block's address / 256 above its size - 1 (24
/// bits); 0 when none. A thread record (thread_records.hpp), made at the thread's first kept block:
/// one made in the last round of key destructors stays listed, and the sweeps still give its
/// block back.
struct kept_blocks {
  std::array<std::atomic<std::uint64_t>, max_devices> words{};
};
/// The calling thread's record once it kept a block. Trivially destructible: no guard to reach it.
inline thread_local kept_blocks* kept = nullptr;
/// Set when the thread's end gave its blocks back: it keeps no more.
inline thread_local bool kept_ended = false;
/// Makes and registers the calling thread's record. Null when that cannot be arranged (out of
/// memory): then nothing may be kept.
[[nodiscard]] kept_blocks* register_thread() noexcept;

inline constexpr unsigned size_bits = 24;
[[nodiscard]] inline kept_block decode(std::uint64_t word, int device) noexcept
{
  return {static_cast<std::uintptr_t>(word >> size_bits) << 8,
          static_cast<std::size_t>(word & ((std::uint64_t{1} << size_bits) - 1)) + 1, device};
}
}  // namespace detail

class thread_cache {
 public:
  /// Larger blocks are not kept: at most this much per thread and device waits outside the stack.
  static constexpr std::size_t max_bytes = std::size_t{1} << detail::size_bits;

  /// The calling thread's kept block on `device` if it is `size` bytes: its address, taken out.
  [[nodiscard]] static std::optional<std::uintptr_t> take(int device, std::size_t size) noexcept
  {
    auto* const blocks = detail::kept;
    if (blocks == nullptr || !has_device_slot(device)) { return std::nullopt; }
    auto& word       = blocks->words[static_cast<std::size_t>(device)];
    auto const found = word.load(std::memory_order_relaxed);
    if (found == 0 || (found & (max_bytes - 1)) != size - 1) { return std::nullopt; }
    // Only a sweep changes it meanwhile, and only to 0.
    if (word.exchange(0, std::memory_order_acquire) != found) { return std::nullopt; }
    return detail::decode(found, device).ptr;
  }

  /// Whatever the calling thread keeps on `device`, taken out.
  [[nodiscard]] static std::optional<kept_block> take_any(int device) noexcept
  {
    auto* const blocks = detail::kept;
    if (blocks == nullptr || !has_device_slot(device)) { return std::nullopt; }
    auto& word = blocks->words[static_cast<std::size_t>(device)];
    if (word.load(std::memory_order_relaxed) == 0) { return std::nullopt; }
    auto const found = word.exchange(0, std::memory_order_acquire);
    if (found == 0) { return std::nullopt; }
    return detail::decode(found, device);
  }

  /// Keeps `block` for the calling thread. Returns the block the caller gives back instead: the one
  /// `block` displaces, or `block` itself when it cannot be kept (too large, an address that does
  /// not fit the word, the thread ending, no memory to watch the thread's end with).
  [[nodiscard]] static std::optional<kept_block> keep(kept_block block) noexcept
  {
    if (block.size == 0 || block.size > max_bytes || !has_device_slot(block.device) || (block.ptr & 0xFF) != 0 ||
        (block.ptr >> 48) != 0 || detail::kept_ended) {
      return block;
    }
    auto* blocks = detail::kept;
    if (blocks == nullptr && (blocks = detail::register_thread()) == nullptr) { return block; }
    auto const kept_word = (static_cast<std::uint64_t>(block.ptr >> 8) << detail::size_bits) | (block.size - 1);
    auto& word           = blocks->words[static_cast<std::size_t>(block.device)];
    if (word.load(std::memory_order_relaxed) == 0) {  // only this thread makes it non-zero
      word.store(kept_word, std::memory_order_release);
      return std::nullopt;
    }
    auto const displaced = word.exchange(kept_word, std::memory_order_acq_rel);
    if (displaced == 0) { return std::nullopt; }
    return detail::decode(displaced, block.device);
  }

  /// Takes every thread's kept block on `device` (every device for -1) and passes each to
  /// `give_back` (a plain function, called with no lock held). Returns the bytes given back.
  static std::size_t sweep(int device, void (*give_back)(kept_block const& block) noexcept) noexcept;

  /// Bytes every thread keeps on `device`.
  [[nodiscard]] static std::size_t kept_bytes(int device) noexcept;

  /// Makes the registry and the thread-end key at load, before any fork can catch a thread making
  /// them; a thread that ends gives its kept blocks to `give_back_at_thread_end` (the serving
  /// layer's, handed down).
  static void prepare(void (*give_back_at_thread_end)(kept_block const& block) noexcept) noexcept;

  /// fork() handlers: the registry is locked across the fork, and the child forgets every block.
  static void before_fork() noexcept;
  static void after_fork_in_parent() noexcept;
  static void after_fork_in_child() noexcept;
};

}  // namespace rmm::shim
