// SPDX-License-Identifier: Apache-2.0
#pragma once

// The conformance suite: every resource goes through the same cases, sizes from 0 bytes to large,
// alignments, an impossible request, random mixed sequences, many threads, several streams and
// every device. The cases are defined here once; each resource_conformance_*_test.cpp
// instantiates them for a group of factories (resource_factories.hpp), so that the groups compile
// in parallel.

#include "backend.hpp"
#include "device_memory.hpp"
#include "resource_factories.hpp"

#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>
#include <rmm/resource_ref.hpp>

#include <gtest/gtest.h>

#include <algorithm>
#include <atomic>
#include <cmath>
#include <cstdint>
#include <iterator>
#include <map>
#include <mutex>
#include <optional>
#include <random>
#include <string>
#include <thread>
#include <vector>

namespace rmm::test {
namespace {  // each translation unit instantiates the suite for its own factories

constexpr std::size_t one_pib = std::size_t{1} << 50;

template <class Factory>
class ResourceConformance : public ::testing::Test {
 protected:
  void SetUp() override
  {
    RMM_CUDA_TRY(cudaSetDevice(0));
    if (auto const reason = Factory::unavailable_reason(); !reason.empty()) { GTEST_SKIP() << reason; }
    mr_.emplace(Factory::make());
  }
  void TearDown() override { RMM_CUDA_TRY(cudaSetDevice(0)); }

  auto& mr() { return *mr_; }

  std::optional<decltype(Factory::make())> mr_;
  rmm::cuda_stream stream_;
};

TYPED_TEST_SUITE_P(ResourceConformance);

// A zero-byte request may return null or a pointer, but never one that aliases other memory:
// neither the start of, nor a pointer inside, any live allocation (earlier or later), nor another
// live zero-byte result. Allocating and freeing such blocks must leave every other block intact
// and must not hand live memory out again.
TYPED_TEST_P(ResourceConformance, ZeroBytes)
{
  struct block {
    void* ptr;
    std::size_t bytes;
    std::uint8_t tag;
  };
  std::vector<block> neighbours;
  std::uint8_t next_tag     = 1;
  auto const add_neighbours = [&] {
    for (std::size_t bytes : {std::size_t{1}, std::size_t{256}, std::size_t{4096}, std::size_t{65537}}) {
      bytes     = std::min(bytes, max_request_of<TypeParam>());
      void* ptr = this->mr().allocate(this->stream_, bytes);
      write_tag(ptr, bytes, next_tag, this->stream_);
      neighbours.push_back({ptr, bytes, next_tag++});
    }
  };
  auto const aliases = [&](void const* p) -> std::string {
    auto const addr = reinterpret_cast<std::uintptr_t>(p);
    for (auto const& n : neighbours) {
      auto const start = reinterpret_cast<std::uintptr_t>(n.ptr);
      if (addr >= start && addr < start + n.bytes) {
        return "lies inside the live " + std::to_string(n.bytes) + "-byte block at " + std::to_string(start);
      }
    }
    return {};
  };

  add_neighbours();
  std::vector<void*> zeros;
  // Enough of them that padded zero-byte blocks laid out one after the other start at every
  // offset modulo a 4 KiB alignment.
  for (int i = 0; i < 32; ++i) {
    zeros.push_back(i % 2 == 0 ? this->mr().allocate(this->stream_, 0) : this->mr().allocate_sync(0));
  }
  add_neighbours();  // a zero-byte block must not alias what comes after it either
  for (std::size_t i = 0; i < zeros.size(); ++i) {
    if (zeros[i] == nullptr) { continue; }
    EXPECT_EQ(aliases(zeros[i]), "") << "zero-byte result " << zeros[i];
    for (std::size_t j = 0; j < i; ++j) {
      EXPECT_NE(zeros[i], zeros[j]) << "two live zero-byte allocations share a pointer";
    }
  }
  for (std::size_t i = 0; i < zeros.size(); ++i) {
    if (i % 2 == 0) {
      this->mr().deallocate(this->stream_, zeros[i], 0);
    } else {
      this->mr().deallocate_sync(zeros[i], 0);
    }
  }
  for (auto const& n : neighbours) {
    EXPECT_TRUE(has_tag(n.ptr, n.bytes, n.tag, this->stream_))
      << "the " << n.bytes << "-byte block at " << n.ptr << " changed";
  }
  // Freeing the zero-byte blocks gave no live memory back: new blocks land elsewhere.
  std::vector<block> const earlier = neighbours;
  add_neighbours();
  for (std::size_t i = earlier.size(); i < neighbours.size(); ++i) {
    auto const start = reinterpret_cast<std::uintptr_t>(neighbours[i].ptr);
    for (auto const& e : earlier) {
      auto const e_start = reinterpret_cast<std::uintptr_t>(e.ptr);
      EXPECT_TRUE(start + neighbours[i].bytes <= e_start || e_start + e.bytes <= start)
        << "a new " << neighbours[i].bytes << "-byte block at " << neighbours[i].ptr << " overlaps the live " << e.bytes
        << "-byte block at " << e.ptr;
    }
  }
  for (auto const& n : neighbours) {
    EXPECT_TRUE(has_tag(n.ptr, n.bytes, n.tag, this->stream_))
      << "the " << n.bytes << "-byte block at " << n.ptr << " changed";
    this->mr().deallocate(this->stream_, n.ptr, n.bytes);
  }
}

TYPED_TEST_P(ResourceConformance, SizesAreAlignedAndUsable)
{
  std::uint8_t tag = 1;
  for (std::size_t bytes : {std::size_t{1}, std::size_t{3}, std::size_t{255}, std::size_t{256}, std::size_t{257},
                            std::size_t{4097}, std::size_t{1} << 20, (std::size_t{16} << 20) + 7}) {
    if (bytes > max_request_of<TypeParam>()) { continue; }
    void* ptr = this->mr().allocate(this->stream_, bytes);
    ASSERT_NE(ptr, nullptr) << bytes;
    EXPECT_TRUE(rmm::is_pointer_aligned(ptr, rmm::CUDA_ALLOCATION_ALIGNMENT)) << ptr << " for " << bytes;
    write_tag(ptr, bytes, tag, this->stream_);
    EXPECT_TRUE(has_tag(ptr, bytes, tag, this->stream_)) << bytes;
    this->mr().deallocate(this->stream_, ptr, bytes);
    ++tag;
  }
}

TYPED_TEST_P(ResourceConformance, LargeAllocationIsUsableAtBothEnds)
{
  auto const bytes = TypeParam::large_size;
  void* ptr        = this->mr().allocate(this->stream_, bytes);
  ASSERT_NE(ptr, nullptr);
  write_tag(ptr, bytes, 0x5a, this->stream_);
  EXPECT_TRUE(has_tag(ptr, bytes, 0x5a, this->stream_));
  this->mr().deallocate(this->stream_, ptr, bytes);
}

TYPED_TEST_P(ResourceConformance, HonoursEveryAlignmentUpTo256)
{
  for (std::size_t alignment = 1; alignment <= rmm::CUDA_ALLOCATION_ALIGNMENT; alignment *= 2) {
    void* ptr = this->mr().allocate(this->stream_, 100, alignment);
    EXPECT_TRUE(rmm::is_pointer_aligned(ptr, alignment)) << ptr << " alignment " << alignment;
    this->mr().deallocate(this->stream_, ptr, 100, alignment);
  }
}

TYPED_TEST_P(ResourceConformance, RejectsUnsupportedAlignmentAndStaysUsable)
{
  EXPECT_THROW((void)this->mr().allocate(this->stream_, 100, 512), rmm::bad_alloc);
  EXPECT_THROW((void)this->mr().allocate(this->stream_, 100, 3), rmm::logic_error);
  EXPECT_THROW((void)this->mr().allocate(this->stream_, 100, 0), rmm::logic_error);
  void* ptr = this->mr().allocate(this->stream_, 100);
  this->mr().deallocate(this->stream_, ptr, 100);
}

TYPED_TEST_P(ResourceConformance, ImpossibleRequestThrowsOutOfMemoryNamingSizeAndResource)
{
  try {
    (void)this->mr().allocate(this->stream_, one_pib);
    FAIL() << "allocating 1 PiB succeeded";
  } catch (rmm::out_of_memory const& e) {
    EXPECT_LE(one_pib, max_request_of<TypeParam>()) << "a request the resource never accepts is not out of memory";
    std::string const message = e.what();
    EXPECT_NE(message.find("1.00 PiB"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(one_pib)), std::string::npos) << message;
    EXPECT_NE(message.find(TypeParam::resource_name), std::string::npos) << message;
  } catch (rmm::bad_alloc const& e) {
    ASSERT_LT(max_request_of<TypeParam>(), one_pib) << "expected rmm::out_of_memory, got: " << e.what();
    std::string const message = e.what();
    EXPECT_NE(message.find("1.00 PiB"), std::string::npos) << message;
    EXPECT_NE(message.find(std::to_string(one_pib)), std::string::npos) << message;
    EXPECT_NE(message.find(TypeParam::resource_name), std::string::npos) << message;
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "a failed allocation must not leave a sticky error behind";
  void* ptr = this->mr().allocate(this->stream_, 1024);  // still usable
  write_tag(ptr, 1024, 7, this->stream_);
  EXPECT_TRUE(has_tag(ptr, 1024, 7, this->stream_));
  this->mr().deallocate(this->stream_, ptr, 1024);
}

TYPED_TEST_P(ResourceConformance, OutOfMemoryIsABadAlloc)
{
  EXPECT_THROW((void)this->mr().allocate(this->stream_, one_pib), std::bad_alloc);
  EXPECT_THROW((void)this->mr().allocate_sync(one_pib), rmm::bad_alloc);
}

TYPED_TEST_P(ResourceConformance, SyncVariantsGiveMemoryUsableOnAnyStream)
{
  void* ptr = this->mr().allocate_sync(4096);
  rmm::cuda_stream other;
  write_tag(ptr, 4096, 9, other);
  EXPECT_TRUE(has_tag(ptr, 4096, 9, other));
  this->mr().deallocate_sync(ptr, 4096);
}

TYPED_TEST_P(ResourceConformance, RandomMixedSequenceKeepsBlocksDisjointAndIntact)
{
  std::mt19937_64 rng{42};
  std::uniform_real_distribution<double> log_size{0.0, 22.0};  // 1 B .. 4 MiB, log-uniform
  struct block {
    std::size_t bytes;
    std::uint8_t tag;
  };
  std::map<std::uintptr_t, block> live;
  std::uint8_t next_tag = 1;
  auto free_one         = [&](auto it) {
    auto* ptr = reinterpret_cast<void*>(it->first);
    ASSERT_TRUE(has_tag(ptr, it->second.bytes, it->second.tag, this->stream_)) << "block at " << ptr << " clobbered";
    this->mr().deallocate(this->stream_, ptr, it->second.bytes);
    live.erase(it);
  };
  for (int step = 0; step < 600; ++step) {
    if (live.empty() || rng() % 100 < 60) {
      auto const bytes = std::min(static_cast<std::size_t>(std::exp2(log_size(rng))), max_request_of<TypeParam>());
      void* ptr        = this->mr().allocate(this->stream_, bytes);
      auto const addr  = reinterpret_cast<std::uintptr_t>(ptr);
      // Disjoint from both neighbours.
      auto next = live.lower_bound(addr);
      if (next != live.end()) { ASSERT_LE(addr + bytes, next->first) << "overlaps the next block"; }
      if (next != live.begin()) {
        auto prev = std::prev(next);
        ASSERT_LE(prev->first + prev->second.bytes, addr) << "overlaps the previous block";
      }
      write_tag(ptr, bytes, next_tag, this->stream_);
      live.emplace(addr, block{bytes, next_tag});
      next_tag = static_cast<std::uint8_t>(next_tag % 250 + 1);
    } else {
      auto it = live.begin();
      std::advance(it, static_cast<long>(rng() % live.size()));
      free_one(it);
    }
  }
  while (!live.empty()) { free_one(live.begin()); }
}

// Threads share one resource, each on its own stream, each keeping up to 64 blocks of random
// sizes alive. Every block is checked against a registry of all threads' live blocks when it is
// handed out, and carries its thread's tag, checked before it is freed: memory handed to two
// threads at once shows either way.
TYPED_TEST_P(ResourceConformance, ManyThreadsEachOnItsOwnStream)
{
  constexpr int threads          = 8;
  constexpr int steps            = 400;
  constexpr std::size_t max_live = 64;
  std::mutex registry_mutex;
  std::map<std::uintptr_t, std::size_t> registry;  // every thread's live blocks: start -> size
  std::atomic<int> overlaps{0};
  std::atomic<int> clobbered{0};
  std::vector<std::thread> workers;
  auto ref = rmm::device_async_resource_ref{this->mr()};  // one resource shared by all threads
  for (int t = 0; t < threads; ++t) {
    workers.emplace_back([&, t] {
      RMM_CUDA_TRY(cudaSetDevice(0));
      rmm::cuda_stream stream;
      std::mt19937 rng(static_cast<unsigned>(t));
      std::uniform_real_distribution<double> log_size{0.0, 14.0};  // 1 B .. 16 KiB, log-uniform
      struct block {
        void* ptr;
        std::size_t bytes;
        std::uint8_t tag;
      };
      std::vector<block> live;
      auto const free_one = [&](std::size_t i) {
        auto const b = live[i];
        if (!has_tag(b.ptr, b.bytes, b.tag, stream)) { ++clobbered; }
        {
          std::lock_guard lock{registry_mutex};
          registry.erase(reinterpret_cast<std::uintptr_t>(b.ptr));
        }
        ref.deallocate(stream, b.ptr, b.bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
        live[i] = live.back();
        live.pop_back();
      };
      for (int i = 0; i < steps; ++i) {
        if (live.size() < max_live && (live.empty() || rng() % 100 < 60)) {
          auto const bytes = std::min(static_cast<std::size_t>(std::exp2(log_size(rng))), max_request_of<TypeParam>());
          void* ptr        = ref.allocate(stream, bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
          auto const start = reinterpret_cast<std::uintptr_t>(ptr);
          {
            std::lock_guard lock{registry_mutex};
            auto next = registry.lower_bound(start);
            if (next != registry.end() && start + bytes > next->first) { ++overlaps; }
            if (next != registry.begin() && std::prev(next)->first + std::prev(next)->second > start) { ++overlaps; }
            registry[start] = bytes;
          }
          // High nibble: the thread; low nibble: the block. No two threads share a tag.
          auto const tag = static_cast<std::uint8_t>((t + 1) << 4 | (i % 16));
          write_tag(ptr, bytes, tag, stream);
          live.push_back({ptr, bytes, tag});
        } else {
          free_one(rng() % live.size());
        }
      }
      while (!live.empty()) { free_one(live.size() - 1); }
    });
  }
  for (auto& w : workers) { w.join(); }
  EXPECT_EQ(overlaps.load(), 0) << "blocks handed out while overlapping another thread's live block";
  EXPECT_EQ(clobbered.load(), 0) << "blocks whose tag another thread overwrote";
}

TYPED_TEST_P(ResourceConformance, DeallocateOnAnotherStreamAfterSynchronizing)
{
  rmm::cuda_stream first;
  rmm::cuda_stream second;
  void* ptr = this->mr().allocate(first, 1 << 16);
  write_tag(ptr, 1 << 16, 3, first);
  first.synchronize();
  this->mr().deallocate(second, ptr, 1 << 16);
  void* again = this->mr().allocate(second, 1 << 16);
  write_tag(again, 1 << 16, 4, second);
  EXPECT_TRUE(has_tag(again, 1 << 16, 4, second));
  this->mr().deallocate(second, again, 1 << 16);
}

TYPED_TEST_P(ResourceConformance, ReuseOnTheSameStreamWithoutSynchronizing)
{
  for (std::uint8_t tag = 1; tag <= 20; ++tag) {
    void* ptr = this->mr().allocate(this->stream_, 1 << 12);
    write_tag(ptr, 1 << 12, tag, this->stream_);
    this->mr().deallocate(this->stream_, ptr, 1 << 12);
  }
  void* ptr = this->mr().allocate(this->stream_, 1 << 12);
  write_tag(ptr, 1 << 12, 99, this->stream_);
  EXPECT_TRUE(has_tag(ptr, 1 << 12, 99, this->stream_));
  this->mr().deallocate(this->stream_, ptr, 1 << 12);
}

TYPED_TEST_P(ResourceConformance, WorksThroughEveryTypeErasedHandle)
{
  static_assert(cuda::mr::resource_with<std::remove_reference_t<decltype(this->mr())>, cuda::mr::device_accessible>);
  rmm::device_async_resource_ref ref{this->mr()};
  rmm::mr::any_device_resource owning{this->mr()};
  rmm::device_resource_ref sync_ref{this->mr()};

  void* a = ref.allocate(this->stream_, 512, rmm::CUDA_ALLOCATION_ALIGNMENT);
  void* b = owning.allocate(this->stream_, 512, rmm::CUDA_ALLOCATION_ALIGNMENT);
  void* c = sync_ref.allocate_sync(512, rmm::CUDA_ALLOCATION_ALIGNMENT);
  for (void* ptr : {a, b, c}) {
    write_tag(ptr, 512, 0x11, this->stream_);
    EXPECT_TRUE(has_tag(ptr, 512, 0x11, this->stream_));
  }
  // Equal resources free each other's memory.
  ASSERT_TRUE(ref == rmm::device_async_resource_ref{owning});
  owning.deallocate(this->stream_, a, 512, rmm::CUDA_ALLOCATION_ALIGNMENT);
  ref.deallocate(this->stream_, b, 512, rmm::CUDA_ALLOCATION_ALIGNMENT);
  ASSERT_EQ(cudaStreamSynchronize(this->stream_), cudaSuccess);
  sync_ref.deallocate_sync(c, 512, rmm::CUDA_ALLOCATION_ALIGNMENT);
}

TYPED_TEST_P(ResourceConformance, EqualityFollowsSharedState)
{
  auto copy = this->mr();
  EXPECT_TRUE(copy == this->mr());
  auto fresh = TypeParam::make();
  EXPECT_EQ(fresh == this->mr(), TypeParam::instances_equal);
  EXPECT_TRUE(rmm::device_async_resource_ref{copy} == rmm::device_async_resource_ref{this->mr()});
}

TYPED_TEST_P(ResourceConformance, EveryDeviceGetsItsOwnMemory)
{
  for (int device = 0; device < device_count(); ++device) {
    RMM_CUDA_TRY(cudaSetDevice(device));
    auto mr = TypeParam::make();
    rmm::cuda_stream stream;
    void* ptr = mr.allocate(stream, 1 << 20);
    cudaPointerAttributes attributes{};
    RMM_CUDA_TRY(cudaPointerGetAttributes(&attributes, ptr));
    if (attributes.type == cudaMemoryTypeDevice) { EXPECT_EQ(attributes.device, device); }
    write_tag(ptr, 1 << 20, static_cast<std::uint8_t>(device + 1), stream);
    EXPECT_TRUE(has_tag(ptr, 1 << 20, static_cast<std::uint8_t>(device + 1), stream));
    mr.deallocate(stream, ptr, 1 << 20);
  }
}

REGISTER_TYPED_TEST_SUITE_P(ResourceConformance,
                            ZeroBytes,
                            SizesAreAlignedAndUsable,
                            LargeAllocationIsUsableAtBothEnds,
                            HonoursEveryAlignmentUpTo256,
                            RejectsUnsupportedAlignmentAndStaysUsable,
                            ImpossibleRequestThrowsOutOfMemoryNamingSizeAndResource,
                            OutOfMemoryIsABadAlloc,
                            SyncVariantsGiveMemoryUsableOnAnyStream,
                            RandomMixedSequenceKeepsBlocksDisjointAndIntact,
                            ManyThreadsEachOnItsOwnStream,
                            DeallocateOnAnotherStreamAfterSynchronizing,
                            ReuseOnTheSameStreamWithoutSynchronizing,
                            WorksThroughEveryTypeErasedHandle,
                            EqualityFollowsSharedState,
                            EveryDeviceGetsItsOwnMemory);

}  // namespace
}  // namespace rmm::test
