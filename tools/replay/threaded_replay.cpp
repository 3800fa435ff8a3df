// SPDX-License-Identifier: Apache-2.0
#include "threaded_replay.hpp"

#include "turnstile.hpp"

#include <logged_stream.hpp>

#include <rmm/aligned.hpp>
#include <rmm/cuda_stream.hpp>
#include <rmm/error.hpp>

#include <fmt/format.h>

#include <mutex>
#include <new>
#include <thread>
#include <vector>

namespace rmm::replay {

namespace {

/// What failed, as the message quoting it needs it: an allocation failure without the marker of
/// its kind (the replay says itself that the allocation failed).
std::string reason_of(std::exception const& e)
{
  if (auto const* failed = dynamic_cast<rmm::bad_alloc const*>(&e)) { return failed->reason(); }
  return e.what();
}

using clock = std::chrono::steady_clock;

/// The replaying thread of every step: the turnstile wakes it alone when its step comes.
std::vector<std::size_t> thread_of_each_step(replay_plan const& plan)
{
  std::vector<std::size_t> thread_of_step(plan.steps.size());
  for (std::size_t thread = 0; thread < plan.thread_steps.size(); ++thread) {
    for (auto const step : plan.thread_steps[thread]) { thread_of_step[step] = thread; }
  }
  return thread_of_step;
}

/// What one replaying thread counted.
struct thread_totals {
  std::chrono::nanoseconds in_resource{};
  std::size_t events{};
  std::size_t reproduced_failures{};
  std::size_t unexpected_successes{};
};

class threaded_replay {
 public:
  threaded_replay(replay_plan const& plan, rmm::device_async_resource_ref mr, step_observer const& observer)
    : plan_{plan},
      mr_{mr},
      after_step_{observer},
      pointers_(plan.steps.size()),
      live_(plan.steps.size()),
      turn_{thread_of_each_step(plan), plan.thread_steps.size()}
  {
    // Streams are created before the replay so that creating them is not timed.
    for (auto const logged : plan.logged_streams) {
      // The per-thread stream is each replaying thread's own, as logged.
      auto const builtin = rmm::trace::builtin_stream(logged);
      streams_.push_back(builtin ? *builtin : owned_streams_.emplace_back().view());  // handles survive moves
    }
  }

  replay_measurement run()
  {
    RMM_CUDA_TRY(cudaDeviceSynchronize());  // earlier work must not be timed with this replay
    std::vector<std::thread> threads;
    threads.reserve(plan_.thread_steps.size());
    try {
      for (std::size_t thread = 0; thread < plan_.thread_steps.size(); ++thread) {
        threads.emplace_back([this, thread] { replay_thread(thread); });
      }
    } catch (...) {  // could not start a thread: release the ones waiting for their turn
      turn_.stop();
      for (auto& t : threads) { t.join(); }
      throw;
    }
    auto const start = clock::now();
    turn_.open(0);
    for (auto& t : threads) { t.join(); }
    result_.wall    = clock::now() - start;
    result_.wakeups = turn_.wakeups();
    free_what_the_log_left_live();
    for (auto const& stream : owned_streams_) { stream.synchronize(); }
    RMM_CUDA_TRY(cudaDeviceSynchronize());
    return std::move(result_);
  }

 private:
  void replay_thread(std::size_t thread)
  {
    thread_totals totals{};
    for (auto const step : plan_.thread_steps[thread]) {
      if (!turn_.wait_for(thread, step)) { break; }
      if (!replay_one_step(step, totals)) {
        turn_.stop();
        break;
      }
      turn_.open(step + 1);
    }
    std::scoped_lock lock{result_mutex_};
    result_.in_resource += totals.in_resource;
    result_.events_replayed += totals.events;
    result_.reproduced_failures += totals.reproduced_failures;
    result_.unexpected_successes += totals.unexpected_successes;
  }

  /// False when the replay must stop (the failure is recorded).
  bool replay_one_step(std::size_t index, thread_totals& totals)
  {
    auto const& step  = plan_.steps[index];
    auto const stream = streams_[step.stream];
    switch (step.kind) {
      case rmm::trace::action::allocate: {
        auto const start = clock::now();
        try {
          pointers_[index] = mr_.allocate(stream, step.bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
        } catch (std::exception const& e) {
          record_failure(
            step, fmt::format("allocation of {} bytes failed, but succeeded in the log: {}", step.bytes, reason_of(e)));
          return false;
        }
        totals.in_resource += clock::now() - start;
        live_[index] = true;
        break;
      }
      case rmm::trace::action::free: {
        auto const& allocation = plan_.steps[step.allocation];
        auto const start       = clock::now();
        mr_.deallocate(stream, pointers_[step.allocation], allocation.bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
        totals.in_resource += clock::now() - start;
        live_[step.allocation] = false;
        break;
      }
      case rmm::trace::action::allocate_failure: {
        auto const start = clock::now();
        void* ptr{};
        try {
          ptr = mr_.allocate(stream, step.bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);
        } catch (std::bad_alloc const&) {
          totals.in_resource += clock::now() - start;
          ++totals.reproduced_failures;
          break;
        } catch (std::exception const& e) {
          record_failure(step, fmt::format("logged allocation failure of {} bytes failed with an error that is not "
                                           "an allocation failure: {}",
                                           step.bytes, e.what()));
          return false;
        }
        mr_.deallocate(stream, ptr, step.bytes, rmm::CUDA_ALLOCATION_ALIGNMENT);  // the application never had it
        totals.in_resource += clock::now() - start;
        ++totals.unexpected_successes;
        break;
      }
    }
    ++totals.events;
    if (after_step_) { after_step_(index); }
    return true;
  }

  void record_failure(replay_step const& step, std::string message)
  {
    std::scoped_lock lock{result_mutex_};
    if (!result_.failure) { result_.failure = replay_failure{step.line, std::move(message)}; }
  }

  void free_what_the_log_left_live()
  {
    for (std::size_t i = 0; i < plan_.steps.size(); ++i) {
      if (live_[i]) {
        mr_.deallocate(streams_[plan_.steps[i].stream], pointers_[i], plan_.steps[i].bytes,
                       rmm::CUDA_ALLOCATION_ALIGNMENT);
        live_[i] = false;
      }
    }
  }

  replay_plan const& plan_;
  rmm::device_async_resource_ref mr_;
  step_observer const& after_step_;
  std::vector<rmm::cuda_stream> owned_streams_;
  std::vector<rmm::cuda_stream_view> streams_;  // per logged stream index
  // Per step; written and read only by the thread whose turn it is (the turnstile orders them).
  std::vector<void*> pointers_;
  std::vector<char> live_;
  turnstile turn_;
  std::mutex result_mutex_;
  replay_measurement result_;
};

}  // namespace

replay_measurement replay_threaded(replay_plan const& plan,
                                   rmm::device_async_resource_ref mr,
                                   step_observer const& after_step)
{
  return threaded_replay{plan, mr, after_step}.run();
}

}  // namespace rmm::replay
