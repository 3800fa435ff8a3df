// SPDX-License-Identifier: Apache-2.0
#include "cuda_driver.hpp"

#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/logger.hpp>

#include <fmt/format.h>

#include <dlfcn.h>

#include <atomic>
#include <memory>
#include <mutex>
#include <vector>

namespace rmm::detail {

namespace {

struct binding {
  cuda_driver table;
  CUresult init_result;
};

std::mutex& bind_mutex()
{
  static std::mutex m;
  return m;
}

// Set once, never freed: calls made while the process exits still find it.
std::atomic<binding const*> bound{nullptr};

// ---- the default resolver: libcuda.so.1's own cuGetProcAddress_v2 -------------------------------

PFN_cuGetProcAddress_v12000 driver_get_proc_address = nullptr;  // written under bind_mutex

void* resolve_from_libcuda(char const* name, int cuda_version, cuuint64_t flags)
{
  void* address = nullptr;
  CUdriverProcAddressQueryResult status{};
  if (driver_get_proc_address(name, &address, cuda_version, flags, &status) != CUDA_SUCCESS ||
      status != CU_GET_PROC_ADDRESS_SUCCESS) {
    return nullptr;
  }
  return address;
}

/// Loads libcuda.so.1 and takes its resolver. Caller holds bind_mutex.
void open_libcuda()
{
  if (driver_get_proc_address != nullptr) { return; }
  // Never closed: the entry points are used until the process ends.
  void* library = ::dlopen("libcuda.so.1", RTLD_NOW);
  if (library == nullptr) {
    char const* reason = ::dlerror();
    throw rmm::cuda_error{
      fmt::format("rmm cannot use the CUDA driver: dlopen(\"libcuda.so.1\") failed: {} (without a GPU, rmm's CPU "
                  "emulator of CUDA stands in: put build/emulator/lib of rmm's build first on LD_LIBRARY_PATH)",
                  reason != nullptr ? reason : "unknown reason")};
  }
  auto* resolver = reinterpret_cast<PFN_cuGetProcAddress_v12000>(::dlsym(library, "cuGetProcAddress_v2"));
  if (resolver == nullptr) {
    throw rmm::cuda_error{
      "rmm cannot use the CUDA driver: libcuda.so.1 has no cuGetProcAddress_v2 (a driver for CUDA 12.0 or newer is "
      "needed)"};
  }
  driver_get_proc_address = resolver;
}

template <class Pfn>
void resolve(cuda_driver_resolver resolver, char const* source, Pfn& entry, char const* base, int version)
{
  entry = reinterpret_cast<Pfn>(resolver(base, version, CU_GET_PROC_ADDRESS_DEFAULT));
  if (entry == nullptr) {
    throw rmm::cuda_error{
      fmt::format("rmm cannot use the CUDA driver: {} has no {} for CUDA version {} (the driver may be too old)",
                  source, base, version)};
  }
}

template <class Pfn>
void resolve_optional(cuda_driver_resolver resolver, Pfn& entry, char const* base, int version)
{
  entry = reinterpret_cast<Pfn>(resolver(base, version, CU_GET_PROC_ADDRESS_DEFAULT));
}

/// Resolves every entry and initialises the driver. Throws, binding nothing, when an entry is
/// missing (optional entries are left null). Caller holds bind_mutex.
binding const* bind_with(cuda_driver_resolver resolver, char const* source)
{
  auto result = std::make_unique<binding>();
#define RMM_DETAIL_RESOLVE(member, base, version) resolve(resolver, source, result->table.member, #base, version);
  RMM_CUDA_DRIVER_ENTRIES(RMM_DETAIL_RESOLVE)
#undef RMM_DETAIL_RESOLVE
#define RMM_DETAIL_RESOLVE_OPTIONAL(member, base, version) \
  resolve_optional(resolver, result->table.member, #base, version);
  RMM_CUDA_DRIVER_OPTIONAL_ENTRIES(RMM_DETAIL_RESOLVE_OPTIONAL)
#undef RMM_DETAIL_RESOLVE_OPTIONAL
  result->init_result = result->table.cuInit(0);
  return result.release();
}

binding const& bind_default()
{
  if (auto const* b = bound.load(std::memory_order_acquire); b != nullptr) [[likely]] { return *b; }
  std::lock_guard lock{bind_mutex()};
  if (auto const* b = bound.load(std::memory_order_relaxed); b != nullptr) { return *b; }
  open_libcuda();
  auto const* b = bind_with(&resolve_from_libcuda, "libcuda.so.1");
  bound.store(b, std::memory_order_release);
  return *b;
}

char const* error_name(cuda_driver const& cu, CUresult result) noexcept
{
  char const* name = nullptr;
  if (cu.cuGetErrorName(result, &name) != CUDA_SUCCESS || name == nullptr) { return "unrecognized CUresult"; }
  return name;
}

char const* error_string(cuda_driver const& cu, CUresult result) noexcept
{
  char const* text = nullptr;
  if (cu.cuGetErrorString(result, &text) != CUDA_SUCCESS || text == nullptr) { return "unrecognized error code"; }
  return text;
}

/// Errors of a driver that is going away at process exit: not worth a report.
bool exiting(CUresult result) noexcept
{
  return result == CUDA_ERROR_DEINITIALIZED || result == CUDA_ERROR_CONTEXT_IS_DESTROYED;
}

}  // namespace

cuda_driver const& cuda_driver_table()
{
  auto const& b = bind_default();
  if (b.init_result != CUDA_SUCCESS) [[unlikely]] {
    // The machine's doing, not the library's: say what to check, with no source location.
    throw rmm::cuda_error{fmt::format(
      "CUDA error: the CUDA driver could not be initialized (cuInit: {}): check that this machine has an NVIDIA GPU "
      "(nvidia-smi), that CUDA_VISIBLE_DEVICES does not hide every device, and that the driver supports CUDA 13",
      describe_cu_result(b.init_result))};
  }
  return b.table;
}

cuda_driver const* cuda_driver_table_noexcept() noexcept
{
  try {
    return &cuda_driver_table();
  } catch (std::exception const& e) {
    try {
      default_logger().error("{}", e.what());
    } catch (...) {
    }
  }
  return nullptr;
}

bool bind_cuda_driver(cuda_driver_resolver resolver)
{
  RMM_EXPECTS(resolver != nullptr, "bind_cuda_driver needs a resolver, got null");
  std::lock_guard lock{bind_mutex()};
  if (bound.load(std::memory_order_relaxed) != nullptr) { return false; }
  bound.store(bind_with(resolver, "the resolver given to bind_cuda_driver"), std::memory_order_release);
  return true;
}

CUresult cuda_driver_init_result() { return bind_default().init_result; }

// ---- contexts -----------------------------------------------------------------------------------

CUcontext primary_context(int device)
{
  static std::mutex mutex;
  static auto* const retained = new std::vector<CUcontext>{};  // by ordinal; never released
  std::lock_guard lock{mutex};
  if (device >= 0 && static_cast<std::size_t>(device) < retained->size() &&
      (*retained)[static_cast<std::size_t>(device)] != nullptr) {
    return (*retained)[static_cast<std::size_t>(device)];
  }
  CUdevice handle{};
  RMM_CU_TRY(cuDeviceGet(&handle, device));
  CUcontext context{};
  RMM_CU_TRY(cuDevicePrimaryCtxRetain(&context, handle));
  if (retained->size() <= static_cast<std::size_t>(device)) { retained->resize(static_cast<std::size_t>(device) + 1); }
  (*retained)[static_cast<std::size_t>(device)] = context;
  return context;
}

void require_context()
{
  CUcontext current{};
  RMM_CU_TRY(cuCtxGetCurrent(&current));
  if (current == nullptr) { RMM_CU_TRY(cuCtxSetCurrent(primary_context(0))); }
}

bool require_context_noexcept() noexcept
{
  try {
    require_context();
    return true;
  } catch (std::exception const& e) {
    try {
      default_logger().error("{}", e.what());
    } catch (...) {
    }
  }
  return false;
}

int current_device()
{
  require_context();
  CUdevice device{};
  RMM_CU_TRY(cuCtxGetDevice(&device));
  return static_cast<int>(device);
}

// ---- errors -------------------------------------------------------------------------------------

std::string describe_cu_result(CUresult result)
{
  auto const* b = bound.load(std::memory_order_acquire);
  if (b == nullptr) { return fmt::format("CUresult {}", static_cast<int>(result)); }
  return fmt::format("{} ({}): {}", error_name(b->table, result), static_cast<int>(result),
                     error_string(b->table, result));
}

std::string cu_error_message(CUresult result, char const* expression, char const* file, int line)
{
  return fmt::format("{} failed: {} (at {}:{})", expression, describe_cu_result(result), file, line);
}

void throw_cu_error(CUresult result, char const* expression, char const* file, int line)
{
  throw rmm::cuda_error{cu_error_message(result, expression, file, line)};
}

void throw_cu_allocation_failure(CUresult result, std::size_t bytes, char const* what, char const* expression)
{
  auto message = fmt::format("CUDA error (failed to allocate {} bytes): {} could not allocate {}: {} failed: {}", bytes,
                             what, format_bytes_exact(bytes), expression, describe_cu_result(result));
  // Best effort, and only where a context is current already: the figures help, but looking for
  // them must neither mask the original error nor create a context.
  if (auto const* b = bound.load(std::memory_order_acquire); b != nullptr) {
    auto const& cu = b->table;
    CUcontext context{};
    CUdevice device{};
    std::size_t free_bytes{};
    std::size_t total_bytes{};
    if (cu.cuCtxGetCurrent(&context) == CUDA_SUCCESS && context != nullptr &&
        cu.cuCtxGetDevice(&device) == CUDA_SUCCESS && cu.cuMemGetInfo_v2(&free_bytes, &total_bytes) == CUDA_SUCCESS) {
      message += fmt::format("; device {} has {} free of {}", static_cast<int>(device), format_bytes(free_bytes),
                             format_bytes(total_bytes));
    }
  }
  if (result == CUDA_ERROR_OUT_OF_MEMORY) { throw rmm::out_of_memory{message}; }
  throw rmm::bad_alloc{message};
}

void report_cu_error_noexcept(CUresult result, char const* expression, char const* file, int line) noexcept
{
  if (exiting(result)) { return; }
  try {
    default_logger().error("{}", cu_error_message(result, expression, file, line));
  } catch (...) {  // formatting failed (out of memory): nothing more can be done without throwing
  }
}

}  // namespace rmm::detail
