// SPDX-License-Identifier: Apache-2.0
#include "emu_test.hpp"

#include <fcntl.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <stdexcept>
#include <thread>

extern char** environ;

namespace emu {
namespace {

template <class F>
F symbol(char const* name)
{
  auto* p = reinterpret_cast<F>(rmm_emu_symbol(name));
  if (p == nullptr) { throw std::runtime_error(std::string("emulator control function missing: ") + name); }
  return p;
}

std::string slurp(std::string const& path)
{
  std::ifstream in(path);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

Control const& control()
{
  static Control const c = [] {
    int n = 0;
    cudaGetDeviceCount(&n);  // loads the driver
    return Control{symbol<rmm_emu_version_fn>("rmm_emu_version"),
                   symbol<rmm_emu_set_fn>("rmm_emu_set"),
                   symbol<rmm_emu_last_error_fn>("rmm_emu_last_error"),
                   symbol<rmm_emu_live_allocations_fn>("rmm_emu_live_allocations"),
                   symbol<rmm_emu_live_bytes_fn>("rmm_emu_live_bytes"),
                   symbol<rmm_emu_device_used_bytes_fn>("rmm_emu_device_used_bytes"),
                   symbol<rmm_emu_allocation_attempts_fn>("rmm_emu_allocation_attempts"),
                   symbol<rmm_emu_stream_blocked_fn>("rmm_emu_stream_blocked"),
                   symbol<rmm_emu_host_waiters_fn>("rmm_emu_host_waiters"),
                   symbol<rmm_emu_pause_next_event_record_fn>("rmm_emu_pause_next_event_record"),
                   symbol<rmm_emu_paused_event_records_fn>("rmm_emu_paused_event_records"),
                   symbol<rmm_emu_resume_event_records_fn>("rmm_emu_resume_event_records")};
  }();
  return c;
}

Knob::Knob(char const* name, char const* value) : name_{name}
{
  if (control().set(name, value) != 0) {
    ADD_FAILURE() << "rmm_emu_set(" << name << ", " << value << "): " << control().last_error();
  }
}

Knob::~Knob() { control().set(name_, nullptr); }

ChildResult run_child(std::vector<std::string> const& args, std::vector<std::string> const& env)
{
  auto const overridden = [&](std::string_view entry) {
    for (auto const& e : env) {
      auto const name = e.substr(0, e.find('=') + 1);
      if (entry.rfind(name, 0) == 0) { return true; }
    }
    return false;
  };
  std::vector<std::string> environment;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string_view v{*e};
    if (v.rfind("RMM_EMU_", 0) == 0 || v.rfind("LD_PRELOAD=", 0) == 0 || overridden(v)) { continue; }
    environment.emplace_back(v);
  }
  environment.insert(environment.end(), env.begin(), env.end());
  std::vector<char*> envp;
  for (auto& s : environment) { envp.push_back(s.data()); }
  envp.push_back(nullptr);
  std::vector<std::string> argv_storage = args;
  std::vector<char*> argv;
  for (auto& s : argv_storage) { argv.push_back(s.data()); }
  argv.push_back(nullptr);

  char out_path[]  = "/tmp/rmm_emu_child_out_XXXXXX";
  char err_path[]  = "/tmp/rmm_emu_child_err_XXXXXX";
  int const out_fd = ::mkstemp(out_path);
  int const err_fd = ::mkstemp(err_path);
  posix_spawn_file_actions_t actions;
  ::posix_spawn_file_actions_init(&actions);
  ::posix_spawn_file_actions_adddup2(&actions, out_fd, STDOUT_FILENO);
  ::posix_spawn_file_actions_adddup2(&actions, err_fd, STDERR_FILENO);
  auto const start = std::chrono::steady_clock::now();
  pid_t pid        = 0;
  int const rc     = ::posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  ::posix_spawn_file_actions_destroy(&actions);
  ChildResult result;
  if (rc == 0) {
    int status = 0;
    ::waitpid(pid, &status, 0);
    result.exit_code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
  } else {
    result.err = std::string("posix_spawn failed: ") + std::strerror(rc);
  }
  result.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  ::close(out_fd);
  ::close(err_fd);
  result.out = slurp(out_path);
  result.err += slurp(err_path);
  ::unlink(out_path);
  ::unlink(err_path);
  return result;
}

std::string child_path() { return RMM_EMU_TEST_BIN_DIR "/emulator_child"; }

std::string build_path(char const* name) { return std::string(RMM_EMU_TEST_BIN_DIR) + "/" + name; }

void sleep_ms(int ms) { std::this_thread::sleep_for(std::chrono::milliseconds(ms)); }

}  // namespace emu
