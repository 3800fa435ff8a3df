// SPDX-License-Identifier: Apache-2.0
#pragma once

// The resources the sub-allocator benchmarks compare, configured as RMM's own benchmarks
// configure them, so results compare with RMM's published numbers. Each is built by the
// configuration library from its TOML, as a user's stack is.

#include <rmm/config/build.hpp>
#include <rmm/cuda_device.hpp>
#include <rmm/resource_ref.hpp>

#include <string>
#include <string_view>

namespace rmm::bench {

/// The stack `toml` describes, on the current device (no environment overrides).
inline rmm::mr::any_device_resource from_config(std::string_view toml)
{
  return rmm::config::build_from_string(toml, rmm::get_current_cuda_device(), rmm::config::environment{});
}

inline rmm::mr::any_device_resource make_cuda() { return from_config("[[resource]]\ntype = \"cuda\"\n"); }

inline rmm::mr::any_device_resource make_cuda_async() { return from_config("[[resource]]\ntype = \"cuda_async\"\n"); }

/// RMM's pool: over cuda, initially half of the free memory.
constexpr std::string_view pool_over_cuda = R"([[resource]]
type = "pool"
initial_size = "50%"
[[resource]]
type = "cuda"
)";

inline rmm::mr::any_device_resource make_pool() { return from_config(pool_over_cuda); }

/// RMM: binning over that pool with fixed-size bins of 256 KiB .. 4 MiB.
inline rmm::mr::any_device_resource make_binning()
{
  return from_config(std::string{"[[resource]]\ntype = \"binning\"\nmin_size_exponent = 18\nmax_size_exponent = 22\n"} +
                     std::string{pool_over_cuda});
}

/// RMM: arena over cuda, its default size (half of the free memory).
inline rmm::mr::any_device_resource make_arena()
{
  return from_config("[[resource]]\ntype = \"arena\"\n[[resource]]\ntype = \"cuda\"\n");
}

}  // namespace rmm::bench
