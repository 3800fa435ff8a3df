// SPDX-License-Identifier: Apache-2.0
// A device's virtual address range: one large MAP_NORESERVE reservation carved up best-fit, so
// device pointers look like a GPU's (small cudaMalloc blocks 512 bytes apart, as on the H200),
// cost nothing until touched, and are recognisable as device addresses even after they are freed.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>

namespace rmm_emu {

class AddressSpace {
 public:
  static constexpr std::uint64_t kGranularity = 512;

  // Reserves `bytes` of address space; false (and `error`) when mmap refuses.
  bool reserve(std::uint64_t bytes, std::string& error);

  // Best fit, lowest address among equal sizes; `bytes` must be a multiple of kGranularity.
  std::optional<std::uint64_t> allocate(std::uint64_t bytes);
  void release(std::uint64_t addr, std::uint64_t bytes);

  // Gives the pages wholly inside [addr, addr + bytes) back to the OS (they read as zero after).
  static void discard(std::uint64_t addr, std::uint64_t bytes);

  bool contains(std::uint64_t addr) const { return addr >= base_ && addr < base_ + size_; }
  std::uint64_t base() const { return base_; }

 private:
  void insert_free(std::uint64_t addr, std::uint64_t bytes);
  void erase_free(std::map<std::uint64_t, std::uint64_t>::iterator it);

  std::uint64_t base_ = 0;
  std::uint64_t size_ = 0;
  std::map<std::uint64_t, std::uint64_t> free_by_addr_;             // addr -> size
  std::set<std::pair<std::uint64_t, std::uint64_t>> free_by_size_;  // (size, addr)
};

}  // namespace rmm_emu
