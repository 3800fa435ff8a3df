// SPDX-License-Identifier: Apache-2.0
#include "config.hpp"

#include <cctype>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <vector>

extern char** environ;

namespace rmm_emu {
namespace {

constexpr std::uint64_t kMaxDeviceMemory = std::uint64_t{4} << 40;  // keeps 2x address reservations sane
constexpr std::uint64_t kMinDeviceMemory = std::uint64_t{1} << 20;
constexpr std::uint64_t kMaxDelayUs      = 10'000'000;

std::atomic<bool> g_frozen{false};

std::optional<std::uint64_t> parse_uint(std::string_view text, std::uint64_t max)
{
  if (text.empty() || text.size() > 20) { return std::nullopt; }
  std::uint64_t v = 0;
  for (char c : text) {
    if (c < '0' || c > '9') { return std::nullopt; }
    auto const digit = static_cast<std::uint64_t>(c - '0');
    if (v > (UINT64_MAX - digit) / 10) { return std::nullopt; }
    v = v * 10 + digit;
  }
  if (v > max) { return std::nullopt; }
  return v;
}

bool is_off(std::string_view v) { return v == "off" || v == "OFF" || v == "Off"; }

// A 0-or-1 knob.
template <std::atomic<int> Settings::*Flag>
bool apply_flag(std::string_view v, bool)
{
  auto n = parse_uint(v, 1);
  if (!n) { return false; }
  (settings().*Flag).store(static_cast<int>(*n));
  return true;
}

// One knob: its name, the form it accepts (quoted in error messages) and how to apply it.
struct Spec {
  char const* name;
  char const* expected;
  char const* default_value;
  bool fixed_after_init;
  bool (*apply)(std::string_view value, bool from_env);
};

Spec const kSpecs[] = {
  {"RMM_EMU_DEVICE_COUNT", "an integer from 0 to 64", "2", true,
   [](std::string_view v, bool) {
     auto n = parse_uint(v, 64);
     if (!n) { return false; }
     settings().device_count = static_cast<int>(*n);
     return true;
   }},
  {"RMM_EMU_DEVICE_MEMORY",
   "a size in bytes, optionally with a KiB, MiB, GiB or TiB suffix (e.g. 16GiB), from 1MiB to 4TiB", "16GiB", true,
   [](std::string_view v, bool) {
     auto n = parse_size(v);
     if (!n || *n < kMinDeviceMemory || *n > kMaxDeviceMemory) { return false; }
     settings().device_memory = *n;
     return true;
   }},
  {"RMM_EMU_STREAM_DELAY_US", "an integer number of microseconds from 0 to 10000000", "0", false,
   [](std::string_view v, bool) {
     auto n = parse_uint(v, kMaxDelayUs);
     if (!n) { return false; }
     settings().stream_delay_us.store(*n);
     return true;
   }},
  {"RMM_EMU_FAIL_ALLOC_NTH", "a positive integer N (the Nth allocation from now fails once), or 0 or off to disable",
   "off", false,
   [](std::string_view v, bool from_env) {
     std::uint64_t n = 0;
     if (!is_off(v)) {
       auto parsed = parse_uint(v, UINT64_MAX / 2);
       if (!parsed) { return false; }
       n = *parsed;
     }
     auto& s = settings();
     // From the environment "now" is process start; at run time it is this call.
     s.fail_nth_target.store(n == 0 ? 0 : (from_env ? 0 : s.alloc_attempts.load()) + n);
     return true;
   }},
  {"RMM_EMU_FAIL_ALLOC_ABOVE",
   "a size in bytes, optionally with a KiB, MiB, GiB or TiB suffix (allocations larger than it fail), or off", "off",
   false,
   [](std::string_view v, bool) {
     if (is_off(v)) {
       settings().fail_above.store(kOff);
       return true;
     }
     auto n = parse_size(v);
     if (!n) { return false; }
     settings().fail_above.store(*n);
     return true;
   }},
  {"RMM_EMU_PAGEABLE_MEMORY_ACCESS", "0 or 1 (the value of cudaDevAttrPageableMemoryAccess)", "0", false,
   apply_flag<&Settings::pageable_memory_access>},
  {"RMM_EMU_STICKY_FAULTS",
   "0 or 1 (1: queued work on unmapped VMM memory faults its context, as on a GPU, instead of aborting)", "0", false,
   apply_flag<&Settings::sticky_faults>},
  {"RMM_EMU_REUSE_STREAM_HANDLES",
   "0 or 1 (1: cuStreamCreate hands out the handle of the stream destroyed last, as a driver may)", "0", false,
   apply_flag<&Settings::reuse_stream_handles>},
};

Spec const* find_spec(std::string_view name)
{
  for (auto const& s : kSpecs) {
    if (name == s.name) { return &s; }
  }
  return nullptr;
}

std::string known_names()
{
  std::string out;
  for (auto const& s : kSpecs) {
    if (!out.empty()) { out += ", "; }
    out += s.name;
  }
  return out;
}

std::string invalid_value(Spec const& spec, std::string_view value)
{
  return std::string(spec.name) + "=\"" + std::string(value) + "\" is invalid: expected " + spec.expected;
}

}  // namespace

Settings& settings()
{
  static auto* s = new Settings;  // never destroyed: stream workers may still read it during exit
  return *s;
}

std::optional<std::uint64_t> parse_size(std::string_view text)
{
  std::size_t digits = 0;
  while (digits < text.size() && text[digits] >= '0' && text[digits] <= '9') { ++digits; }
  auto number = parse_uint(text.substr(0, digits), UINT64_MAX);
  if (!number) { return std::nullopt; }
  std::string suffix;
  for (char c : text.substr(digits)) { suffix += static_cast<char>(std::tolower(static_cast<unsigned char>(c))); }
  unsigned shift = 0;
  if (suffix.empty() || suffix == "b") {
    shift = 0;
  } else if (suffix == "kib") {
    shift = 10;
  } else if (suffix == "mib") {
    shift = 20;
  } else if (suffix == "gib") {
    shift = 30;
  } else if (suffix == "tib") {
    shift = 40;
  } else {
    return std::nullopt;
  }
  if (shift != 0 && *number > (UINT64_MAX >> shift)) { return std::nullopt; }
  return *number << shift;
}

const std::string& load_environment()
{
  static std::once_flag once;
  static std::string* result = new std::string;
  std::call_once(once, [] {
    std::vector<std::string> problems;
    for (char** e = environ; e != nullptr && *e != nullptr; ++e) {
      std::string_view entry{*e};
      if (entry.rfind("RMM_EMU_", 0) != 0) { continue; }
      auto const eq    = entry.find('=');
      auto const name  = entry.substr(0, eq);
      auto const value = eq == std::string_view::npos ? std::string_view{} : entry.substr(eq + 1);
      Spec const* spec = find_spec(name);
      if (spec == nullptr) {
        problems.push_back("unknown environment variable " + std::string(name) + " (known: " + known_names() + ")");
      } else if (!spec->apply(value, true)) {
        problems.push_back(invalid_value(*spec, value));
      }
    }
    for (auto const& p : problems) {
      std::fprintf(stderr, "rmm CUDA emulator: %s; cuInit fails with CUDA_ERROR_INVALID_VALUE\n", p.c_str());
      if (!result->empty()) { *result += "\n"; }
      *result += p;
    }
  });
  return *result;
}

void freeze_device_settings() { g_frozen.store(true); }

std::string set_setting(const char* name, const char* value)
{
  if (name == nullptr) { return "name is null"; }
  if (auto const& env_error = load_environment(); !env_error.empty()) {
    return "the environment is invalid: " + env_error;
  }
  Spec const* spec = find_spec(name);
  if (spec == nullptr) { return std::string("unknown setting ") + name + " (known: " + known_names() + ")"; }
  if (spec->fixed_after_init && g_frozen.load()) {
    return std::string(name) + " is fixed once cuInit has run; set it in the environment or before the first CUDA call";
  }
  std::string_view v = value == nullptr ? spec->default_value : value;
  if (!spec->apply(v, false)) { return invalid_value(*spec, v); }
  return {};
}

bool inject_allocation_failure(std::uint64_t bytes)
{
  auto& s                   = settings();
  std::uint64_t const index = s.alloc_attempts.fetch_add(1) + 1;
  std::uint64_t target      = s.fail_nth_target.load();
  // Attempt indices are unique, so exactly one attempt can match the target.
  if (target != 0 && index == target) {
    s.fail_nth_target.compare_exchange_strong(target, 0);
    return true;
  }
  return bytes > s.fail_above.load();
}

}  // namespace rmm_emu
