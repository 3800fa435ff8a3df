// SPDX-License-Identifier: Apache-2.0
// The exported control surface (include/rmm/shim.h).

#include "devices.hpp"
#include "contexts.hpp"
#include "dispatch.hpp"
#include "settings.hpp"
#include "state.hpp"
#include "visibility.hpp"

#include <rmm/shim.h>

#include <cerrno>
#include <cstdio>

RMM_SHIM_EXPORT int rmm_shim_enabled(void) { return rmm::shim::settings().enabled ? 1 : 0; }

RMM_SHIM_EXPORT int rmm_shim_print_report(char const* path)
{
  using rmm::shim::report_detail;
  auto& s           = rmm::shim::state();
  auto const detail = rmm::shim::settings().verbose ? report_detail::verbose : report_detail::summary;
  auto const error  = path == nullptr ? rmm::shim::write_report(stderr, rmm::shim::report_format::text, detail, s.count,
                                                                s.stacks, s.deferred, s.streams)
                                      : rmm::shim::save_report(path, s.count, s.stacks, s.deferred, s.streams);
  if (error == 0) { return 0; }
  errno = error;
  return -1;
}

RMM_SHIM_EXPORT size_t rmm_shim_release(void)
{
  std::size_t bytes = 0;
  for (int device = 0; device < rmm::shim::max_devices; ++device) { bytes += rmm::shim::release_free_memory(device); }
  return bytes;
}
