// SPDX-License-Identifier: Apache-2.0
// The wheel's binaries carry the C++ runtime (libstdc++.a), so that they need no newer libstdc++
// than the system has. libstdc++ 12 refers to arc4random (std::random_device, which nothing in
// the package uses), and glibc has it only since 2.36: this definition, hidden in each binary,
// keeps the wheel at glibc 2.34 (manylinux_2_34: RHEL 9, Ubuntu 22.04 and newer).
#include <sys/random.h>
#include <sys/types.h>

#include <cstdint>

extern "C" __attribute__((visibility("hidden"))) std::uint32_t arc4random() noexcept
{
  std::uint32_t value = 0;
  while (::getrandom(&value, sizeof value, 0) != static_cast<ssize_t>(sizeof value)) {}
  return value;
}
