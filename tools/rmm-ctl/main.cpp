// SPDX-License-Identifier: Apache-2.0
// rmm-ctl: asks the shim of a running process (control_channel.hpp) for its report, to give its
// free memory back, or to pause and resume its device memory.

#include "command_line_error.hpp"
#include "channel/control_channel.hpp"
#include "channel/process_state.hpp"

#include <fmt/format.h>

#include <unistd.h>

#include <cerrno>
#include <charconv>
#include <chrono>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

using rmm::control::command;

constexpr rmm::tools::command_synopsis synopsis{
  "rmm-ctl",
  "list | PID report [--json] | PID release | PID pause [--tag NAME] [--discard|--keep] | PID resume [--tag NAME]", 64};

constexpr std::string_view help = R"(usage: rmm-ctl list
       rmm-ctl PID report [--json]
       rmm-ctl PID release
       rmm-ctl PID pause [--tag NAME] [--discard | --keep]
       rmm-ctl PID resume [--tag NAME]

Talks to the preload shim of a running process of this user's (one that has allocated device
memory under the shim; RMM_SHIM_CONTROL=false turns its socket off).

  list              the processes under the shim: id, running, pausing or paused, program
  report            the shim's report now (--json: as JSON)
  release           give every free byte of the stacks back to the device
  pause             wait for the device work submitted so far, keep the contents of every live
                    block in host memory, and give all the stacks' device memory back; every block
                    keeps its address. Allocations wait for the resume, frees are applied at it.
                    Device work on a block meanwhile is the program's error. A tag whose region
                    asked for it is discarded; --discard drops every tag's contents, --keep keeps
                    them all. --tag NAME: only the memory allocated in regions tagged NAME; the
                    rest of the process runs on
  resume            map the memory back at the same addresses and restore the contents (--tag
                    NAME: of that tag, paused on its own)

Exit status: 0 done, 1 the process could not do it or be reached (the reason on stderr), 64 a
wrong command line.
)";

/// Whether the process runs: it has an entry in /proc and is no zombie.
bool process_exists(pid_t pid) { return rmm::shim::state_of_process(pid).running; }

/// Removes a socket whose process is gone.
void remove_stale(std::string const& dir, pid_t pid) { (void)::unlink(rmm::control::socket_path(dir, pid).c_str()); }

int list(std::string const& dir)
{
  auto const pids = rmm::control::listed_processes(dir);
  std::vector<std::string> rows;
  for (auto const pid : pids) {
    auto const asked = rmm::control::ask(dir, pid, {command::ping, {}});
    if (!asked.answered) {
      // Only the socket of a process that is gone is stale. One that refuses connections while its
      // process runs belongs to a program that no longer listens (it exec'd another): left alone.
      if (!process_exists(pid)) {
        remove_stale(dir, pid);
      } else if (asked.failure_errno != ECONNREFUSED) {
        std::fprintf(stderr, "rmm-ctl: %s\n", asked.failure.c_str());
      }
      continue;
    }
    unsigned long id = 0;
    char state[16]   = {};
    char name[64]    = {};
    if (std::sscanf(asked.text.c_str(), "%lu %15s %63[^\n]", &id, state, name) == 3) {
      rows.push_back(fmt::format("{:<8} {:<8} {}", id, state, name));
    }
  }
  if (rows.empty()) {
    std::printf("no process of this user's runs under the shim with its control socket (in %s)\n", dir.c_str());
    return 0;
  }
  std::printf("%-8s %-8s %s\n", "PID", "STATE", "PROGRAM");
  for (auto const& row : rows) { std::printf("%s\n", row.c_str()); }
  return 0;
}

/// The options after a command's verb: a tag (pause, resume) and one variant (pause: --discard or
/// --keep; report: --json).
struct command_options {
  std::string_view tag;
  std::string_view variant;
};

bool takes_tag(std::string_view verb) { return verb == "pause" || verb == "resume"; }

bool is_variant(std::string_view verb, std::string_view option)
{
  return (verb == "pause" && (option == "--discard" || option == "--keep")) || (verb == "report" && option == "--json");
}

/// The options of `verb` in `words` (from the second); nothing when one is wrong (`error` says why).
std::optional<command_options> options_of(std::vector<std::string_view> const& words, std::string& error)
{
  auto const verb = words[0];
  command_options options;
  for (std::size_t i = 1; i < words.size(); ++i) {
    auto const option = words[i];
    if (takes_tag(verb) && option == "--tag") {
      if (i + 1 == words.size()) {
        error = "--tag needs the tag's name";
        return std::nullopt;
      }
      if (!options.tag.empty()) {
        error = "one --tag at a time";
        return std::nullopt;
      }
      options.tag = words[++i];
    } else if (is_variant(verb, option)) {
      if (!options.variant.empty()) {
        error = fmt::format("'{}' takes one of its options, not '{}' and '{}'", verb, options.variant, option);
        return std::nullopt;
      }
      options.variant = option;
    } else {
      error = fmt::format("'{}' takes no option '{}'", verb, option);
      return std::nullopt;
    }
  }
  return options;
}

command command_of(std::string_view verb, std::string_view variant)
{
  if (verb == "report") { return variant.empty() ? command::report : command::report_json; }
  if (verb == "release") { return command::release; }
  if (verb == "resume") { return command::resume; }
  return variant.empty() ? command::pause : variant == "--discard" ? command::pause_discard : command::pause_keep;
}

/// What `words` (after the process id) ask for; nothing when they make no request.
std::optional<rmm::control::request> request_of(std::vector<std::string_view> const& words, std::string& error)
{
  if (words.empty()) {
    error = "a process id needs a command: report, release, pause or resume";
    return std::nullopt;
  }
  auto const verb = words[0];
  if (verb != "report" && verb != "release" && verb != "pause" && verb != "resume") {
    error = fmt::format("unknown command '{}'", verb);
    return std::nullopt;
  }
  auto const options = options_of(words, error);
  if (!options) { return std::nullopt; }
  rmm::control::request r{};
  r.c   = command_of(verb, options->variant);
  r.tag = options->tag;
  if (!r.tag.empty() && !rmm::control::parse_request(rmm::control::request_line(r))) {
    error = fmt::format("'{}' is no tag's name: a tag has no blanks or control characters", r.tag);
    return std::nullopt;
  }
  return r;
}

int ask_process(std::string const& dir, pid_t pid, rmm::control::request const& r)
{
  auto const asked = rmm::control::ask(dir, pid, r);
  if (asked.closed_without_answer) {
    // A process that dies closes its sockets a moment before it is gone from /proc's view.
    for (int wait = 0; wait < 50 && process_exists(pid); ++wait) {
      std::this_thread::sleep_for(std::chrono::milliseconds{10});
    }
    if (process_exists(pid)) {
      std::fprintf(stderr, "rmm-ctl: process %d took the request and closed the connection without an answer\n",
                   static_cast<int>(pid));
    } else {
      std::fprintf(stderr, "rmm-ctl: process %d exited before it answered\n", static_cast<int>(pid));
    }
    return 1;
  }
  if (!asked.answered) {
    if (asked.failure_errno == ENOENT || asked.failure_errno == ECONNREFUSED) {
      std::fprintf(stderr,
                   "rmm-ctl: process %d has no control socket in %s: it does not run under the shim, has not "
                   "allocated device memory yet, runs with RMM_SHIM_CONTROL=false, or is gone\n",
                   static_cast<int>(pid), dir.c_str());
      if (!process_exists(pid)) { remove_stale(dir, pid); }
    } else {
      std::fprintf(stderr, "rmm-ctl: %s\n", asked.failure.c_str());
    }
    return 1;
  }
  std::fputs(asked.text.c_str(), asked.ok ? stdout : stderr);
  return asked.ok ? 0 : 1;
}

}  // namespace

int main(int argc, char** argv)
{
  std::vector<std::string_view> const args(argv + 1, argv + argc);
  if (args.empty()) { return rmm::tools::report_command_line_error(synopsis, "say what to do"); }
  if (args[0] == "--help" || args[0] == "-h") {
    std::fputs(help.data(), stdout);
    return 0;
  }
  // Only a directory of this user's alone is trusted: a socket elsewhere could be anyone's. The
  // shim chose the same one.
  std::string dir;
  auto const trusted = [&dir] {
    auto const choice = rmm::control::choose_socket_directory();
    if (choice.dir.empty()) {
      std::fprintf(stderr, "rmm-ctl: %s\n", choice.error.c_str());
      return false;
    }
    if (!choice.passed_over.empty()) {
      std::fprintf(stderr, "rmm-ctl: %s; looking in %s instead\n", choice.passed_over.c_str(), choice.dir.c_str());
    }
    dir = choice.dir;
    return true;
  };
  if (args[0] == "list") {
    if (args.size() > 1) { return rmm::tools::report_command_line_error(synopsis, "'list' takes nothing after it"); }
    return trusted() ? list(dir) : 1;
  }
  pid_t pid               = 0;  // parsed as pid_t itself: a larger number is no process id
  auto const first        = args[0];
  auto const [end, error] = std::from_chars(first.data(), first.data() + first.size(), pid);
  if (error != std::errc{} || end != first.data() + first.size() || pid <= 0) {
    return rmm::tools::report_command_line_error(synopsis,
                                                 fmt::format("'{}' is neither 'list' nor a process id", first));
  }
  std::string why;
  auto const r = request_of({args.begin() + 1, args.end()}, why);
  if (!r) { return rmm::tools::report_command_line_error(synopsis, why); }
  if (!trusted()) { return 1; }
  return ask_process(dir, pid, *r);
}
