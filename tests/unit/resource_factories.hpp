// SPDX-License-Identifier: Apache-2.0
#pragma once

// The resources the conformance suite runs. Each factory makes a fresh resource for the current
// device; a new resource or adaptor gets a factory here, in all_resource_factories and in one of
// the conformance groups below.

#include "upstream_resource_factories.hpp"

#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/callback_memory_resource.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <rmm/mr/aligned_resource_adaptor.hpp>
#include <rmm/mr/failure_callback_resource_adaptor.hpp>
#include <rmm/mr/limiting_resource_adaptor.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/prefetch_resource_adaptor.hpp>
#include <rmm/mr/statistics_resource_adaptor.hpp>
#include <rmm/mr/thread_safe_resource_adaptor.hpp>
#include <rmm/mr/tracking_resource_adaptor.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <string>

namespace rmm::test {

// ---- sub-allocators ------------------------------------------------------------------------------

struct pool_factory {
  static constexpr char const* name          = "pool";
  static constexpr char const* resource_name = "pool_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  /// Starts empty and grows on demand.
  static rmm::mr::pool_memory_resource make() { return {rmm::mr::cuda_memory_resource{}, 0}; }
};

struct pool_bounded_factory {
  static constexpr char const* name          = "pool_bounded";
  static constexpr char const* resource_name = "pool_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  /// 64 MiB up front, at most 2 GiB.
  static rmm::mr::pool_memory_resource make()
  {
    return {rmm::mr::cuda_memory_resource{}, std::size_t{64} << 20, std::size_t{2} << 30};
  }
};

struct pool_over_async_factory {
  static constexpr char const* name          = "pool_over_async";
  static constexpr char const* resource_name = "pool_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::pool_memory_resource make() { return {rmm::mr::cuda_async_memory_resource{}, std::size_t{32} << 20}; }
};

struct fixed_size_factory {
  static constexpr char const* name          = "fixed_size";
  static constexpr char const* resource_name = "fixed_size_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 20};
  static constexpr std::size_t max_request{std::size_t{1} << 20};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::fixed_size_memory_resource make()
  {
    return rmm::mr::fixed_size_memory_resource{rmm::mr::cuda_memory_resource{}, std::size_t{1} << 20, 16};
  }
};

struct binning_factory {
  static constexpr char const* name          = "binning";
  static constexpr char const* resource_name = "pool_memory_resource";  // large requests fall through to it
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::binning_memory_resource make()
  {
    return rmm::mr::binning_memory_resource{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}};
  }
};

struct arena_factory {
  static constexpr char const* name          = "arena";
  static constexpr char const* resource_name = "arena_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::arena_memory_resource make()
  {
    return rmm::mr::arena_memory_resource{rmm::mr::cuda_memory_resource{}, std::size_t{2} << 30};
  }
};

struct callback_factory {
  static constexpr char const* name          = "callback";
  static constexpr char const* resource_name = "cuda_memory_resource";  // the callbacks delegate to it
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::callback_memory_resource make()
  {
    static rmm::mr::cuda_memory_resource cuda;
    return rmm::mr::callback_memory_resource{
      [](std::size_t bytes, rmm::cuda_stream_view stream, void* arg) {
        return static_cast<rmm::mr::cuda_memory_resource*>(arg)->allocate(stream, bytes);
      },
      [](void* ptr, std::size_t bytes, rmm::cuda_stream_view stream, void* arg) {
        static_cast<rmm::mr::cuda_memory_resource*>(arg)->deallocate(stream, ptr, bytes);
      },
      &cuda, &cuda};
  }
};

// ---- adaptors --------------------------------------------------------------------------------------

struct logging_factory {
  static constexpr char const* name          = "logging";
  static constexpr char const* resource_name = "pool_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  /// Every row is formatted and written, to a file that keeps nothing.
  static rmm::mr::logging_resource_adaptor make()
  {
    return rmm::mr::logging_resource_adaptor{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0},
                                             "/dev/null"};
  }
};

struct statistics_factory {
  static constexpr char const* name          = "statistics";
  static constexpr char const* resource_name = "pool_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::statistics_resource_adaptor make()
  {
    return rmm::mr::statistics_resource_adaptor{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}};
  }
};

struct tracking_factory {
  static constexpr char const* name          = "tracking";
  static constexpr char const* resource_name = "cuda_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::tracking_resource_adaptor make()
  {
    return rmm::mr::tracking_resource_adaptor{rmm::mr::cuda_memory_resource{}, true};
  }
};

struct limiting_factory {
  static constexpr char const* name          = "limiting";
  static constexpr char const* resource_name = "limiting_resource_adaptor";  // refuses before the upstream
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::limiting_resource_adaptor make()
  {
    return rmm::mr::limiting_resource_adaptor{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0},
                                              std::size_t{8} << 30};
  }
};

struct aligned_factory {
  static constexpr char const* name          = "aligned";
  static constexpr char const* resource_name = "cuda_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  /// 4 KiB alignment from 64 KiB up (the GPUDirect Storage case).
  static rmm::mr::aligned_resource_adaptor make()
  {
    return rmm::mr::aligned_resource_adaptor{rmm::mr::cuda_memory_resource{}, 4096, 65536};
  }
};

struct aligned_every_size_factory {
  static constexpr char const* name          = "aligned_every_size";
  static constexpr char const* resource_name = "pool_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  /// 4 KiB alignment for every size, zero bytes included, inside the blocks of a pool: the
  /// aligned address must stay inside the padded block, away from its neighbours.
  static rmm::mr::aligned_resource_adaptor make()
  {
    return rmm::mr::aligned_resource_adaptor{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}, 4096};
  }
};

struct failure_callback_factory {
  static constexpr char const* name          = "failure_callback";
  static constexpr char const* resource_name = "pool_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  /// Gives up at once: the failure reaches the caller unchanged.
  static rmm::mr::failure_callback_resource_adaptor<> make()
  {
    return rmm::mr::failure_callback_resource_adaptor<>{
      rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}, [](std::size_t, void*) { return false; },
      nullptr};
  }
};

struct thread_safe_factory {
  static constexpr char const* name          = "thread_safe";
  static constexpr char const* resource_name = "pool_memory_resource";
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::thread_safe_resource_adaptor make()
  {
    return rmm::mr::thread_safe_resource_adaptor{rmm::mr::pool_memory_resource{rmm::mr::cuda_memory_resource{}, 0}};
  }
};

struct prefetch_factory {
  static constexpr char const* name          = "prefetch";
  static constexpr char const* resource_name = "managed_memory_resource";
  static constexpr bool instances_equal{false};  // copies share the adaptor; separate ones differ
  static constexpr std::size_t large_size{std::size_t{1} << 28};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::prefetch_resource_adaptor make()
  {
    return rmm::mr::prefetch_resource_adaptor{rmm::mr::managed_memory_resource{}};
  }
};

/// Largest request a factory's resource accepts (fixed_size: its block size).
template <class Factory>
constexpr std::size_t max_request_of()
{
  if constexpr (requires { Factory::max_request; }) {
    return Factory::max_request;
  } else {
    return std::numeric_limits<std::size_t>::max();
  }
}

/// The conformance suite's groups: each is instantiated in its own translation unit, so that they
/// compile in parallel. Together they are all_resource_factories and aligned_every_size_factory.
using runtime_resource_factories =
  ::testing::Types<cuda_factory, managed_factory, pinned_host_factory, system_factory, sam_headroom_factory>;
using cuda_async_resource_factories =
  ::testing::Types<cuda_async_factory, cuda_async_primed_factory, cuda_async_view_factory, cuda_async_managed_factory>;
using pool_resource_factories = ::testing::Types<pool_factory, pool_bounded_factory, pool_over_async_factory>;
using other_suballocator_factories =
  ::testing::Types<fixed_size_factory, binning_factory, arena_factory, callback_factory>;
using recording_adaptor_factories = ::testing::Types<logging_factory, statistics_factory, tracking_factory>;
using request_adaptor_factories   = ::testing::Types<limiting_factory, aligned_factory, aligned_every_size_factory>;
using call_adaptor_factories      = ::testing::Types<failure_callback_factory, thread_safe_factory, prefetch_factory>;

/// Every resource the trace replay runs through.
using all_resource_factories = ::testing::Types<cuda_factory,
                                                managed_factory,
                                                pinned_host_factory,
                                                system_factory,
                                                sam_headroom_factory,
                                                cuda_async_factory,
                                                cuda_async_primed_factory,
                                                cuda_async_view_factory,
                                                cuda_async_managed_factory,
                                                pool_factory,
                                                pool_bounded_factory,
                                                pool_over_async_factory,
                                                fixed_size_factory,
                                                binning_factory,
                                                arena_factory,
                                                callback_factory,
                                                logging_factory,
                                                statistics_factory,
                                                tracking_factory,
                                                limiting_factory,
                                                aligned_factory,
                                                failure_callback_factory,
                                                thread_safe_factory,
                                                prefetch_factory>;

}  // namespace rmm::test
