// SPDX-License-Identifier: Apache-2.0
#include "preload_check.hpp"

#include <rmm/environment_variables.hpp>

#include <dlfcn.h>
#include <fcntl.h>
#include <elf.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <vector>

namespace rmm::tools {

namespace {

/// What execvp would run for `program`: itself when it has a slash, else the first match on PATH.
std::optional<std::filesystem::path> resolve(std::string const& program)
{
  if (program.find('/') != std::string::npos) { return std::filesystem::path{program}; }
  char const* path = std::getenv("PATH");
  std::istringstream folders{path != nullptr ? path : "/usr/local/bin:/usr/bin:/bin"};
  for (std::string folder; std::getline(folders, folder, ':');) {
    auto const candidate = std::filesystem::path{folder.empty() ? "." : folder} / program;
    if (::access(candidate.c_str(), X_OK) == 0) { return candidate; }
  }
  return std::nullopt;
}

/// Everything the child wrote until it closed the pipe.
std::string drain(int fd)
{
  std::string text;
  char chunk[512];
  for (;;) {
    auto const n = ::read(fd, chunk, sizeof chunk);
    if (n > 0) {
      text.append(chunk, static_cast<std::size_t>(n));
    } else if (n < 0 && errno == EINTR) {
      continue;
    } else {
      return text;
    }
  }
}

}  // namespace

std::optional<std::string> shim_load_problem(std::string const& preload)
{
  std::string const kill_switch{rmm::name_of(rmm::env_var::shim_enabled)};
  int output[2];
  if (::pipe2(output, O_CLOEXEC) != 0) {
    return std::string{"cannot check that the shim loads: pipe: "} + std::strerror(errno);
  }
  pid_t const child = ::fork();
  if (child < 0) {
    auto const error = errno;
    ::close(output[0]), ::close(output[1]);
    return std::string{"cannot check that the shim loads: fork: "} + std::strerror(error);
  }
  if (child == 0) {
    ::dup2(output[1], STDOUT_FILENO);
    ::dup2(output[1], STDERR_FILENO);
    ::setenv("LD_PRELOAD", preload.c_str(), 1);
    ::setenv(kill_switch.c_str(), "false", 1);  // loaded, but reads no configuration and opens no file
    char name[] = "rmm-run";
    char probe[64];
    std::strncpy(probe, shim_probe_argument, sizeof probe - 1);
    probe[sizeof probe - 1] = '\0';
    char* argv[]            = {name, probe, nullptr};
    ::execv("/proc/self/exe", argv);
    std::_Exit(127);
  }
  ::close(output[1]);
  auto said = drain(output[0]);
  ::close(output[0]);
  int status = 0;
  while (::waitpid(child, &status, 0) < 0 && errno == EINTR) {}
  if (WIFEXITED(status) && WEXITSTATUS(status) == 0) { return std::nullopt; }
  while (!said.empty() && (said.back() == '\n' || said.back() == '\r')) { said.pop_back(); }
  return said.empty() ? std::string{"the dynamic loader did not load it"}
                      : "the dynamic loader did not load it: " + said;
}

int answer_shim_probe() noexcept { return ::dlsym(RTLD_DEFAULT, "rmm_shim_enabled") != nullptr ? 0 : 3; }

bool is_statically_linked(std::string const& program)
{
  auto const path = resolve(program);
  if (!path) { return false; }  // execvp says why
  std::ifstream file{*path, std::ios::binary};
  Elf64_Ehdr header{};
  if (!file.read(reinterpret_cast<char*>(&header), sizeof header) ||
      std::memcmp(header.e_ident, ELFMAG, SELFMAG) != 0 || header.e_ident[EI_CLASS] != ELFCLASS64 ||
      header.e_phentsize != sizeof(Elf64_Phdr)) {
    return false;  // a script, or not an executable this check knows: the loader decides
  }
  for (unsigned i = 0; i < header.e_phnum; ++i) {
    Elf64_Phdr segment{};
    file.seekg(static_cast<std::streamoff>(header.e_phoff + i * sizeof segment));
    if (!file.read(reinterpret_cast<char*>(&segment), sizeof segment)) { return false; }
    if (segment.p_type == PT_INTERP) { return false; }
  }
  return true;
}

}  // namespace rmm::tools
