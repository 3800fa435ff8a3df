// SPDX-License-Identifier: Apache-2.0
// The exported control surface (include/rmm/shim.h).

#include "devices.hpp"
#include "driver/contexts.hpp"
#include "serving/dispatch.hpp"
#include "pause/pause_control.hpp"
#include "settings.hpp"
#include "state.hpp"
#include "visibility.hpp"

#include <rmm/shim.h>

#include <fmt/format.h>

#include <cerrno>
#include <cstdio>
#include <optional>
#include <string>

RMM_SHIM_EXPORT int rmm_shim_enabled(void) { return rmm::shim::settings().enabled ? 1 : 0; }

RMM_SHIM_EXPORT int rmm_shim_print_report(char const* path)
{
  using rmm::shim::report_detail;
  auto& s            = rmm::shim::state();
  auto const detail  = rmm::shim::settings().verbose ? report_detail::verbose : report_detail::summary;
  auto const sources = rmm::shim::live_report_sources_of(s);
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

namespace {

/// What rmm_shim_pause's flags ask for; nothing (and the answer set) when they are not known.
std::optional<rmm::shim::pause_contents> contents_of(unsigned int flags, char const* function)
{
  using rmm::shim::pause_contents;
  if ((flags & ~(RMM_SHIM_PAUSE_DISCARD | RMM_SHIM_PAUSE_KEEP)) != 0) {
    (void)answer({false, std::string{function} +
                           ": unknown flags (the only ones are RMM_SHIM_PAUSE_DISCARD and RMM_SHIM_PAUSE_KEEP)"});
    return std::nullopt;
  }
  if (flags == (RMM_SHIM_PAUSE_DISCARD | RMM_SHIM_PAUSE_KEEP)) {
    (void)answer({false, std::string{function} + ": RMM_SHIM_PAUSE_DISCARD and RMM_SHIM_PAUSE_KEEP contradict"});
    return std::nullopt;
  }
  if ((flags & RMM_SHIM_PAUSE_DISCARD) != 0) { return pause_contents::discard; }
  if ((flags & RMM_SHIM_PAUSE_KEEP) != 0) { return pause_contents::keep; }
  return pause_contents::as_tagged;
}

}  // namespace

RMM_SHIM_EXPORT int rmm_shim_pause_tag(char const* tag, unsigned int flags)
{
  auto const contents = contents_of(flags, "rmm_shim_pause");
  if (!contents) { return -1; }
  try {
    return answer(tag == nullptr ? rmm::shim::pause_process(*contents) : rmm::shim::pause_tag(tag, *contents));
  } catch (std::exception const& e) {
    return answer({false, std::string{"cannot pause: "} + e.what()});
  }
}

RMM_SHIM_EXPORT int rmm_shim_pause(unsigned int flags) { return rmm_shim_pause_tag(nullptr, flags); }

RMM_SHIM_EXPORT int rmm_shim_resume_tag(char const* tag)
{
  try {
    return answer(tag == nullptr ? rmm::shim::resume_process() : rmm::shim::resume_tag(tag));
  } catch (std::exception const& e) {
    return answer({false, std::string{"cannot resume: "} + e.what()});
  }
}

RMM_SHIM_EXPORT int rmm_shim_resume(void) { return rmm_shim_resume_tag(nullptr); }

RMM_SHIM_EXPORT char const* rmm_shim_last_message(void) { return last_message.c_str(); }

RMM_SHIM_EXPORT int rmm_shim_region_begin(char const* tag, unsigned int flags)
{
  if ((flags & ~(RMM_SHIM_REGION_DISCARD | RMM_SHIM_REGION_ALL_THREADS)) != 0) {
    return answer({false,
                   "rmm_shim_region_begin: unknown flags (the only ones are RMM_SHIM_REGION_DISCARD and "
                   "RMM_SHIM_REGION_ALL_THREADS)"});
  }
  try {
    std::string const name = tag == nullptr ? std::string{} : std::string{tag};
    if (auto why = rmm::shim::region_table::why_not_a_name(name); !why.empty()) {
      return answer({false, "rmm_shim_region_begin: " + why});
    }
    std::string error;
    auto& regions     = rmm::shim::state().regions;
    auto const region = regions.find_or_add(name, (flags & RMM_SHIM_REGION_DISCARD) != 0, error);
    if (!region || !rmm::shim::begin_region(*region, (flags & RMM_SHIM_REGION_ALL_THREADS) != 0, error)) {
      return answer({false, "rmm_shim_region_begin: " + error});
    }
    return answer({true, fmt::format("allocations are tagged '{}'", name)});
  } catch (std::exception const& e) {
    return answer({false, std::string{"rmm_shim_region_begin: "} + e.what()});
  }
}

RMM_SHIM_EXPORT int rmm_shim_region_end(void)
{
  if (!rmm::shim::end_region()) { return answer({false, "rmm_shim_region_end: no region is in place"}); }
  return answer({true, "region ended"});
}

RMM_SHIM_EXPORT char const* rmm_shim_region_current(void)
{
  auto const region = rmm::shim::current_region();
  return region == 0 ? nullptr : rmm::shim::state().regions.stable_name(region);
}
