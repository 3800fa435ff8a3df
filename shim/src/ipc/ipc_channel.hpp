// SPDX-License-Identifier: Apache-2.0
#pragma once

// CUDA IPC of the shim's blocks. A block of a pool is part of a larger driver allocation, so the
// driver's own IPC handle would share the wrong bytes (the whole allocation, from its start). The
// shim hands out a handle of its own instead, which names the exporting process, its export, a
// random token and the random name of the exporter's socket; a process that opens it under the
// shim asks the exporter over that Unix socket for the memory under the block (file descriptors of
// its physical allocations, passed with SCM_RIGHTS, or the driver's handle of the allocation and
// the block's offset in it) and maps exactly the block. A process without the shim cannot open
// such a handle: the driver refuses it (it is not one of its own), so nobody ever sees the wrong
// bytes.
//
// Against other users of the machine: the socket's name is random (nobody can take it before the
// exporter, nor guess it), each side checks the other's credentials before it reads a byte (the
// same user, or root), and every count read from the other side is bounded.
//
// This file is the wire: the handle's layout, the messages, and the socket calls.

#include <cuda.h>

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <sys/types.h>

namespace rmm::shim::ipc {

/// What a shim handle says (the 64 bytes of a CUipcMemHandle).
struct handle_fields {
  std::uint32_t pid;      ///< the exporting process
  std::int32_t device;    ///< the block's device there
  std::uint64_t id;       ///< the export, in that process
  std::uint64_t token;    ///< random: only who was given the handle can open it
  std::uint64_t size;     ///< the block's size
  std::uint64_t channel;  ///< random: names the exporter's socket (socket_name)
};

[[nodiscard]] CUipcMemHandle encode(handle_fields const& fields) noexcept;
/// The fields of a shim handle; nothing for any other (the driver's own handles).
[[nodiscard]] std::optional<handle_fields> decode(CUipcMemHandle const& handle) noexcept;

enum class request_kind : std::uint32_t { open = 1, close = 2 };
/// The kind a request names; nothing for any other number.
[[nodiscard]] std::optional<request_kind> kind_of(std::uint32_t raw) noexcept;

struct request {
  char magic[8];
  std::uint32_t kind;  ///< a request_kind
  std::uint32_t reserved;
  std::uint64_t id;
  std::uint64_t token;
};

/// The answer to a request: a status, then, for an open, `pieces` piece messages.
struct reply {
  char magic[8];
  std::int32_t status;  ///< a CUresult
  std::uint32_t pieces;
};

/// One physical allocation under the block, where it lies relative to the block's start.
struct piece {
  std::int64_t offset;  ///< its start minus the block's start (zero or negative for the first)
  std::uint64_t size;
  std::uint32_t legacy;  ///< 1: `legacy_handle` names a cudaMalloc allocation; 0: a file descriptor comes with it
  std::uint32_t pad;
  CUipcMemHandle legacy_handle;
};

/// The most pieces an answer for a block of `size` bytes can have, when every physical allocation
/// is at least `granularity` bytes: the pieces cover the block and at most one reaches past each
/// end. Anything above is not an exporter's answer.
[[nodiscard]] std::uint64_t max_pieces(std::uint64_t size, std::uint64_t granularity) noexcept;

/// The socket the process `pid` serves its exports on (Linux's abstract namespace: no file).
[[nodiscard]] std::string socket_name(pid_t pid, std::uint64_t channel);

/// Sends `bytes` exactly, with at most one file descriptor beside them (-1: none). False, with
/// errno set, when the peer went away or the call failed.
[[nodiscard]] bool send_message(int socket, void const* data, std::size_t bytes, int fd) noexcept;
/// Receives `bytes` exactly. With `fd`, at most one file descriptor may come beside them (-1 in
/// `*fd`: none came); without, none may. Descriptors beyond those are closed and the message
/// refused (errno EPROTO), so that a peer cannot fill this process's table.
[[nodiscard]] bool receive_message(int socket, void* data, std::size_t bytes, int* fd) noexcept;

/// A connected socket to the exporter the handle names, once the listening process is checked to
/// be that process, of this user or root; -1 with errno set otherwise (EPERM: someone else holds
/// the name, `why` says who).
[[nodiscard]] int connect_to_exporter(handle_fields const& fields, std::string& why) noexcept;
/// A listening socket for this process under a fresh random name; its channel in `channel`, or -1
/// with errno set.
[[nodiscard]] int listen_here(std::uint64_t& channel) noexcept;
/// Whether the peer of `connection` may open this process's exports: the same user, or root. Its
/// process id in `pid`.
[[nodiscard]] bool peer_allowed(int connection, pid_t& pid) noexcept;
/// A random number from the kernel (getrandom).
[[nodiscard]] std::uint64_t random_u64() noexcept;

inline constexpr char request_magic[8] = {'R', 'M', 'M', 'I', 'P', 'C', 'R', 'Q'};
inline constexpr char reply_magic[8]   = {'R', 'M', 'M', 'I', 'P', 'C', 'R', 'P'};

}  // namespace rmm::shim::ipc
