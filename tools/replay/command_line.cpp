// SPDX-License-Identifier: Apache-2.0
#include "command_line.hpp"

#include <rmm/config/schema.hpp>
#include <rmm/parse_bytes.hpp>

#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>
#include <array>
#include <optional>
#include <string_view>
#include <variant>

namespace rmm::replay {

namespace {

/// Options take their value as the next argument or after '=' ("--json=out.json").
class argument_reader {
 public:
  explicit argument_reader(std::vector<std::string> const& arguments) : arguments_{arguments} {}

  [[nodiscard]] bool done() const noexcept { return next_ >= arguments_.size(); }
  std::string const& take() { return arguments_[next_++]; }

  std::string value_of(std::string_view option, std::optional<std::string> const& inline_value)
  {
    if (inline_value) { return *inline_value; }
    if (done()) { throw usage_error{fmt::format("{0} needs a value: {0} VALUE or {0}=VALUE", option)}; }
    return take();
  }

 private:
  std::vector<std::string> const& arguments_;
  std::size_t next_{0};
};

/// A size on the command line, read as the configuration reads one (binary units, no percentages).
std::size_t size_value(std::string_view option, std::string const& text)
{
  auto const parsed = rmm::parse_bytes(text);
  if (auto const* problem = std::get_if<rmm::bytes_problem>(&parsed)) {
    throw usage_error{fmt::format("{} '{}' is not a size: expected {}", option, text, problem->expected)};
  }
  return std::get<std::uint64_t>(parsed);
}

/// A pool growth mode, one of the configuration's choices for pool.growth.
std::string growth_value(std::string_view option, std::string const& text)
{
  auto const& choices = rmm::config::find_layer_schema("pool")->find_key("growth")->choices;
  if (std::ranges::find(choices, text) == choices.end()) {
    throw usage_error{fmt::format("{} '{}' is not a growth mode: expected {}", option, text, fmt::join(choices, ", "))};
  }
  return text;
}

void add_resources(std::vector<std::string>& resources, std::string const& list)
{
  std::size_t start = 0;
  while (start <= list.size()) {
    auto const end = std::min(list.find(',', start), list.size());
    auto name      = list.substr(start, end - start);
    if (name.empty()) {
      throw usage_error{fmt::format("--resource '{}' has an empty name: separate the names with single commas", list)};
    }
    resources.push_back(std::move(name));
    start = end + 1;
  }
}

/// What an option sets, given its value (the option names it in messages); `value` is null for
/// the one option that takes none.
using apply_fn = void (*)(command_line& parsed, std::string_view option, std::string const* value);

struct option_row {
  std::string_view name;
  bool takes_value;
  apply_fn apply;
};

// Every option of rmm-replay, one line each (usage_text() explains them).
constexpr std::array<option_row, 12> option_table{{
  {"--help", false, [](command_line& p, std::string_view, std::string const*) { p.help = true; }},
  {"-h", false, [](command_line& p, std::string_view, std::string const*) { p.help = true; }},
  {"--resource", true, [](command_line& p, std::string_view, std::string const* v) { add_resources(p.resources, *v); }},
  {"-r", true, [](command_line& p, std::string_view, std::string const* v) { add_resources(p.resources, *v); }},
  {"--simulate-device-size", true,
   [](command_line& p, std::string_view o, std::string const* v) {
     auto const size = size_value(o, *v);
     if (size == 0) { throw usage_error{"--simulate-device-size must be larger than 0"}; }
     p.settings.simulated_device_size = size;
   }},
  {"--pool-initial-size", true,
   [](command_line& p, std::string_view o, std::string const* v) { p.settings.pool_initial_size = size_value(o, *v); }},
  {"--pool-growth", true,
   [](command_line& p, std::string_view o, std::string const* v) { p.settings.pool_growth = growth_value(o, *v); }},
  {"--arena-size", true,
   [](command_line& p, std::string_view o, std::string const* v) { p.settings.arena_size = size_value(o, *v); }},
  {"--arena-shared-threshold", true,
   [](command_line& p, std::string_view o, std::string const* v) {
     p.settings.arena_shared_threshold = size_value(o, *v);
   }},
  {"--json", true, [](command_line& p, std::string_view, std::string const* v) { p.json_path = *v; }},
  {"--timeline", true, [](command_line& p, std::string_view, std::string const* v) { p.timeline_path = *v; }},
  {"--complete-rows", false, [](command_line& p, std::string_view, std::string const*) { p.complete_rows = true; }},
}};

/// An option no row names: a known option the word begins (a shortened name), else the closest
/// one (a typo).
usage_error unknown_option(std::string const& argument, std::string_view option)
{
  std::array<std::string_view, option_table.size()> known{};
  for (std::size_t n = 0; n < option_table.size(); ++n) { known[n] = option_table[n].name; }
  auto const begun = std::ranges::find_if(known, [&](std::string_view name) { return name.starts_with(option); });
  auto const guess =
    begun != known.end() ? std::optional<std::string_view>{*begun} : rmm::config::closest_match(option, known);
  return usage_error{guess ? fmt::format("unknown option '{}' (did you mean {}?)", argument, *guess)
                           : fmt::format("unknown option '{}'", argument)};
}

/// What the options ask that cannot be done.
void check_consistent(command_line const& parsed)
{
  if (parsed.logs.empty()) {
    throw usage_error{"no log given: name the allocation logs to replay (CSV, plain or .gz)"};
  }
  if (parsed.timeline_path && parsed.logs.size() > 1) {
    throw usage_error{
      fmt::format("--timeline draws one log, but {} were given: replay them one at a time", parsed.logs.size())};
  }
  if (parsed.settings.simulated_device_size && parsed.settings.pool_growth.value_or("upstream") != "upstream") {
    throw usage_error{
      fmt::format("--pool-growth {} maps device memory, which a simulated device does not have: "
                  "leave out --simulate-device-size or --pool-growth",
                  *parsed.settings.pool_growth)};
  }
  for (auto const& name : parsed.resources) {
    try {
      check_stack_name(name, parsed.settings);
    } catch (unknown_resource const& e) {
      throw usage_error{e.what()};
    }
  }
}

}  // namespace

command_line parse_command_line(std::vector<std::string> const& arguments)
{
  command_line parsed{};
  argument_reader reader{arguments};
  bool options_ended = false;
  while (!reader.done()) {
    auto const& argument = reader.take();
    if (options_ended || !argument.starts_with('-')) {
      parsed.logs.push_back(argument);
      continue;
    }
    if (argument == "--") {
      options_ended = true;
      continue;
    }
    auto const equals = argument.find('=');
    auto const option = argument.substr(0, equals);
    std::optional<std::string> inline_value;
    if (equals != std::string::npos) { inline_value = argument.substr(equals + 1); }
    auto const row = std::ranges::find_if(option_table, [&](option_row const& r) { return r.name == option; });
    if (row == option_table.end()) { throw unknown_option(argument, option); }
    if (!row->takes_value) {
      if (inline_value) { throw usage_error{fmt::format("{} takes no value", option)}; }
      row->apply(parsed, option, nullptr);
      continue;
    }
    auto const value = reader.value_of(option, inline_value);
    row->apply(parsed, option, &value);
  }
  if (!parsed.help) { check_consistent(parsed); }
  return parsed;
}

std::string usage_text()
{
  return fmt::format(
    "usage: rmm-replay LOG... [--resource NAME]... [--simulate-device-size SIZE] [--json FILE|-]\n"
    "                  [--pool-initial-size SIZE] [--pool-growth MODE] [--arena-size SIZE]\n"
    "                  [--arena-shared-threshold SIZE] [--timeline FILE.svg] [--complete-rows]\n"
    "\n"
    "Replays allocation logs (the logging adaptor's CSV, plain or .gz) through memory resources, one\n"
    "resource after the other, keeping the log's threads, streams and order, and reports per resource\n"
    "the time, peak live bytes, peak bytes reserved from the device, fragmentation and failures.\n"
    "\n"
    "  --resource NAME, -r NAME   a resource stack to replay through; repeat or separate by commas\n"
    "                             (default: pool, arena, binning, cuda_async, cuda)\n"
    "  --simulate-device-size SIZE\n"
    "                             replace cuda at the bottom by a simulated device of SIZE (e.g. 80GiB):\n"
    "                             synthetic addresses, no memory, out of memory beyond SIZE\n"
    "  --json FILE                also write the figures as JSON to FILE ('-': stdout; the table then\n"
    "                             goes to stderr)\n"
    "  --pool-initial-size SIZE   what pools reserve up front (default 0: they grow as needed)\n"
    "  --pool-growth MODE         how pools over cuda grow: virtual_memory (default), remapping (idle\n"
    "                             free granules move to the end before more is mapped) or upstream\n"
    "  --arena-size SIZE          the arena's fixed size (default: half the device's free memory, or\n"
    "                             half the simulated device)\n"
    "  --arena-shared-threshold SIZE\n"
    "                             the arena serves default-stream requests from SIZE up from one arena\n"
    "                             shared by all threads, smaller ones from per-thread arenas (default\n"
    "                             64KiB; larger than any request: every request per thread)\n"
    "  --timeline FILE.svg        draw the log's live bytes and each resource's reserved bytes over the\n"
    "                             log's time, peaks marked, as a self-contained SVG (one log)\n"
    "  --complete-rows            replay a log whose last row was cut off (the process writing it\n"
    "                             was killed) up to its last complete row, saying so\n"
    "\n"
    "{}\n"
    "\n"
    "Exit status: 0 replayed; 1 a replay failed (an allocation the log says succeeded did not, named\n"
    "by line); 2 bad usage or a malformed log (named by line).\n",
    known_stack_names());
}

}  // namespace rmm::replay
