// SPDX-License-Identifier: Apache-2.0
#include "driver/graph_memory.hpp"

#include "driver/contexts.hpp"
#include "driver/real_driver.hpp"

#include <rmm/format_bytes.hpp>

#include <fmt/format.h>

namespace rmm::shim {

namespace {

std::optional<std::size_t> attribute(int device, CUgraphMem_attribute which) noexcept
{
  auto const* driver = real();
  if (driver == nullptr || driver->device_get_graph_mem_attribute == nullptr) { return std::nullopt; }
  scoped_device_context const on_device{device};
  cuuint64_t value{};
  if (driver->device_get_graph_mem_attribute(device, which, &value) != CUDA_SUCCESS) { return std::nullopt; }
  return static_cast<std::size_t>(value);
}

}  // namespace

std::optional<graph_memory> graph_memory_on(int device) noexcept
{
  auto const reserved = attribute(device, CU_GRAPH_MEM_ATTR_RESERVED_MEM_CURRENT);
  auto const used     = attribute(device, CU_GRAPH_MEM_ATTR_USED_MEM_CURRENT);
  if (!reserved || !used) { return std::nullopt; }
  return graph_memory{*reserved, *used};
}

std::optional<std::size_t> trim_graph_memory(int device) noexcept
{
  auto const* driver = real();
  if (driver == nullptr || driver->device_graph_mem_trim == nullptr) { return 0; }  // a driver without graph memory
  auto const before = graph_memory_on(device);
  if (!before || before->reserved_bytes == 0) { return 0; }
  scoped_device_context const on_device{device};
  if (driver->device_graph_mem_trim(device) != CUDA_SUCCESS) { return std::nullopt; }
  auto const after = graph_memory_on(device);
  return after && after->reserved_bytes < before->reserved_bytes ? before->reserved_bytes - after->reserved_bytes : 0;
}

std::string give_back_idle_graph_memory(std::vector<int> const& devices) noexcept
{
  std::size_t given_back = 0;
  std::size_t still_used = 0;
  std::string refused;
  std::string text;
  try {
    for (auto const device : devices) {
      auto const trimmed = trim_graph_memory(device);
      if (!trimmed) { refused += fmt::format("{}{}", refused.empty() ? "" : ", ", device); }
      given_back += trimmed.value_or(0);
      if (auto const left = graph_memory_on(device)) { still_used += left->used_bytes; }
    }
    if (given_back > 0) {
      text += fmt::format("; {} of CUDA graphs' idle memory given back (mapped again at their next launch)",
                          rmm::format_bytes(given_back));
    }
    if (still_used > 0) {
      text += fmt::format("; {} stays in allocations CUDA graphs made and did not free (not paused)",
                          rmm::format_bytes(still_used));
    }
    if (!refused.empty()) { text += fmt::format("; the driver refused to trim graph memory on device {}", refused); }
  } catch (...) {  // no host memory for the words: the trim happened all the same
  }
  return text;
}

}  // namespace rmm::shim
