// SPDX-License-Identifier: Apache-2.0
#include "ipc_channel.hpp"

#include <fmt/format.h>

#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

namespace rmm::shim::ipc {

namespace {

// The handle's first bytes; the rest past the fields is filled with a pattern no driver handle
// has, so that the driver refuses a shim handle given to a process without the shim.
constexpr char handle_magic[8] = {'r', 'm', 'm', 's', 'h', 'i', 'm', '\x01'};
constexpr unsigned char filler = 0xA5;

struct handle_layout {
  char magic[8];
  handle_fields fields;
};
static_assert(sizeof(handle_layout) <= sizeof(CUipcMemHandle::reserved));

sockaddr_un address_of(pid_t pid, socklen_t& length)
{
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  auto const name    = socket_name(pid);
  // Abstract: the first byte is NUL, and the name is what follows, without a terminator.
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  return address;
}

/// A peer that stops answering (hung, or a stray client that connects and sends nothing) holds
/// up a call for this long at most, never for good.
void limit_waits(int fd) noexcept
{
  timeval const limit{.tv_sec = 30, .tv_usec = 0};
  (void)::setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  (void)::setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &limit, sizeof limit);
}

}  // namespace

CUipcMemHandle encode(handle_fields const& fields) noexcept
{
  CUipcMemHandle handle{};
  std::memset(handle.reserved, filler, sizeof handle.reserved);
  handle_layout layout{};
  std::memcpy(layout.magic, handle_magic, sizeof handle_magic);
  layout.fields = fields;
  std::memcpy(handle.reserved, &layout, sizeof layout);
  return handle;
}

std::optional<handle_fields> decode(CUipcMemHandle const& handle) noexcept
{
  handle_layout layout{};
  std::memcpy(&layout, handle.reserved, sizeof layout);
  if (std::memcmp(layout.magic, handle_magic, sizeof handle_magic) != 0) { return std::nullopt; }
  return layout.fields;
}

std::string socket_name(pid_t pid) { return fmt::format("rmm-shim-ipc/{}", pid); }

bool send_message(int socket, void const* data, std::size_t bytes, int fd) noexcept
{
  iovec part{const_cast<void*>(data), bytes};
  msghdr message{};
  message.msg_iov    = &part;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))]{};
  if (fd >= 0) {
    message.msg_control    = control;
    message.msg_controllen = sizeof control;
    auto* header           = CMSG_FIRSTHDR(&message);
    header->cmsg_level     = SOL_SOCKET;
    header->cmsg_type      = SCM_RIGHTS;
    header->cmsg_len       = CMSG_LEN(sizeof(int));
    std::memcpy(CMSG_DATA(header), &fd, sizeof fd);
  }
  for (;;) {
    auto const sent = ::sendmsg(socket, &message, MSG_NOSIGNAL);
    if (sent == static_cast<ssize_t>(bytes)) { return true; }
    if (sent < 0 && errno == EINTR) { continue; }
    if (sent >= 0) { errno = EPROTO; }  // a stream socket's short write: not for messages this small
    return false;
  }
}

bool receive_message(int socket, void* data, std::size_t bytes, int* fd) noexcept
{
  if (fd != nullptr) { *fd = -1; }
  iovec part{data, bytes};
  msghdr message{};
  message.msg_iov    = &part;
  message.msg_iovlen = 1;
  alignas(cmsghdr) char control[CMSG_SPACE(sizeof(int))]{};
  message.msg_control    = control;
  message.msg_controllen = sizeof control;
  ssize_t received       = 0;
  do {
    received = ::recvmsg(socket, &message, MSG_WAITALL | MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  for (auto* header = CMSG_FIRSTHDR(&message); header != nullptr; header = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level == SOL_SOCKET && header->cmsg_type == SCM_RIGHTS) {
      int passed = -1;
      std::memcpy(&passed, CMSG_DATA(header), sizeof passed);
      if (fd != nullptr) {
        *fd = passed;
      } else {
        ::close(passed);  // not asked for: not kept open
      }
    }
  }
  if (received == static_cast<ssize_t>(bytes)) { return true; }
  if (received >= 0) { errno = received == 0 ? ECONNRESET : EPROTO; }
  return false;
}

int connect_to(pid_t pid) noexcept
{
  int const fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) { return -1; }
  limit_waits(fd);
  socklen_t length   = 0;
  auto const address = address_of(pid, length);
  if (::connect(fd, reinterpret_cast<sockaddr const*>(&address), length) != 0) {
    auto const error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

int listen_here() noexcept
{
  int const fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) { return -1; }
  socklen_t length   = 0;
  auto const address = address_of(::getpid(), length);
  if (::bind(fd, reinterpret_cast<sockaddr const*>(&address), length) != 0 || ::listen(fd, 64) != 0) {
    auto const error = errno;
    ::close(fd);
    errno = error;
    return -1;
  }
  return fd;
}

void limit_connection_waits(int connection) noexcept { limit_waits(connection); }

bool peer_allowed(int connection) noexcept
{
  ucred peer{};
  socklen_t length = sizeof peer;
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) { return false; }
  return peer.uid == ::geteuid() || peer.uid == 0;
}

}  // namespace rmm::shim::ipc
