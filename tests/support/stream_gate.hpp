// SPDX-License-Identifier: Apache-2.0
#pragma once

// Deterministic tests of stream ordering: hold a stream's work behind a gate, then decide from
// observed state (not from sleeps) whether other work waited for it.
//
// On the emulator the decisions are exact: it reports whether a stream waits on another stream's
// unfinished work and how many host threads wait for stream work. On a GPU, where those reports do
// not exist, the same calls fall back to a bounded wait (gpu_settle_time): that can let broken
// ordering pass only if the GPU leaves runnable work unstarted for that long, and never fails
// correct ordering.

#include <rmm/cuda_stream_view.hpp>

#include <chrono>
#include <functional>
#include <future>
#include <memory>
#include <string>

namespace rmm::test {

/// Holds every later operation of a stream until open(): the constructor enqueues a host function
/// that blocks until then. Works the same on the emulator and on a GPU. The destructor opens the
/// gate, so a failing test never leaves the stream stuck: declare the gate after (destroy it
/// before) anything whose destruction waits for the stream, such as a thread that synchronizes
/// or a resource whose destructor frees memory through cudaFree.
class stream_gate {
 public:
  explicit stream_gate(rmm::cuda_stream_view stream);
  ~stream_gate();
  stream_gate(stream_gate const&)            = delete;
  stream_gate& operator=(stream_gate const&) = delete;

  void open() noexcept;
  [[nodiscard]] bool is_open() const noexcept;
  /// True once the stream reached the gate, i.e. everything enqueued before it has completed.
  [[nodiscard]] bool reached() const noexcept;

 private:
  struct state;
  std::shared_ptr<state> state_;
};

/// How long the GPU fallback waits for work that may run to run.
inline constexpr std::chrono::milliseconds gpu_settle_time{200};

/// True where stream and host waits can be observed (the emulator); false on a GPU.
[[nodiscard]] bool can_observe_streams();

enum class stream_state {
  completed,  ///< every operation enqueued so far has run
  blocked,    ///< emulator: the next operation waits for unfinished work of another stream
  pending,    ///< GPU: not completed within gpu_settle_time (taken as blocked)
};
[[nodiscard]] char const* to_string(stream_state s);

/// Waits until `stream` either completed everything enqueued so far or is held up by another
/// stream's unfinished work, and says which. Call it from the thread that owns `stream` when it is
/// cudaStreamPerThread.
[[nodiscard]] stream_state settle(rmm::cuda_stream_view stream);

enum class call_state {
  returned,  ///< the call has returned
  waiting,   ///< emulator: a host thread is blocked until stream work completes
  pending,   ///< GPU: not returned within gpu_settle_time (taken as waiting)
};
[[nodiscard]] char const* to_string(call_state s);

/// Waits until a call running on another thread either returned or blocked the host on stream
/// work (synchronize, event synchronize, cudaFree...), and says which. Meant for one call in
/// flight: on the emulator any host thread waiting for stream work counts.
template <class T>
[[nodiscard]] call_state settle(std::future<T> const& call)
{
  return settle_call([&call] { return call.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
}
[[nodiscard]] call_state settle_call(std::function<bool()> const& returned);

/// True when a call running on another thread returns without the host waiting for stream work.
/// On a GPU it waits up to 10 s for the return: long enough for any allocation that does not wait
/// for the gated work, which never returns before the gate opens.
template <class T>
[[nodiscard]] bool returns_without_waiting(std::future<T> const& call)
{
  return returns_without_waiting_call(
    [&call] { return call.wait_for(std::chrono::seconds(0)) == std::future_status::ready; });
}
[[nodiscard]] bool returns_without_waiting_call(std::function<bool()> const& returned);

/// Emulator only: the next cudaEventRecord on `stream`, from any thread, pauses that thread right
/// after the record is enqueued, until resume() (or destruction). Lets a test act between a
/// record and whatever its caller does next. Fails the test when constructed on a GPU.
class event_record_pause {
 public:
  explicit event_record_pause(rmm::cuda_stream_view stream);
  ~event_record_pause();
  event_record_pause(event_record_pause const&)            = delete;
  event_record_pause& operator=(event_record_pause const&) = delete;

  /// Whether a thread is paused in cudaEventRecord now.
  [[nodiscard]] bool holding() const;
  void resume();
};

/// Emulator only: sets a knob for the object's lifetime, then restores its default.
class scoped_emulator_knob {
 public:
  scoped_emulator_knob(std::string name, std::string const& value);
  ~scoped_emulator_knob();
  scoped_emulator_knob(scoped_emulator_knob const&)            = delete;
  scoped_emulator_knob& operator=(scoped_emulator_knob const&) = delete;

 private:
  std::string name_;
};

}  // namespace rmm::test
