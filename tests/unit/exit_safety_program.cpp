// SPDX-License-Identifier: Apache-2.0
// Child program for exit_safety_test: leaves rmm objects alive in every place a program can
// (static storage, the per-device table, leaked on purpose) and exits. A clean exit is status 0
// with nothing on stderr.

#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>

#include <cstdio>
#include <cstdlib>
#include <memory>
#include <optional>
#include <string_view>

namespace {

// Destroyed after main returns, in reverse order of construction: the buffer first, then the
// pool and stream, all of them after the CUDA runtime may have started unloading.
std::optional<rmm::mr::cuda_async_memory_resource> static_pool;
std::optional<rmm::cuda_stream> static_stream;
std::optional<rmm::device_buffer> static_buffer;

}  // namespace

int main(int argc, char** argv)
{
  std::string_view const scenario = argc > 1 ? argv[1] : "";
  if (scenario == "static-objects") {
    static_pool.emplace(std::size_t{1} << 20);
    static_stream.emplace();
    static_buffer.emplace(4096, static_stream->view(), *static_pool);
  } else if (scenario == "current-resource") {
    rmm::mr::cuda_async_memory_resource pool{std::size_t{1} << 20};
    rmm::mr::set_current_device_resource(pool);
    // Memory still allocated at exit, owned by a buffer that is never destroyed.
    new rmm::device_buffer(1 << 16, rmm::cuda_stream_default);  // NOLINT: leaked on purpose
  } else if (scenario == "exit-from-main") {
    static_stream.emplace();
    static_buffer.emplace(4096, static_stream->view(), rmm::mr::cuda_memory_resource{});
    std::exit(0);
  } else {
    std::fprintf(stderr, "usage: %s static-objects|current-resource|exit-from-main\n", argv[0]);
    return 2;
  }
  return 0;
}
