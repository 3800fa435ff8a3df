// SPDX-License-Identifier: Apache-2.0
#include "sequential_replay.hpp"

#include "logged_stream.hpp"

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <memory>
#include <unordered_map>
#include <vector>

namespace rmm::trace {

replay_result replay_sequential(std::vector<event> const& events,
                                rmm::device_async_resource_ref mr,
                                std::function<std::size_t()> const& reserved_bytes)
{
  struct live_allocation {
    void* ptr;
    std::size_t size;
    rmm::cuda_stream_view stream;
  };
  std::unordered_map<std::uintptr_t, live_allocation> live;  // logged pointer -> replayed one
  std::vector<live_allocation> live_at_null;                 // zero-byte allocations logged with the null pointer
  std::unordered_map<std::uintptr_t, std::unique_ptr<rmm::cuda_stream>> streams;
  auto stream_for = [&streams](std::uintptr_t logged) -> rmm::cuda_stream_view {
    if (auto const builtin = builtin_stream(logged)) { return *builtin; }
    auto& s = streams[logged];
    if (!s) { s = std::make_unique<rmm::cuda_stream>(); }
    return s->view();
  };

  // Whatever is live when the replay stops, early by an error or at the end, goes back.
  auto free_live = [&] {
    for (auto const& [logged, a] : live) { mr.deallocate(a.stream, a.ptr, a.size, rmm::CUDA_ALLOCATION_ALIGNMENT); }
    for (auto const& a : live_at_null) { mr.deallocate(a.stream, a.ptr, a.size, rmm::CUDA_ALLOCATION_ALIGNMENT); }
    live.clear();
    live_at_null.clear();
  };
  replay_result result{};
  std::size_t live_bytes = 0;
  try {
    for (auto const& e : events) {
      switch (e.kind) {
        case action::allocate: {
          auto const stream = stream_for(e.stream);
          void* ptr         = mr.allocate(stream, e.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
          if (e.pointer == 0) {
            // Only zero-byte allocations may be logged with the null pointer, and any number of them
            // (the log check refuses other null ones); each is freed by one free of the null pointer.
            live_at_null.push_back(live_allocation{ptr, e.size, stream});
          } else if (!live.emplace(e.pointer, live_allocation{ptr, e.size, stream}).second) {
            mr.deallocate(stream, ptr, e.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
            throw replay_error{fmt::format("line {}: pointer {:#x} allocated twice without a free", e.line, e.pointer)};
          }
          ++result.allocations;
          live_bytes += e.size;
          result.peak_live_bytes = std::max(result.peak_live_bytes, live_bytes);
          if (reserved_bytes) { result.peak_reserved_bytes = std::max(result.peak_reserved_bytes, reserved_bytes()); }
          break;
        }
        case action::free: {
          if (e.pointer == 0 && !live_at_null.empty()) {
            auto const a = live_at_null.back();
            live_at_null.pop_back();
            mr.deallocate(stream_for(e.stream), a.ptr, a.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
            live_bytes -= a.size;
            ++result.frees;
            break;
          }
          auto it = live.find(e.pointer);
          if (it == live.end()) {
            throw replay_error{fmt::format("line {}: free of {:#x}, which is not allocated", e.line, e.pointer)};
          }
          mr.deallocate(stream_for(e.stream), it->second.ptr, it->second.size, rmm::CUDA_ALLOCATION_ALIGNMENT);
          live_bytes -= it->second.size;
          live.erase(it);
          ++result.frees;
          break;
        }
        case action::allocate_failure: ++result.logged_failures; break;
      }
    }
  } catch (...) {
    free_live();
    throw;
  }
  free_live();
  for (auto const& [logged, s] : streams) { s->synchronize(); }
  return result;
}

}  // namespace rmm::trace
