// SPDX-License-Identifier: Apache-2.0
#pragma once

// The control channel between rmm-ctl and the shim of a running process: where the sockets are,
// what may be asked, and the asking. Each process under the shim listens on `<dir>/<pid>.sock`,
// where `<dir>` is this user's own directory (mode 0700, choose_socket_directory). The socket is mode
// 0600, and the shim also checks the peer's credentials: only the process's own user gets an
// answer. The socket appears under its name only once it listens.
//
// A request is one line: a command and its option, and for a pause or a resume `tag NAME` to pause
// or resume one tag's memory. The answer is `ok` or `error` on a line of its own, then the text for
// people (or the JSON report) up to the end of the connection.

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <sys/types.h>

namespace rmm::control {

enum class command { ping, report, report_json, release, pause, pause_discard, pause_keep, resume };

/// A command, and the tag a pause or a resume is for (empty: the whole process).
struct request {
  command c{command::ping};
  std::string tag;
};

/// The request line of `r` (without its newline).
[[nodiscard]] std::string request_line(request const& r);
/// What a request line asks for; nothing for anything else (a tag only goes with a pause or a
/// resume, and has no blank or control character).
[[nodiscard]] std::optional<request> parse_request(std::string_view line);
/// What may be asked, for an error message.
[[nodiscard]] std::string_view request_list() noexcept;

/// A request longer than this is refused unread.
inline constexpr std::size_t max_request_bytes = 256;
/// How long either side waits for the other to speak, in seconds: a pause of many GiB takes a while.
inline constexpr int reply_timeout_seconds   = 600;
inline constexpr int request_timeout_seconds = 5;

/// Where this user's control sockets are.
struct socket_directory_choice {
  std::string dir;          ///< empty when no candidate would do
  std::string passed_over;  ///< why earlier candidates were passed over, for people; empty when none was
  std::string error;        ///< when none would do: why each failed
};
/// The first candidate that is this user's alone, made when missing: $XDG_RUNTIME_DIR/rmm,
/// /run/user/UID/rmm, /tmp/rmm-UID, then <home>/.cache/rmm. /tmp is everyone's, so another user may
/// have made /tmp/rmm-UID first (where no runtime directory is set: root, su, cron); then the home
/// directory serves, which nobody else can write. The shim and rmm-ctl choose alike.
[[nodiscard]] socket_directory_choice choose_socket_directory();
/// Makes `dir` when missing (mode 0700) and checks that it is this user's alone: a directory, not a
/// link, owned by this user, with no access for anyone else. An error for people, or empty.
[[nodiscard]] std::string prepare_socket_directory(std::string const& dir);
[[nodiscard]] std::string socket_path(std::string const& dir, pid_t pid);

/// The processes with a socket in `dir`, by their process id, in order.
[[nodiscard]] std::vector<pid_t> listed_processes(std::string const& dir);

/// What asking a process came to: its answer, or why there is none.
struct asking {
  bool ok{false};                     ///< the process answered `ok`
  std::string text;                   ///< what it answered after that
  bool answered{false};               ///< false: it could not be reached, `failure` says why
  std::string failure;                ///< for people
  int failure_errno{0};               ///< ECONNREFUSED: nobody listens on the socket any more
  bool closed_without_answer{false};  ///< it took the request, then closed (exited?) before answering
};
/// Asks the process `pid`, whose socket is in `dir`.
[[nodiscard]] asking ask(std::string const& dir, pid_t pid, request const& r);

}  // namespace rmm::control
