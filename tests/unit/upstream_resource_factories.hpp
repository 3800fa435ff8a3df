// SPDX-License-Identifier: Apache-2.0
#pragma once

// The factories of the resources that allocate from CUDA directly, apart from the rest of the
// conformance suite's (resource_factories.hpp): a .cu file can include these without the logging
// adaptor, whose fmt formatting nvcc 13.0 does not compile in fmt 9's header-only mode.

#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_managed_memory_resource.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_async_view_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/managed_memory_resource.hpp>
#include <rmm/mr/pinned_host_memory_resource.hpp>
#include <rmm/mr/sam_headroom_memory_resource.hpp>
#include <rmm/mr/system_memory_resource.hpp>

#include <gtest/gtest.h>

#include <cstddef>
#include <limits>
#include <string>

namespace rmm::test {

struct cuda_factory {
  static constexpr char const* name          = "cuda";
  static constexpr char const* resource_name = "cuda_memory_resource";  // as error messages name it
  static constexpr bool instances_equal{true};  // two make() results can free each other's memory
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::cuda_memory_resource make() { return {}; }
};

struct managed_factory {
  static constexpr char const* name          = "managed";
  static constexpr char const* resource_name = "managed_memory_resource";  // as error messages name it
  static constexpr bool instances_equal{true};
  static constexpr std::size_t large_size{std::size_t{1} << 28};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::managed_memory_resource make() { return {}; }
};

struct pinned_host_factory {
  static constexpr char const* name          = "pinned_host";
  static constexpr char const* resource_name = "pinned_host_memory_resource";  // as error messages name it
  static constexpr bool instances_equal{true};
  static constexpr std::size_t large_size{std::size_t{1} << 28};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::pinned_host_memory_resource make() { return {}; }
};

struct system_factory {
  static constexpr char const* name          = "system";
  static constexpr char const* resource_name = "system_memory_resource";  // as error messages name it
  static constexpr bool instances_equal{true};
  static constexpr std::size_t large_size{std::size_t{1} << 28};
  static rmm::mr::system_memory_resource make() { return {}; }
  /// Empty when the current device supports the resource.
  static std::string unavailable_reason()
  {
    return rmm::mr::is_system_memory_supported(rmm::get_current_cuda_device())
             ? std::string{}
             : std::string{
                 "the device cannot access pageable memory (no HMM/ATS); the constructor's refusal is "
                 "tested by SystemMemoryResource.*"};
  }
};

struct sam_headroom_factory {
  static constexpr char const* name          = "sam_headroom";
  static constexpr char const* resource_name = "system_memory_resource";  // its errors are the system resource's
  static constexpr bool instances_equal{true};
  static constexpr std::size_t large_size{std::size_t{1} << 28};
  /// 1 MiB of headroom, as RMM's users pick.
  static rmm::mr::sam_headroom_memory_resource make() { return rmm::mr::sam_headroom_memory_resource{1U << 20U}; }
  static std::string unavailable_reason() { return system_factory::unavailable_reason(); }
};

struct cuda_async_factory {
  static constexpr char const* name          = "cuda_async";
  static constexpr char const* resource_name = "cuda_async_memory_resource";  // as error messages name it
  static constexpr bool instances_equal{false};                               // each owns its pool
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::cuda_async_memory_resource make() { return rmm::mr::cuda_async_memory_resource{}; }
};

struct cuda_async_primed_factory {
  static constexpr char const* name          = "cuda_async_primed";
  static constexpr char const* resource_name = "cuda_async_memory_resource";  // as error messages name it
  static constexpr bool instances_equal{false};
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  /// 64 MiB reserved up front, 16 MiB kept at synchronization.
  static rmm::mr::cuda_async_memory_resource make()
  {
    return rmm::mr::cuda_async_memory_resource{std::size_t{64} << 20, std::size_t{16} << 20};
  }
};

struct cuda_async_managed_factory {
  static constexpr char const* name          = "cuda_async_managed";
  static constexpr char const* resource_name = "cuda_async_managed_memory_resource";  // as error messages name it
  static constexpr bool instances_equal{true};  // both use the device's default managed pool
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::cuda_async_managed_memory_resource make() { return {}; }
};

struct cuda_async_view_factory {
  static constexpr char const* name          = "cuda_async_view";
  static constexpr char const* resource_name = "cuda_async_view_memory_resource";  // as error messages name it
  static constexpr bool instances_equal{true};  // both view the device's default pool
  static constexpr std::size_t large_size{std::size_t{1} << 30};
  static std::string unavailable_reason() { return {}; }
  static rmm::mr::cuda_async_view_memory_resource make()
  {
    int device{};
    RMM_CUDA_TRY(cudaGetDevice(&device));
    cudaMemPool_t pool{};
    RMM_CUDA_TRY(cudaDeviceGetDefaultMemPool(&pool, device));
    return rmm::mr::cuda_async_view_memory_resource{pool};
  }
};

struct factory_names {
  template <class Factory>
  static std::string GetName(int)
  {
    return Factory::name;
  }
};

}  // namespace rmm::test
