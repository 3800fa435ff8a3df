// SPDX-License-Identifier: Apache-2.0
#pragma once

// The blocks this process exported with cuIpcGetMemHandle (ipc_channel.hpp), and the answers to
// the processes that open and close their handles (served by ipc_server.hpp). An exported block
// that the program frees while another process still has it open is not reused until the last of
// them closes it or exits (the memory of a native cudaMalloc lives on in the processes that opened
// it, too). Each open is counted for the process that made it: only that process can close it.

#include "ipc/ipc_server.hpp"
#include "stacks/thread_cache.hpp"  // kept_block

#include <cuda.h>

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <optional>
#include <vector>

namespace rmm::shim {

class ipc_exports final : private ipc_server::handler {
 public:
  /// Gives back a freed block once no other process has it open (called on the serving thread).
  using give_back_fn = void (*)(kept_block const& block) noexcept;

  ipc_exports() noexcept                     = default;
  ipc_exports(ipc_exports const&)            = delete;
  ipc_exports& operator=(ipc_exports const&) = delete;

  /// A handle for the block [start, start + size) of `device`, found piece by piece through the
  /// driver: the physical allocations under it (shareable as file descriptors), or the cudaMalloc
  /// allocation that holds it. The same block exported again gets the same handle.
  /// CUDA_ERROR_NOT_SUPPORTED (said once on stderr) when its memory cannot be shared. A freed block
  /// held for its importers goes back through `give_back` (the serving layer's, handed down).
  [[nodiscard]] CUresult export_block(std::uintptr_t start,
                                      std::size_t size,
                                      int device,
                                      give_back_fn give_back,
                                      CUipcMemHandle* out);

  /// The program freed the block at `start`: true when another process has it open, and then
  /// `block` (where it lies in its stack) waits for the last close; false when it may be reused.
  [[nodiscard]] bool hold_freed(std::uintptr_t start, kept_block const& block) noexcept;

  /// A device reset destroyed the memory of `device`'s exports: their handles open nothing from
  /// now on, and a block exported held for a close is dropped with the rest of the stack.
  void forget_device(int device) noexcept;

  /// Whether any block is exported now (one load: frees need not look otherwise).
  [[nodiscard]] bool any() const noexcept { return count_.load(std::memory_order_acquire) != 0; }

 private:
  struct place {
    std::int64_t offset;  // from the block's start
    std::uint64_t size;
    bool legacy;
    CUipcMemHandle legacy_handle;
  };
  /// A process that has an export open, and how many times (a process opens once, but a forged
  /// or repeated request must not make the count go wrong).
  struct opener {
    pid_t pid;
    int opens;
  };
  struct exported {
    std::uint64_t id;
    std::uint64_t token;
    std::uintptr_t start;
    std::size_t size;
    int device;
    std::vector<place> places;
    std::vector<opener> openers;  // the processes that have it open now
    bool freed;                   // the program freed it; it waits for the last close
    kept_block block;
  };

  /// The places under [start, start + size), or the reason there are none.
  [[nodiscard]] CUresult find_places(std::uintptr_t start, std::size_t size, std::vector<place>& places) const;
  /// Starts the serving thread once per process; false when the socket cannot be made.
  [[nodiscard]] bool serving();
  [[nodiscard]] CUipcMemHandle handle_of(exported const& e) const noexcept;

  // ipc_server::handler, on the serving thread.
  bool answer(int connection, ipc::request const& request, pid_t importer) noexcept override;
  void importer_exited(pid_t importer) noexcept override;

  /// An open of export `id` for `importer`: the reply and its pieces sent; true when it was counted.
  [[nodiscard]] bool answer_open(int connection, std::uint64_t id, pid_t importer) noexcept;
  /// A close of export `id` by `importer`, which must have it open.
  void answer_close(int connection, std::uint64_t id, pid_t importer) noexcept;
  [[nodiscard]] bool send_places(int connection, exported const& e) noexcept;
  /// Takes one open of `importer` off export `e`; the block to give back when that was the last
  /// open of a freed block. Caller holds mutex_.
  [[nodiscard]] std::optional<kept_block> drop_open(std::vector<exported>::iterator e, pid_t importer, bool all);
  void count_changed() noexcept { count_.store(exports_.size(), std::memory_order_release); }

  /// Returns a held block to its stack, through the function the first export handed down.
  void hand_back(kept_block const& block) const noexcept
  {
    if (auto const give_back = give_back_.load(std::memory_order_acquire)) { give_back(block); }
  }

  std::atomic<give_back_fn> give_back_{nullptr};  // set by the first export, before any block is held
  std::mutex mutex_;
  std::vector<exported> exports_;  // under mutex_
  std::atomic<std::size_t> count_{0};
  std::uint64_t next_id_{1};  // under mutex_
  bool serving_{false};       // under mutex_
  std::uint64_t channel_{0};  // the socket's name; under mutex_
};

}  // namespace rmm::shim
