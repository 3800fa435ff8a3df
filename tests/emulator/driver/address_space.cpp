// SPDX-License-Identifier: Apache-2.0
#include "address_space.hpp"

#include "common.hpp"

#include <sys/mman.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rmm_emu {

bool AddressSpace::reserve(std::uint64_t bytes, std::string& error)
{
  // 2 MiB alignment, like the large pages a GPU maps device memory with.
  constexpr std::uint64_t align = 2 * MiB;
  void* p = ::mmap(nullptr, bytes + align, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (p == MAP_FAILED) {
    error = std::string("cannot reserve ") + std::to_string(bytes) + " bytes of address space: " + std::strerror(errno);
    return false;
  }
  auto const raw = reinterpret_cast<std::uint64_t>(p);
  base_          = round_up(raw, align);
  size_          = bytes;
  // Trim the unaligned slack so the reservation is exactly [base_, base_ + size_).
  if (base_ > raw) { ::munmap(p, base_ - raw); }
  if (auto const end = raw + bytes + align; end > base_ + size_) {
    ::munmap(reinterpret_cast<void*>(base_ + size_), end - (base_ + size_));
  }
  insert_free(base_, size_);
  return true;
}

std::optional<std::uint64_t> AddressSpace::allocate(std::uint64_t bytes)
{
  auto it = free_by_size_.lower_bound({bytes, 0});
  if (it == free_by_size_.end()) { return std::nullopt; }
  auto const [size, addr] = *it;
  erase_free(free_by_addr_.find(addr));
  if (size > bytes) { insert_free(addr + bytes, size - bytes); }
  return addr;
}

void AddressSpace::release(std::uint64_t addr, std::uint64_t bytes)
{
  // Coalesce with the free neighbours so large requests keep fitting.
  auto next = free_by_addr_.lower_bound(addr);
  if (next != free_by_addr_.end() && next->first == addr + bytes) {
    bytes += next->second;
    erase_free(next);
  }
  auto prev = free_by_addr_.lower_bound(addr);
  if (prev != free_by_addr_.begin()) {
    --prev;
    if (prev->first + prev->second == addr) {
      addr = prev->first;
      bytes += prev->second;
      erase_free(prev);
    }
  }
  insert_free(addr, bytes);
}

void AddressSpace::discard(std::uint64_t addr, std::uint64_t bytes)
{
  static std::uint64_t const page = static_cast<std::uint64_t>(::sysconf(_SC_PAGESIZE));
  std::uint64_t const first       = round_up(addr, page);
  std::uint64_t const last        = (addr + bytes) / page * page;
  if (last > first) { ::madvise(reinterpret_cast<void*>(first), last - first, MADV_DONTNEED); }
}

void AddressSpace::insert_free(std::uint64_t addr, std::uint64_t bytes)
{
  free_by_addr_.emplace(addr, bytes);
  free_by_size_.emplace(bytes, addr);
}

void AddressSpace::erase_free(std::map<std::uint64_t, std::uint64_t>::iterator it)
{
  free_by_size_.erase({it->second, it->first});
  free_by_addr_.erase(it);
}

}  // namespace rmm_emu
