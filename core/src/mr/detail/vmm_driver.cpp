#include "vmm_driver.hpp"

#include <cuda_runtime_api.h>

namespace rmm::mr::detail {

namespace {

template <class Fn>
bool load(Fn& fn, char const* symbol)
{
  void* address = nullptr;
  cudaDriverEntryPointQueryResult status{};
  // 12000: the ABI of these entry points has not changed since they appeared (10.2).
  if (cudaGetDriverEntryPointByVersion(symbol, &address, 12000, cudaEnableDefault, &status) != cudaSuccess ||
      status != cudaDriverEntryPointSuccess || address == nullptr) {
    (void)cudaGetLastError();
    return false;
  }
  fn = reinterpret_cast<Fn>(address);
  return true;
}

vmm_driver const* load_all()
{
  static vmm_driver driver{};
  bool const ok = load(driver.address_reserve, "cuMemAddressReserve") && load(driver.address_free, "cuMemAddressFree") &&
                  load(driver.create, "cuMemCreate") && load(driver.release, "cuMemRelease") &&
                  load(driver.map, "cuMemMap") && load(driver.unmap, "cuMemUnmap") &&
                  load(driver.set_access, "cuMemSetAccess") &&
                  load(driver.granularity, "cuMemGetAllocationGranularity") &&
                  load(driver.error_name, "cuGetErrorName") && load(driver.device_get, "cuDeviceGet") &&
                  load(driver.device_attribute, "cuDeviceGetAttribute");
  return ok ? &driver : nullptr;
}

}  // namespace

vmm_driver const* vmm_driver_entry_points() noexcept
{
  static vmm_driver const* const driver = load_all();
  return driver;
}

std::string describe(vmm_driver const& driver, char const* call, CUresult result)
{
  char const* name = nullptr;
  if (driver.error_name(result, &name) != CUDA_SUCCESS || name == nullptr) { name = "unknown CUresult"; }
  return std::string{call} + ": " + name + " (" + std::to_string(static_cast<int>(result)) + ")";
}

}  // namespace rmm::mr::detail
