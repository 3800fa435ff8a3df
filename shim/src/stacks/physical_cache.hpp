// SPDX-License-Identifier: Apache-2.0
#pragma once

// The program's own physical allocations (cuMemCreate), kept when the program releases them and
// handed out again for a cuMemCreate of the same size and properties. Programs that map their own
// memory (XLA's `platform` allocator) create and release an allocation per buffer, and the driver
// takes tens to hundreds of microseconds for each; a released allocation of the same size serves
// as well, since the driver promises nothing of a new allocation's contents.
//
// A handle is only handed out again once nothing else can reach its memory: the program has
// released every reference it had (cuMemCreate's and each cuMemRetainAllocationHandle's), it is
// mapped nowhere (cuMemMap / cuMemUnmap / cuMemAddressFree are seen), and it was never exported to
// another process nor bound where the shim cannot see it go (cuMemExportToShareableHandle,
// multicast objects, sparse arrays): such a handle is released to the driver as the program
// asked, once the last of its mappings goes. The cache keeps the driver's last reference to each
// handle it holds. A handle the program released stays usable while its memory is mapped, as the
// driver allows; once nothing maps it, the driver would have destroyed it, and the shim refuses
// every call on it as the driver would (gone()).

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <deque>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace rmm::shim {

class physical_cache {
 public:
  using handle = CUmemGenericAllocationHandle;

  /// A cached handle for cuMemCreate(bytes, prop, flags), taken out of the cache, or nothing.
  [[nodiscard]] std::optional<handle> take(std::size_t bytes,
                                           CUmemAllocationProp const& prop,
                                           unsigned long long flags);
  /// Records a handle the driver created for the program.
  void created(handle h, std::size_t bytes, CUmemAllocationProp const& prop);

  /// What to do with the program's cuMemRelease.
  enum class release_action : unsigned char {
    forward,  ///< pass it to the driver (not a handle of the cache's, or not its last reference)
    keep,     ///< the driver's last reference stays the cache's: the handle is cached once unmapped
    refuse,   ///< the program released every reference already (CUDA_ERROR_INVALID_VALUE)
  };
  [[nodiscard]] release_action released(handle h);
  /// Whether `h` is one the driver would have destroyed: the program released every reference it
  /// had and nothing maps it (the cache keeps it). The driver refuses such a handle in every call.
  [[nodiscard]] bool gone(handle h) const;
  /// cuMemRetainAllocationHandle gave the program one more reference to `h`.
  void retained(handle h);
  /// The program mapped `h` at [address, address + bytes).
  void mapped(CUdeviceptr address, std::size_t bytes, handle h);
  /// The program unmapped [address, address + bytes) (cuMemUnmap, or cuMemAddressFree of the
  /// reservation): every mapping within it is gone. Returns the handles the program released that
  /// escaped meanwhile and are mapped nowhere now, for the caller to release to the driver.
  [[nodiscard]] std::vector<handle> unmapped(CUdeviceptr address, std::size_t bytes);
  /// `h` reached somewhere the cache cannot follow (exported, bound to a multicast object, mapped
  /// into a sparse array): it is never handed out again.
  void escaped(handle h);
  /// One of the program's own handles, mapped up to `end`.
  struct mapping {
    handle owner;
    CUdeviceptr end;
  };
  /// The program's own handle mapped at `address`, if there is one.
  [[nodiscard]] std::optional<mapping> mapped_at(CUdeviceptr address) const;

  /// A handle taken out of the cache, for the caller to release to the driver.
  struct drained {
    handle owner;
    std::size_t bytes;
  };
  /// Takes every cached handle of `device` out of the cache.
  [[nodiscard]] std::vector<drained> drain(int device);

  /// Takes the cached handles no cuMemCreate asked for during the last keep_for_creates() calls
  /// out of the cache, for the caller to release to the driver: a size the program stopped asking
  /// for must not hold device memory for good.
  [[nodiscard]] std::vector<drained> expired();
  /// How many of the program's cuMemCreate calls a cached handle waits for one that takes it: twice
  /// the most handles the program held at once (a step's worth, in a training loop), 256 at least.
  [[nodiscard]] std::uint64_t keep_for_creates() const noexcept;

  struct statistics {
    std::uint64_t hits{};        ///< cuMemCreate answered from the cache
    std::uint64_t misses{};      ///< cuMemCreate that went to the driver
    std::size_t cached_bytes{};  ///< held now
    std::size_t peak_cached_bytes{};
    std::uint64_t drained{};  ///< handles given back to the driver by drain() or expired()
  };
  [[nodiscard]] statistics stats() const;
  /// Bytes cached on `device` (device memory the program released; free to it in effect).
  [[nodiscard]] std::size_t cached_bytes(int device) const;

 private:
  /// What a cuMemCreate asked for: a cached handle serves a request equal in every field.
  struct key {
    std::size_t bytes;
    CUmemAllocationType type;
    CUmemAllocationHandleType handle_types;
    CUmemLocationType location_type;
    int location_id;
    void* win32_metadata;
    unsigned char compression;
    unsigned char rdma;
    unsigned short usage;
    auto operator<=>(key const&) const = default;
  };
  static key key_of(std::size_t bytes, CUmemAllocationProp const& prop) noexcept;

  struct record {
    key what;
    unsigned program_references{1};  ///< cuMemCreate's and each retain's, less each release
    unsigned mappings{0};
    bool escaped{false};
    bool cached{false};
    std::uint64_t cached_at{0};  ///< creates_ when it was cached
  };
  /// Caches `h` when the program is done with it: no references, no mappings. True when it is done
  /// with it but `h` escaped: the record goes, and the cache's reference is the caller's to give
  /// back to the driver. Caller holds mutex_.
  [[nodiscard]] bool settle(handle h, record& r);
  /// Takes cached entry `it` out of the cache. Caller holds mutex_.
  drained uncache(std::multimap<key, handle>::iterator it);

  mutable std::mutex mutex_;
  std::unordered_map<handle, record> records_;                      ///< the program's handles, in use or cached
  std::map<CUdeviceptr, std::pair<std::size_t, handle>> mappings_;  ///< address: bytes, handle
  std::multimap<key, handle> cached_;
  std::deque<std::pair<std::uint64_t, handle>> cached_order_;  ///< (cached_at, handle), oldest first; may be stale
  std::uint64_t creates_{0};                                   ///< the program's cuMemCreate calls
  std::size_t held_{0};                                        ///< handles the program holds (records not cached)
  std::size_t peak_held_{0};
  statistics stats_{};
};

}  // namespace rmm::shim
