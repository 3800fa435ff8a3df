// SPDX-License-Identifier: Apache-2.0
#include "staged_copy.hpp"
#include "staged_copy_threads.hpp"

#include "../../detail/cuda_driver.hpp"

#include <rmm/error.hpp>
#include <rmm/format_bytes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <condition_variable>
#include <cstring>
#include <deque>
#include <mutex>
#include <string>
#include <thread>

namespace rmm::mr::detail {

namespace {

rmm::detail::cuda_driver const& cu() { return rmm::detail::cuda_driver_table(); }

void check(CUresult result, char const* call)
{
  if (result != CUDA_SUCCESS) {
    throw rmm::cuda_error{fmt::format("staged copy: {}: {}", call, rmm::detail::describe_cu_result(result))};
  }
}

}  // namespace

/// Threads that copy between staging buffers and the contents, one job a staging buffer at a time;
/// the caller waits for the jobs of a buffer before it reuses the buffer.
class staged_copier::host_workers {
 public:
  host_workers(unsigned threads, std::size_t buffers) : queued_(buffers, 0), finished_(buffers, 0)
  {
    threads_.reserve(threads);
    for (unsigned i = 0; i < threads; ++i) {
      threads_.emplace_back([this] { run(); });
    }
  }
  /// Finishes the queued jobs (a failed copy leaves its buffers in use until then).
  ~host_workers()
  {
    {
      std::lock_guard lock{mutex_};
      stop_ = true;
    }
    work_.notify_all();
    for (auto& t : threads_) { t.join(); }
  }
  host_workers(host_workers const&)            = delete;
  host_workers& operator=(host_workers const&) = delete;

  void copy(std::size_t buffer, void* to, void const* from, std::size_t bytes)
  {
    {
      std::lock_guard lock{mutex_};
      jobs_.push_back({buffer, to, from, bytes});
      ++queued_[buffer];
    }
    work_.notify_one();
  }

  /// Whether the jobs queued on `buffer` so far are done, without waiting.
  bool idle(std::size_t buffer)
  {
    std::lock_guard lock{mutex_};
    return finished_[buffer] == queued_[buffer];
  }

  /// Waits until the jobs queued on `buffer` so far are done.
  void wait(std::size_t buffer)
  {
    std::unique_lock lock{mutex_};
    done_.wait(lock, [&] { return finished_[buffer] == queued_[buffer]; });
  }

  void wait_all()
  {
    for (std::size_t b = 0; b < queued_.size(); ++b) { wait(b); }
  }

 private:
  struct job {
    std::size_t buffer;
    void* to;
    void const* from;
    std::size_t bytes;
  };

  void run()
  {
    std::unique_lock lock{mutex_};
    for (;;) {
      work_.wait(lock, [&] { return stop_ || !jobs_.empty(); });
      if (jobs_.empty()) { return; }  // stopping, and nothing left
      auto const j = jobs_.front();
      jobs_.pop_front();
      lock.unlock();
      std::memcpy(j.to, j.from, j.bytes);
      lock.lock();
      ++finished_[j.buffer];
      done_.notify_all();
    }
  }

  std::mutex mutex_;
  std::condition_variable work_;
  std::condition_variable done_;
  std::deque<job> jobs_;
  std::vector<std::uint64_t> queued_;
  std::vector<std::uint64_t> finished_;
  bool stop_{false};
  std::vector<std::thread> threads_;
};

staged_copier::staged_copier() : threads_{staged_copy_host_threads()}
{
  // Two buffers a thread: the device fills (or empties) one while the thread copies the other.
  auto const buffers = std::size_t{2} * threads_;
  void* block        = nullptr;
  if (cu().cuMemAllocHost_v2(&block, buffers * chunk_bytes) != CUDA_SUCCESS) {
    throw rmm::out_of_memory{
      fmt::format("no page-locked host memory for {} of staging buffers", rmm::format_bytes(buffers * chunk_bytes))};
  }
  for (std::size_t b = 0; b < buffers; ++b) {
    staging_.push_back(static_cast<unsigned char*>(block) + b * chunk_bytes);
  }
  try {
    check(cu().cuStreamCreate(&stream_, CU_STREAM_NON_BLOCKING), "cuStreamCreate");
    copied_.resize(buffers);
    for (auto& e : copied_) { check(cu().cuEventCreate(&e, CU_EVENT_DISABLE_TIMING), "cuEventCreate"); }
  } catch (...) {
    for (auto e : copied_) {
      if (e != nullptr) { (void)cu().cuEventDestroy_v2(e); }
    }
    if (stream_ != nullptr) { (void)cu().cuStreamDestroy_v2(stream_); }
    (void)cu().cuMemFreeHost(block);
    throw;
  }
}

staged_copier::~staged_copier()
{
  // After a device reset these fail (the context took them along): nothing more to give back.
  for (auto e : copied_) { (void)cu().cuEventDestroy_v2(e); }
  (void)cu().cuStreamDestroy_v2(stream_);
  (void)cu().cuMemFreeHost(staging_.front());
}

std::vector<host_piece> staged_copier::split(std::vector<host_piece> const& pieces)
{
  std::vector<host_piece> chunks;
  for (auto const& p : pieces) {
    for (std::size_t done = 0; done < p.bytes; done += chunk_bytes) {
      chunks.push_back({p.device + done, p.host + done, std::min(chunk_bytes, p.bytes - done)});
    }
  }
  return chunks;
}

void staged_copier::to_host(std::vector<host_piece> const& pieces)
{
  auto const chunks  = split(pieces);
  auto const buffers = staging_.size();
  try {
    host_workers workers{threads_, buffers};
    auto const issue = [&](std::size_t chunk) {
      auto const b = chunk % buffers;
      check(cu().cuMemcpyDtoHAsync_v2(staging_[b], chunks[chunk].device, chunks[chunk].bytes, stream_),
            "cuMemcpyDtoHAsync");
      check(cu().cuEventRecord(copied_[b], stream_), "cuEventRecord");
    };
    std::size_t issued = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      if (issued == i) {  // this chunk's buffer must be free before it can be waited for
        workers.wait(i % buffers);
        issue(issued++);
      }
      // The device copies run ahead into every buffer the host threads are done with; waiting here
      // for the one just handed to a thread would leave the others idle.
      while (issued < chunks.size() && issued < i + buffers && workers.idle(issued % buffers)) { issue(issued++); }
      auto const b = i % buffers;
      check(cu().cuEventSynchronize(copied_[b]), "cuEventSynchronize");
      workers.copy(b, chunks[i].host, staging_[b], chunks[i].bytes);
    }
    workers.wait_all();
  } catch (...) {
    (void)cu().cuStreamSynchronize(stream_);  // nothing may still write the buffers
    throw;
  }
}

void staged_copier::to_device(std::vector<host_piece> const& pieces)
{
  auto const chunks  = split(pieces);
  auto const buffers = staging_.size();
  try {
    host_workers workers{threads_, buffers};
    std::size_t filled = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
      // The host fills buffers up to a buffer a thread ahead of the device's copies.
      for (; filled < chunks.size() && filled < i + buffers; ++filled) {
        auto const b = filled % buffers;
        if (filled >= buffers) { check(cu().cuEventSynchronize(copied_[b]), "cuEventSynchronize"); }
        workers.copy(b, staging_[b], chunks[filled].host, chunks[filled].bytes);
      }
      auto const b = i % buffers;
      workers.wait(b);
      check(cu().cuMemcpyHtoDAsync_v2(chunks[i].device, staging_[b], chunks[i].bytes, stream_), "cuMemcpyHtoDAsync");
      check(cu().cuEventRecord(copied_[b], stream_), "cuEventRecord");
    }
    check(cu().cuStreamSynchronize(stream_), "cuStreamSynchronize");
  } catch (...) {
    (void)cu().cuStreamSynchronize(stream_);
    throw;
  }
}

}  // namespace rmm::mr::detail
