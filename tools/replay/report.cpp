// SPDX-License-Identifier: Apache-2.0
#include "report.hpp"

#include "detail/json_writer.hpp"

#include <rmm/format_bytes.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>

namespace rmm::replay {

std::optional<double> replay_row::fragmentation() const noexcept
{
  if (!peak_reserved_bytes) { return std::nullopt; }
  if (*peak_reserved_bytes == 0) { return 0.0; }
  return 1.0 - static_cast<double>(peak_live_bytes) / static_cast<double>(*peak_reserved_bytes);
}

std::string format_duration(std::chrono::nanoseconds duration)
{
  auto const ns = static_cast<double>(duration.count());
  if (ns >= 1e9) { return fmt::format("{:.2f} s", ns / 1e9); }
  if (ns >= 1e6) { return fmt::format("{:.1f} ms", ns / 1e6); }
  if (ns >= 1e3) { return fmt::format("{:.0f} us", ns / 1e3); }
  return fmt::format("{:.0f} ns", ns);
}

namespace {

double per_event_ns(std::chrono::nanoseconds total, std::size_t events)
{
  return events == 0 ? 0.0 : static_cast<double>(total.count()) / static_cast<double>(events);
}

std::string file_name(std::string const& path)
{
  auto const slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

/// "3/3" reproduced of logged, and "+1 ok" when some succeeded unexpectedly.
std::string failures_cell(replay_row const& row)
{
  auto cell = fmt::format("{}/{}", row.measurement.reproduced_failures, row.logged_failures);
  if (row.measurement.unexpected_successes > 0) {
    cell += fmt::format(" ({} succeeded)", row.measurement.unexpected_successes);
  }
  return cell;
}

std::vector<std::string> table_cells(replay_row const& row)
{
  std::vector<std::string> cells{file_name(row.log), row.resource};
  if (row.setup_error) {
    cells.insert(cells.end(), {"not run", "", "", "", "", ""});
    return cells;
  }
  auto const& m = row.measurement;
  if (m.failure) {
    cells.insert(cells.end(), {fmt::format("FAILED at line {}", m.failure->line), "",
                               rmm::format_bytes(row.peak_live_bytes), "", "", failures_cell(row)});
    return cells;
  }
  cells.push_back(format_duration(m.wall));
  // Per event, only the resource's calls are timed: not the hand-over between the replay's threads.
  cells.push_back(fmt::format("{:.0f}", per_event_ns(m.in_resource, m.events_replayed)));
  cells.push_back(rmm::format_bytes(row.peak_live_bytes));
  cells.push_back(rmm::format_bytes(row.peak_reserved_bytes.value_or(0)));
  cells.push_back(fmt::format("{:.1f}%", 100.0 * row.fragmentation().value_or(0.0)));
  cells.push_back(failures_cell(row));
  return cells;
}

}  // namespace

std::string format_table(run_context const& context, std::vector<replay_row> const& rows)
{
  static constexpr std::array<char const*, 8> headers{"log",       "resource",      "time",  "ns/event",
                                                      "peak live", "peak reserved", "frag.", "failures"};
  std::vector<std::vector<std::string>> lines;
  lines.emplace_back(headers.begin(), headers.end());
  for (auto const& row : rows) { lines.push_back(table_cells(row)); }
  std::array<std::size_t, headers.size()> widths{};
  for (auto const& line : lines) {
    for (std::size_t i = 0; i < line.size(); ++i) { widths[i] = std::max(widths[i], line[i].size()); }
  }
  std::string table = fmt::format("rmm-replay on {}\n", context.device);
  for (auto const& line : lines) {
    std::string text;
    for (std::size_t i = 0; i < line.size(); ++i) {
      // Names left-aligned, figures right-aligned.
      text += i < 2 ? fmt::format("{:<{}}", line[i], widths[i]) : fmt::format("{:>{}}", line[i], widths[i]);
      text += i + 1 < line.size() ? "  " : "";
    }
    while (!text.empty() && text.back() == ' ') { text.pop_back(); }
    table += text + "\n";
  }
  return table;
}

namespace {

/// The row's error: null, or where and why it failed (a stack that could not be built has no line).
void json_error(rmm::detail::json_writer& json, replay_row const& row)
{
  json.key("error");
  if (row.setup_error) {
    json.begin_object().key("line").null().member("message", *row.setup_error).end_object();
  } else if (auto const& failure = row.measurement.failure) {
    json.begin_object().member("line", failure->line).member("message", failure->message).end_object();
  } else {
    json.null();
  }
}

void json_row(rmm::detail::json_writer& json, replay_row const& row)
{
  auto const& m = row.measurement;
  json.begin_object()
    .member("log", row.log)
    .member("resource", row.resource)
    .member("stack", row.description)
    .member("status", row.failed() ? "failed" : "ok");
  json_error(json, row);
  json.member("events", row.events)
    .member("events_replayed", m.events_replayed)
    .member("threads", row.threads)
    .member("streams", row.streams)
    .member("wall_ns", m.wall.count())
    .member("in_calls_ns", m.in_resource.count())
    .member("ns_per_event", per_event_ns(m.in_resource, m.events_replayed), 1)
    .member("peak_live_bytes", row.peak_live_bytes)
    .member("peak_reserved_bytes", row.peak_reserved_bytes);
  json.key("fragmentation");
  if (auto const fragmentation = row.fragmentation()) {
    json.number(*fragmentation, 6);
  } else {
    json.null();
  }
  json.member("logged_failures", row.logged_failures)
    .member("reproduced_failures", m.reproduced_failures)
    .member("unexpected_successes", m.unexpected_successes)
    .member("left_live", row.left_live)
    .end_object();
}

}  // namespace

/// The heading's fields one to a line, and each result on a line of its own (scripts grep them).
std::string format_json(run_context const& context, std::vector<replay_row> const& rows)
{
  using rmm::detail::json_writer;
  json_writer json{json_writer::spacing::spaced};
  json.begin_object(json_writer::layout::lines)
    .member("device", context.device)
    .member("simulated_device_size", context.simulated_device_size)
    .key("results")
    .begin_array(json_writer::layout::lines);
  for (auto const& row : rows) { json_row(json, row); }
  json.end_array().end_object();
  return json.take() + "\n";
}

}  // namespace rmm::replay
