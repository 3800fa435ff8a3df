// SPDX-License-Identifier: Apache-2.0
#include "ipc_exports.hpp"

#include "contexts.hpp"
#include "ipc_channel.hpp"
#include "real_driver.hpp"

#include <fmt/format.h>

#include <sys/random.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>
#include <thread>

namespace rmm::shim {

namespace {

std::uint64_t random_token() noexcept
{
  std::uint64_t token = 0;
  if (::getrandom(&token, sizeof token, 0) != static_cast<ssize_t>(sizeof token)) {
    token = static_cast<std::uint64_t>(::getpid()) * 0x9E3779B97F4A7C15ULL ^ reinterpret_cast<std::uintptr_t>(&token);
  }
  return token;
}

void explain_once(std::string const& why)
{
  static std::once_flag once;
  std::call_once(once, [&] {
    fmt::print(stderr, "rmm shim: cannot export device memory for another process (cuIpcGetMemHandle): {}\n", why);
  });
}

}  // namespace

CUresult ipc_exports::find_places(std::uintptr_t start, std::size_t size, std::vector<place>& places) const
{
  auto const* driver = real();
  if (driver->mem_retain_allocation_handle == nullptr || driver->mem_release == nullptr ||
      driver->mem_export_to_shareable_handle == nullptr) {
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  auto const end = start + std::max<std::size_t>(size, 1);
  for (auto address = start; address < end;) {
    CUmemGenericAllocationHandle handle{};
    if (driver->mem_retain_allocation_handle(&handle, reinterpret_cast<void*>(address)) != CUDA_SUCCESS) {
      // Not mapped by the pool itself: a cudaMalloc allocation, shared whole with the block's offset.
      CUdeviceptr base  = 0;
      std::size_t bytes = 0;
      CUipcMemHandle legacy{};
      if (places.empty() &&
          driver->mem_get_address_range(&base, &bytes, static_cast<CUdeviceptr>(start)) == CUDA_SUCCESS &&
          driver->ipc_get_mem_handle != nullptr && driver->ipc_get_mem_handle(&legacy, base) == CUDA_SUCCESS) {
        places.push_back({static_cast<std::int64_t>(base) - static_cast<std::int64_t>(start), bytes, true, legacy});
        return CUDA_SUCCESS;
      }
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    CUmemAllocationProp prop{};
    bool const shareable = driver->mem_get_allocation_properties_from_handle != nullptr &&
                           driver->mem_get_allocation_properties_from_handle(&prop, handle) == CUDA_SUCCESS &&
                           (prop.requestedHandleTypes & CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR) != 0;
    (void)driver->mem_release(handle);
    if (!shareable) { return CUDA_ERROR_NOT_SUPPORTED; }
    CUdeviceptr mapping = 0;
    std::size_t mapped  = 0;
    if (driver->pointer_get_attribute(&mapping, CU_POINTER_ATTRIBUTE_MAPPING_BASE_ADDR, address) != CUDA_SUCCESS ||
        driver->pointer_get_attribute(&mapped, CU_POINTER_ATTRIBUTE_MAPPING_SIZE, address) != CUDA_SUCCESS ||
        mapped == 0) {
      return CUDA_ERROR_NOT_SUPPORTED;
    }
    places.push_back({static_cast<std::int64_t>(mapping) - static_cast<std::int64_t>(start), mapped, false, {}});
    address = static_cast<std::uintptr_t>(mapping) + mapped;
  }
  return CUDA_SUCCESS;
}

CUresult ipc_exports::export_block(std::uintptr_t start, std::size_t size, int device, CUipcMemHandle* out)
{
  if (out == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  std::lock_guard lock{mutex_};
  auto const known =
    std::find_if(exports_.begin(), exports_.end(), [start](exported const& e) { return e.start == start; });
  if (known != exports_.end() && known->size == size && known->device == device) {
    *out = ipc::encode({static_cast<std::uint32_t>(::getpid()), device, known->id, known->token, size});
    return CUDA_SUCCESS;
  }
  std::vector<place> places;
  {
    scoped_device_context const on_device{device};
    if (auto const found = find_places(start, size, places); found != CUDA_SUCCESS) {
      explain_once(
        "the memory under the block cannot be shared (its pool's physical memory was made without a "
        "shareable handle type). Run programs that export memory with a stack without a pool, or with "
        "RMM_SHIM_ENABLED=false.");
      return found;
    }
  }
  if (!serving()) {
    explain_once(fmt::format("the socket that serves exports could not be made ({})", std::strerror(errno)));
    return CUDA_ERROR_NOT_SUPPORTED;
  }
  if (known != exports_.end()) { exports_.erase(known); }  // a new block at that address
  exports_.push_back({next_id_++, random_token(), start, size, device, std::move(places), 0, false, {}});
  count_.store(exports_.size(), std::memory_order_release);
  auto const& e = exports_.back();
  *out          = ipc::encode({static_cast<std::uint32_t>(::getpid()), device, e.id, e.token, size});
  return CUDA_SUCCESS;
}

bool ipc_exports::hold_freed(std::uintptr_t start, kept_block const& block) noexcept
{
  std::lock_guard lock{mutex_};
  auto const found =
    std::find_if(exports_.begin(), exports_.end(), [start](exported const& e) { return e.start == start; });
  if (found == exports_.end()) { return false; }
  if (found->opened > 0) {
    found->freed = true;
    found->block = block;
    return true;
  }
  exports_.erase(found);  // its handle opens nothing from now on, as a freed allocation's
  count_.store(exports_.size(), std::memory_order_release);
  return false;
}

void ipc_exports::forget_device(int device) noexcept
{
  std::lock_guard lock{mutex_};
  std::erase_if(exports_, [device](exported const& e) { return e.device == device; });
  count_.store(exports_.size(), std::memory_order_release);
}

bool ipc_exports::serving()
{
  if (serving_) { return true; }
  int const listener = ipc::listen_here();
  if (listener < 0) { return false; }
  try {
    std::thread{[this, listener] { serve(listener); }}.detach();
  } catch (...) {
    ::close(listener);
    errno = EAGAIN;
    return false;
  }
  serving_ = true;
  return true;
}

void ipc_exports::serve(int listener) noexcept
{
  for (;;) {
    int const connection = ::accept4(listener, nullptr, nullptr, SOCK_CLOEXEC);
    if (connection < 0) {
      if (errno == EINTR || errno == ECONNABORTED) { continue; }
      return;
    }
    ipc::limit_connection_waits(connection);
    answer(connection);
    ::close(connection);
  }
}

void ipc_exports::answer(int connection) noexcept
{
  ipc::request request{};
  if (!ipc::receive_message(connection, &request, sizeof request, nullptr) ||
      std::memcmp(request.magic, ipc::request_magic, sizeof request.magic) != 0) {
    return;
  }
  ipc::reply reply{};
  std::memcpy(reply.magic, ipc::reply_magic, sizeof reply.magic);
  std::unique_lock lock{mutex_};
  auto const found = std::find_if(exports_.begin(), exports_.end(),
                                  [&](exported const& e) { return e.id == request.id && e.token == request.token; });
  if (found == exports_.end() || !ipc::peer_allowed(connection) ||
      (found->freed && request.kind == ipc::request_kind::open)) {
    reply.status = CUDA_ERROR_INVALID_VALUE;  // as for the handle of memory that was freed
    lock.unlock();
    (void)ipc::send_message(connection, &reply, sizeof reply, -1);
    return;
  }
  if (request.kind == ipc::request_kind::close) {
    found->opened = std::max(0, found->opened - 1);
    std::optional<kept_block> back;
    if (found->opened == 0 && found->freed) {
      back = found->block;
      exports_.erase(found);
      count_.store(exports_.size(), std::memory_order_release);
    }
    lock.unlock();
    reply.status = CUDA_SUCCESS;
    (void)ipc::send_message(connection, &reply, sizeof reply, -1);
    if (back) { give_back_(*back); }
    return;
  }
  auto const e = *found;  // sent without the lock; the block stays while it is held open
  ++found->opened;
  lock.unlock();
  reply.status = CUDA_SUCCESS;
  reply.pieces = static_cast<std::uint32_t>(e.places.size());
  if (ipc::send_message(connection, &reply, sizeof reply, -1) && send_places(connection, e)) { return; }
  // The importer did not get it: it is not open there.
  lock.lock();
  if (auto const again =
        std::find_if(exports_.begin(), exports_.end(), [&](exported const& x) { return x.id == e.id; });
      again != exports_.end()) {
    again->opened = std::max(0, again->opened - 1);
  }
}

bool ipc_exports::send_places(int connection, exported const& e) noexcept
{
  auto const* driver = real();
  scoped_device_context const on_device{e.device};
  for (auto const& p : e.places) {
    ipc::piece piece{p.offset, p.size, p.legacy ? 1U : 0U, 0, p.legacy_handle};
    int fd = -1;
    if (!p.legacy) {
      CUmemGenericAllocationHandle handle{};
      auto const mapping = static_cast<std::int64_t>(e.start) + p.offset;
      if (driver->mem_retain_allocation_handle(&handle, reinterpret_cast<void*>(mapping)) == CUDA_SUCCESS) {
        (void)driver->mem_export_to_shareable_handle(&fd, handle, CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR, 0);
        (void)driver->mem_release(handle);
      }
      if (fd < 0) { piece.size = 0; }  // the importer refuses the whole block
    }
    bool const sent = ipc::send_message(connection, &piece, sizeof piece, fd);
    if (fd >= 0) { ::close(fd); }  // the importer has its own copy now
    if (!sent) { return false; }
  }
  return true;
}

}  // namespace rmm::shim
