// SPDX-License-Identifier: Apache-2.0
#include "../detail/cuda_driver.hpp"

#include <rmm/format_bytes.hpp>
#include <rmm/error.hpp>
#include <rmm/mr/device_memory_resource.hpp>

#include <fmt/format.h>

#include <cxxabi.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <string_view>
#include <typeinfo>

namespace rmm::mr {

namespace {

/// "pool_memory_resource" for rmm's own resources, the full type name for anyone else's.
std::string type_name_of(device_memory_resource const& resource)
{
  char const* mangled = typeid(resource).name();
  int status{};
  std::unique_ptr<char, void (*)(void*)> const demangled{abi::__cxa_demangle(mangled, nullptr, nullptr, &status),
                                                         std::free};
  std::string name                         = status == 0 && demangled ? demangled.get() : mangled;
  constexpr std::string_view own_namespace = "rmm::mr::";
  if (name.starts_with(own_namespace)) { name.erase(0, own_namespace.size()); }
  return name;
}

}  // namespace

void* device_memory_resource::do_allocate_sync(std::size_t bytes)
{
  auto const stream = cuda_stream_view{};
  void* ptr         = do_allocate(bytes, stream);
  try {
    rmm::detail::require_context();
    RMM_CU_TRY(cuStreamSynchronize(stream.value()));
  } catch (...) {
    do_deallocate(ptr, bytes, stream);
    throw;
  }
  return ptr;
}

void device_memory_resource::reject_alignment(std::size_t alignment)
{
  if (!is_pow2(alignment)) {
    throw rmm::logic_error{fmt::format("allocation alignment must be a power of two, got {}", alignment)};
  }
  // rmm::bad_alloc, as RMM's base resources throw for an alignment they cannot give.
  throw rmm::bad_alloc{
    fmt::format("allocation alignment {} exceeds the {} bytes rmm's resources guarantee; wrap the resource in "
                "an aligned_resource_adaptor for larger alignments",
                alignment, CUDA_ALLOCATION_ALIGNMENT)};
}

void device_memory_resource::reject_impossible_size(std::size_t bytes) const
{
  throw rmm::out_of_memory{fmt::format(
    "{} cannot allocate {}: no allocation can be larger than {} bytes (PTRDIFF_MAX). A size this large comes from "
    "a computation that wrapped around, such as n - 1 with n == 0 or an overflowed n * sizeof(T): check how the "
    "size was computed",
    type_name_of(*this), rmm::format_bytes_exact(bytes), max_allocation_size)};
}

}  // namespace rmm::mr
