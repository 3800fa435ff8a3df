// SPDX-License-Identifier: Apache-2.0
#include "ipc/ipc_exports.hpp"

#include "driver/contexts.hpp"
#include "ipc/ipc_channel.hpp"
#include "driver/real_driver.hpp"

#include <fmt/format.h>

#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <mutex>

namespace rmm::shim {

namespace {

/// Sends a reply without pieces.
void send_status(int connection, CUresult status) noexcept
{
  ipc::reply reply{};
  std::memcpy(reply.magic, ipc::reply_magic, sizeof reply.magic);
  reply.status = status;
  (void)ipc::send_message(connection, &reply, sizeof reply, -1);
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

CUresult ipc_exports::export_block(std::uintptr_t start,
                                   std::size_t size,
                                   int device,
                                   give_back_fn give_back,
                                   CUipcMemHandle* out)
{
  if (out == nullptr) { return CUDA_ERROR_INVALID_VALUE; }
  give_back_.store(give_back, std::memory_order_release);
  std::lock_guard lock{mutex_};
  auto const known =
    std::find_if(exports_.begin(), exports_.end(), [start](exported const& e) { return e.start == start; });
  if (known != exports_.end() && known->size == size && known->device == device) {
    *out = handle_of(*known);
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
  exports_.push_back({next_id_++, ipc::random_u64(), start, size, device, std::move(places), {}, false, {}});
  count_changed();
  *out = handle_of(exports_.back());
  return CUDA_SUCCESS;
}

bool ipc_exports::hold_freed(std::uintptr_t start, kept_block const& block) noexcept
{
  std::lock_guard lock{mutex_};
  auto const found =
    std::find_if(exports_.begin(), exports_.end(), [start](exported const& e) { return e.start == start; });
  if (found == exports_.end()) { return false; }
  if (!found->openers.empty()) {
    found->freed = true;
    found->block = block;
    return true;
  }
  exports_.erase(found);  // its handle opens nothing from now on, as a freed allocation's
  count_changed();
  return false;
}

void ipc_exports::forget_device(int device) noexcept
{
  std::lock_guard lock{mutex_};
  std::erase_if(exports_, [device](exported const& e) { return e.device == device; });
  count_changed();
}

CUipcMemHandle ipc_exports::handle_of(exported const& e) const noexcept
{
  return ipc::encode({static_cast<std::uint32_t>(::getpid()), e.device, e.id, e.token, e.size, channel_});
}

bool ipc_exports::serving()
{
  if (serving_) { return true; }
  std::uint64_t channel = 0;
  int const listener    = ipc::listen_here(channel);
  if (listener < 0) { return false; }
  if (!ipc_server::start(listener, *this)) {
    auto const error = errno;
    ::close(listener);
    errno = error;
    return false;
  }
  channel_ = channel;
  serving_ = true;
  return true;
}

bool ipc_exports::answer(int connection, ipc::request const& request, pid_t importer) noexcept
{
  auto const kind = ipc::kind_of(request.kind);
  std::unique_lock lock{mutex_};
  auto const found = std::find_if(exports_.begin(), exports_.end(),
                                  [&](exported const& e) { return e.id == request.id && e.token == request.token; });
  bool const known = found != exports_.end();
  lock.unlock();
  if (std::memcmp(request.magic, ipc::request_magic, sizeof request.magic) != 0 || !kind || !known) {
    send_status(connection, CUDA_ERROR_INVALID_VALUE);  // as for the handle of memory that was freed
    return false;
  }
  if (*kind == ipc::request_kind::close) {
    answer_close(connection, request.id, importer);
    return false;
  }
  return answer_open(connection, request.id, importer);
}

bool ipc_exports::answer_open(int connection, std::uint64_t id, pid_t importer) noexcept
{
  std::unique_lock lock{mutex_};
  auto const found = std::find_if(exports_.begin(), exports_.end(), [id](exported const& e) { return e.id == id; });
  if (found == exports_.end() || found->freed) {
    lock.unlock();
    send_status(connection, CUDA_ERROR_INVALID_VALUE);
    return false;
  }
  std::optional<exported> e;
  try {
    e = *found;  // sent without the lock; the block stays while it is held open
    auto const held =
      std::find_if(found->openers.begin(), found->openers.end(), [&](auto const& o) { return o.pid == importer; });
    if (held == found->openers.end()) {
      found->openers.push_back({importer, 1});
    } else {
      ++held->opens;
    }
  } catch (...) {
    lock.unlock();
    send_status(connection, CUDA_ERROR_OUT_OF_MEMORY);
    return false;
  }
  lock.unlock();
  ipc::reply reply{};
  std::memcpy(reply.magic, ipc::reply_magic, sizeof reply.magic);
  reply.status = CUDA_SUCCESS;
  reply.pieces = static_cast<std::uint32_t>(e->places.size());
  if (ipc::send_message(connection, &reply, sizeof reply, -1) && send_places(connection, *e)) { return true; }
  // The importer did not get it: it is not open there.
  lock.lock();
  if (auto const again = std::find_if(exports_.begin(), exports_.end(), [id](exported const& x) { return x.id == id; });
      again != exports_.end()) {
    auto const back = drop_open(again, importer, false);
    lock.unlock();
    if (back) { hand_back(*back); }
  }
  return false;
}

void ipc_exports::answer_close(int connection, std::uint64_t id, pid_t importer) noexcept
{
  std::unique_lock lock{mutex_};
  auto const found = std::find_if(exports_.begin(), exports_.end(), [id](exported const& e) { return e.id == id; });
  bool const open_there = found != exports_.end() && std::any_of(found->openers.begin(), found->openers.end(),
                                                                 [&](auto const& o) { return o.pid == importer; });
  if (!open_there) {
    lock.unlock();
    send_status(connection, CUDA_ERROR_INVALID_VALUE);  // a process that never opened it
    return;
  }
  auto const back = drop_open(found, importer, false);
  lock.unlock();
  send_status(connection, CUDA_SUCCESS);
  if (back) { hand_back(*back); }
}

void ipc_exports::importer_exited(pid_t importer) noexcept
{
  std::vector<kept_block> back;
  {
    std::lock_guard lock{mutex_};
    try {
      back.reserve(exports_.size());
    } catch (...) {  // no memory for the list: its opens are dropped when memory allows
      return;
    }
    for (std::size_t i = 0; i < exports_.size();) {
      auto const before = exports_.size();
      if (auto const block = drop_open(exports_.begin() + static_cast<std::ptrdiff_t>(i), importer, true)) {
        back.push_back(*block);
      }
      if (exports_.size() == before) { ++i; }  // else that export is gone and `i` names the next
    }
  }
  for (auto const& block : back) { hand_back(block); }
}

std::optional<kept_block> ipc_exports::drop_open(std::vector<exported>::iterator e, pid_t importer, bool all)
{
  auto const held =
    std::find_if(e->openers.begin(), e->openers.end(), [&](auto const& o) { return o.pid == importer; });
  if (held == e->openers.end()) { return std::nullopt; }
  if (all || --held->opens == 0) { e->openers.erase(held); }
  if (!e->openers.empty() || !e->freed) { return std::nullopt; }
  auto const block = e->block;
  exports_.erase(e);
  count_changed();
  return block;
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
