// SPDX-License-Identifier: Apache-2.0
// Written against the RMM documentation: resources, the current device resource, a device_buffer.
#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>
#include <rmm/resource_ref.hpp>
#include <rmm/config/build.hpp>

#include <cstdio>
#include <vector>

int main()
{
  rmm::mr::cuda_memory_resource cuda_mr;
  auto initial_size = rmm::percent_of_free_device_memory(1);
  rmm::mr::cuda_async_memory_resource pool_mr{initial_size};
  auto previous                     = rmm::mr::set_current_device_resource(pool_mr);
  rmm::device_async_resource_ref mr = rmm::mr::get_current_device_resource_ref();

  rmm::cuda_stream stream;
  std::vector<int> host{1, 2, 3, 4};
  rmm::device_buffer buffer{host.data(), host.size() * sizeof(int), stream, mr};
  std::vector<int> back(host.size());
  RMM_CUDA_TRY(cudaMemcpyAsync(back.data(), buffer.data(), buffer.size(), cudaMemcpyDefault, stream.value()));
  stream.synchronize();

  rmm::device_buffer other{16, stream, cuda_mr};

  // rmm::config: the same TOML stacks the shim reads.
  auto configured = rmm::config::build_from_string(
    "[[resource]]\ntype = \"statistics\"\n[[resource]]\ntype = \"pool\"\n"
    "initial_size = \"16MiB\"\n[[resource]]\ntype = \"cuda\"\n",
    rmm::get_current_cuda_device());
  rmm::device_buffer from_config{1024, stream, configured};
  bool const same = back == host;
  // `buffer` refers to the pool through `mr` without owning it: free it before the pool goes.
  buffer      = rmm::device_buffer{};
  from_config = rmm::device_buffer{};
  rmm::mr::set_current_device_resource(previous);
  if (!same) {
    std::fprintf(stderr, "consumer: data mismatch\n");
    return 1;
  }
  std::printf("consumer: installed rmm works\n");
  return 0;
}
