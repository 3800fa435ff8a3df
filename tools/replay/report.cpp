#include "report.hpp"

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

std::string json_string(std::string_view text)
{
  std::string quoted = "\"";
  for (char const c : text) {
    switch (c) {
      case '"': quoted += "\\\""; break;
      case '\\': quoted += "\\\\"; break;
      case '\n': quoted += "\\n"; break;
      case '\t': quoted += "\\t"; break;
      case '\r': quoted += "\\r"; break;
      default:
        if (static_cast<unsigned char>(c) < 0x20) {
          quoted += fmt::format("\\u{:04x}", static_cast<unsigned>(c));
        } else {
          quoted += c;
        }
    }
  }
  return quoted + "\"";
}

template <class T>
std::string json_optional(std::optional<T> const& value)
{
  return value ? fmt::format("{}", *value) : std::string{"null"};
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

std::string format_json(run_context const& context, std::vector<replay_row> const& rows)
{
  std::string json = "{\n";
  json += fmt::format("  \"device\": {},\n", json_string(context.device));
  json += fmt::format("  \"simulated_device_size\": {},\n", json_optional(context.simulated_device_size));
  json += "  \"results\": [";
  for (std::size_t i = 0; i < rows.size(); ++i) {
    auto const& row = rows[i];
    auto const& m   = row.measurement;
    json += i == 0 ? "\n" : ",\n";
    json += "    {";
    json += fmt::format("\"log\": {}, \"resource\": {}, \"stack\": {}, ", json_string(row.log),
                        json_string(row.resource), json_string(row.description));
    json += fmt::format("\"status\": \"{}\", ", row.failed() ? "failed" : "ok");
    if (row.setup_error) {
      json += fmt::format("\"error\": {{\"line\": null, \"message\": {}}}, ", json_string(*row.setup_error));
    } else if (m.failure) {
      json +=
        fmt::format("\"error\": {{\"line\": {}, \"message\": {}}}, ", m.failure->line, json_string(m.failure->message));
    } else {
      json += "\"error\": null, ";
    }
    json += fmt::format("\"events\": {}, \"events_replayed\": {}, \"threads\": {}, \"streams\": {}, ", row.events,
                        m.events_replayed, row.threads, row.streams);
    json += fmt::format("\"wall_ns\": {}, \"in_calls_ns\": {}, \"ns_per_event\": {:.1f}, ", m.wall.count(),
                        m.in_resource.count(), per_event_ns(m.in_resource, m.events_replayed));
    auto const fragmentation = row.fragmentation();
    json += fmt::format("\"peak_live_bytes\": {}, \"peak_reserved_bytes\": {}, \"fragmentation\": {}, ",
                        row.peak_live_bytes, json_optional(row.peak_reserved_bytes),
                        fragmentation ? fmt::format("{:.6f}", *fragmentation) : std::string{"null"});
    json += fmt::format(
      "\"logged_failures\": {}, \"reproduced_failures\": {}, \"unexpected_successes\": {}, "
      "\"left_live\": {}}}",
      row.logged_failures, m.reproduced_failures, m.unexpected_successes, row.left_live);
  }
  json += rows.empty() ? "]\n}\n" : "\n  ]\n}\n";
  return json;
}

}  // namespace rmm::replay
