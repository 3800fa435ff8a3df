// SPDX-License-Identifier: Apache-2.0
#include "stream_gate.hpp"

#include "backend.hpp"

#include <rmm/error.hpp>
#include <rmm_emu/control.h>

#include <gtest/gtest.h>

#include <condition_variable>
#include <mutex>
#include <thread>

namespace rmm::test {

namespace {

/// The emulator gives up on a state that neither completes nor blocks after this long: something
/// else holds the work (a test bug), and failing beats hanging.
constexpr auto emulator_give_up = std::chrono::seconds(60);
constexpr auto poll_interval    = std::chrono::microseconds(100);

template <class F>
F emulator_control(char const* name)
{
  return reinterpret_cast<F>(rmm_emu_symbol(name));
}

struct observation_controls {
  rmm_emu_stream_blocked_fn stream_blocked{};
  rmm_emu_host_waiters_fn host_waiters{};
  rmm_emu_pause_next_event_record_fn pause_next_event_record{};
  rmm_emu_paused_event_records_fn paused_event_records{};
  rmm_emu_resume_event_records_fn resume_event_records{};
};

observation_controls const& controls()
{
  static observation_controls const c = [] {
    (void)current_backend();  // loads the driver
    return observation_controls{emulator_control<rmm_emu_stream_blocked_fn>("rmm_emu_stream_blocked"),
                                emulator_control<rmm_emu_host_waiters_fn>("rmm_emu_host_waiters"),
                                emulator_control<rmm_emu_pause_next_event_record_fn>("rmm_emu_pause_next_event_record"),
                                emulator_control<rmm_emu_paused_event_records_fn>("rmm_emu_paused_event_records"),
                                emulator_control<rmm_emu_resume_event_records_fn>("rmm_emu_resume_event_records")};
  }();
  return c;
}

}  // namespace

// ---- stream_gate -----------------------------------------------------------------------------------

struct stream_gate::state {
  mutable std::mutex mutex;
  std::condition_variable opened;
  bool open{false};
  bool reached{false};
};

stream_gate::stream_gate(rmm::cuda_stream_view stream) : state_{std::make_shared<state>()}
{
  // The host function owns a reference: the stream may reach the gate after the object is gone.
  auto* ticket    = new std::shared_ptr<state>{state_};
  auto const hold = [](void* p) {
    std::unique_ptr<std::shared_ptr<state>> owned{static_cast<std::shared_ptr<state>*>(p)};
    state& s = **owned;
    std::unique_lock lock{s.mutex};
    s.reached = true;
    s.opened.wait(lock, [&s] { return s.open; });
  };
  if (auto const status = cudaLaunchHostFunc(stream.value(), hold, ticket); status != cudaSuccess) {
    delete ticket;
    RMM_CUDA_TRY(status);
  }
}

stream_gate::~stream_gate() { open(); }

void stream_gate::open() noexcept
{
  {
    std::lock_guard lock{state_->mutex};
    state_->open = true;
  }
  state_->opened.notify_all();
}

bool stream_gate::is_open() const noexcept
{
  std::lock_guard lock{state_->mutex};
  return state_->open;
}

bool stream_gate::reached() const noexcept
{
  std::lock_guard lock{state_->mutex};
  return state_->reached;
}

// ---- observation -----------------------------------------------------------------------------------

bool can_observe_streams() { return controls().stream_blocked != nullptr && controls().host_waiters != nullptr; }

char const* to_string(stream_state s)
{
  switch (s) {
    case stream_state::completed: return "completed";
    case stream_state::blocked: return "blocked on another stream";
    case stream_state::pending: return "pending";
  }
  return "?";
}

char const* to_string(call_state s)
{
  switch (s) {
    case call_state::returned: return "returned";
    case call_state::waiting: return "waiting for stream work";
    case call_state::pending: return "pending";
  }
  return "?";
}

stream_state settle(rmm::cuda_stream_view stream)
{
  auto const completed = [&stream] {
    auto const status = cudaStreamQuery(stream.value());
    if (status == cudaErrorNotReady) {
      (void)cudaGetLastError();
      return false;
    }
    RMM_CUDA_TRY(status);
    return true;
  };
  auto const start = std::chrono::steady_clock::now();
  if (!can_observe_streams()) {
    while (std::chrono::steady_clock::now() - start < gpu_settle_time) {
      if (completed()) { return stream_state::completed; }
      std::this_thread::sleep_for(poll_interval);
    }
    return completed() ? stream_state::completed : stream_state::pending;
  }
  for (;;) {
    auto const blocked = controls().stream_blocked(stream.value());
    if (blocked < 0) {
      ADD_FAILURE() << "the emulator does not know stream " << stream.value();
      return stream_state::pending;
    }
    if (blocked == 1) { return stream_state::blocked; }
    if (completed()) { return stream_state::completed; }
    if (std::chrono::steady_clock::now() - start > emulator_give_up) {
      ADD_FAILURE() << "stream " << stream.value() << " neither completed nor waited on another stream";
      return stream_state::pending;
    }
    std::this_thread::sleep_for(poll_interval);
  }
}

call_state settle_call(std::function<bool()> const& returned)
{
  auto const start = std::chrono::steady_clock::now();
  if (!can_observe_streams()) {
    while (std::chrono::steady_clock::now() - start < gpu_settle_time) {
      if (returned()) { return call_state::returned; }
      std::this_thread::sleep_for(poll_interval);
    }
    return returned() ? call_state::returned : call_state::pending;
  }
  for (;;) {
    if (returned()) { return call_state::returned; }
    if (controls().host_waiters() > 0) { return call_state::waiting; }
    if (std::chrono::steady_clock::now() - start > emulator_give_up) {
      ADD_FAILURE() << "the call neither returned nor waited for stream work";
      return call_state::pending;
    }
    std::this_thread::sleep_for(poll_interval);
  }
}

bool returns_without_waiting_call(std::function<bool()> const& returned)
{
  if (can_observe_streams()) { return settle_call(returned) == call_state::returned; }
  auto const deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (std::chrono::steady_clock::now() < deadline) {
    if (returned()) { return true; }
    std::this_thread::sleep_for(poll_interval);
  }
  return returned();
}

// ---- emulator-only controls ------------------------------------------------------------------------

event_record_pause::event_record_pause(rmm::cuda_stream_view stream)
{
  if (controls().pause_next_event_record == nullptr) {
    ADD_FAILURE() << "pausing an event record needs the emulator";
    return;
  }
  EXPECT_EQ(controls().pause_next_event_record(stream.value()), 0) << "unknown stream " << stream.value();
}

event_record_pause::~event_record_pause() { resume(); }

bool event_record_pause::holding() const
{
  return controls().paused_event_records != nullptr && controls().paused_event_records() > 0;
}

void event_record_pause::resume()
{
  if (controls().resume_event_records != nullptr) { controls().resume_event_records(); }
}

scoped_emulator_knob::scoped_emulator_knob(std::string name, std::string const& value) : name_{std::move(name)}
{
  emulator_set(name_, value);
}

scoped_emulator_knob::~scoped_emulator_knob()
{
  if (auto set = reinterpret_cast<rmm_emu_set_fn>(rmm_emu_symbol("rmm_emu_set")); set != nullptr) {
    (void)set(name_.c_str(), nullptr);
  }
}

}  // namespace rmm::test
