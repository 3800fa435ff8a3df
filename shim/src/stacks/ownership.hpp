// SPDX-License-Identifier: Apache-2.0
#pragma once

// Which pointers the shim handed out, their size and device: a free needs the size (cuMemFree
// gives only the pointer) and must recognise memory that is not the shim's (it passes through).
// Split into independently locked shards with open addressing and inline values, so a pair of
// calls costs two short critical sections and no heap allocation. The address range every block
// ever recorded lies in is kept too: a pointer outside it (managed memory, another library's,
// an address nobody allocated) is known to be foreign without taking a lock.

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <optional>
#include <utility>
#include <vector>

namespace rmm::shim {

/// How a block was handed out, which decides how its free is ordered.
enum class block_kind : std::uint8_t { synchronous, stream_ordered };

struct block_owner {
  std::size_t size{};  ///< what the program asked for
  int device{};
  block_kind kind{};
  /// The block came from a stack whose answer was not aligned enough: it was allocated `alignment`
  /// bytes larger, and the program's pointer is `offset` bytes into it (dispatch.cpp).
  bool over_allocated{false};
  std::uint8_t region{0};  ///< the tag it was allocated under (regions.hpp), 0 when untagged
  std::uint16_t offset{0};
  /// What CU_POINTER_ATTRIBUTE_BUFFER_ID answers for the block: unique for the life of the process,
  /// so that caches of registrations (MPI, UCX) tell a block from one handed out at its address
  /// before (the driver's id is the pool's, the same for every block of it).
  std::uint64_t buffer_id{0};
};

class ownership_table {
 public:
  ownership_table();
  ownership_table(ownership_table const&)            = delete;
  ownership_table& operator=(ownership_table const&) = delete;

  /// Records `ptr` (non-zero). Throws std::bad_alloc when the table cannot grow.
  void insert(std::uintptr_t ptr, block_owner owner);
  /// Whether `ptr` lies outside every block ever recorded. Relaxed loads suffice: a free of a
  /// block happens after its allocation returned, which widened the range first.
  [[nodiscard]] bool surely_foreign(std::uintptr_t ptr) const noexcept
  {
    return ptr < lowest_.load(std::memory_order_relaxed) || ptr >= end_.load(std::memory_order_relaxed);
  }
  /// Removes `ptr` and returns its owner, or nullopt when the shim did not hand it out.
  [[nodiscard]] std::optional<block_owner> extract(std::uintptr_t ptr) noexcept
  {
    if (surely_foreign(ptr)) { return std::nullopt; }
    return extract_recorded(ptr);
  }
  /// The same, searching the record even when `ptr` is outside the range (one the caller checked).
  [[nodiscard]] std::optional<block_owner> extract_recorded(std::uintptr_t ptr) noexcept;
  /// The block that starts at `ptr`, or nullopt.
  [[nodiscard]] std::optional<block_owner> find(std::uintptr_t ptr) const noexcept;
  /// The block that contains `ptr` (start and owner): a scan, for rare queries only.
  [[nodiscard]] std::optional<std::pair<std::uintptr_t, block_owner>> find_containing(std::uintptr_t ptr) const;
  /// Removes every block of `device` (its memory was destroyed by a reset): returns how many
  /// blocks and bytes. Frees of them then pass through, and get the driver's answer.
  std::pair<std::size_t, std::size_t> forget_device(int device) noexcept;
  /// Live blocks and their bytes, per device (index = device).
  [[nodiscard]] std::vector<std::pair<std::size_t, std::size_t>> live_per_device() const;

 private:
  struct slot {
    std::uintptr_t key{0};  // 0: empty
    block_owner owner{};
  };
  class spin_lock {
   public:
    void lock() noexcept;
    void unlock() noexcept { locked_.store(false, std::memory_order_release); }

   private:
    std::atomic<bool> locked_{false};
  };
  struct alignas(64) shard {
    mutable spin_lock lock;
    std::vector<slot> slots;
    std::size_t size{0};
  };
  static constexpr std::size_t shard_count = 64;

  void widen_range(std::uintptr_t ptr, std::size_t size) noexcept;

  [[nodiscard]] static std::size_t hash(std::uintptr_t ptr) noexcept;
  [[nodiscard]] shard& shard_of(std::uintptr_t ptr) noexcept { return shards_[hash(ptr) % shard_count]; }
  [[nodiscard]] shard const& shard_of(std::uintptr_t ptr) const noexcept { return shards_[hash(ptr) % shard_count]; }
  static void grow(shard& s);
  /// Empties slot `i` of `s` (its lock held).
  static void erase_at(shard& s, std::size_t i) noexcept;
  [[nodiscard]] static std::size_t home(shard const& s, std::uintptr_t ptr) noexcept;

  std::array<shard, shard_count> shards_;
  alignas(64) std::atomic<std::uintptr_t> lowest_{UINTPTR_MAX};  // read by every free: a line of its own
  std::atomic<std::uintptr_t> end_{0};
};

}  // namespace rmm::shim
