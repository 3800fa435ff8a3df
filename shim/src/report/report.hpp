// SPDX-License-Identifier: Apache-2.0
#pragma once

// What the shim did, per device: allocations and frees it served, calls it passed through and why,
// failures, live and peak bytes, and the time spent allocating. Counting costs a few relaxed
// stores into the calling thread's own block (no shared cache line, no lock); the report reads
// every block and the stacks' statistics and calls no CUDA, so it is safe at exit.

#include "devices.hpp"
#include "driver/graph_memory.hpp"

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>

namespace rmm::shim {

class device_stacks;
class deferred_frees;
class program_streams;
class process_pause;
class region_table;
class physical_cache;

/// Why a call went to the real function instead of the stack.
enum class pass_reason : std::uint8_t {
  disabled,         ///< the kill switch
  null_or_empty,    ///< a null pointer, a null output or zero bytes: the real function's answer
  foreign_pointer,  ///< a free of memory the shim did not hand out
  other_context,    ///< no current context, or not a device's primary context
  stream_capture,   ///< an asynchronous call on a capturing stream (it becomes a graph node)
  unknown_stream,   ///< an asynchronous call on a stream the driver does not know (destroyed): its error
  program_pool,     ///< cudaMallocAsync while the program set its own pool as the device's current,
                    ///< or an allocation from a pool the program names (cuMemAllocFromPoolAsync)
  managed,          ///< managed memory (cudaMallocManaged / cuMemAllocManaged)
  virtual_memory,   ///< physical memory the program maps itself (cuMemCreate)
  exiting,          ///< after exit began
  count
};
[[nodiscard]] char const* to_string(pass_reason reason) noexcept;  ///< for people
[[nodiscard]] char const* json_name(pass_reason reason) noexcept;  ///< for the JSON report

/// Where a served allocation's block came from: the stack, or the block the calling thread freed
/// last and kept (thread_cache.hpp).
enum class block_source : bool { stack, kept };

/// The driver calls that make and destroy a physical allocation the program maps itself.
enum class physical_call : std::uint8_t { create, release };

class counters {
 public:
  void served_allocation(int device, std::size_t bytes, block_source source = block_source::stack) noexcept;
  void served_free(int device, std::size_t bytes) noexcept;
  void failed_allocation(int device) noexcept;
  /// `device` was reset: its `blocks` live blocks (`bytes`) went with its memory.
  void device_reset(int device, std::size_t blocks, std::size_t bytes) noexcept;
  void passed(pass_reason reason) noexcept;
  /// An allocation of `bytes` the shim does not serve by design (managed memory, a pool the
  /// program made, memory it maps itself): counted under `reason`, its bytes summed.
  void passed_by(pass_reason reason, std::size_t bytes) noexcept;
  /// One successful cuMemCreate or cuMemRelease of the program's own (virtual memory management),
  /// and the nanoseconds it took: what a cache of physical allocations could save at most.
  void physical_allocation_call(physical_call call, std::uint64_t nanoseconds) noexcept;
  struct physical_calls {
    std::uint64_t creates{}, releases{}, ns{};
  };
  [[nodiscard]] physical_calls physical_allocation_calls() const noexcept;
  /// Nanoseconds of one sampled call (the caller samples: see should_time()).
  void timed(int device, std::uint64_t nanoseconds) noexcept;
  /// True for one call in `time_sample_rate`: timing every call would cost more than counting.
  [[nodiscard]] static bool should_time() noexcept;
  static constexpr std::uint64_t time_sample_rate = 64;

  struct device_totals {
    std::uint64_t allocations{}, allocated_bytes{}, kept_reuses{}, frees{}, freed_bytes{}, failures{}, timed_calls{},
      timed_ns{};
    std::size_t live_bytes{}, peak_live_bytes{};
    std::size_t resets{}, reset_blocks{}, reset_bytes{};  ///< device resets, and the live blocks they destroyed
  };
  [[nodiscard]] device_totals totals(int device) const noexcept;
  /// The most bytes live at once on `device` since the last reset_peak_since (the start, before
  /// any): the high-water mark a program may reset on a default pool (default_pools.hpp).
  [[nodiscard]] std::size_t peak_live_since_reset(int device) const noexcept;
  void reset_peak_since(int device) noexcept;
  [[nodiscard]] std::uint64_t passes(pass_reason reason) const noexcept;
  [[nodiscard]] std::uint64_t passed_bytes(pass_reason reason) const noexcept;

  /// fork() handlers: the counting threads' registry is locked across the fork, and a child starts
  /// from zero.
  /// Makes what the counts need once per process, at load: a fork can then never catch another
  /// thread in the middle of making it.
  static void prepare() noexcept;
  static void before_fork() noexcept;
  static void after_fork_in_parent() noexcept;
  static void after_fork_in_child() noexcept;

 private:
  std::array<std::atomic<std::size_t>, max_devices> live_{};
  std::array<std::atomic<std::size_t>, max_devices> peak_{};
  std::array<std::atomic<std::size_t>, max_devices> peak_since_reset_{};
  std::array<std::atomic<std::uint64_t>, static_cast<std::size_t>(pass_reason::count)> passed_bytes_{};
  std::array<std::atomic<std::uint64_t>, 2> physical_calls_{};  // indexed by physical_call
  std::atomic<std::uint64_t> physical_ns_{0};
  std::array<std::atomic<std::size_t>, max_devices> resets_{};
  std::array<std::atomic<std::size_t>, max_devices> reset_blocks_{};
  std::array<std::atomic<std::size_t>, max_devices> reset_bytes_{};
};

/// Whether this process reached CUDA through the shim at all: a wrapper handed out, an allocation
/// served or failed, a call passed through. A shell or `timeout` around the program, or a helper
/// it spawns, did not; its report would only say so.
[[nodiscard]] bool reached_cuda(counters const& c) noexcept;

/// How the report is written: for people (stderr) or for programs (a file).
enum class report_format : std::uint8_t { text, json };
/// How much of it: `verbose` adds the wrappers the program was handed to the text (the JSON always
/// has them).
enum class report_detail : std::uint8_t { summary, verbose };

/// What the report reads (state.hpp's report_sources_of gathers them).
struct report_sources {
  counters const& count;
  device_stacks const& stacks;
  deferred_frees const& pending;
  program_streams const& streams;
  process_pause const& pause;
  region_table const& regions;
  physical_cache const& physical;
  /// What the driver holds for CUDA graphs, by device: asked while the program runs, never at exit.
  std::array<std::optional<graph_memory>, max_devices> graphs{};
};

/// The report, as text or JSON. Calls no CUDA.
[[nodiscard]] std::string render_report(report_format format, report_detail detail, report_sources const& sources);

/// Writes the report. Returns 0 when every byte was written and flushed, else the error (errno's
/// value: ENOSPC for a full disk).
[[nodiscard]] int write_report(std::FILE* out,
                               report_format format,
                               report_detail detail,
                               report_sources const& sources);

/// Writes the JSON report to the file `path`, whole or not at all (written beside it, then renamed
/// over it). Returns 0, or the error (errno's value).
[[nodiscard]] int save_report(std::string const& path, report_sources const& sources) noexcept;

}  // namespace rmm::shim
