// SPDX-License-Identifier: Apache-2.0
#include "ipc/ipc_imports.hpp"

#include "driver/real_driver.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace rmm::shim {

namespace detail {

/// Physical allocations imported from the exporter, released with their owner (a mapping keeps
/// the memory of each it maps).
class imported_handles {
 public:
  imported_handles()                                   = default;
  imported_handles(imported_handles const&)            = delete;
  imported_handles& operator=(imported_handles const&) = delete;
  ~imported_handles()
  {
    for (auto const h : handles_) { (void)real()->mem_release(h); }
  }
  /// Adds `h`, of `bytes`; releases it when that fails (no memory for the list).
  void add(CUmemGenericAllocationHandle h, std::uint64_t bytes)
  {
    try {
      sizes_.push_back(bytes);
      handles_.push_back(h);
    } catch (...) {
      (void)real()->mem_release(h);
      throw;
    }
  }
  [[nodiscard]] std::size_t size() const noexcept { return handles_.size(); }
  [[nodiscard]] CUmemGenericAllocationHandle operator[](std::size_t i) const noexcept { return handles_[i]; }
  [[nodiscard]] std::uint64_t size_of(std::size_t i) const noexcept { return sizes_[i]; }

 private:
  std::vector<CUmemGenericAllocationHandle> handles_;
  std::vector<std::uint64_t> sizes_;
};

}  // namespace detail

namespace {

/// The smallest physical allocation an exporter's piece can be (the least granularity of any
/// device), which bounds how many pieces a block can have.
constexpr std::uint64_t least_piece = std::uint64_t{64} << 10;
/// Above any device's memory: a size past it is not an exporter's answer.
constexpr std::uint64_t most_bytes = std::uint64_t{1} << 48;

void explain(std::uint32_t pid, std::string const& why)
{
  fmt::print(stderr, "rmm shim: cannot open the CUDA IPC handle of process {}: {}\n", pid, why);
}

/// A file descriptor, closed with its owner.
class descriptor {
 public:
  descriptor()                             = default;
  descriptor(descriptor const&)            = delete;
  descriptor& operator=(descriptor const&) = delete;
  ~descriptor()
  {
    if (fd_ >= 0) { ::close(fd_); }
  }
  [[nodiscard]] int* out() noexcept { return &fd_; }
  [[nodiscard]] int get() const noexcept { return fd_; }

 private:
  int fd_{-1};
};

/// Whether a piece's offset from the block is within any device's size.
bool offset_believable(ipc::piece const& p)
{
  return p.offset >= -static_cast<std::int64_t>(most_bytes) && p.offset <= static_cast<std::int64_t>(most_bytes);
}

/// Whether the answer is a block of a cudaMalloc allocation: one piece, the driver's own handle of
/// it and no descriptor, covering the block from at or before its start.
bool is_legacy_answer(ipc::piece const& p, std::uint32_t pieces, bool has_descriptor, std::uint64_t size)
{
  return p.legacy == 1 && pieces == 1 && !has_descriptor && p.offset <= 0 &&
         p.size >= size + static_cast<std::uint64_t>(-p.offset) && p.size <= most_bytes;
}

/// Whether piece `i`, a shareable allocation, continues those before it (`span` bytes from the
/// first's start); the first must hold the block's start.
bool continues(ipc::piece const& p, bool has_descriptor, std::uint32_t i, ipc::piece const& first, std::uint64_t span)
{
  if (p.legacy != 0 || !has_descriptor || p.size > most_bytes) { return false; }
  if (i == 0) { return p.offset <= 0 && static_cast<std::uint64_t>(-p.offset) < p.size; }
  return p.offset == first.offset + static_cast<std::int64_t>(span);
}

/// Asks the exporter named by `fields` to do `kind` to its export; the connection, or -1 (errno
/// set, `why` filled where there is more to say).
int ask(ipc::request_kind kind, ipc::handle_fields const& fields, ipc::reply& reply, std::string& why)
{
  int const connection = ipc::connect_to_exporter(fields, why);
  if (connection < 0) { return -1; }
  ipc::request request{};
  std::memcpy(request.magic, ipc::request_magic, sizeof request.magic);
  request.kind  = static_cast<std::uint32_t>(kind);
  request.id    = fields.id;
  request.token = fields.token;
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
void tell_closed(ipc::handle_fields const& fields) noexcept
{
  try {
    ipc::reply reply{};
    std::string why;
    if (int const connection = ask(ipc::request_kind::close, fields, reply, why); connection >= 0) {
      ::close(connection);
    }
  } catch (...) {  // no memory for a message: the exporter learns of it when this process exits
  }
}

/// Whether the driver has every call that mapping an exporter's physical memory takes.
bool maps_physical_memory(real_driver const& driver) noexcept
{
  return driver.mem_import_from_shareable_handle != nullptr && driver.mem_address_reserve != nullptr &&
         driver.mem_map != nullptr && driver.mem_set_access != nullptr && driver.mem_unmap != nullptr &&
         driver.mem_address_free != nullptr && driver.mem_release != nullptr;
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
    return o.exporter.pid == fields->pid && o.exporter.id == fields->id && o.exporter.token == fields->token;
  });
  if (known != opened_.end()) {
    ++known->references;
    *out = known->ptr;
    return CUDA_SUCCESS;
  }
  CUdevice device{};
  if (real()->ctx_get_device(&device) != CUDA_SUCCESS) { return CUDA_ERROR_INVALID_CONTEXT; }

  ipc::reply reply{};
  std::string why;
  int const connection = ask(ipc::request_kind::open, *fields, reply, why);
  if (connection < 0) {
    explain(fields->pid, !why.empty() ? why
                                      : fmt::format("{} (it must run under the shim, on this machine, as this user, "
                                                    "and still hold the memory)",
                                                    std::strerror(errno)));
    return CUDA_ERROR_INVALID_VALUE;
  }
  if (reply.status != CUDA_SUCCESS) {
    ::close(connection);
    if (reply.status == CUDA_ERROR_NOT_PERMITTED) { explain(fields->pid, "it runs as another user, who refused"); }
    return static_cast<CUresult>(reply.status);
  }
  opened record{*fields, 0, 0, 0, 0, 1};
  std::optional<mapping_failure> failure;
  try {
    failure = map_answer(connection, reply, device, flags, record);
  } catch (...) {
    failure = mapping_failure{CUDA_ERROR_OUT_OF_MEMORY, "no host memory for its answer"};
  }
  ::close(connection);
  if (failure) {
    if (!failure->answer_broken) { tell_closed(*fields); }
    if (!failure->why.empty()) { explain(fields->pid, failure->why); }
    return failure->result;
  }
  try {
    opened_.push_back(record);
  } catch (...) {
    auto const* driver = real();
    if (record.mapped != 0) {
      (void)driver->mem_unmap(record.mapped, record.span);
      (void)driver->mem_address_free(record.mapped, record.span);
    } else if (driver->ipc_close_mem_handle != nullptr) {
      (void)driver->ipc_close_mem_handle(record.legacy);
    }
    tell_closed(*fields);
    return CUDA_ERROR_OUT_OF_MEMORY;
  }
  *out = record.ptr;
  return CUDA_SUCCESS;
}

std::optional<ipc_imports::mapping_failure> ipc_imports::open_legacy(ipc::piece const& piece,
                                                                     unsigned int flags,
                                                                     opened& record)
{
  auto const* driver = real();
  if (driver->ipc_open_mem_handle == nullptr) {
    return mapping_failure{CUDA_ERROR_NOT_SUPPORTED, "this driver has no CUDA IPC"};
  }
  CUdeviceptr base = 0;
  if (auto const r = driver->ipc_open_mem_handle(&base, piece.legacy_handle, flags); r != CUDA_SUCCESS) {
    return mapping_failure{r, {}};
  }
  record.legacy = base;
  record.ptr    = static_cast<CUdeviceptr>(static_cast<std::int64_t>(base) - piece.offset);
  return std::nullopt;
}

std::optional<ipc_imports::mapping_failure> ipc_imports::map_imported(detail::imported_handles const& handles,
                                                                      std::uint64_t span,
                                                                      std::int64_t first_offset,
                                                                      CUdevice device,
                                                                      opened& record)
{
  auto const* driver = real();
  CUdeviceptr base   = 0;
  if (auto const r = driver->mem_address_reserve(&base, span, 0, 0, 0); r != CUDA_SUCCESS) {
    return mapping_failure{r, "no addresses left for it here"};
  }
  std::size_t mapped = 0;
  CUresult failure   = CUDA_SUCCESS;
  for (std::size_t i = 0; i < handles.size() && failure == CUDA_SUCCESS; ++i) {
    failure = driver->mem_map(base + mapped, handles.size_of(i), 0, handles[i], 0);
    if (failure == CUDA_SUCCESS) { mapped += handles.size_of(i); }
  }
  CUmemAccessDesc access{};
  access.location.type = CU_MEM_LOCATION_TYPE_DEVICE;
  access.location.id   = device;
  access.flags         = CU_MEM_ACCESS_FLAGS_PROT_READWRITE;
  if (failure == CUDA_SUCCESS) { failure = driver->mem_set_access(base, span, &access, 1); }
  if (failure != CUDA_SUCCESS) {
    if (mapped > 0) { (void)driver->mem_unmap(base, mapped); }
    (void)driver->mem_address_free(base, span);
    return mapping_failure{failure, fmt::format("mapping its memory failed ({})", driver_error_name(failure))};
  }
  record.mapped = base;
  record.span   = span;
  record.ptr    = base + static_cast<CUdeviceptr>(-first_offset);
  return std::nullopt;
}

std::optional<ipc_imports::mapping_failure> ipc_imports::map_answer(int connection,
                                                                    ipc::reply const& reply,
                                                                    CUdevice device,
                                                                    unsigned int flags,
                                                                    opened& record)
{
  auto const* driver = real();
  auto const size    = record.exporter.size;
  auto const refuse  = [](CUresult result, std::string why) { return mapping_failure{result, std::move(why)}; };
  // An answer no exporter gives: whoever sent it is told nothing more (it may not read).
  auto const broken = [](std::string why) { return mapping_failure{CUDA_ERROR_INVALID_VALUE, std::move(why), true}; };
  // Every count, offset and size is checked before it is believed: a process other than the
  // exporter may answer (one that took its socket's name after it exited).
  auto const most_pieces = std::min<std::uint64_t>(ipc::max_pieces(size, least_piece), 1U << 20);
  if (reply.pieces == 0 || reply.pieces > most_pieces || size > most_bytes) {
    return broken(fmt::format("its answer names {} pieces of memory for a block of {} bytes", reply.pieces, size));
  }
  detail::imported_handles handles;
  ipc::piece first{};
  std::uint64_t span = 0;  // of the pieces received so far, from the first's start
  for (std::uint32_t i = 0; i < reply.pieces; ++i) {
    ipc::piece p{};
    descriptor fd;
    if (!ipc::receive_message(connection, &p, sizeof p, fd.out())) {
      return refuse(CUDA_ERROR_INVALID_VALUE, fmt::format("its answer was incomplete ({})", std::strerror(errno)));
    }
    if (!offset_believable(p)) { return broken("its memory lies farther from the block than any device's size"); }
    if (i == 0) { first = p; }
    if (is_legacy_answer(p, reply.pieces, fd.get() >= 0, size)) {
      return open_legacy(p, flags, record);  // a block of a cudaMalloc allocation, and its offset
    }
    if (p.legacy == 0 && p.size == 0) {
      return refuse(CUDA_ERROR_INVALID_VALUE, "the exporter could not share the memory under the block");
    }
    if (!continues(p, fd.get() >= 0, i, first, span)) {
      return broken("its memory is not one range of shareable allocations");
    }
    if (!maps_physical_memory(*driver)) {
      return refuse(CUDA_ERROR_NOT_SUPPORTED,
                    "this driver lacks the calls that map another process's memory (cuMemImportFromShareableHandle, "
                    "cuMemMap, cuMemSetAccess)");
    }
    CUmemGenericAllocationHandle h{};
    if (auto const r = driver->mem_import_from_shareable_handle(
          &h, reinterpret_cast<void*>(static_cast<std::uintptr_t>(fd.get())), CU_MEM_HANDLE_TYPE_POSIX_FILE_DESCRIPTOR);
        r != CUDA_SUCCESS) {
      return refuse(r, fmt::format("importing its memory failed ({})", driver_error_name(r)));
    }
    handles.add(h, p.size);
    span += p.size;
    if (span > most_bytes) { return broken("its memory is larger than any device's"); }
  }
  if (static_cast<std::uint64_t>(-first.offset) + size > span) { return broken("its memory does not cover the block"); }
  return map_imported(handles, span, first.offset, device, record);
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
  tell_closed(record.exporter);
  return result;
}

}  // namespace rmm::shim
