// SPDX-License-Identifier: Apache-2.0
// The shim's life in a process: settings and state when it is loaded, a fresh state in a forked
// child, and the report when the process ends (no CUDA call: the driver may be gone by then).

#include "control/control_server.hpp"
#include "serving/dispatch.hpp"
#include "stacks/log_files.hpp"
#include "settings.hpp"
#include "state.hpp"
#include "stacks/thread_cache.hpp"

#include <rmm/config/file_name_pattern.hpp>
#include <rmm/config/print.hpp>
#include <rmm/mr/before_growth.hpp>
#include <rmm/mr/device_synchronization.hpp>

#include <fmt/format.h>

#include <pthread.h>
#include <unistd.h>

#include <cstdio>
#include <cstring>

namespace rmm::shim {

namespace {

void print_start()
{
  fmt::print(stderr, "rmm shim: loaded into process {}, {}\n", ::getpid(),
             settings().enabled ? "serving device allocations" : "disabled: every call passes through");
  if (!settings().enabled) { return; }
  fmt::print(stderr, "rmm shim: resource stack (built on each device at its first allocation):\n{}",
             rmm::config::describe(settings().stack));
  fmt::print(stderr, "rmm shim: free policy {}\n", rmm::config::name_of(settings().free_policy));
}

/// Before a pool grows, the frees waiting for the device to finish with their memory are handed
/// back: a pool that grew instead would hold up to twice what a training loop needs while its host
/// runs ahead of the device. One step per call, oldest epoch first, waiting for the device only when
/// no epoch has completed; the pool calls again while the request still does not fit. The host thus
/// waits only as far back as the request needs and keeps its lead over the device.
bool give_back_waiting_frees(void*, rmm::cuda_device_id device, std::size_t) noexcept
{
  // The blocks threads keep for their next allocation first: nothing to wait for.
  if (give_back_kept_blocks(device.value()) > 0) { return true; }
  try {
    // Nothing given back while frees are pending: a capture in progress keeps the open epoch.
    return state().deferred.reclaim(device.value(), reclaim_wait::for_one_epoch) > 0;
  } catch (...) {
    return false;
  }
}

/// A device synchronization would end every capture in progress as invalid, in every mode.
bool no_capture_in_progress(void*, rmm::cuda_device_id) noexcept { return !state().streams.capturing(); }

__attribute__((constructor(102))) void start()
{
  load_settings();
  if (!settings().log_file.empty()) { note_run_start(); }
  (void)state();
  counters::prepare();
  thread_cache::prepare(&give_back_at_thread_end);
  when_a_stack_is_built([]() noexcept { control_server::instance().start(); });
  if (settings().enabled) {
    rmm::mr::set_before_growth_callback(give_back_waiting_frees, nullptr);
    rmm::mr::set_device_synchronization_check(no_capture_in_progress, nullptr);
  }
  // A child gets a fresh state and counts of its own; no lock of the parent's threads comes along.
  pthread_atfork(
    [] {
      counters::before_fork();
      thread_cache::before_fork();
      pause_gate::before_fork();
    },
    [] {
      pause_gate::after_fork_in_parent();
      thread_cache::after_fork_in_parent();
      counters::after_fork_in_parent();
    },
    [] {
      pause_gate::after_fork_in_child();
      thread_cache::after_fork_in_child();
      counters::after_fork_in_child();
      renew_state_after_fork();
      control_server::renew_after_fork();
    });
  if (settings().verbose) { print_start(); }
}

__attribute__((destructor)) void finish()
{
  if (!settings().enabled) { return; }
  auto& s = state();
  control_server::instance().stop();
  s.stacks.flush_logs();
  // A process that never reached CUDA (a shell or `timeout` around the program, a helper it
  // spawns) reports only when asked to be verbose: its report would say nothing, and written to
  // the report file it would replace the report of the process that did the work.
  bool const reached = reached_cuda(s.count);
  if ((settings().stats_at_exit && reached) || settings().verbose) {
    auto const detail = settings().verbose ? report_detail::verbose : report_detail::summary;
    // Nowhere left to say it failed.
    (void)write_report(stderr, report_format::text, detail, report_sources_of(s));
  }
  if (auto const& pattern = settings().report_file; !pattern.empty() && reached) {
    // %p: this process (a forked child writes its own report); the report covers every device.
    auto const path = rmm::config::expand_file_name_pattern(pattern, static_cast<long>(::getpid()), 0);
    if (auto const error = save_report(path, report_sources_of(s)); error != 0) {
      fmt::print(stderr, "rmm shim: cannot write the report to {}: {}\n", path, std::strerror(error));
    }
  }
}

}  // namespace

}  // namespace rmm::shim
