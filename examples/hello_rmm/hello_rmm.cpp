// SPDX-License-Identifier: Apache-2.0
// hello_rmm: allocates device memory through rmm on every visible GPU, copies data in and out,
// and checks it. With no usable GPU it says so and exits with status 2.

#include <rmm/cuda_device.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/format_bytes.hpp>
#include <rmm/device_buffer.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/cuda_async_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>

#include <cstdio>
#include <numeric>
#include <vector>

namespace {

bool round_trip(rmm::cuda_stream_view stream, std::size_t count)
{
  std::vector<int> host(count);
  std::iota(host.begin(), host.end(), 0);
  rmm::device_buffer buffer{host.data(), host.size() * sizeof(int), stream};  // current device resource
  std::vector<int> back(count, -1);
  RMM_CUDA_TRY(cudaMemcpyAsync(back.data(), buffer.data(), buffer.size(), cudaMemcpyDefault, stream.value()));
  stream.synchronize();
  return back == host;
}

}  // namespace

int main()
{
  int devices = 0;
  try {
    devices = rmm::get_num_cuda_devices();
  } catch (rmm::cuda_error const& e) {
    std::fprintf(stderr,
                 "hello_rmm: no usable CUDA device here: %s\n(without a GPU, rmm's CPU emulator of CUDA stands in: put "
                 "build/emulator/lib of rmm's build first on LD_LIBRARY_PATH)\n",
                 e.what());
    return 2;
  }
  if (devices == 0) {
    std::fprintf(stderr, "hello_rmm: no CUDA device is visible (check CUDA_VISIBLE_DEVICES and the driver)\n");
    return 2;
  }
  std::printf("hello_rmm: %d CUDA device(s)\n", devices);

  bool all_ok = true;
  for (int id = 0; id < devices; ++id) {
    RMM_CUDA_TRY(cudaSetDevice(id));
    cudaDeviceProp props{};
    RMM_CUDA_TRY(cudaGetDeviceProperties(&props, id));
    auto const [free_bytes, total_bytes] = rmm::available_device_memory();
    std::printf("device %d: %s, %s free of %s\n", id, props.name, rmm::format_bytes(free_bytes).c_str(),
                rmm::format_bytes(total_bytes).c_str());

    // A stream-ordered pool as the device's current resource, as in the RMM documentation.
    rmm::mr::cuda_async_memory_resource pool{rmm::percent_of_free_device_memory(1)};
    auto previous = rmm::mr::set_current_device_resource(pool);
    rmm::cuda_stream stream;
    for (std::size_t count : {std::size_t{1}, std::size_t{1} << 10, std::size_t{1} << 24}) {
      bool const ok = round_trip(stream, count);
      all_ok        = all_ok && ok;
      std::printf("  device_buffer of %s through cuda_async_memory_resource: %s\n",
                  rmm::format_bytes(count * sizeof(int)).c_str(), ok ? "round trip OK" : "DATA MISMATCH");
    }
    rmm::mr::set_current_device_resource(previous);
  }
  return all_ok ? 0 : 1;
}
