// SPDX-License-Identifier: Apache-2.0
#pragma once

// Records of the program's threads that other threads read (the report's counts, the blocks a
// thread keeps), on the heap and listed, so that a reader never reaches a thread's own storage
// after that thread is gone. A pthread key hands each record to a function of the owner's when
// its thread ends; a key's destructor rather than a thread-local's, so that a record made while
// the thread ends (by another key's destructor, after the C++ thread-locals are gone) is still
// seen, in the next round. One made in glibc's last round is never seen: it stays listed, and
// readers keep using it.

#include <pthread.h>

#include <algorithm>
#include <mutex>
#include <new>
#include <vector>

namespace rmm::shim {

template <class Record>
class thread_records {
 public:
  /// `at_thread_end` gets the ending thread's record (as void*) and ends with remove().
  explicit thread_records(void (*at_thread_end)(void*)) noexcept
    : key_made_{pthread_key_create(&key_, at_thread_end) == 0}
  {
  }
  thread_records(thread_records const&)            = delete;
  thread_records& operator=(thread_records const&) = delete;

  /// A new record for the calling thread, listed and watched for the thread's end; null when that
  /// cannot be arranged (no key, no memory).
  [[nodiscard]] Record* add() noexcept
  {
    if (!key_made_) { return nullptr; }
    auto* record = new (std::nothrow) Record{};
    if (record == nullptr) { return nullptr; }
    {
      std::lock_guard lock{mutex_};
      try {
        records_.push_back(record);
      } catch (...) {
        delete record;
        return nullptr;
      }
    }
    if (pthread_setspecific(key_, record) != 0) {
      remove(record, [](Record&) {});
      return nullptr;
    }
    return record;
  }

  /// Unlists `record` after `last_look(record)`, both under the lock, then deletes it.
  template <class LastLook>
  void remove(Record* record, LastLook&& last_look) noexcept
  {
    {
      std::lock_guard lock{mutex_};
      last_look(*record);
      std::erase(records_, record);
    }
    delete record;
  }

  /// Guards the list: hold it to read records().
  [[nodiscard]] std::mutex& mutex() noexcept { return mutex_; }
  [[nodiscard]] std::vector<Record*>& records() noexcept { return records_; }

 private:
  std::mutex mutex_;
  std::vector<Record*> records_;
  pthread_key_t key_{};
  bool key_made_;
};

}  // namespace rmm::shim
