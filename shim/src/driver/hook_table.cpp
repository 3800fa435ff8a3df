// SPDX-License-Identifier: Apache-2.0
#include "driver/hook_table.hpp"

#include "driver/wrappers.hpp"
#include "driver/real_driver.hpp"

#include <array>
#include <atomic>
#include <algorithm>
#include <cstring>
#include <iterator>

namespace rmm::shim {

namespace {

constexpr int current = INT_MAX;

constexpr bool is_per_thread(stream_flavour flavour) { return flavour == stream_flavour::per_thread; }

real_driver const* bound_driver() noexcept { return real(); }

/// The driver's function behind a row, for wraps().
#define RMM_SHIM_REAL_OF(member)                                                  \
  []() noexcept -> void* {                                                        \
    auto const* driver = bound_driver();                                          \
    return driver != nullptr ? reinterpret_cast<void*>(driver->member) : nullptr; \
  }

// One row per line of entry_points.def that a program can be handed.
wrapped_entry_point const table[] = {
#define RMM_SHIM_HOOK(wrapper, name, first_version, end_version, flavour, real, type, need) \
  {#name,       first_version,                                                              \
   end_version, is_per_thread(stream_flavour::flavour),                                     \
   #wrapper,    reinterpret_cast<void*>(&::wrapper),                                        \
   false,       RMM_SHIM_REAL_OF(real)},
#define RMM_SHIM_LEGACY_HOOK(wrapper, exported, name, first_version, end_version, flavour, real, type, need) \
  {#name,       first_version,                                                                               \
   end_version, is_per_thread(stream_flavour::flavour),                                                      \
   #exported,   reinterpret_cast<void*>(&::wrapper),                                                         \
   false,       RMM_SHIM_REAL_OF(real)},
#define RMM_SHIM_SUBMISSION(wrapper, name, first_version, end_version, flavour, real, type) \
  {#name,       first_version,                                                              \
   end_version, is_per_thread(stream_flavour::flavour),                                     \
   #wrapper,    reinterpret_cast<void*>(&::wrapper),                                        \
   true,        RMM_SHIM_REAL_OF(real)},
#define RMM_SHIM_LEGACY_SUBMISSION(wrapper, exported, name, first_version, end_version, flavour, real, type) \
  {#name,       first_version,                                                                               \
   end_version, is_per_thread(stream_flavour::flavour),                                                      \
   #exported,   reinterpret_cast<void*>(&::wrapper),                                                         \
   true,        RMM_SHIM_REAL_OF(real)},
#define RMM_SHIM_HOOK_ALIAS(wrapper, name, first_version, end_version, flavour)                                        \
  {#name, first_version, end_version, is_per_thread(stream_flavour::flavour), "", reinterpret_cast<void*>(&::wrapper), \
   false, nullptr},
#include "driver/entry_points.def"
};
#undef RMM_SHIM_REAL_OF

constexpr std::size_t table_size = sizeof table / sizeof table[0];

std::array<std::array<std::atomic<std::uint64_t>, 2>, table_size> installed{};

std::size_t index_of(wrapped_entry_point const& entry) noexcept { return static_cast<std::size_t>(&entry - table); }

}  // namespace

std::span<wrapped_entry_point const> wrapped_entry_points() noexcept { return table; }

wrapped_entry_point const* wrapper_for_proc(char const* name, int version, cuuint64_t flags) noexcept
{
  bool const per_thread           = (flags & CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM) != 0;
  wrapped_entry_point const* same = nullptr;  // the default flavour's row, for a per-thread request
  for (auto const& entry : table) {
    if (version < entry.first_version || version >= entry.end_version || entry.base_name != name) { continue; }
    if (entry.per_thread == per_thread) { return &entry; }
    if (!entry.per_thread) { same = &entry; }
  }
  // Asked for its per-thread flavour, an entry point without a stream argument (it has no row of
  // that flavour here) is the same function as the default one: the driver answers with that.
  return per_thread ? same : nullptr;
}

bool wraps(wrapped_entry_point const& entry, void const* found) noexcept
{
  return !entry.submits_work || (entry.real_function != nullptr && entry.real_function() == found);
}

wrapped_entry_point const* wrapper_for_symbol(char const* name) noexcept
{
  for (auto const& entry : table) {
    if (!entry.exported_name.empty() && entry.exported_name == name) { return &entry; }
  }
  return nullptr;
}

bool may_submit_work(std::string_view name) noexcept
{
  // Enqueue on a stream but touch no memory a free hands back: the allocator's own (served or
  // counted), a managed-memory attachment, notifications, OpenGL mapping.
  static constexpr std::string_view quiet[] = {"cuMemAllocAsync",
                                               "cuMemFreeAsync",
                                               "cuMemAllocFromPoolAsync",
                                               "cuStreamAttachMemAsync",
                                               "cuDeviceRegisterAsyncNotification",
                                               "cuDeviceUnregisterAsyncNotification",
                                               "cuGLMapBufferObjectAsync",
                                               "cuGLUnmapBufferObjectAsync"};
  // On the default stream only, which the legacy stream's order covers.
  static constexpr std::string_view default_stream_launches[] = {"cuLaunch", "cuLaunchGrid"};
  static constexpr std::string_view submitting[]              = {"cuLaunch",
                                                                 "cuGraphLaunch",
                                                                 "cuGraphUpload",
                                                                 "cuGraphicsMapResources",
                                                                 "cuGraphicsUnmapResources",
                                                                 "cuStreamWaitValue",
                                                                 "cuStreamWriteValue",
                                                                 "cuStreamBatchMemOp",
                                                                 "cuStreamAddCallback",
                                                                 "cuStreamBeginCapture",
                                                                 "cuStreamCreate",
                                                                 "cuGreenCtxStreamCreate",
                                                                 "cuSignalExternalSemaphores",
                                                                 "cuWaitExternalSemaphores"};
  auto const starts = [name](std::string_view prefix) { return name.substr(0, prefix.size()) == prefix; };
  if (std::any_of(std::begin(quiet), std::end(quiet), starts)) { return false; }
  if (std::any_of(std::begin(default_stream_launches), std::end(default_stream_launches),
                  [name](std::string_view launch) { return name == launch; })) {
    return false;
  }
  return name.find("Async") != std::string_view::npos ||
         std::any_of(std::begin(submitting), std::end(submitting), starts);
}

void note_installed(wrapped_entry_point const& entry, found_through how) noexcept
{
  installed[index_of(entry)][static_cast<std::size_t>(how)].fetch_add(1, std::memory_order_relaxed);
}

std::uint64_t times_installed(wrapped_entry_point const& entry, found_through how) noexcept
{
  return installed[index_of(entry)][static_cast<std::size_t>(how)].load(std::memory_order_relaxed);
}

}  // namespace rmm::shim
