// SPDX-License-Identifier: Apache-2.0
#include "stacks/device_stacks.hpp"

#include "stacks/log_files.hpp"
#include "driver/real_driver.hpp"
#include "settings.hpp"

#include <rmm/aligned.hpp>
#include <rmm/config/build.hpp>
#include <rmm/config/file_name_pattern.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/arena_memory_resource.hpp>
#include <rmm/mr/binning_memory_resource.hpp>
#include <rmm/mr/detail/resource_cast.hpp>
#include <rmm/mr/fixed_size_memory_resource.hpp>
#include <rmm/mr/log_sink.hpp>
#include <rmm/mr/logging_resource_adaptor.hpp>
#include <rmm/mr/pool_memory_resource.hpp>

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <ranges>

namespace rmm::shim {

namespace {

/// Calls `f` with each sub-allocator layer's statistics() and release() available.
template <class F>
void for_each_suballocator(std::vector<rmm::mr::any_device_resource> const& layers, F&& f)
{
  for (auto const& layer : layers) {
    if (auto* pool = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(layer)) { f(*pool); }
    if (auto* arena = rmm::mr::detail::resource_cast<rmm::mr::arena_memory_resource>(layer)) { f(*arena); }
    if (auto* fixed = rmm::mr::detail::resource_cast<rmm::mr::fixed_size_memory_resource>(layer)) { f(*fixed); }
  }
}

/// Whether a layer is a sub-allocator: serving a request from it or from a block the freeing
/// thread kept is the same to everything below it.
bool is_suballocator(rmm::mr::any_device_resource const& layer) noexcept
{
  return rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(layer) != nullptr ||
         rmm::mr::detail::resource_cast<rmm::mr::arena_memory_resource>(layer) != nullptr ||
         rmm::mr::detail::resource_cast<rmm::mr::fixed_size_memory_resource>(layer) != nullptr ||
         rmm::mr::detail::resource_cast<rmm::mr::binning_memory_resource>(layer) != nullptr;
}

/// The stack's lowest sub-allocator if it is a pool, else null; `name` says what it is.
rmm::mr::pool_memory_resource* lowest_pool(std::vector<rmm::mr::any_device_resource> const& layers,
                                           std::string_view& name) noexcept
{
  name = "none";
  for (auto layer = layers.rbegin(); layer != layers.rend(); ++layer) {
    if (auto* pool = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(*layer)) {
      name = "pool";
      return pool;
    }
    if (rmm::mr::detail::resource_cast<rmm::mr::arena_memory_resource>(*layer) != nullptr) {
      name = "arena";
      return nullptr;
    }
    if (rmm::mr::detail::resource_cast<rmm::mr::fixed_size_memory_resource>(*layer) != nullptr ||
        rmm::mr::detail::resource_cast<rmm::mr::binning_memory_resource>(*layer) != nullptr) {
      name = "fixed_size";
      return nullptr;
    }
  }
  return nullptr;
}

/// The lowest pool of a built stack (the one that pauses), or null: no stack, or no pool under it.
template <class Stack>
rmm::mr::pool_memory_resource* lowest_pool_in(Stack const* stack) noexcept
{
  if (stack == nullptr) { return nullptr; }
  std::string_view lowest;
  return lowest_pool(stack->layers, lowest);
}

/// max(256, the device's texture alignment): what native cudaMalloc results are aligned to at
/// least, whatever their size.
std::size_t block_alignment(int device)
{
  int texture_alignment = 0;
  if (auto const r = real()->device_get_attribute(&texture_alignment, CU_DEVICE_ATTRIBUTE_TEXTURE_ALIGNMENT, device);
      r != CUDA_SUCCESS) {
    throw rmm::cuda_error{fmt::format("rmm shim: cannot read the texture alignment of device {}: CUresult {}", device,
                                      static_cast<int>(r))};
  }
  auto const alignment = std::max<std::size_t>(256, static_cast<std::size_t>(texture_alignment));
  RMM_EXPECTS(rmm::is_pow2(alignment) && alignment <= device_stacks::max_alignment,
              fmt::format("rmm shim: device {} reports a texture alignment of {} bytes; the shim supports powers of "
                          "two up to {}",
                          device, texture_alignment, device_stacks::max_alignment));
  return alignment;
}

}  // namespace

rmm::mr::any_device_resource& device_stacks::get(int device, region_id region)
{
  if (auto* built = find(device, region)) { return *built; }
  RMM_EXPECTS(has_device_slot(device),
              fmt::format("rmm shim: device {} is beyond the {} devices the shim manages", device, max_devices));
  RMM_EXPECTS(region < max_regions, "rmm shim: a tag beyond the table of tags");
  std::lock_guard lock{building_};
  auto& slot = stacks_[region][static_cast<std::size_t>(device)];
  if (auto* built = slot.load(std::memory_order_acquire)) { return built->layers.front(); }
  auto fresh         = std::make_unique<stack>();
  fresh->alignment   = block_alignment(device);
  fresh->layers      = rmm::config::build_layers(settings().stack, cuda_device_id{device});
  fresh->keeps_frees = is_suballocator(fresh->layers.front());
  auto* const log    = make_log(device);
  auto* built        = fresh.release();  // never destroyed: dropped at exit, not freed
  logs_[static_cast<std::size_t>(device)].store(log, std::memory_order_release);
  alignments_[static_cast<std::size_t>(device)].store(built->alignment, std::memory_order_release);
  slot.store(built, std::memory_order_release);
  return built->layers.front();
}

device_stacks::event_log* device_stacks::make_log(int device)
{
  if (auto* made = logs_[static_cast<std::size_t>(device)].load(std::memory_order_acquire)) { return made; }
  auto const& pattern = settings().log_file;
  if (pattern.empty()) { return nullptr; }
  auto const name = rmm::config::expand_file_name_pattern(pattern, static_cast<long>(::getpid()), device);
  // Devices logging to one file share its writer: two writers on one file would lose rows.
  for (auto const& [file, log] : log_files_) {
    if (file == name) { return log.get(); }
  }
  auto const opened = open_event_log(name);
  std::vector<rmm::mr::log_sink_ptr> sinks;
  sinks.push_back(std::make_shared<rmm::mr::file_log_sink>(opened.fd, opened.path));
  bool const auto_flush = false;  // rows are written in batches; the log is flushed at exit
  log_files_.emplace_back(name, std::make_unique<event_log>(std::move(sinks), auto_flush));
  return log_files_.back().second.get();
}

void device_stacks::forget(int device) noexcept
{
  if (!has_device_slot(device)) { return; }
  std::lock_guard lock{building_};
  for (auto& stacks : stacks_) {
    auto* const dropped = stacks[static_cast<std::size_t>(device)].exchange(nullptr, std::memory_order_acq_rel);
    if (dropped == nullptr) { continue; }
    // The memory a pool mapped itself outlives the reset (virtual memory management); the rest of
    // the stack is leaked, as every stack is at exit: destroying it would destroy events the reset
    // already destroyed.
    for_each_suballocator(dropped->layers, [](auto& resource) { resource.release_mapped_memory_after_reset(); });
  }
}

namespace {

/// Adds what the sub-allocators of `layers` hold to `sum`; a paused stack's device memory is given
/// back, so only its live bytes count.
void add_statistics(std::vector<rmm::mr::any_device_resource> const& layers,
                    bool paused,
                    rmm::mr::suballocator_statistics& sum)
{
  for_each_suballocator(layers, [&sum, paused](auto& resource) {
    auto const s = resource.statistics();
    sum.peak_reserved_bytes += s.peak_reserved_bytes;
    sum.allocated_bytes += s.allocated_bytes;
    sum.upstream_chunks += s.upstream_chunks;
    sum.stream_arenas += s.stream_arenas;
    sum.moved_bytes += s.moved_bytes;
    if (paused) { return; }
    sum.reserved_bytes += s.reserved_bytes;
    sum.free_bytes += s.free_bytes;
    sum.free_blocks += s.free_blocks;
    sum.largest_free_block = std::max(sum.largest_free_block, s.largest_free_block);
  });
}

}  // namespace

std::optional<rmm::mr::suballocator_statistics> device_stacks::statistics(int device) const
{
  std::optional<rmm::mr::suballocator_statistics> sum;
  for_each_stack(device, [&](region_id region, stack const& built) {
    if (!sum) { sum.emplace(); }
    add_statistics(built.layers, paused(device, region), *sum);
  });
  return sum;
}

std::optional<rmm::mr::suballocator_statistics> device_stacks::statistics(int device, region_id region) const
{
  auto const* s = built(device, region);
  if (s == nullptr) { return std::nullopt; }
  rmm::mr::suballocator_statistics sum{};
  add_statistics(s->layers, paused(device, region), sum);
  return sum;
}

std::size_t device_stacks::release(int device)
{
  std::size_t released = 0;
  for_each_stack(device, [&](region_id region, stack const& built) {
    if (paused(device, region)) { return; }
    for (auto const& layer : built.layers) {
      if (auto* pool = rmm::mr::detail::resource_cast<rmm::mr::pool_memory_resource>(layer)) {
        released += pool->release();
      }
    }
  });
  return released;
}

std::optional<std::string> device_stacks::why_not_pausable(int device, region_id region) const
{
  auto const* s = built(device, region);
  if (s == nullptr) { return std::nullopt; }
  std::string_view lowest;
  auto const* pool = lowest_pool(s->layers, lowest);
  if (pool != nullptr && pool->can_pause()) { return std::nullopt; }
  constexpr std::string_view needed =
    "pausing needs the lowest sub-allocator to be a pool that grows in one address range (type = \"pool\" over "
    "\"cuda\" on a device with virtual memory management, as the built-in stack)";
  if (pool != nullptr) {
    return fmt::format(
      "device {}'s pool grows in separate allocations, which cannot be given back while blocks keep "
      "their addresses; {}",
      device, needed);
  }
  if (lowest == "none") {
    return fmt::format("device {}'s stack has no pool: each block is an allocation of its own; {}", device, needed);
  }
  return fmt::format("device {}'s lowest sub-allocator is {}, which grows in separate allocations; {}", device, lowest,
                     needed);
}

device_stacks::paused_memory device_stacks::pause(int device, region_id region, bool discard)
{
  if (built(device, region) == nullptr) { return {}; }
  auto* pool = lowest_pool_in(built(device, region));
  if (pool == nullptr) { throw rmm::logic_error{why_not_pausable(device, region).value_or("the stack cannot pause")}; }
  auto const done = pool->pause_device_memory(discard);
  return {done.device_bytes, done.saved_bytes, done.staged};
}

void device_stacks::resume(int device, region_id region, bool keep_host_memory)
{
  if (auto* pool = lowest_pool_in(built(device, region)); pool != nullptr && pool->paused()) {
    pool->resume_device_memory(keep_host_memory);
  }
}

std::size_t device_stacks::kept_host_bytes(int device) const noexcept
{
  std::size_t bytes = 0;
  for_each_stack(device, [&bytes](region_id, stack const& built) {
    if (auto const* pool = lowest_pool_in(&built)) { bytes += pool->kept_host_bytes(); }
  });
  return bytes;
}

std::size_t device_stacks::staging_host_bytes(int device) const noexcept
{
  std::size_t bytes = 0;
  for_each_stack(device, [&bytes](region_id, stack const& built) {
    if (auto const* pool = lowest_pool_in(&built)) { bytes += pool->staging_host_bytes(); }
  });
  return bytes;
}

std::size_t device_stacks::release_kept_host_memory(int device)
{
  std::size_t bytes = 0;
  for_each_stack(device, [&bytes](region_id, stack const& built) {
    if (auto* pool = lowest_pool_in(&built)) { bytes += pool->release_kept_host_memory(); }
  });
  return bytes;
}

bool device_stacks::paused(int device, region_id region) const noexcept
{
  auto const* pool = lowest_pool_in(built(device, region));
  return pool != nullptr && pool->paused();
}

void device_stacks::flush_logs() const noexcept
{
  for (auto const& slot : logs_) {
    if (auto* log = slot.load(std::memory_order_acquire)) { log->flush(); }
  }
  for (auto const& slot : stacks_ | std::views::join) {
    auto const* built = slot.load(std::memory_order_acquire);
    if (built == nullptr) { continue; }
    for (auto const& layer : built->layers) {
      if (auto* log = rmm::mr::detail::resource_cast<rmm::mr::logging_resource_adaptor>(layer)) {
        try {
          log->flush();
        } catch (...) {  // at exit there is nobody left to tell
        }
      }
    }
  }
}

}  // namespace rmm::shim
