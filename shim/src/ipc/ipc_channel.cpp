// SPDX-License-Identifier: Apache-2.0
#include "ipc/ipc_channel.hpp"

#include <fmt/format.h>

#include <fcntl.h>
#include <sys/random.h>
#include <sys/socket.h>
#include <sys/time.h>
#include <sys/un.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>

namespace rmm::shim::ipc {

namespace {

// The handle's first bytes; the rest past the fields is filled with a pattern no driver handle
// has, so that the driver refuses a shim handle given to a process without the shim. The last
// byte is the layout's version: a handle of another version is not one of ours.
constexpr char handle_magic[8] = {'r', 'm', 'm', 's', 'h', 'i', 'm', '\x02'};
constexpr unsigned char filler = 0xA5;

struct handle_layout {
  char magic[8];
  handle_fields fields;
};
static_assert(sizeof(handle_layout) <= sizeof(CUipcMemHandle::reserved));

/// Room for this many descriptors in a received message's control data: more than any message
/// may carry, so that a peer sending several is seen (and each of them closed).
constexpr std::size_t descriptors_seen = 16;

sockaddr_un address_of(pid_t pid, std::uint64_t channel, socklen_t& length)
{
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  auto const name    = socket_name(pid, channel);
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

std::optional<ucred> credentials_of(int connection) noexcept
{
  ucred peer{};
  socklen_t length = sizeof peer;
  if (::getsockopt(connection, SOL_SOCKET, SO_PEERCRED, &peer, &length) != 0) { return std::nullopt; }
  return peer;
}

bool trusted_user(uid_t uid) noexcept { return uid == ::geteuid() || uid == 0; }

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

std::optional<request_kind> kind_of(std::uint32_t raw) noexcept
{
  switch (raw) {
    case static_cast<std::uint32_t>(request_kind::open): return request_kind::open;
    case static_cast<std::uint32_t>(request_kind::close): return request_kind::close;
    default: return std::nullopt;
  }
}

std::uint64_t max_pieces(std::uint64_t size, std::uint64_t granularity) noexcept
{
  granularity = std::max<std::uint64_t>(granularity, 1);
  return size / granularity + 2;
}

std::string socket_name(pid_t pid, std::uint64_t channel)
{
  return fmt::format("rmm-shim-ipc/{}/{:016x}", pid, channel);
}

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
  alignas(cmsghdr) char control[CMSG_SPACE(descriptors_seen * sizeof(int))]{};
  message.msg_control    = control;
  message.msg_controllen = sizeof control;
  ssize_t received       = 0;
  do {
    received = ::recvmsg(socket, &message, MSG_WAITALL | MSG_CMSG_CLOEXEC);
  } while (received < 0 && errno == EINTR);
  // Every descriptor the kernel installed is either handed to the caller or closed here.
  std::size_t passed = 0;
  int kept           = -1;
  for (auto* header = CMSG_FIRSTHDR(&message); received >= 0 && header != nullptr;
       header       = CMSG_NXTHDR(&message, header)) {
    if (header->cmsg_level != SOL_SOCKET || header->cmsg_type != SCM_RIGHTS) { continue; }
    auto const count = (header->cmsg_len - CMSG_LEN(0)) / sizeof(int);
    for (std::size_t i = 0; i < count; ++i) {
      int descriptor = -1;
      std::memcpy(&descriptor, CMSG_DATA(header) + i * sizeof(int), sizeof descriptor);
      if (++passed == 1 && fd != nullptr) {
        kept = descriptor;
      } else {
        ::close(descriptor);
      }
    }
  }
  bool const too_many = passed > (fd != nullptr ? 1U : 0U) || (message.msg_flags & MSG_CTRUNC) != 0;
  if (received == static_cast<ssize_t>(bytes) && !too_many) {
    if (fd != nullptr) { *fd = kept; }
    return true;
  }
  if (kept >= 0) { ::close(kept); }
  if (received >= 0) { errno = received == 0 ? ECONNRESET : EPROTO; }
  return false;
}

int connect_to_exporter(handle_fields const& fields, std::string& why) noexcept
{
  int const fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0);
  if (fd < 0) { return -1; }
  limit_waits(fd);
  socklen_t length   = 0;
  auto const address = address_of(static_cast<pid_t>(fields.pid), fields.channel, length);
  auto const fail    = [fd](int error) {
    ::close(fd);
    errno = error;
    return -1;
  };
  if (::connect(fd, reinterpret_cast<sockaddr const*>(&address), length) != 0) { return fail(errno); }
  // Who listens is checked before the token leaves this process: after the exporter exited,
  // anyone could have bound its name.
  auto const peer = credentials_of(fd);
  if (!peer) { return fail(errno); }
  if (static_cast<std::uint32_t>(peer->pid) != fields.pid || !trusted_user(peer->uid)) {
    try {
      why = fmt::format(
        "its socket is held by process {} of user {}, not by process {} of this user or root: the exporter "
        "has exited and another process took its name",
        peer->pid, peer->uid, fields.pid);
    } catch (...) {
    }
    return fail(EPERM);
  }
  return fd;
}

int listen_here(std::uint64_t& channel) noexcept
{
  for (int attempt = 0; attempt < 4; ++attempt) {
    int const fd = ::socket(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC | SOCK_NONBLOCK, 0);
    if (fd < 0) { return -1; }
    channel            = random_u64();
    socklen_t length   = 0;
    auto const address = address_of(::getpid(), channel, length);
    if (::bind(fd, reinterpret_cast<sockaddr const*>(&address), length) == 0 && ::listen(fd, 128) == 0) { return fd; }
    auto const error = errno;
    ::close(fd);
    errno = error;
    if (error != EADDRINUSE) { return -1; }  // taken by chance: another name
  }
  return -1;
}

bool peer_allowed(int connection, pid_t& pid) noexcept
{
  auto const peer = credentials_of(connection);
  if (!peer) { return false; }
  pid = peer->pid;
  return trusted_user(peer->uid);
}

std::uint64_t random_u64() noexcept
{
  std::uint64_t value = 0;
  if (::getrandom(&value, sizeof value, 0) == static_cast<ssize_t>(sizeof value)) { return value; }
  // A kernel older than getrandom (3.17): its device.
  if (int const fd = ::open("/dev/urandom", O_RDONLY | O_CLOEXEC); fd >= 0) {
    auto const n = ::read(fd, &value, sizeof value);
    ::close(fd);
    if (n == static_cast<ssize_t>(sizeof value)) { return value; }
  }
  auto const now = static_cast<std::uint64_t>(std::chrono::steady_clock::now().time_since_epoch().count());
  return (now ^ (static_cast<std::uint64_t>(::getpid()) << 32) ^ reinterpret_cast<std::uintptr_t>(&value)) *
         0x9E3779B97F4A7C15ULL;
}

}  // namespace rmm::shim::ipc
