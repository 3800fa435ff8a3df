// SPDX-License-Identifier: Apache-2.0
#include "driver/real_driver.hpp"

#include "detail/cuda_driver.hpp"

#include <dlfcn.h>

#include <atomic>
#include <string>
#include <type_traits>
#include <mutex>

namespace rmm::shim {

RMM_SHIM_BEFORE_SANITIZERS dlsym_fn find_glibc_dlsym() noexcept
{
  // glibc 2.34 moved dlsym into libc under a new version; older programs bind the older one, and
  // 64-bit Arm starts at 2.17.
  // A plain array: nothing here may call instrumented code (an initializer_list's begin()).
  static constexpr char const* versions[] = {"GLIBC_2.34", "GLIBC_2.2.5", "GLIBC_2.17"};
  for (std::size_t i = 0; i < sizeof versions / sizeof versions[0]; ++i) {
    if (void* fn = dlvsym(RTLD_NEXT, "dlsym", versions[i]); fn != nullptr) { return reinterpret_cast<dlsym_fn>(fn); }
  }
  return nullptr;
}

namespace {

/// Resolves `slot` at the ABI of `version`; false when a required function is missing.
template <class Fn>
bool bind(real_driver const& driver, Fn& slot, char const* name, int version, stream_flavour flavour, requirement need)
{
  slot = reinterpret_cast<Fn>(driver.resolve(name, version, flavour));
  return slot != nullptr || need == requirement::optional;
}

bool bind_all(real_driver& d)
{
  // Each wrapped function is resolved at the version that introduced its ABI, so the real
  // function has exactly the wrapper's ABI.
  bool all_required = true;
#define RMM_SHIM_HOOK(wrapper, name, first_version, end_version, flavour, real, type, need) \
  all_required &= bind(d, d.real, #name, first_version, stream_flavour::flavour, requirement::need);
#define RMM_SHIM_LEGACY_HOOK(wrapper, exported, name, first_version, end_version, flavour, real, type, need) \
  all_required &= bind(d, d.real, #name, first_version, stream_flavour::flavour, requirement::need);
#define RMM_SHIM_SUBMISSION(wrapper, name, first_version, end_version, flavour, real, type) \
  (void)bind(d, d.real, #name, first_version, stream_flavour::flavour, requirement::optional);
#define RMM_SHIM_LEGACY_SUBMISSION(wrapper, exported, name, first_version, end_version, flavour, real, type) \
  (void)bind(d, d.real, #name, first_version, stream_flavour::flavour, requirement::optional);
#define RMM_SHIM_DRIVER_CALL(real, name, version, type, need) \
  all_required &= bind(d, d.real, #name, version, stream_flavour::default_stream, requirement::need);
#include "driver/entry_points.def"
  return all_required;
}

}  // namespace

namespace {
/// Constant-initialized and read with compiler builtins, not a function-local static or a
/// std::atomic: a sanitizer intercepts the guard of the one and instruments the calls of the
/// other, and this runs before its runtime is ready. Two threads finding it at once store the
/// same value.
dlsym_fn found_real_dlsym = nullptr;
}  // namespace

RMM_SHIM_BEFORE_SANITIZERS void* real_dlsym(void* handle, char const* symbol) noexcept
{
  auto fn = __atomic_load_n(&found_real_dlsym, __ATOMIC_ACQUIRE);
  if (fn == nullptr) {
    fn = find_glibc_dlsym();
    __atomic_store_n(&found_real_dlsym, fn, __ATOMIC_RELEASE);
  }
  return fn != nullptr ? fn(handle, symbol) : nullptr;
}

void* real_driver::resolve(char const* name, int version, stream_flavour flavour) const noexcept
{
  void* fn = nullptr;
  CUdriverProcAddressQueryResult status{};
  auto const flags =
    flavour == stream_flavour::per_thread ? CU_GET_PROC_ADDRESS_PER_THREAD_DEFAULT_STREAM : CU_GET_PROC_ADDRESS_DEFAULT;
  if (get_proc_address_v2(name, &fn, version, flags, &status) != CUDA_SUCCESS ||
      status != CU_GET_PROC_ADDRESS_SUCCESS) {
    return nullptr;
  }
  return fn;
}

real_driver const* detail::bind_real_driver() noexcept
{
  auto& bound = bound_driver;
  static std::mutex binding;
  std::lock_guard lock{binding};
  if (auto const* driver = bound.load(std::memory_order_relaxed); driver != nullptr) { return driver; }
  // Only a driver the program loaded: the shim never brings CUDA into a process.
  void* library = dlopen("libcuda.so.1", RTLD_NOW | RTLD_NOLOAD);
  if (library == nullptr) { return nullptr; }
  static real_driver driver;
  driver.library = library;
  driver.get_proc_address_v2 =
    reinterpret_cast<PFN_cuGetProcAddress_v12000>(real_dlsym(library, "cuGetProcAddress_v2"));
  if (driver.get_proc_address_v2 == nullptr || !bind_all(driver)) { return nullptr; }
  bound.store(&driver, std::memory_order_release);
  return &driver;
}

void bind_library_to_real_driver()
{
  static std::once_flag once;
  std::call_once(once, [] {
    (void)rmm::detail::bind_cuda_driver([](char const* name, int version, cuuint64_t flags) -> void* {
      void* fn = nullptr;
      CUdriverProcAddressQueryResult status{};
      auto const* driver = real();
      if (driver == nullptr || driver->get_proc_address_v2(name, &fn, version, flags, &status) != CUDA_SUCCESS ||
          status != CU_GET_PROC_ADDRESS_SUCCESS) {
        return nullptr;
      }
      return fn;
    });
  });
}

real_runtime const& real_cudart() noexcept
{
  // Asked when a runtime-level hook first runs: the program called it, so its libcudart is loaded.
  static real_runtime const runtime = [] {
    real_runtime r;
    auto const find = [](auto& slot, char const* name) {
      slot = reinterpret_cast<std::remove_reference_t<decltype(slot)>>(real_dlsym(RTLD_NEXT, name));
    };
#define RMM_SHIM_RUNTIME_HOOK(wrapper) find(r.wrapper, #wrapper);
#include "driver/entry_points.def"
    return r;
  }();
  return runtime;
}

std::string driver_error_name(CUresult result)
{
  char const* name = nullptr;
  if (real()->get_error_name(result, &name) != CUDA_SUCCESS || name == nullptr) {
    return "CUDA error " + std::to_string(static_cast<int>(result));
  }
  return name;
}

}  // namespace rmm::shim
