// SPDX-License-Identifier: Apache-2.0
// Run by rmm_names_test: a static made before rmm::process_is_exiting() is first asked (which arms
// the marker) is destroyed during exit after the marker's handler ran, and prints what it saw.

#include <rmm/process_is_exiting.hpp>

#include <cstdio>

namespace {

struct reporter {
  reporter()                           = default;
  reporter(reporter const&)            = delete;
  reporter& operator=(reporter const&) = delete;
  ~reporter() { std::printf("exiting during exit: %d\n", rmm::process_is_exiting() ? 1 : 0); }
};

}  // namespace

int main()
{
  static reporter const report;
  std::printf("exiting in main: %d\n", rmm::process_is_exiting() ? 1 : 0);
  return 0;
}
