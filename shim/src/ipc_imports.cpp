// SPDX-License-Identifier: Apache-2.0
#include "ipc_imports.hpp"

#include "ipc_channel.hpp"
#include "real_driver.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rmm::shim {

namespace {

void explain(std::uint32_t pid, std::string const& why)
{
  fmt::print(stderr, "rmm shim: cannot open the CUDA IPC handle of process {}: {}\n", pid, why);
}

/// Asks the exporter `pid` to do `kind` to its export; the connection, or -1 (errno set).
int ask(ipc::request_kind kind, std::uint32_t pid, std::uint64_t id, std::uint64_t token, ipc::reply& reply)
{
  int const connection = ipc::connect_to(static_cast<pid_t>(pid));
  if (connection < 0) { return -1; }
  ipc::request request{};
  std::memcpy(request.magic, ipc::request_magic, sizeof request.magic);
  request.kind         = kind;
  request.importer_pid = static_cast<std::uint32_t>(::getpid());
  request.id           = id;
  request.token        = token;
  if (!ipc::send_message(connection, &request, sizeof request, -1) ||
      !ipc::receive_message(connection, &reply, sizeof reply, nullptr) ||
      std::memcmp(reply.magic, ipc::reply_magic, sizeof reply.magic) != 0) {
    auto const error = errno != 0 ? errno : EPROTO;
    ::close(connection);
    errno = error;
    return -1;
  }
  return connection;
}

/// Tells the exporter this process no longer has its export open.
void tell_closed(std::uint32_t pid, std::uint64_t id, std::uint64_t token) noexcept
{
  ipc::reply reply{};
  if (int const connection = ask(ipc::request_kind::close, pid, id, token, reply); connection >= 0) {
    ::close(connection);
  }
}

}  // namespace

std::optional<CUresult> ipc_imports::open(CUdeviceptr* out, CUipcMemHandle const& handle, unsigned int flags)
{
  auto const fields = ipc::decode(handle);
  if (!fields) { return std::nullopt; }
  if (out == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  if (fields->pid == static_cast<std::uint32_t>(::getpid())) { return CUDA_ERROR_INVALID_CONTEXT; }
  std::lock_guard lock{mutex_};  // opens are rare: one at a time
  auto const known = std::find_if(opened_.begin(), opened_.end(), [&](opened const& o) {
    return o.pid == fields->pid && o.id == fields->id && o.token == fields->token;
  });
  if (known != opened_.end()) {
    ++known->references;
    *out = known->ptr;
    return CUDA_SUCCESS;
  }
  auto const* driver = real();
  CUdevice device{};
  if (driver->ctx_get_device(&device) != CUDA_SUCCESS) { return CUDA_ERROR_INVALID_CONTEXT; }

  ipc::reply reply{};
  int const connection = ask(ipc::request_kind::open, fields->pid, fields->id, fields->token, reply);
  if (connection < 0) {
    explain(fields->pid, fmt::format("{} (it must run under the shim, on this machine, and still hold the memory)",
                                     std::strerror(errno)));
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (reply.status != CUDA_SUCCESS) {
    ::close(connection);
    return static_cast<CUresult>(reply.status);
  }
  std::vector<ipc::piece> pieces(reply.pieces);
  std::vector<int> fds(reply.pieces, -1);
  bool received = reply.pieces > 0;
  for (std::size_t i = 0; i < pieces.size() && received; ++i) {
    received = ipc::receive_message(connection, &pieces[i], sizeof pieces[i], &fds[i]) && pieces[i].size > 0;
  }
  ::close(connection);
  auto const close_fds = [&] {
    for (auto& fd : fds) {
      if (fd >= 0) { ::close(fd), fd = -1; }
    }
  };
  auto const refuse = [&](std::string const& why, CUresult result) {
    close_fds();
    tell_closed(fields->pid, fields->id, fields->token);
    explain(fields->pid, why);
    return result;
  };
  if (!received) { return refuse("its answer was incomplete", CUDA_ERROR_INVALID_VALUE); }

  opened record{fields->pid, fields->id, fields->token, 0, 0, 0, 0, 1};
  if (pieces.size() == 1 && pieces[0].legacy == 1) {
    // A block of a cudaMalloc allocation: the driver's handle of it, and the block's offset.
    if (driver->ipc_open_mem_handle == nullptr) {
      return refuse("this driver has no CUDA IPC", CUDA_ERROR_NOT_SUPPORTED);
    }
    CUdeviceptr base = 0;
    if (auto const r = driver->ipc_open_mem_handle(&base, pieces[0].legacy_handle, flags); r != CUDA_SUCCESS) {
      tell_closed(fields->pid, fields->id, fields->token);
      return r;
    }
    record.legacy = base;
    record.ptr    = static_cast<CUdeviceptr>(static_cast<std::int64_t>(base) - pieces[0].offset);
  } else {
    // Physical allocations: mapped here side by side as they are there, readable and writable by
    // the current device.
    std::size_t span = 0;
    for (std::size_t i = 0; i < pieces.size(); ++i) {
      if (pieces[i].legacy != 0 || fds[i] < 0 ||
          pieces[i].offset != pieces[0].offset + static_cast<std::int64_t>(span)) {
        return refuse("its memory is not one range of shareable allocations", CUDA_ERROR_INVALID_VALUE);
      }
      span += pieces[i].size;
    }
    CUdeviceptr base = 0;
    if (auto const r = driver->mem_address_reserve(&base, span, 0, 0, 0); r != CUDA_SUCCESS) {
      return refuse("no addresses left for it here", r);
    }
    std::size_t mapped = 0;
    CUresult failure   = CUDA_SUCCESS;
    for (std::size_t i = 0; i < pieces.size() && failure == CUDA_SUCCESS; ++i) {
      CUmemGenericAllocationHandle h{};
      failure = driver->mem_import_from_shareable_handle(
        &h, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fds[i])), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
      ::close(fds[i]);
      fds[i] = -1;
      if (failure != CUDA_SUCCESS) { break; }
      failure =
        driver->mem_map(base + static_cast<CUdeviceptr>(pieces[i].offset - pieces[0].offset), pieces[i].size, 0, h, 0);
      (void)driver->mem_release(h);  // the mapping keeps the memory
      if (failure == CUDA_SUCCESS) { mapped += pieces[i].size; }
    }
    CUmemAccessDesc access{};
    access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
    access.location.id   = device;
    access.flags         = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
    if (failure == CUDA_SUCCESS) { failure = driver->mem_set_access(base, span, &access, 1); }
    if (failure != CUDA_SUCCESS) {
      if (mapped > 0) { (void)driver->mem_unmap(base, mapped); }
      (void)driver->mem_address_free(base, span);
      return refuse(fmt::format("mapping its memory failed (CUresult {})", static_cast<int>(failure)), failure);
    }
    record.mapped = base;
    record.span   = span;
    record.ptr    = base + static_cast<CUdeviceptr>(-pieces[0].offset);
  }
  try {
    opened_.push_back(record);
  } catch (...) {
    if (record.mapped != 0) {
      (void)driver->mem_unmap(record.mapped, record.span);
      (void)driver->mem_address_free(record.mapped, record.span);
    } else if (driver->ipc_close_mem_handle != nullptr) {
      (void)driver->ipc_close_mem_handle(record.legacy);
    }
    tell_closed(fields->pid, fields->id, fields->token);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *out = record.ptr;
  return CUDA_SUCCESS;
}

std::optional<CUresult> ipc_imports::close(CUdeviceptr ptr)
{
  opened record{};
  {
    std::lock_guard lock{mutex_};
    auto const found = std::find_if(opened_.begin(), opened_.end(), [ptr](opened const& o) { return o.ptr == ptr; });
    if (found == opened_.end()) { return std::nullopt; }
    if (--found->references > 0) { return CUDA_SUCCESS; }
    record = *found;
    opened_.erase(found);
  }
  auto const* driver = real();
  CUresult result    = CUDA_SUCCESS;
  if (record.mapped != 0) {
    // Work queued here on the memory must be done before it goes: unmapping does not wait, and
    // the exporter may hand the block to a new owner once told.
    (void)driver->ctx_synchronize();
    result = driver->mem_unmap(record.mapped, record.span);
    if (auto const freed = driver->mem_address_free(record.mapped, record.span); result == CUDA_SUCCESS) {
      result = freed;
    }
  } else if (driver->ipc_close_mem_handle != nullptr) {
    result = driver->ipc_close_mem_handle(record.legacy);
  }
  tell_closed(record.pid, record.id, record.token);
  return result;
}

}  // namespace rmm::shim
