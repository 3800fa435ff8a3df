// SPDX-License-Identifier: Apache-2.0
// The arena lock (light_mutex): mutual exclusion under contention, including threads that went to
// sleep on it, and try_lock's answer.

#include "mr/detail/light_mutex.hpp"

#include <gtest/gtest.h>

#include <chrono>
#include <cstdint>
#include <mutex>
#include <thread>
#include <vector>

namespace rmm::test {
namespace {

using rmm::mr::detail::light_mutex;

TEST(LightMutex, TryLockFailsWhileHeldAndSucceedsAfter)
{
  light_mutex m;
  ASSERT_TRUE(m.try_lock());
  EXPECT_FALSE(m.try_lock());
  m.unlock();
  EXPECT_TRUE(m.try_lock());
  m.unlock();
}

TEST(LightMutex, ManyThreadsNeverOverlapAndNoIncrementIsLost)
{
  light_mutex m;
  std::uint64_t counter = 0;  // plain: only the lock protects it
  int inside            = 0;
  bool overlapped       = false;
  constexpr int threads = 8;
  constexpr int rounds  = 20000;
  std::vector<std::thread> pool;
  for (int t = 0; t < threads; ++t) {
    pool.emplace_back([&] {
      for (int i = 0; i < rounds; ++i) {
        std::lock_guard lock{m};
        if (++inside != 1) { overlapped = true; }
        ++counter;
        if (i % 1000 == 0) { std::this_thread::yield(); }  // long sections: others spin out and sleep
        --inside;
      }
    });
  }
  for (auto& t : pool) { t.join(); }
  EXPECT_FALSE(overlapped);
  EXPECT_EQ(counter, std::uint64_t{threads} * rounds);
}

TEST(LightMutex, ASleeperIsWokenByTheUnlock)
{
  light_mutex m;
  m.lock();
  bool got_it = false;
  std::thread waiter{[&] {
    std::lock_guard lock{m};  // spins out, then sleeps until the unlock below
    got_it = true;
  }};
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  m.unlock();
  waiter.join();
  EXPECT_TRUE(got_it);
}

}  // namespace
}  // namespace rmm::test
