// SPDX-License-Identifier: Apache-2.0
// Impossible sizes. A request above PTRDIFF_MAX bytes can never be met: no address space is that
// large. It is what an unsigned `n - 1` with n == 0 or an overflowed `n * sizeof(T)` produces, and
// rounding or padding it wraps around to a small number. Every resource, adaptor, allocator and
// container refuses it with rmm::out_of_memory naming the size and the resource, before it reaches
// any arithmetic or any upstream, and stays exactly as usable as before. Constructor arguments that
// are such sizes (block sizes, bin sizes, arena sizes) are refused the same way.

#include "device_memory.hpp"

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/device_scalar.hpp>
#include <rmm/device_uvector.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/polymorphic_allocator.hpp>
#include <rmm/mr/pool_memory_resource.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/system_memory_resource.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/thrust_allocator_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>

#include <fmt/format.h>
#include <gtest/gtest.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <limits>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

namespace {

using rmm::mr::any_device_resource;
using rmm::mr::statistics_resource_adaptor;

constexpr std::size_t size_max = std::numeric_limits<std::size_t>::max();
constexpr std::size_t MiB      = std::size_t{1} << 20;
constexpr std::size_t GiB      = std::size_t{1} << 30;

/// The caller's bug in person: one less than a count that happens to be 0.
std::size_t one_less_than(std::size_t count) { return count - 1; }

/// Sizes no allocation can have: the largest, one that rounding to 256 wraps to 0, one that
/// padding to 4 KiB wraps, the first above PTRDIFF_MAX, and `n - 1` for n == 0.
std::vector<std::size_t> impossible_sizes()
{
  return {size_max, size_max - 255, size_max - 4095, size_max / 2 + 1, one_less_than(0)};
}

/// Runs `allocate`, which must throw `Exception` whose message names `size` (exactly) and
/// `resource_name`, and every one of `also`.
template <class Exception, class Allocate>
void expect_refused_as(Allocate&& allocate,
                       std::size_t size,
                       std::string const& resource_name,
                       std::vector<std::string> const& also = {})
{
  try {
    void* ptr = allocate();
    ADD_FAILURE() << resource_name << " allocated " << size << " at " << ptr;
  } catch (Exception const& e) {
    std::string const message = e.what();
    EXPECT_NE(message.find(std::to_string(size)), std::string::npos) << message;
    EXPECT_NE(message.find(resource_name), std::string::npos) << message;
    for (auto const& part : also) { EXPECT_NE(message.find(part), std::string::npos) << message; }
  }
}

/// Runs `allocate`, which must throw rmm::out_of_memory naming `size` (exactly, in bytes) and
/// `resource_name`.
template <class Allocate>
void expect_refused(Allocate&& allocate, std::size_t size, std::string const& resource_name)
{
  expect_refused_as<rmm::out_of_memory>(std::forward<Allocate>(allocate), size, resource_name);
}

/// Runs `allocate`, which must throw rmm::invalid_argument naming `count` and `container`: the
/// count's bytes overflow std::size_t, which RMM refuses as an invalid argument.
template <class Allocate>
void expect_overflow_refused(Allocate&& allocate, std::size_t count, std::string const& container)
{
  expect_refused_as<rmm::invalid_argument>(std::forward<Allocate>(allocate), count, container, {"overflow"});
}

std::string counters(statistics_resource_adaptor const& statistics)
{
  auto const bytes       = statistics.get_bytes_counter();
  auto const allocations = statistics.get_allocations_counter();
  return fmt::format("bytes {} (peak {}, total {}), allocations {} (peak {}, total {})", bytes.value, bytes.peak,
                     bytes.total, allocations.value, allocations.peak, allocations.total);
}

std::string counters(rmm::mr::suballocator_statistics const& s)
{
  return fmt::format("reserved {}, allocated {}, free {} in {} blocks, {} upstream chunks", s.reserved_bytes,
                     s.allocated_bytes, s.free_bytes, s.free_blocks, s.upstream_chunks);
}

std::string free_device_memory()
{
  auto const [free, total] = rmm::available_device_memory();
  return fmt::format("{} of {} bytes free on the device", free, total);
}

/// What a case allocates from, and the bookkeeping a refused request must leave alone.
struct subject {
  any_device_resource resource;
  std::function<std::string()> bookkeeping;
};

struct resource_case {
  std::string name;  ///< the resource as its messages name it
  std::function<subject()> make;
  bool needs_pageable_memory_access{false};
};

/// A resource that allocates by itself.
template <class Resource>
subject on_its_own()
{
  return {Resource{}, free_device_memory};
}

subject view_of_the_default_pool()
{
  cudaMemPool_t pool{};
  RMM_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, rmm::get_current_cuda_device().value()));
  return {rmm::mr::cuda_async_view_memory_resource{pool}, free_device_memory};
}

subject callbacks_over_cuda()
{
  struct calls {
    std::atomic<int> allocate{0};
    std::atomic<int> deallocate{0};
    rmm::mr::cuda_memory_resource cuda;
  };
  auto seen = std::make_shared<calls>();
  rmm::mr::callback_memory_resource mr{[](std::size_t bytes, rmm::cuda_stream_view stream, void* arg) {
                                         auto* c = static_cast<calls*>(arg);
                                         ++c->allocate;
                                         return c->cuda.allocate(stream, bytes);
                                       },
                                       [](void* ptr, std::size_t bytes, rmm::cuda_stream_view stream, void* arg) {
                                         auto* c = static_cast<calls*>(arg);
                                         ++c->deallocate;
                                         c->cuda.deallocate(stream, ptr, bytes);
                                       },
                                       seen.get(), seen.get()};
  return {mr, [seen] {
            return fmt::format("callbacks: {} allocate, {} free", seen->allocate.load(), seen->deallocate.load());
          }};
}

// A layer's own bookkeeping, where it has some.
template <class Layer>
std::string own_bookkeeping(Layer&)
{
  return {};
}
std::string own_bookkeeping(rmm::mr::pool_memory_resource& pool) { return counters(pool.statistics()); }
std::string own_bookkeeping(rmm::mr::arena_memory_resource& arena) { return counters(arena.statistics()); }
std::string own_bookkeeping(rmm::mr::fixed_size_memory_resource& fixed) { return counters(fixed.statistics()); }
std::string own_bookkeeping(statistics_resource_adaptor& statistics) { return counters(statistics); }
std::string own_bookkeeping(rmm::mr::tracking_resource_adaptor& tracking)
{
  return fmt::format("{} (bytes {})", tracking.get_outstanding_allocations_str(), tracking.get_allocated_bytes());
}
std::string own_bookkeeping(rmm::mr::limiting_resource_adaptor& limiting)
{
  return fmt::format("{} bytes charged", limiting.get_allocated_bytes());
}

/// `Layer` (an adaptor or sub-allocator) built with `arguments` over a counting upstream: a
/// refused request must not reach that upstream.
template <class Layer, class... Arguments>
subject over_counted_cuda(Arguments... arguments)
{
  auto below = std::make_shared<statistics_resource_adaptor>(rmm::mr::cuda_memory_resource{});
  // Converted first: a statistics adaptor given another one would copy it instead of wrapping it.
  auto layer = std::make_shared<Layer>(any_device_resource{*below}, arguments...);
  return {*layer, [below, layer] { return "upstream: " + counters(*below) + "; own: " + own_bookkeeping(*layer); }};
}

/// A logging adaptor whose log is part of its bookkeeping: a refused request is not logged.
subject logging_over_counted_cuda()
{
  struct text_sink final : rmm::mr::log_sink {
    void write(std::string_view text) override { rows += text; }
    void flush() override {}
    std::string rows;
  };
  auto below = std::make_shared<statistics_resource_adaptor>(rmm::mr::cuda_memory_resource{});
  auto sink  = std::make_shared<text_sink>();
  auto mr    = std::make_shared<rmm::mr::logging_resource_adaptor>(*below, std::vector<rmm::mr::log_sink_ptr>{sink});
  return {*mr, [below, sink, mr] {
            mr->flush();
            return "upstream: " + counters(*below) + "; log: " + sink->rows;
          }};
}

/// A failure callback that must not be asked about a request no retry can help.
subject failure_callback_over_counted_cuda()
{
  auto below  = std::make_shared<statistics_resource_adaptor>(rmm::mr::cuda_memory_resource{});
  auto called = std::make_shared<std::atomic<int>>(0);
  rmm::mr::failure_callback_resource_adaptor<> mr{*below,
                                                  [](std::size_t, void* arg) {
                                                    ++*static_cast<std::atomic<int>*>(arg);
                                                    return false;
                                                  },
                                                  called.get()};
  return {mr, [below, called] {
            return fmt::format("upstream: {}; callback called {} times", counters(*below), called->load());
          }};
}

std::vector<resource_case> resource_cases()
{
  using namespace rmm::mr;
  return {
    {"cuda_memory_resource", on_its_own<cuda_memory_resource>},
    {"managed_memory_resource", on_its_own<managed_memory_resource>},
    {"pinned_host_memory_resource", on_its_own<pinned_host_memory_resource>},
    {"system_memory_resource", on_its_own<system_memory_resource>, /*needs_pageable_memory_access=*/true},
    {"cuda_async_memory_resource", on_its_own<cuda_async_memory_resource>},
    {"cuda_async_view_memory_resource", view_of_the_default_pool},
    {"cuda_async_managed_memory_resource", on_its_own<cuda_async_managed_memory_resource>},
    {"sam_headroom_memory_resource",
     [] {
       return subject{rmm::mr::sam_headroom_memory_resource{MiB}, free_device_memory};
     },
     /*needs_pageable_memory_access=*/true},
    {"callback_memory_resource", callbacks_over_cuda},
    {"pool_memory_resource", [] { return over_counted_cuda<pool_memory_resource>(4 * MiB); }},
    {"arena_memory_resource", [] { return over_counted_cuda<arena_memory_resource>(64 * MiB); }},
    {"fixed_size_memory_resource", [] { return over_counted_cuda<fixed_size_memory_resource>(MiB, 4); }},
    {"binning_memory_resource", [] { return over_counted_cuda<binning_memory_resource>(); }},
    {"logging_resource_adaptor", logging_over_counted_cuda},
    {"statistics_resource_adaptor", [] { return over_counted_cuda<statistics_resource_adaptor>(); }},
    {"tracking_resource_adaptor", [] { return over_counted_cuda<tracking_resource_adaptor>(); }},
    {"limiting_resource_adaptor", [] { return over_counted_cuda<limiting_resource_adaptor>(MiB); }},
    {"aligned_resource_adaptor", [] { return over_counted_cuda<aligned_resource_adaptor>(4096); }},
    {"prefetch_resource_adaptor", [] { return over_counted_cuda<prefetch_resource_adaptor>(); }},
    {"failure_callback_resource_adaptor", failure_callback_over_counted_cuda},
    {"thread_safe_resource_adaptor", [] { return over_counted_cuda<thread_safe_resource_adaptor>(); }},
  };
}

class ImpossibleSize : public ::testing::TestWithParam<resource_case> {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }
  rmm::cuda_stream stream_;
};

TEST_P(ImpossibleSize, IsRefusedNamingSizeAndResourceAndChangesNothing)
{
  auto const& param = GetParam();
  if (param.needs_pageable_memory_access && !rmm::mr::is_system_memory_supported(rmm::get_current_cuda_device())) {
    GTEST_SKIP() << param.name << " needs a device with pageable memory access (HMM or ATS); this one has none";
  }
  auto tested       = param.make();
  auto const before = tested.bookkeeping();
  for (auto const size : impossible_sizes()) {
    SCOPED_TRACE(fmt::format("{} bytes", size));
    expect_refused([&] { return tested.resource.allocate(stream_, size, rmm::CUDA_ALLOCATION_ALIGNMENT); }, size,
                   param.name);
    expect_refused([&] { return tested.resource.allocate_sync(size, rmm::CUDA_ALLOCATION_ALIGNMENT); }, size,
                   param.name);
  }
  EXPECT_EQ(cudaGetLastError(), cudaSuccess) << "a refusal must not leave a sticky CUDA error behind";
  EXPECT_EQ(tested.bookkeeping(), before) << "a refused request must not be counted, charged or recorded";

  // Still fully usable.
  void* ptr = tested.resource.allocate(stream_, 4096, rmm::CUDA_ALLOCATION_ALIGNMENT);
  ASSERT_NE(ptr, nullptr);
  rmm::test::write_tag(ptr, 4096, 0x3c, stream_);
  EXPECT_TRUE(rmm::test::has_tag(ptr, 4096, 0x3c, stream_));
  tested.resource.deallocate(stream_, ptr, 4096, rmm::CUDA_ALLOCATION_ALIGNMENT);
  stream_.synchronize();
}

INSTANTIATE_TEST_SUITE_P(EveryResource,
                         ImpossibleSize,
                         ::testing::ValuesIn(resource_cases()),
                         [](auto const& param_info) { return param_info.param.name; });

// ---- allocators and containers -----------------------------------------------------------------

class ImpossibleSizeInContainers : public ::testing::Test {
 protected:
  void SetUp() override { RMM_CUDA_TRY(cudaSetDevice(0)); }

  void expect_untouched() const
  {
    EXPECT_EQ(counters(counted_), counters(statistics_resource_adaptor{rmm::mr::cuda_memory_resource{}}))
      << "nothing may reach the resource";
  }

  rmm::cuda_stream stream_;
  statistics_resource_adaptor counted_{rmm::mr::cuda_memory_resource{}};
};

TEST_F(ImpossibleSizeInContainers, DeviceBufferRefusesAndStaysAsItWas)
{
  for (auto const size : impossible_sizes()) {
    SCOPED_TRACE(size);
    expect_refused(
      [&] {
        rmm::device_buffer buffer{size, stream_, counted_};
        return buffer.data();
      },
      size, "statistics_resource_adaptor");
  }
  expect_untouched();

  rmm::device_buffer buffer{1000, stream_, counted_};
  rmm::test::write_tag(buffer.data(), 1000, 0x5a, stream_);
  for (auto const size : impossible_sizes()) {
    expect_refused(
      [&] {
        buffer.resize(size, stream_);
        return buffer.data();
      },
      size, "statistics_resource_adaptor");
    expect_refused(
      [&] {
        buffer.reserve(size, stream_);
        return buffer.data();
      },
      size, "statistics_resource_adaptor");
  }
  EXPECT_EQ(buffer.size(), 1000U);
  EXPECT_EQ(buffer.capacity(), 1000U);
  EXPECT_TRUE(rmm::test::has_tag(buffer.data(), 1000, 0x5a, stream_)) << "the contents survive a refused resize";
  EXPECT_EQ(counted_.get_allocations_counter().total, 1);
}

TEST_F(ImpossibleSizeInContainers, DeviceUvectorRefusesCountsWhoseBytesOverflowOrCannotExist)
{
  // Counts of one-byte elements that no allocation can hold.
  expect_refused([&] { return rmm::device_uvector<char>(size_max, stream_, counted_).data(); }, size_max,
                 "device_uvector");
  expect_refused([&] { return rmm::device_uvector<char>(one_less_than(0), stream_, counted_).data(); }, size_max,
                 "device_uvector");
  // Element counts whose byte size overflows: refused before the multiplication can wrap.
  for (auto const count : {size_max, size_max / 8 + 1, size_max / 2}) {
    SCOPED_TRACE(count);
    expect_overflow_refused([&] { return rmm::device_uvector<std::uint64_t>(count, stream_, counted_).data(); }, count,
                            "device_uvector");
  }
  // A count whose bytes fit in std::size_t but exceed every possible allocation.
  expect_refused([&] { return rmm::device_uvector<std::uint32_t>(size_max / 4, stream_, counted_).data(); },
                 size_max / 4, "device_uvector");
  expect_untouched();

  rmm::device_uvector<std::uint64_t> vector{10, stream_, counted_};
  expect_overflow_refused(
    [&] {
      vector.resize(size_max / 4, stream_);
      return vector.data();
    },
    size_max / 4, "device_uvector");
  expect_overflow_refused(
    [&] {
      vector.reserve(one_less_than(0), stream_);
      return vector.data();
    },
    size_max, "device_uvector");
  EXPECT_EQ(vector.size(), 10U);
  rmm::device_scalar<std::int64_t> scalar{42, stream_, counted_};  // the resource still serves
  EXPECT_EQ(scalar.value(stream_), 42);
}

TEST_F(ImpossibleSizeInContainers, AllocatorsRefuseCountsWhoseBytesOverflowOrCannotExist)
{
  rmm::mr::polymorphic_allocator<double> polymorphic{counted_};
  for (auto const count : {size_max, size_max / 8 + 1}) {  // bytes overflow
    SCOPED_TRACE(count);
    expect_overflow_refused([&] { return polymorphic.allocate(count, stream_); }, count, "polymorphic_allocator");
  }
  // Bytes that fit in std::size_t but exceed every possible allocation.
  expect_refused([&] { return polymorphic.allocate(size_max / 16 + 1, stream_); }, size_max / 16 + 1,
                 "polymorphic_allocator");
  rmm::mr::thrust_allocator<std::int32_t> thrust{stream_, counted_};
  for (auto const count : {size_max, size_max / 4 + 1}) {
    SCOPED_TRACE(count);
    expect_overflow_refused([&] { return thrust.allocate(count).get(); }, count, "thrust_allocator");
  }
  expect_refused([&] { return thrust.allocate(size_max / 8 + 1).get(); }, size_max / 8 + 1, "thrust_allocator");
  rmm::mr::polymorphic_allocator<char> bytes{counted_};
  expect_refused([&] { return bytes.allocate(one_less_than(0), stream_); }, size_max, "polymorphic_allocator");
  expect_untouched();

  double* ptr = polymorphic.allocate(100, stream_);
  polymorphic.deallocate(ptr, 100, stream_);
  auto thrust_ptr = thrust.allocate(100);
  thrust.deallocate(thrust_ptr, 100);
  EXPECT_EQ(counted_.get_allocations_counter().total, 2);
  EXPECT_EQ(counted_.get_bytes_counter().value, 0);
}

// ---- constructor arguments ---------------------------------------------------------------------

/// Runs `construct`, which must throw rmm::out_of_memory whose message contains every one of `parts`.
template <class Construct>
void expect_construction_refused(Construct&& construct, std::vector<std::string> const& parts)
{
  try {
    construct();
    ADD_FAILURE() << "constructed";
  } catch (rmm::out_of_memory const& e) {
    std::string const message = e.what();
    for (auto const& part : parts) { EXPECT_NE(message.find(part), std::string::npos) << message; }
  }
}

TEST(ImpossibleSizeInConstructors, FixedSizeBlocksThatCanNeverBeAllocated)
{
  statistics_resource_adaptor counted{rmm::mr::cuda_memory_resource{}};
  for (auto const block : {size_max, size_max - 100, size_max / 2 + 1}) {
    expect_construction_refused(
      [&] {
        rmm::mr::fixed_size_memory_resource{counted, block};
      },
      {"fixed_size_memory_resource", std::to_string(block), "block"});
  }
  // 4 GiB blocks, 2^32 at a time: 16 EiB, which wraps to 0 in 64 bits.
  expect_construction_refused(
    [&] {
      rmm::mr::fixed_size_memory_resource{counted, 4 * GiB, std::size_t{1} << 32};
    },
    {"fixed_size_memory_resource", "4294967296", "blocks_to_preallocate"});
  EXPECT_EQ(counted.get_allocations_counter().total, 0) << "nothing may reach the upstream";
}

TEST(ImpossibleSizeInConstructors, ArenaThatCanNeverBeAllocated)
{
  statistics_resource_adaptor counted{rmm::mr::cuda_memory_resource{}};
  for (auto const size : {size_max, size_max - 100, size_max / 2 + 1}) {
    expect_construction_refused(
      [&] {
        rmm::mr::arena_memory_resource{counted, size};
      },
      {"arena_memory_resource", std::to_string(size)});
  }
  EXPECT_EQ(counted.get_allocations_counter().total, 0) << "nothing may reach the upstream";
}

TEST(ImpossibleSizeInConstructors, BinsThatCanNeverBeAllocated)
{
  statistics_resource_adaptor counted{rmm::mr::cuda_memory_resource{}};
  rmm::mr::binning_memory_resource binning{counted, std::vector<std::size_t>{256, 4096}};
  for (auto const size : {size_max, size_max - 100, size_max / 2 + 1}) {
    expect_construction_refused([&] { binning.add_bin(size); }, {"binning_memory_resource", std::to_string(size)});
    expect_construction_refused([&] { binning.add_bin(size, rmm::mr::cuda_memory_resource{}); },
                                {"binning_memory_resource", std::to_string(size)});
    expect_construction_refused(
      [&] {
        rmm::mr::binning_memory_resource{counted, std::vector<std::size_t>{256, size}};
      },
      {"binning_memory_resource", std::to_string(size)});
  }
  EXPECT_EQ(binning.bin_sizes(), (std::vector<std::size_t>{256, 4096})) << "a refused bin is not added";
  auto const reserved = counted.get_bytes_counter().value;
  void* ptr           = binning.allocate_sync(3000);
  binning.deallocate_sync(ptr, 3000);
  EXPECT_EQ(counted.get_bytes_counter().value, reserved) << "the 4 KiB bin served it from what it had reserved";
}

// ---- binning: bins are fixed by the first allocation --------------------------------------------

TEST(BinningBins, AddingABinAfterAnAllocationIsRefused)
{
  rmm::mr::binning_memory_resource binning{rmm::mr::cuda_memory_resource{}, std::vector<std::size_t>{256}};
  void* ptr = binning.allocate_sync(100);
  try {
    binning.add_bin(4096);
    FAIL() << "a bin was added after an allocation";
  } catch (rmm::logic_error const& e) {
    std::string const message = e.what();
    EXPECT_NE(message.find("binning_memory_resource"), std::string::npos) << message;
    EXPECT_NE(message.find("before the first allocation"), std::string::npos) << message;
  }
  binning.deallocate_sync(ptr, 100);
  EXPECT_EQ(binning.bin_sizes(), (std::vector<std::size_t>{256}));
  // Even once everything is freed: an allocation made through a copy could still be outstanding.
  EXPECT_THROW(binning.add_bin(4096), rmm::logic_error);
}

TEST(BinningBins, AnAllocationRacingAddBinIsFreedWhereItWasAllocated)
{
  // Each bin and the upstream count what they hand out and take back; a deallocation routed to
  // another resource than its allocation leaves one count above 0 and another below. Threads
  // start allocating while bins are still being added.
  constexpr int rounds = 20;
  for (int round = 0; round < rounds; ++round) {
    auto upstream = std::make_shared<statistics_resource_adaptor>(rmm::mr::cuda_memory_resource{});
    rmm::mr::binning_memory_resource binning{*upstream, std::vector<std::size_t>{}};
    std::vector<std::shared_ptr<statistics_resource_adaptor>> bins;
    for (int i = 0; i < 8; ++i) {
      bins.push_back(std::make_shared<statistics_resource_adaptor>(rmm::mr::cuda_memory_resource{}));
    }
    std::atomic<bool> go{false};
    std::vector<std::thread> allocators;
    for (int t = 0; t < 4; ++t) {
      allocators.emplace_back([&, t] {
        while (!go.load()) {}
        for (int i = 0; i < 200; ++i) {
          std::size_t const bytes = std::size_t{256} << ((i + t) % 8);
          void* ptr               = binning.allocate_sync(bytes);
          binning.deallocate_sync(ptr, bytes);
        }
      });
    }
    int added = 0;
    go.store(true);
    for (int i = 7; i >= 0; --i) {
      try {
        binning.add_bin(std::size_t{256} << i, *bins[static_cast<std::size_t>(i)]);
        ++added;
      } catch (rmm::logic_error const&) {
        break;  // the first allocation came first
      }
    }
    for (auto& thread : allocators) { thread.join(); }
    EXPECT_EQ(binning.bin_sizes().size(), static_cast<std::size_t>(added));
    EXPECT_EQ(upstream->get_bytes_counter().value, 0) << "round " << round;
    for (auto const& bin : bins) { EXPECT_EQ(bin->get_bytes_counter().value, 0) << "round " << round; }
  }
}

}  // namespace
