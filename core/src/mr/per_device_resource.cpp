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

struct device_resource_table {
  std::shared_mutex mutex;
  std::unordered_map<int, any_device_resource> by_device;
  /// Owned resources replaced through the _ref functions, kept so the references they returned
  /// stay valid.
  std::vector<any_device_resource> retired;
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
any_device_resource& entry_locked(device_resource_table& t, cuda_device_id device_id)
{
  auto it = t.by_device.find(device_id.value());
  if (it == t.by_device.end()) {
    it = t.by_device.emplace(device_id.value(), any_device_resource{detail::initial_resource()}).first;
  }
  return it->second;
}

any_device_resource exchange(cuda_device_id device_id, any_device_resource new_resource)
{
  check_device(device_id);
  auto& t = table();
  std::unique_lock lock{t.mutex};
  auto& entry   = entry_locked(t, device_id);
  auto previous = entry;
  entry         = std::move(new_resource);
  return previous;
}

device_async_resource_ref exchange_ref(cuda_device_id device_id, any_device_resource new_resource)
{
  check_device(device_id);
  auto& t = table();
  std::unique_lock lock{t.mutex};
  auto& entry = entry_locked(t, device_id);
  if (entry.is_owning()) { t.retired.push_back(entry); }  // shares the object `previous` refers to
  auto const previous = entry.ref();
  entry               = std::move(new_resource);
  return previous;
}

}  // namespace

any_device_resource get_per_device_resource(cuda_device_id device_id)
{
  check_device(device_id);
  auto& t = table();
  {
    std::shared_lock lock{t.mutex};
    if (auto it = t.by_device.find(device_id.value()); it != t.by_device.end()) { return it->second; }
  }
  std::unique_lock lock{t.mutex};
  return entry_locked(t, device_id);
}

device_async_resource_ref get_per_device_resource_ref(cuda_device_id device_id)
{
  // The table keeps the resource alive, so a reference to it stays valid until replaced.
  check_device(device_id);
  auto& t = table();
  {
    std::shared_lock lock{t.mutex};
    if (auto it = t.by_device.find(device_id.value()); it != t.by_device.end()) { return it->second.ref(); }
  }
  std::unique_lock lock{t.mutex};
  return entry_locked(t, device_id).ref();
}

any_device_resource set_per_device_resource(cuda_device_id device_id, any_device_resource new_resource)
{
  return exchange(device_id, std::move(new_resource));
}

device_async_resource_ref set_per_device_resource_ref(cuda_device_id device_id,
                                                      device_async_resource_ref new_resource_ref)
{
  return exchange_ref(device_id, any_device_resource{new_resource_ref});
}

any_device_resource reset_per_device_resource(cuda_device_id device_id)
{
  return exchange(device_id, any_device_resource{detail::initial_resource()});
}

device_async_resource_ref reset_per_device_resource_ref(cuda_device_id device_id)
{
  return exchange_ref(device_id, any_device_resource{detail::initial_resource()});
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
