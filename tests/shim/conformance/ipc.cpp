// SPDX-License-Identifier: Apache-2.0
// CUDA IPC as the CUDA samples use it: processes forked before CUDA starts, the parent allocates
// and exports a block, each child opens it, checks what the parent wrote and writes its own slice,
// and the parent checks every slice. Also: the exporting process opening its own handle, a
// process without the shim opening the handle (it must never see the wrong bytes), and a handle
// nobody exported.
//
//   ipc                 the whole program
//   ipc receive HEX     (internal) open the handle HEX, check it, print what happened

#include "conformance.hpp"

#include <sys/mman.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <cstring>
#include <string>
#include <vector>

using namespace conformance;

namespace {

constexpr int children           = 2;
constexpr std::size_t slice      = std::size_t{1} << 20;
constexpr std::size_t block_size = children * slice + 4096;  // not a multiple of any page size
constexpr unsigned char pattern  = 0x5A;

struct shared_state {
  std::atomic<int> stage;  // 1: the handle is there; 2: a child failed to start CUDA
  cudaIpcMemHandle_t handle;
  std::atomic<int> opened[children];  // cudaError_t of each child's open
  std::atomic<int> saw_pattern[children];
};

bool all_bytes(void const* device, std::size_t offset, std::size_t bytes, unsigned char value)
{
  std::vector<unsigned char> host(bytes);
  if (cudaMemcpy(host.data(), static_cast<char const*>(device) + offset, bytes, cudaMemcpyDeviceToHost) !=
      cudaSuccess) {
    return false;
  }
  for (auto b : host) {
    if (b != value) { return false; }
  }
  return true;
}

void child(shared_state& shared, int index)
{
  while (shared.stage.load() == 0) { usleep(1000); }
  void* p           = nullptr;
  auto const opened = cudaIpcOpenMemHandle(&p, shared.handle, cudaIpcMemLazyEnablePeerAccess);
  shared.opened[index].store(opened);
  if (opened != cudaSuccess) { std::_Exit(1); }
  // Its own slice and the tail: no other process writes them meanwhile.
  bool const saw = all_bytes(p, static_cast<std::size_t>(index) * slice, slice, pattern) &&
                   all_bytes(p, children * slice, block_size - children * slice, pattern);
  shared.saw_pattern[index].store(saw ? 1 : 0);
  bool const wrote = cudaMemset(static_cast<char*>(p) + index * slice, 0x60 + index, slice) == cudaSuccess &&
                     cudaDeviceSynchronize() == cudaSuccess;
  bool const closed = cudaIpcCloseMemHandle(p) == cudaSuccess;
  std::_Exit(wrote && closed ? 0 : 1);
}

std::string to_hex(cudaIpcMemHandle_t const& handle)
{
  std::string hex;
  for (char c : handle.reserved) {
    char two[3];
    std::snprintf(two, sizeof two, "%02x", static_cast<unsigned char>(c));
    hex += two;
  }
  return hex;
}

cudaIpcMemHandle_t from_hex(std::string const& hex)
{
  cudaIpcMemHandle_t handle{};
  for (std::size_t i = 0; i < sizeof handle.reserved && 2 * i + 1 < hex.size(); ++i) {
    handle.reserved[i] = static_cast<char>(std::stoi(hex.substr(2 * i, 2), nullptr, 16));
  }
  return handle;
}

/// Runs this program as `ipc receive HEX` with `environment` (the shim removed from it, say) and
/// returns what it printed.
std::string receive_in_new_process(std::string const& hex, std::vector<std::string> const& environment)
{
  int out[2];
  if (pipe(out) != 0) { fail("pipe", std::strerror(errno)); }
  pid_t const pid = fork();
  if (pid == 0) {
    dup2(out[1], 1);
    close(out[0]);
    std::vector<char*> env;
    for (auto const& e : environment) { env.push_back(const_cast<char*>(e.c_str())); }
    env.push_back(nullptr);
    char self[]     = "/proc/self/exe";
    char receive[]  = "receive";
    std::string arg = hex;
    char* argv[]    = {self, receive, arg.data(), nullptr};
    execve(self, argv, env.data());
    std::_Exit(127);
  }
  close(out[1]);
  std::string printed;
  char chunk[256];
  for (ssize_t n; (n = read(out[0], chunk, sizeof chunk)) > 0;) { printed.append(chunk, static_cast<std::size_t>(n)); }
  close(out[0]);
  int status = 0;
  waitpid(pid, &status, 0);
  while (!printed.empty() && printed.back() == '\n') { printed.pop_back(); }
  return printed;
}

/// The environment without the shim (LD_PRELOAD and every RMM_ variable left out).
std::vector<std::string> environment_without_shim()
{
  std::vector<std::string> env;
  for (char** e = environ; *e != nullptr; ++e) {
    std::string const entry{*e};
    if (entry.rfind("LD_PRELOAD=", 0) == 0 || entry.rfind("RMM_SHIM", 0) == 0) { continue; }
    env.push_back(entry);
  }
  return env;
}

/// `ipc receive HEX`: what opening the handle gave: `error NAME`, `correct` (the block's tail holds
/// the pattern), or `wrong` (opened, other bytes).
int receive(std::string const& hex)
{
  void* p           = nullptr;
  auto const opened = cudaIpcOpenMemHandle(&p, from_hex(hex), cudaIpcMemLazyEnablePeerAccess);
  if (opened != cudaSuccess) {
    std::printf("error %s\n", cudaGetErrorName(opened));
    return 0;
  }
  // The tail, which nobody writes after the parent: at the wrong place in the memory, other bytes.
  std::printf("%s\n", all_bytes(p, children * slice, block_size - children * slice, pattern) ? "correct" : "wrong");
  (void)cudaIpcCloseMemHandle(p);
  return 0;
}

}  // namespace

int main(int argc, char** argv)
{
  if (argc == 3 && std::string{argv[1]} == "receive") { return receive(argv[2]); }

  auto* shared = static_cast<shared_state*>(
    mmap(nullptr, sizeof(shared_state), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0));
  if (shared == MAP_FAILED) { fail("mmap", std::strerror(errno)); }
  new (shared) shared_state{};
  std::vector<pid_t> pids;
  for (int i = 0; i < children; ++i) {  // before CUDA starts in this process, as the samples do
    pid_t const pid = fork();
    if (pid == 0) { child(*shared, i); }
    pids.push_back(pid);
  }

  // A block in front, so that the exported one is not the first of whatever holds it.
  void* front = nullptr;
  require(cudaMalloc(&front, 3 * 4096 + 100), "cudaMalloc (front)");
  void* block = nullptr;
  require(cudaMalloc(&block, block_size), "cudaMalloc");
  require(cudaMemset(front, 0x11, 3 * 4096 + 100), "cudaMemset");
  require(cudaMemset(block, pattern, block_size), "cudaMemset");
  require(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  auto const exported = cudaIpcGetMemHandle(&shared->handle, static_cast<char*>(block) + 4096);
  check("export_interior_pointer", name_of(exported));
  if (exported != cudaSuccess) {
    (void)cudaGetLastError();
    for (pid_t pid : pids) { kill(pid, SIGKILL), waitpid(pid, nullptr, 0); }
    return 0;
  }
  auto const exported_start = cudaIpcGetMemHandle(&shared->handle, block);
  check("export", name_of(exported_start));
  shared->stage.store(1);
  int children_ok = 0;
  for (pid_t pid : pids) {
    int status = 0;
    waitpid(pid, &status, 0);
    children_ok += WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }
  for (int i = 0; i < children; ++i) {
    check("child" + std::to_string(i) + ".open", name_of(static_cast<cudaError_t>(shared->opened[i].load())));
    check("child" + std::to_string(i) + ".saw_parent_bytes", shared->saw_pattern[i].load() == 1);
  }
  check("children_ok", std::to_string(children_ok));
  bool slices_ok = true;
  for (int i = 0; i < children; ++i) { slices_ok = slices_ok && all_bytes(block, i * slice, slice, 0x60 + i); }
  check("parent_sees_children_writes", slices_ok);
  check("parent_tail_untouched", all_bytes(block, children * slice, block_size - children * slice, pattern));
  check("front_block_untouched", all_bytes(front, 0, 3 * 4096 + 100, 0x11));

  // The exporting process opening its own handle.
  void* self_opened    = nullptr;
  auto const self_open = cudaIpcOpenMemHandle(&self_opened, shared->handle, cudaIpcMemLazyEnablePeerAccess);
  check("open_in_exporting_process", name_of(self_open));
  if (self_open == cudaSuccess) { (void)cudaIpcCloseMemHandle(self_opened); }
  (void)cudaGetLastError();

  // A process without the shim: the bytes it sees are the block's, or it gets an error.
  auto const unshimmed = receive_in_new_process(to_hex(shared->handle), environment_without_shim());
  fact("receiver_without_shim", unshimmed);
  check("receiver_without_shim_never_wrong", unshimmed == "correct" || unshimmed.rfind("error ", 0) == 0);
  // A process like this one (the shim too, if this one has it).
  std::vector<std::string> same_environment;
  for (char** e = environ; *e != nullptr; ++e) { same_environment.emplace_back(*e); }
  check("receiver_like_this_process", receive_in_new_process(to_hex(shared->handle), same_environment));
  // A handle nobody exported.
  cudaIpcMemHandle_t garbage{};
  std::memset(garbage.reserved, 0xAB, sizeof garbage.reserved);
  fact("garbage_handle", receive_in_new_process(to_hex(garbage), same_environment));

  require(cudaFree(block), "cudaFree");
  require(cudaFree(front), "cudaFree");
  return 0;
}
