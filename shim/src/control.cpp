// SPDX-License-Identifier: Apache-2.0
// The exported control surface (include/rmm/shim.h).

#include "devices.hpp"
#include "contexts.hpp"
#include "dispatch.hpp"
#include "pause_control.hpp"
#include "settings.hpp"
#include "state.hpp"
#include "visibility.hpp"

#include <rmm/shim.h>

#include <cerrno>
#include <cstdio>
#include <string>

RMM_SHIM_EXPORT int rmm_shim_enabled(void) { return rmm::shim::settings().enabled ? 1 : 0; }

RMM_SHIM_EXPORT int rmm_shim_print_report(char const* path)
{
  using rmm::shim::report_detail;
  auto& s            = rmm::shim::state();
  auto const detail  = rmm::shim::settings().verbose ? report_detail::verbose : report_detail::summary;
  auto const sources = rmm::shim::report_sources_of(s);
  auto const error = path == nullptr ? rmm::shim::write_report(stderr, rmm::shim::report_format::text, detail, sources)
                                     : rmm::shim::save_report(path, sources);
  if (error == 0) { return 0; }
  errno = error;
  return -1;
}

RMM_SHIM_EXPORT size_t rmm_shim_release(void)
{
  return rmm::shim::release_all_free_memory().device_bytes;  // the host memory given back is not counted
}

namespace {
thread_local std::string last_message;  // rmm_shim_last_message

int answer(rmm::shim::control_outcome&& outcome) noexcept
{
  try {
    last_message = std::move(outcome.message);
  } catch (...) {
    last_message.clear();
  }
  return outcome.ok ? 0 : -1;
}
}  // namespace

RMM_SHIM_EXPORT int rmm_shim_pause(unsigned int flags)
{
  if ((flags & ~RMM_SHIM_PAUSE_DISCARD) != 0) {
    return answer({false, "rmm_shim_pause: unknown flags (the only one is RMM_SHIM_PAUSE_DISCARD)"});
  }
  try {
    auto const contents =
      (flags & RMM_SHIM_PAUSE_DISCARD) != 0 ? rmm::shim::pause_contents::discard : rmm::shim::pause_contents::keep;
    return answer(rmm::shim::pause_process(contents));
  } catch (std::exception const& e) {
    return answer({false, std::string{"cannot pause: "} + e.what()});
  }
}

RMM_SHIM_EXPORT int rmm_shim_resume(void)
{
  try {
    return answer(rmm::shim::resume_process());
  } catch (std::exception const& e) {
    return answer({false, std::string{"cannot resume: "} + e.what()});
  }
}

RMM_SHIM_EXPORT char const* rmm_shim_last_message(void) { return last_message.c_str(); }
