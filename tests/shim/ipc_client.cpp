// SPDX-License-Identifier: Apache-2.0
// CUDA IPC between processes under the shim, and what other processes on the machine can do to
// it, run by ipc_test. Each scenario forks its other processes before CUDA starts (as NVIDIA's
// simpleIPC does); the exporter allocates and exports a block with the driver API, and the others
// open it, or attack its socket as a hostile local process would (finding it in /proc/net/unix).
// Prints `key=value` lines; a failed call prints `FAIL: ...` and exits 2.

#include "ipc/ipc_channel.hpp"  // the handle's layout: forged handles and requests

#include <rmm/shim.h>

#include <cuda.h>
#include <cuda_runtime_api.h>

#include <dlfcn.h>
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/un.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <functional>
#include <string>
#include <string_view>
#include <thread>
#include <vector>

namespace {

namespace ipc    = rmm::shim::ipc;
using clock_type = std::chrono::steady_clock;

constexpr std::size_t block_size = (std::size_t{3} << 20) + 4096;  // not a multiple of any page size
constexpr unsigned char pattern  = 0x5A;

void require(bool ok, std::string const& what)
{
  if (!ok) {
    std::printf("FAIL: %s\n", what.c_str());
    std::fflush(stdout);
    std::_Exit(2);
  }
}

void require(cudaError_t e, char const* call)
{
  require(e == cudaSuccess, std::string{call} + ": " + cudaGetErrorName(e));
}

std::string name_of(CUresult r)
{
  char const* name = nullptr;
  return cuGetErrorName(r, &name) == CUDA_SUCCESS && name != nullptr ? name : "CUresult " + std::to_string(r);
}

void say(std::string const& key, std::string const& value)
{
  std::printf("%s=%s\n", key.c_str(), value.c_str());
  std::fflush(stdout);
}
void say(std::string const& key, long long value) { say(key, std::to_string(value)); }

long long ms_since(clock_type::time_point start)
{
  return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - start).count();
}

/// What the processes of a scenario share (an anonymous shared mapping made before the forks).
struct shared_state {
  std::atomic<int> stage;
  std::atomic<int> done;
  std::atomic<int> result;
  std::atomic<long long> value;  // what an importer saw (import_block), or what a scenario's other process says
  std::atomic<long long> count;  // connections another process holds
  CUipcMemHandle handle;
};

shared_state* make_shared_state()
{
  void* p = mmap(nullptr, sizeof(shared_state), PROT_READ | PROT_WRITE, MAP_SHARED | MAP_ANONYMOUS, -1, 0);
  require(p != MAP_FAILED, "mmap of the shared state");
  return new (p) shared_state{};
}

void wait_for(std::atomic<int> const& flag, int at_least)
{
  auto const start = clock_type::now();
  while (flag.load() < at_least) {
    require(ms_since(start) < 60'000, "waited a minute for another process");
    usleep(1000);
  }
}

/// Runs `body` in a child forked now; its pid.
pid_t fork_child(std::function<int()> const& body)
{
  std::fflush(stdout);
  pid_t const pid = fork();
  require(pid >= 0, "fork");
  if (pid == 0) { std::_Exit(body()); }
  return pid;
}

int exit_status(pid_t pid)
{
  int status = 0;
  waitpid(pid, &status, 0);
  return WIFEXITED(status) ? WEXITSTATUS(status) : 128 + WTERMSIG(status);
}

/// The shim's pause and resume (it is preloaded): 0 when it paused, with its message.
int pause_and_resume(std::string& message)
{
  auto* pause   = reinterpret_cast<int (*)(unsigned int)>(dlsym(RTLD_DEFAULT, "rmm_shim_pause"));
  auto* resume  = reinterpret_cast<int (*)()>(dlsym(RTLD_DEFAULT, "rmm_shim_resume"));
  auto* explain = reinterpret_cast<char const* (*)()>(dlsym(RTLD_DEFAULT, "rmm_shim_last_message"));
  require(pause != nullptr && resume != nullptr && explain != nullptr, "the shim's pause functions are exported");
  int const paused = pause(0);
  message          = explain();
  if (paused == 0) { require(resume() == 0, "resume"); }
  return paused;
}

/// A pause that can take its time: it succeeds once no other process holds the exported block
/// (the exporter learns of a dead importer a moment after it dies). 0 and how long it took, or the
/// last refusal.
int pause_within(long long ms, std::string& message, long long& waited)
{
  auto const start = clock_type::now();
  for (;;) {
    int const paused = pause_and_resume(message);
    waited           = ms_since(start);
    if (paused == 0 || waited > ms) { return paused; }
    usleep(20'000);
  }
}

void start_cuda()
{
  require(cudaSetDevice(0), "cudaSetDevice");
  require(cudaFree(nullptr), "cudaFree(nullptr)");
}

bool all_bytes(CUdeviceptr p, std::size_t offset, std::size_t bytes, unsigned char value)
{
  std::vector<unsigned char> host(bytes);
  if (cuMemcpyDtoH(host.data(), p + offset, bytes) != CUDA_SUCCESS) { return false; }
  for (auto b : host) {
    if (b != value) { return false; }
  }
  return true;
}

/// The exporter's part: a block behind another one, filled with the pattern and exported.
struct exported_block {
  void* front{nullptr};
  void* block{nullptr};
};

exported_block export_block(shared_state& shared)
{
  start_cuda();
  exported_block b;
  require(cudaMalloc(&b.front, 3 * 4096 + 100), "cudaMalloc (front)");
  require(cudaMalloc(&b.block, block_size), "cudaMalloc");
  require(cudaMemset(b.block, pattern, block_size), "cudaMemset");
  require(cudaDeviceSynchronize(), "cudaDeviceSynchronize");
  auto const exported = cuIpcGetMemHandle(&shared.handle, reinterpret_cast<CUdeviceptr>(b.block));
  require(exported == CUDA_SUCCESS, "cuIpcGetMemHandle: " + name_of(exported));
  shared.stage.store(1);
  return b;
}

/// An importer's part: opens the handle, checks the pattern, writes its mark in the block's first
/// MiB, closes (unless `close` is false). 0 when all of it worked.
int import_block(shared_state& shared, unsigned char mark, bool close = true)
{
  wait_for(shared.stage, 1);
  start_cuda();
  CUdeviceptr p     = 0;
  auto const opened = cuIpcOpenMemHandle(&p, shared.handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS);
  shared.result.store(opened);
  if (opened != CUDA_SUCCESS) { return 1; }
  CUdeviceptr again = 0;
  bool const same   = cuIpcOpenMemHandle(&again, shared.handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS) == CUDA_SUCCESS &&
                    again == p && cuIpcCloseMemHandle(again) == CUDA_SUCCESS;
  bool const saw   = all_bytes(p, 0, block_size, pattern);
  bool const wrote = cuMemsetD8(p, mark, std::size_t{1} << 20) == CUDA_SUCCESS && cuCtxSynchronize() == CUDA_SUCCESS;
  shared.value.store(saw ? 1 : 0);
  if (!close) { return same && wrote ? 0 : 1; }
  bool const closed = cuIpcCloseMemHandle(p) == CUDA_SUCCESS;
  return same && wrote && closed ? 0 : 1;
}

/// The exporter's IPC socket, found as any process of the machine can find it.
std::string socket_of(pid_t pid)
{
  std::ifstream table{"/proc/net/unix"};
  std::string const prefix = "@rmm-shim-ipc/" + std::to_string(pid) + "/";
  for (std::string line; std::getline(table, line);) {
    auto const at = line.find(prefix);
    if (at != std::string::npos) { return line.substr(at + 1); }  // without the '@'
  }
  return {};
}

int connect_abstract(std::string const& name, bool blocking = true)
{
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  auto const length = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  int const fd      = socket(AF_UNIX, SOCK_STREAM | (blocking ? 0 : SOCK_NONBLOCK), 0);
  if (fd < 0) { return -1; }
  if (connect(fd, reinterpret_cast<sockaddr const*>(&address), length) != 0) {
    close(fd);
    return -1;
  }
  return fd;
}

/// Up to `count` connections to the socket `name` that send nothing (as many as it takes at once).
std::vector<int> hold_connections(std::string const& name, int count)
{
  std::vector<int> held;
  for (int i = 0; i < count; ++i) {
    if (int const fd = connect_abstract(name, false); fd >= 0) { held.push_back(fd); }
  }
  return held;
}

/// A socket listening on the abstract name `name`, as a process that is no exporter makes one.
int listen_abstract(std::string const& name)
{
  sockaddr_un address{};
  address.sun_family = AF_UNIX;
  std::memcpy(address.sun_path + 1, name.data(), name.size());
  auto const length  = static_cast<socklen_t>(offsetof(sockaddr_un, sun_path) + 1 + name.size());
  int const listener = socket(AF_UNIX, SOCK_STREAM, 0);
  require(bind(listener, reinterpret_cast<sockaddr*>(&address), length) == 0 && listen(listener, 8) == 0,
          "binding the abstract socket " + name);
  return listener;
}

ipc::request request_for(CUipcMemHandle const& handle, std::uint32_t kind)
{
  auto const fields = ipc::decode(handle);
  require(fields.has_value(), "the handle is the shim's");
  ipc::request r{};
  std::memcpy(r.magic, ipc::request_magic, sizeof r.magic);
  r.kind  = kind;
  r.id    = fields->id;
  r.token = fields->token;
  return r;
}

/// Sends `request` as a process of its own (no shim involved), with `descriptors` attached; the
/// reply's status, or -1 when none came. Whether anything followed it in `more`.
int send_raw(std::string const& name, ipc::request const& request, std::vector<int> const& descriptors, bool& more)
{
  int const fd = connect_abstract(name);
  if (fd < 0) { return -1; }
  timeval const limit{10, 0};
  setsockopt(fd, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
  iovec part{const_cast<ipc::request*>(&request), sizeof request};
  msghdr message{};
  message.msg_iov    = &part;
  message.msg_iovlen = 1;
  std::vector<char> control(CMSG_SPACE(sizeof(int) * std::max<std::size_t>(descriptors.size(), 1)));
  if (!descriptors.empty()) {
    message.msg_control    = control.data();
    message.msg_controllen = CMSG_SPACE(sizeof(int) * descriptors.size());
    auto* header           = CMSG_FIRSTHDR(&message);
    header->cmsg_level     = SOL_SOCKET;
    header->cmsg_type      = SCM_RIGHTS;
    header->cmsg_len       = CMSG_LEN(sizeof(int) * descriptors.size());
    std::memcpy(CMSG_DATA(header), descriptors.data(), sizeof(int) * descriptors.size());
  }
  if (sendmsg(fd, &message, MSG_NOSIGNAL) != static_cast<ssize_t>(sizeof request)) {
    close(fd);
    return -1;
  }
  ipc::reply reply{};
  int status = -1;
  if (recv(fd, &reply, sizeof reply, MSG_WAITALL) == static_cast<ssize_t>(sizeof reply)) { status = reply.status; }
  char extra = 0;
  more       = recv(fd, &extra, 1, MSG_DONTWAIT) > 0;
  close(fd);
  return status;
}

std::size_t open_descriptors()
{
  std::size_t count = 0;
  for ([[maybe_unused]] auto const& entry : std::filesystem::directory_iterator{"/proc/self/fd"}) { ++count; }
  return count;
}

long long max_rss_mib()
{
  rusage usage{};
  getrusage(RUSAGE_SELF, &usage);
  return usage.ru_maxrss / 1024;
}

/// Turns a forked child into another user where this runs as root; the user it runs as.
uid_t become_other_user()
{
  if (geteuid() == 0) { require(setgid(65534) == 0 && setuid(65534) == 0, "setuid(65534)"); }
  return geteuid();
}

// ---- scenarios ----

/// An importer opens the block, sees the exporter's bytes, writes, closes; the exporter sees the
/// writes, and once the block is freed nothing is exported any more (a pause goes ahead).
int open_close()
{
  auto& shared       = *make_shared_state();
  pid_t const reader = fork_child([&] { return import_block(shared, 0x61); });
  auto const b       = export_block(shared);
  say("importer_status", exit_status(reader));
  say("opened", name_of(static_cast<CUresult>(shared.result.load())));
  say("importer_saw_pattern", shared.value.load());
  auto const base = reinterpret_cast<CUdeviceptr>(b.block);
  say("exporter_sees_importer_writes", all_bytes(base, 0, std::size_t{1} << 20, 0x61) ? 1 : 0);
  say("tail_untouched", all_bytes(base, std::size_t{1} << 20, block_size - (std::size_t{1} << 20), pattern) ? 1 : 0);
  CUdeviceptr self = 0;
  say("open_in_exporter", name_of(cuIpcOpenMemHandle(&self, shared.handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)));
  require(cudaFree(b.block), "cudaFree");
  std::string message;
  say("pause_after_close", pause_and_resume(message));
  say("pause_message", message);
  require(cudaFree(b.front), "cudaFree (front)");
  return 0;
}

/// An importer that dies with the block open: the exporter drops its open, so the freed block goes
/// back and a pause goes ahead.
int importer_dies()
{
  auto& shared       = *make_shared_state();
  pid_t const reader = fork_child([&] { return import_block(shared, 0x62, false); });
  auto const b       = export_block(shared);
  say("importer_status", exit_status(reader));  // exited without closing
  say("opened", name_of(static_cast<CUresult>(shared.result.load())));
  require(cudaFree(b.block), "cudaFree");
  std::string message;
  long long waited = 0;
  say("pause_after_importer_died", pause_within(5'000, message, waited));
  say("pause_message", message);
  say("waited_ms", waited);
  require(cudaFree(b.front), "cudaFree (front)");
  return 0;
}

/// A process that never opened the block closes it (with the handle's id and token): refused, and
/// the block stays held for the process that has it open.
int forged_close()
{
  auto& shared       = *make_shared_state();
  pid_t const holder = fork_child([&] {
    int const status = import_block(shared, 0x63, false);
    shared.done.store(1);
    wait_for(shared.stage, 2);  // holds the block open until told
    return status;
  });
  pid_t const forger = fork_child([&] {
    wait_for(shared.done, 1);
    bool more        = false;
    int const status = send_raw(socket_of(getppid()), request_for(shared.handle, 2), {}, more);
    shared.value.store(status);
    shared.done.store(2);
    return 0;
  });
  auto const b       = export_block(shared);
  wait_for(shared.done, 2);
  say("forged_close_status", shared.value.load());
  require(cudaFree(b.block), "cudaFree");
  std::string message;
  say("pause_while_open_elsewhere", pause_and_resume(message));
  say("pause_while_open_message", message);
  shared.stage.store(2);
  say("holder_status", exit_status(holder));
  say("forger_status", exit_status(forger));
  long long waited = 0;
  say("pause_after_holder_exited", pause_within(5'000, message, waited));
  require(cudaFree(b.front), "cudaFree (front)");
  return 0;
}

/// Requests with descriptors attached, from a process of the same user: none of them stays open
/// in the exporter.
int stray_descriptors()
{
  auto& shared       = *make_shared_state();
  pid_t const sender = fork_child([&] {
    wait_for(shared.stage, 1);
    auto const name = socket_of(getppid());
    int const a     = open("/dev/null", O_RDONLY);
    int const b     = open("/dev/null", O_RDONLY);
    int answered    = 0;
    for (int i = 0; i < 300; ++i) {
      bool more = false;
      auto bad  = request_for(shared.handle, 1);
      bad.magic[0] ^= 1;  // refused: the descriptors must not stay either way
      answered += send_raw(name, i % 2 == 0 ? bad : request_for(shared.handle, 7), {a, b}, more) >= 0;
    }
    shared.value.store(answered);
    shared.done.store(1);
    return 0;
  });
  start_cuda();
  void* warm = nullptr;  // the shim's threads and files, before counting
  require(cudaMalloc(&warm, 4096), "cudaMalloc");
  auto const before = open_descriptors();
  auto const b      = export_block(shared);
  auto const middle = open_descriptors();  // the export's socket
  wait_for(shared.done, 1);
  usleep(100'000);  // the exporter closes each connection just after its answer
  say("sender_status", exit_status(sender));
  say("answered_requests", shared.value.load());
  say("descriptors_added_by_export", static_cast<long long>(middle - before));
  say("descriptors_added_by_requests", static_cast<long long>(open_descriptors()) - static_cast<long long>(middle));
  require(cudaFree(b.block), "cudaFree");
  require(cudaFree(b.front), "cudaFree (front)");
  require(cudaFree(warm), "cudaFree");
  return 0;
}

/// Idle connections (a full backlog and more) delay nobody: an importer opens and closes at once,
/// and its close is not lost.
int idle_connections()
{
  auto& shared       = *make_shared_state();
  pid_t const idler  = fork_child([&] {
    wait_for(shared.stage, 1);
    auto const held = hold_connections(socket_of(getppid()), 200);
    shared.count.store(static_cast<long long>(held.size()));
    shared.done.store(1);
    wait_for(shared.stage, 3);
    for (int fd : held) { close(fd); }
    return 0;
  });
  pid_t const reader = fork_child([&] {
    wait_for(shared.done, 1);
    auto const start = clock_type::now();
    int const status = import_block(shared, 0x64);
    shared.done.store(2);
    std::printf("import_ms=%lld\n", ms_since(start));
    return status;
  });
  auto const b       = export_block(shared);
  say("importer_status", exit_status(reader));
  say("idle_connections", shared.count.load());
  say("opened", name_of(static_cast<CUresult>(shared.result.load())));
  require(cudaFree(b.block), "cudaFree");
  std::string message;
  say("pause_after_close", pause_and_resume(message));
  say("pause_message", message);
  shared.stage.store(3);
  say("idler_status", exit_status(idler));
  require(cudaFree(b.front), "cudaFree (front)");
  return 0;
}

/// A request of a kind that does not exist, with the right id and token: refused, nothing opened.
int unknown_kind()
{
  auto& shared      = *make_shared_state();
  pid_t const asker = fork_child([&] {
    wait_for(shared.stage, 1);
    bool more        = false;
    int const status = send_raw(socket_of(getppid()), request_for(shared.handle, 7), {}, more);
    shared.value.store(status);
    shared.result.store(more ? 1 : 0);
    return 0;
  });
  auto const b      = export_block(shared);
  say("asker_status", exit_status(asker));
  say("unknown_kind_status", shared.value.load());
  say("unknown_kind_answer_went_on", shared.result.load());
  require(cudaFree(b.block), "cudaFree");
  std::string message;
  say("pause_after_free", pause_and_resume(message));
  say("pause_message", message);
  require(cudaFree(b.front), "cudaFree (front)");
  return 0;
}

/// A process that is not an exporter hands out a handle of its own and answers an open with a
/// hundred million pieces: the open fails at once, allocating nothing for them.
int forged_exporter()
{
  auto& shared       = *make_shared_state();
  pid_t const forger = fork_child([&] {
    auto const channel = ipc::random_u64();
    int const listener = listen_abstract(ipc::socket_name(getpid(), channel));
    shared.handle      = ipc::encode({static_cast<std::uint32_t>(getpid()), 0, 1, 2, block_size, channel});
    shared.stage.store(1);
    int const connection = accept(listener, nullptr, nullptr);
    ipc::request request{};
    (void)recv(connection, &request, sizeof request, MSG_WAITALL);
    ipc::reply reply{};
    std::memcpy(reply.magic, ipc::reply_magic, sizeof reply.magic);
    reply.status = CUDA_SUCCESS;
    reply.pieces = 100'000'000;
    (void)send(connection, &reply, sizeof reply, MSG_NOSIGNAL);
    wait_for(shared.done, 1);
    return 0;
  });
  start_cuda();
  wait_for(shared.stage, 1);
  auto const rss   = max_rss_mib();
  auto const start = clock_type::now();
  CUdeviceptr p    = 0;
  say("forged_open", name_of(cuIpcOpenMemHandle(&p, shared.handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)));
  say("forged_open_ms", ms_since(start));
  say("rss_growth_mib", max_rss_mib() - rss);
  shared.done.store(1);
  say("forger_status", exit_status(forger));
  return 0;
}

/// The exporter exits, and another process (another user, where this runs as root) takes its
/// socket's name: an importer of the old handle refuses it before it sends the token.
int squatter()
{
  auto& shared         = *make_shared_state();
  pid_t const exporter = fork_child([&] {
    auto const b = export_block(shared);
    wait_for(shared.stage, 2);
    (void)b;
    return 0;  // exits with the block exported
  });
  pid_t const taker    = fork_child([&] {
    wait_for(shared.stage, 3);
    auto const uid    = become_other_user();
    auto const fields = ipc::decode(shared.handle);
    require(fields.has_value(), "the handle is the shim's");
    int const listener = listen_abstract(ipc::socket_name(static_cast<pid_t>(fields->pid), fields->channel));
    shared.value.store(static_cast<long long>(uid));
    shared.stage.store(4);
    int const connection = accept(listener, nullptr, nullptr);
    timeval const limit{3, 0};
    setsockopt(connection, SOL_SOCKET, SO_RCVTIMEO, &limit, sizeof limit);
    char buffer[256];
    auto const n = recv(connection, buffer, sizeof buffer, MSG_WAITALL);
    shared.result.store(static_cast<int>(std::max<ssize_t>(n, 0)));
    shared.done.store(1);
    return 0;
  });
  wait_for(shared.stage, 1);
  shared.stage.store(2);
  say("exporter_status", exit_status(exporter));
  shared.stage.store(3);
  wait_for(shared.stage, 4);
  say("taker_user", shared.value.load());
  start_cuda();
  CUdeviceptr p = 0;
  say("squatted_open", name_of(cuIpcOpenMemHandle(&p, shared.handle, CU_IPC_MEM_LAZY_ENABLE_PEER_ACCESS)));
  // The taker waits up to 3 s for a request; none must come.
  say("taker_status", exit_status(taker));
  say("taker_read_bytes", shared.result.load());
  return 0;
}

/// The exporter runs out of descriptors while connections come in: it keeps serving once it has
/// some again, and an importer opens the block.
int out_of_descriptors()
{
  auto& shared       = *make_shared_state();
  pid_t const flood  = fork_child([&] {
    wait_for(shared.stage, 2);
    auto const held = hold_connections(socket_of(getppid()), 40);
    shared.count.store(static_cast<long long>(held.size()));
    usleep(1'000'000);  // the exporter's accepts fail meanwhile
    for (int fd : held) { close(fd); }
    shared.done.store(1);
    return 0;
  });
  pid_t const reader = fork_child([&] {
    wait_for(shared.done, 2);
    return import_block(shared, 0x65);
  });
  auto const b       = export_block(shared);
  rlimit limit{};
  getrlimit(RLIMIT_NOFILE, &limit);
  auto const original = limit;
  limit.rlim_cur      = open_descriptors() + 2;
  require(setrlimit(RLIMIT_NOFILE, &limit) == 0, "setrlimit");
  shared.stage.store(2);
  wait_for(shared.done, 1);
  usleep(300'000);  // the accepts that failed were retried and the connections found closed
  require(setrlimit(RLIMIT_NOFILE, &original) == 0, "setrlimit (restored)");
  say("flood_connections", shared.count.load());
  shared.done.store(2);
  say("flood_status", exit_status(flood));
  say("importer_status", exit_status(reader));
  say("opened_after_running_out", name_of(static_cast<CUresult>(shared.result.load())));
  require(cudaFree(b.block), "cudaFree");
  require(cudaFree(b.front), "cudaFree (front)");
  return 0;
}

}  // namespace

int main(int argc, char** argv)
{
  std::string_view const scenario = argc > 1 ? argv[1] : "";
  struct entry {
    std::string_view name;
    int (*run)();
  };
  constexpr entry scenarios[] = {{"open-close", open_close},
                                 {"importer-dies", importer_dies},
                                 {"forged-close", forged_close},
                                 {"stray-descriptors", stray_descriptors},
                                 {"idle-connections", idle_connections},
                                 {"unknown-kind", unknown_kind},
                                 {"forged-exporter", forged_exporter},
                                 {"squatter", squatter},
                                 {"out-of-descriptors", out_of_descriptors}};
  for (auto const& e : scenarios) {
    if (e.name == scenario) {
      int const status = e.run();
      std::fflush(stdout);
      return status;
    }
  }
  std::printf("FAIL: unknown scenario '%.*s'\n", static_cast<int>(scenario.size()), scenario.data());
  return 2;
}
