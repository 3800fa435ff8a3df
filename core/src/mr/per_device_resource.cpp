// SPDX-License-Identifier: Apache-2.0
#include "../detail/exit_marker.hpp"

#include <rmm/error.hpp>
#include <rmm/mr/cuda_memory_resource.hpp>
#include <rmm/mr/per_device_resource.hpp>

#include <fmt/format.h>

#include <mutex>
#include <shared_mutex>
#include <unordered_map>
#include <vector>

namespace rmm::mr {

namespace {

/// A device's resource: the one set through the owning functions (held here, at a stable address,
/// so references to it stay valid while it is current), or one set by reference (`held` empty).
struct device_entry {
  std::shared_ptr<any_device_resource> held;
  device_async_resource_ref ref;

  explicit device_entry(any_device_resource resource)
    : held{std::make_shared<any_device_resource>(std::move(resource))}, ref{*held}
  {
  }
  explicit device_entry(device_async_resource_ref borrowed) noexcept : ref{borrowed} {}

  /// The resource as an owning value: a copy of the held one, or of the referenced one.
  [[nodiscard]] any_device_resource owning() const { return held ? *held : any_device_resource{ref}; }
};

struct device_resource_table {
  std::shared_mutex mutex;
  std::unordered_map<int, device_entry> by_device;
  /// Resources replaced through the _ref functions, kept so the references they returned stay
  /// valid.
  std::vector<std::shared_ptr<any_device_resource>> retired;
};

/// Never destroyed: at exit the resources are dropped, not freed (see the header).
device_resource_table& table()
{
  static auto* const instance = [] {
    rmm::detail::arm_exit_marker();  // rmm::process_is_exiting() from here on
    return new device_resource_table{};
  }();
  return *instance;
}

void check_device(cuda_device_id device_id)
{
  static int const device_count = get_num_cuda_devices();
  RMM_EXPECTS(device_id.value() >= 0 && device_id.value() < device_count,
              fmt::format("device {} does not exist: {} CUDA device(s) are visible", device_id.value(), device_count));
}

/// The entry of `device_id`, created with the initial resource. Caller holds the unique lock.
device_entry& entry_locked(device_resource_table& t, cuda_device_id device_id)
{
  auto it = t.by_device.find(device_id.value());
  if (it == t.by_device.end()) { it = t.by_device.emplace(device_id.value(), detail::initial_resource()).first; }
  return it->second;
}

/// Replaces the entry; references to the previous resource are valid until this returns.
any_device_resource exchange(cuda_device_id device_id, device_entry new_entry)
{
  check_device(device_id);
  auto& t = table();
  std::unique_lock lock{t.mutex};
  auto& entry   = entry_locked(t, device_id);
  auto previous = entry.owning();
  entry         = std::move(new_entry);
  return previous;
}

/// Replaces the entry; the reference returned to the previous resource stays valid.
device_async_resource_ref exchange_ref(cuda_device_id device_id, device_entry new_entry)
{
  check_device(device_id);
  auto& t = table();
  std::unique_lock lock{t.mutex};
  auto& entry = entry_locked(t, device_id);
  if (entry.held) { t.retired.push_back(entry.held); }
  auto const previous = entry.ref;
  entry               = std::move(new_entry);
  return previous;
}

}  // namespace

any_device_resource get_per_device_resource(cuda_device_id device_id)
{
  check_device(device_id);
  auto& t = table();
  {
    std::shared_lock lock{t.mutex};
    if (auto it = t.by_device.find(device_id.value()); it != t.by_device.end()) { return it->second.owning(); }
  }
  std::unique_lock lock{t.mutex};
  return entry_locked(t, device_id).owning();
}

device_async_resource_ref get_per_device_resource_ref(cuda_device_id device_id)
{
  // The table keeps the resource alive, so a reference to it stays valid until replaced.
  check_device(device_id);
  auto& t = table();
  {
    std::shared_lock lock{t.mutex};
    if (auto it = t.by_device.find(device_id.value()); it != t.by_device.end()) { return it->second.ref; }
  }
  std::unique_lock lock{t.mutex};
  return entry_locked(t, device_id).ref;
}

any_device_resource set_per_device_resource(cuda_device_id device_id, any_device_resource new_resource)
{
  return exchange(device_id, device_entry{std::move(new_resource)});
}

device_async_resource_ref set_per_device_resource_ref(cuda_device_id device_id,
                                                      device_async_resource_ref new_resource_ref)
{
  return exchange_ref(device_id, device_entry{new_resource_ref});
}

any_device_resource reset_per_device_resource(cuda_device_id device_id)
{
  return exchange(device_id, device_entry{detail::initial_resource()});
}

device_async_resource_ref reset_per_device_resource_ref(cuda_device_id device_id)
{
  return exchange_ref(device_id, device_entry{detail::initial_resource()});
}

device_async_resource_ref get_current_device_resource_ref()
{
  return get_per_device_resource_ref(get_current_cuda_device());
}

any_device_resource get_current_device_resource() { return get_per_device_resource(get_current_cuda_device()); }

any_device_resource set_current_device_resource(any_device_resource new_resource)
{
  return set_per_device_resource(get_current_cuda_device(), std::move(new_resource));
}

device_async_resource_ref set_current_device_resource_ref(device_async_resource_ref new_resource_ref)
{
  return set_per_device_resource_ref(get_current_cuda_device(), new_resource_ref);
}

any_device_resource reset_current_device_resource() { return reset_per_device_resource(get_current_cuda_device()); }

device_async_resource_ref reset_current_device_resource_ref()
{
  return reset_per_device_resource_ref(get_current_cuda_device());
}

/// cuda_memory_resource is stateless, so one instance serves every device.
device_async_resource_ref detail::initial_resource()
{
  static auto* const instance = new cuda_memory_resource{};
  return device_async_resource_ref{*instance};
}

}  // namespace rmm::mr
