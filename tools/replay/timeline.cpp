// SPDX-License-Identifier: Apache-2.0
#include "timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <string_view>
#include <utility>
#include <vector>

namespace rmm::replay {

namespace {

// The picture's geometry, in SVG user units.
constexpr double width       = 960;
constexpr double height      = 480;
constexpr double plot_left   = 90;
constexpr double plot_right  = 940;
constexpr double plot_top    = 50;
constexpr double plot_bottom = 420;

constexpr std::string_view live_colour = "#222222";
constexpr std::array<std::string_view, 6> resource_colours{"#1f77b4", "#d62728", "#2ca02c",
                                                           "#ff7f0e", "#9467bd", "#8c564b"};

std::string xml_escaped(std::string_view text)
{
  std::string out;
  for (char const c : text) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      default: out += c;
    }
  }
  return out;
}

/// One binary unit for a whole axis, so that its labels compare at a glance.
struct byte_unit {
  double bytes;
  std::string_view name;
};

byte_unit unit_for(double bytes)
{
  for (auto const unit : {byte_unit{1024.0 * 1024 * 1024 * 1024, "TiB"}, byte_unit{1024.0 * 1024 * 1024, "GiB"},
                          byte_unit{1024.0 * 1024, "MiB"}, byte_unit{1024.0, "KiB"}}) {
    if (bytes >= unit.bytes) { return unit; }
  }
  return {1.0, "B"};
}

std::string bytes_label(double bytes, byte_unit unit, int decimals)
{
  return fmt::format("{:.{}f} {}", bytes / unit.bytes, decimals, unit.name);
}

/// A tick step of 1, 2 or 5 times a power of ten (of `scale`) that gives about five ticks.
double tick_step(double range, double scale)
{
  auto const rough = std::max(range / scale, 1e-9) / 5;
  auto const power = std::pow(10.0, std::floor(std::log10(rough)));
  for (double const m : {1.0, 2.0, 5.0}) {
    if (m * power >= rough) { return m * power * scale; }
  }
  return 10 * power * scale;
}

/// (seconds since the first event, bytes): a series' points.
using points = std::vector<std::pair<double, std::size_t>>;

/// The plot's scales: seconds across, bytes up, and their ticks.
struct axes {
  double max_time;
  double top_bytes;
  byte_unit unit;
  double byte_step;
  double time_step;

  [[nodiscard]] double x(double t) const { return plot_left + (plot_right - plot_left) * t / max_time; }
  [[nodiscard]] double y(double b) const { return plot_bottom - (plot_bottom - plot_top) * b / top_bytes; }
};

axes axes_for(double max_time, double max_bytes)
{
  max_time             = std::max(max_time, 1e-6);
  auto const unit      = unit_for(max_bytes);
  auto const byte_step = tick_step(max_bytes, unit.bytes);
  return {max_time, std::ceil(max_bytes / byte_step) * byte_step, unit, byte_step, tick_step(max_time, 1.0)};
}

/// The document's start, its title, the grid with its labels and the plot's frame.
std::string svg_frame(axes const& a, std::string const& log_name)
{
  std::string out =
    fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                R"(font-family="sans-serif" font-size="12">)"
                "\n<title>rmm-replay: {2}</title>\n"
                R"(<rect width="{0}" height="{1}" fill="white"/>)"
                "\n"
                R"(<text x="{3}" y="24" font-size="15">{2}: live and reserved bytes over the log's time</text>)"
                "\n",
                width, height, xml_escaped(log_name), plot_left);
  for (double b = 0; b <= a.top_bytes * 1.0001; b += a.byte_step) {
    out += fmt::format(R"(<line x1="{0}" x2="{1}" y1="{2:.1f}" y2="{2:.1f}" stroke="#dddddd"/>)"
                       R"(<text x="{3}" y="{4:.1f}" text-anchor="end">{5}</text>)"
                       "\n",
                       plot_left, plot_right, a.y(b), plot_left - 6, a.y(b) + 4,
                       bytes_label(b, a.unit, a.byte_step / a.unit.bytes < 1 ? 1 : 0));
  }
  for (double t = 0; t <= a.max_time * 1.0001; t += a.time_step) {
    out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" stroke="#dddddd"/>)"
                       R"(<text x="{0:.1f}" y="{3}" text-anchor="middle">{4:g} s</text>)"
                       "\n",
                       a.x(t), plot_top, plot_bottom, plot_bottom + 18, t);
  }
  out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888888"/>)"
                     "\n",
                     plot_left, plot_top, plot_right - plot_left, plot_bottom - plot_top);
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">time since the log's first event</text>)"
                     "\n",
                     (plot_left + plot_right) / 2, plot_bottom + 38);
  return out;
}

/// One point per pixel column, its highest value: peaks stay visible.
std::string polyline(points const& series,
                     axes const& a,
                     std::string_view colour,
                     double stroke,
                     std::string_view dashes)
{
  std::string out;
  long column      = -1;
  std::size_t high = 0;
  auto const flush = [&] {
    if (column >= 0) { out += fmt::format("{},{:.1f} ", column, a.y(static_cast<double>(high))); }
  };
  for (auto const& [t, b] : series) {
    auto const c = std::lround(a.x(t));
    if (c != column) {
      flush();
      column = c;
      high   = b;
    } else {
      high = std::max(high, b);
    }
  }
  flush();
  return fmt::format(R"(<polyline fill="none" stroke="{}" stroke-width="{}" stroke-dasharray="{}" points="{}"/>)"
                     "\n",
                     colour, stroke, dashes, out);
}

points::const_iterator peak_of(points const& series)
{
  return std::max_element(series.begin(), series.end(),
                          [](auto const& a, auto const& b) { return a.second < b.second; });
}

/// The legend's lines, one under the other.
class legend {
 public:
  std::string entry(std::string_view colour, std::string const& text)
  {
    auto line = fmt::format(R"(<rect x="{}" y="{:.1f}" width="14" height="3" fill="{}"/>)"
                            R"(<text x="{}" y="{:.1f}">{}</text>)"
                            "\n",
                            plot_left + 12, y_ - 4, colour, plot_left + 32, y_, xml_escaped(text));
    y_ += 16;
    return line;
  }

 private:
  double y_{plot_top + 18};
};

/// The live bytes, dashed (a resource that holds exactly the live bytes shows through), and their
/// peak, labelled.
std::string live_series(points const& live, axes const& a)
{
  auto out        = polyline(live, a, live_colour, 1.2, "5,3");
  auto const peak = peak_of(live);
  auto const px   = a.x(peak->first);
  auto const py   = a.y(static_cast<double>(peak->second));
  auto const text =
    fmt::format("peak live {} at {:.3g} s", bytes_label(static_cast<double>(peak->second), a.unit, 2), peak->first);
  bool const left = px < (plot_left + plot_right) / 2;
  out += fmt::format(R"(<circle cx="{0:.1f}" cy="{1:.1f}" r="4" fill="none" stroke="{2}" stroke-width="1.5"/>)"
                     R"(<text x="{3:.1f}" y="{4:.1f}" text-anchor="{5}">{6}</text>)"
                     "\n",
                     px, py, live_colour, left ? px + 8 : px - 8, std::max(py - 14, plot_top + 12),
                     left ? "start" : "end", xml_escaped(text));
  return out;
}

}  // namespace

timeline::timeline(replay_plan const& plan) : plan_{plan}
{
  live_.name = "live";
  if (plan.steps.empty()) { return; }
  start_seconds_  = plan.steps.front().time_seconds;
  std::size_t now = 0;
  for (std::size_t i = 0; i < plan.steps.size(); ++i) {
    auto const& step = plan.steps[i];
    if (step.kind == rmm::trace::action::allocate) { now += step.bytes; }
    if (step.kind == rmm::trace::action::free) { now -= plan.steps[step.allocation].bytes; }
    auto const t = step.time_seconds - start_seconds_;
    // Threads log a few microseconds out of order, and a log may run past midnight.
    auto const previous = live_.points.empty() ? 0.0 : live_.points.back().first;
    auto const elapsed  = t < previous - 43200 ? t + 86400 : std::max(t, previous);
    live_.points.emplace_back(elapsed, now);
  }
}

void timeline::begin(std::string resource)
{
  std::lock_guard lock{mutex_};
  reserved_.push_back({std::move(resource), {}});
}

void timeline::record(std::size_t step, std::size_t reserved_bytes)
{
  std::lock_guard lock{mutex_};
  if (reserved_.empty() || step >= live_.points.size()) { return; }
  reserved_.back().points.emplace_back(live_.points[step].first, reserved_bytes);
}

std::string timeline::svg() const
{
  double max_time   = 0;
  double max_bytes  = 1;
  auto const extend = [&](series const& s) {
    for (auto const& [t, b] : s.points) {
      max_time  = std::max(max_time, t);
      max_bytes = std::max(max_bytes, static_cast<double>(b));
    }
  };
  extend(live_);
  std::ranges::for_each(reserved_, extend);
  auto const a = axes_for(max_time, max_bytes);
  auto out     = svg_frame(a, std::filesystem::path{plan_.log_name}.filename().string());
  legend key;
  for (std::size_t i = 0; i < reserved_.size(); ++i) {
    auto const& s     = reserved_[i];
    auto const colour = resource_colours[i % resource_colours.size()];
    if (s.points.empty()) {
      out += key.entry(colour, fmt::format("{} reserved: no samples (the replay failed)", s.name));
      continue;
    }
    out += polyline(s.points, a, colour, 1.5, "none");
    auto const peak = peak_of(s.points);
    out += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"/>)"
                       "\n",
                       a.x(peak->first), a.y(static_cast<double>(peak->second)), colour);
    out += key.entry(
      colour, fmt::format("{} reserved, peak {}", s.name, bytes_label(static_cast<double>(peak->second), a.unit, 2)));
  }
  if (!live_.points.empty()) {
    out += live_series(live_.points, a);
    out += key.entry(live_colour, "live (the log's own count)");
  }
  out += "</svg>\n";
  return out;
}

}  // namespace rmm::replay
