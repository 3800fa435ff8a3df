// SPDX-License-Identifier: Apache-2.0
// A device kept near its capacity by many threads: 16 threads, each holding up to 1/16 of 85% of
// the device's free memory (or of the fraction given as the argument) in blocks of random sizes
// (up to all of its share), freeing and allocating again. Natively cudaMalloc never fails here, since what is live
// always fits; a pool must not fail either, however its free memory is cut up. Each block carries a tag at both ends,
// read back before its free: two live blocks that overlap would overwrite each other's.

#include "conformance.hpp"

#include <algorithm>
#include <atomic>
#include <random>
#include <thread>
#include <vector>

using namespace conformance;

namespace {

constexpr int threads    = 16;
constexpr int operations = 300;

struct block {
  void* ptr;
  std::size_t size;
  std::uint64_t tag;
};

bool write_tag(block const& b)
{
  auto* const bytes = static_cast<char*>(b.ptr);
  return cudaMemcpy(bytes, &b.tag, sizeof b.tag, cudaMemcpyHostToDevice) == cudaSuccess &&
         cudaMemcpy(bytes + b.size - sizeof b.tag, &b.tag, sizeof b.tag, cudaMemcpyHostToDevice) == cudaSuccess;
}

bool tag_intact(block const& b)
{
  auto const* const bytes = static_cast<char const*>(b.ptr);
  std::uint64_t first     = 0;
  std::uint64_t last      = 0;
  return cudaMemcpy(&first, bytes, sizeof first, cudaMemcpyDeviceToHost) == cudaSuccess &&
         cudaMemcpy(&last, bytes + b.size - sizeof last, sizeof last, cudaMemcpyDeviceToHost) == cudaSuccess &&
         first == b.tag && last == b.tag;
}

struct totals {
  std::atomic<int> failures{0};
  std::atomic<int> overwritten{0};
  std::atomic<int> errors{0};
};

void churn(int thread, std::size_t share, totals& t)
{
  std::mt19937_64 random{static_cast<std::uint64_t>(thread) * 7919 + 1};
  std::uniform_int_distribution<std::size_t> size_of{std::size_t{1} << 20, share};
  std::vector<block> live;
  std::size_t held   = 0;
  auto const release = [&](std::size_t at) {
    if (!tag_intact(live[at])) { ++t.overwritten; }
    if (cudaFree(live[at].ptr) != cudaSuccess) { ++t.errors; }
    held -= live[at].size;
    live.erase(live.begin() + static_cast<std::ptrdiff_t>(at));
  };
  for (int op = 0; op < operations; ++op) {
    if (!live.empty() && random() % 3 == 0) {
      release(random() % live.size());
      continue;
    }
    auto const size = size_of(random) / 8 * 8;
    while (held + size > share) { release(random() % live.size()); }
    void* p = nullptr;
    if (cudaMalloc(&p, size) != cudaSuccess) {
      ++t.failures;
      (void)cudaGetLastError();
      continue;
    }
    live.push_back({p, size, (static_cast<std::uint64_t>(thread) << 32) | static_cast<std::uint64_t>(op)});
    held += size;
    if (!write_tag(live.back())) { ++t.errors; }
  }
  while (!live.empty()) { release(live.size() - 1); }
}

}  // namespace

int main(int argc, char** argv)
{
  require(cudaFree(nullptr), "cudaFree(nullptr)");
  std::size_t free  = 0;
  std::size_t total = 0;
  require(cudaMemGetInfo(&free, &total), "cudaMemGetInfo");
  double const fraction = argc > 1 ? std::atof(argv[1]) : 0.85;
  auto const share      = static_cast<std::size_t>(static_cast<double>(free) * fraction) / threads / 8 * 8;
  fact("share_per_thread_mib", share >> 20);
  totals t;
  std::vector<std::thread> workers;
  for (int i = 0; i < threads; ++i) { workers.emplace_back(churn, i, share, std::ref(t)); }
  for (auto& w : workers) { w.join(); }
  check("near_capacity.failed_allocations", std::to_string(t.failures.load()));
  check("near_capacity.overwritten_blocks", std::to_string(t.overwritten.load()));
  check("near_capacity.errors", std::to_string(t.errors.load()));
  return 0;
}
