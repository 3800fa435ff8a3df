// SPDX-License-Identifier: Apache-2.0
#include "channel/process_state.hpp"

#include <cstdio>
#include <cstring>
#include <cstdlib>

namespace rmm::shim {

process_state state_of_process(pid_t pid) noexcept
{
  char path[64];
  std::snprintf(path, sizeof path, "/proc/%d/stat", static_cast<int>(pid));
  std::FILE* file = std::fopen(path, "re");
  if (file == nullptr) { return {}; }
  char text[1024] = {};
  auto const read = std::fread(text, 1, sizeof text - 1, file);
  std::fclose(file);
  text[read]         = '\0';
  char const* fields = std::strrchr(text, ')');  // the program's name may hold spaces and parentheses
  if (fields == nullptr || fields[1] == '\0') { return {}; }
  ++fields;
  process_state state;
  for (int index = 3; *fields != '\0'; ++index) {
    while (*fields == ' ') { ++fields; }
    if (index == 3) { state.running = *fields != 'Z' && *fields != 'X'; }
    if (index == 22) {
      state.start_ticks = std::strtoull(fields, nullptr, 10);
      break;
    }
    while (*fields != ' ' && *fields != '\0') { ++fields; }
  }
  return state;
}

}  // namespace rmm::shim
