// SPDX-License-Identifier: Apache-2.0
#include "timeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cmath>
#include <filesystem>
#include <iterator>
#include <string_view>

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
  max_time             = std::max(max_time, 1e-6);
  auto const unit      = unit_for(max_bytes);
  auto const byte_step = tick_step(max_bytes, unit.bytes);
  auto const top_bytes = std::ceil(max_bytes / byte_step) * byte_step;
  auto const time_step = tick_step(max_time, 1.0);
  auto const x         = [&](double t) { return plot_left + (plot_right - plot_left) * t / max_time; };
  auto const y         = [&](double b) { return plot_bottom - (plot_bottom - plot_top) * b / top_bytes; };

  std::string out =
    fmt::format(R"(<svg xmlns="http://www.w3.org/2000/svg" width="{0}" height="{1}" viewBox="0 0 {0} {1}" )"
                R"(font-family="sans-serif" font-size="12">)"
                "\n<title>rmm-replay: {2}</title>\n"
                R"(<rect width="{0}" height="{1}" fill="white"/>)"
                "\n"
                R"(<text x="{3}" y="24" font-size="15">{2}: live and reserved bytes over the log's time</text>)"
                "\n",
                width, height, xml_escaped(std::filesystem::path{plan_.log_name}.filename().string()), plot_left);

  // Grid and axes.
  for (double b = 0; b <= top_bytes * 1.0001; b += byte_step) {
    out += fmt::format(R"(<line x1="{0}" x2="{1}" y1="{2:.1f}" y2="{2:.1f}" stroke="#dddddd"/>)"
                       R"(<text x="{3}" y="{4:.1f}" text-anchor="end">{5}</text>)"
                       "\n",
                       plot_left, plot_right, y(b), plot_left - 6, y(b) + 4,
                       bytes_label(b, unit, byte_step / unit.bytes < 1 ? 1 : 0));
  }
  for (double t = 0; t <= max_time * 1.0001; t += time_step) {
    out += fmt::format(R"(<line x1="{0:.1f}" x2="{0:.1f}" y1="{1}" y2="{2}" stroke="#dddddd"/>)"
                       R"(<text x="{0:.1f}" y="{3}" text-anchor="middle">{4:g} s</text>)"
                       "\n",
                       x(t), plot_top, plot_bottom, plot_bottom + 18, t);
  }
  out += fmt::format(R"(<rect x="{}" y="{}" width="{}" height="{}" fill="none" stroke="#888888"/>)"
                     "\n",
                     plot_left, plot_top, plot_right - plot_left, plot_bottom - plot_top);
  out += fmt::format(R"(<text x="{}" y="{}" text-anchor="middle">time since the log's first event</text>)"
                     "\n",
                     (plot_left + plot_right) / 2, plot_bottom + 38);

  // One point per pixel column and series, its highest value: peaks stay visible.
  auto const polyline = [&](series const& s, std::string_view colour, double stroke, std::string_view dashes) {
    std::string points;
    long column      = -1;
    std::size_t high = 0;
    auto const flush = [&] {
      if (column >= 0) { points += fmt::format("{},{:.1f} ", column, y(static_cast<double>(high))); }
    };
    for (auto const& [t, b] : s.points) {
      auto const c = std::lround(x(t));
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
                       colour, stroke, dashes, points);
  };
  auto const peak_of = [](series const& s) {
    return std::max_element(s.points.begin(), s.points.end(),
                            [](auto const& a, auto const& b) { return a.second < b.second; });
  };

  double legend_y   = plot_top + 18;
  auto const legend = [&](std::string_view colour, std::string const& text) {
    out += fmt::format(R"(<rect x="{}" y="{:.1f}" width="14" height="3" fill="{}"/>)"
                       R"(<text x="{}" y="{:.1f}">{}</text>)"
                       "\n",
                       plot_left + 12, legend_y - 4, colour, plot_left + 32, legend_y, xml_escaped(text));
    legend_y += 16;
  };

  for (std::size_t i = 0; i < reserved_.size(); ++i) {
    auto const& s     = reserved_[i];
    auto const colour = resource_colours[i % resource_colours.size()];
    if (s.points.empty()) {
      legend(colour, fmt::format("{} reserved: no samples (the replay failed)", s.name));
      continue;
    }
    out += polyline(s, colour, 1.5, "none");
    auto const peak = peak_of(s);
    out += fmt::format(R"(<circle cx="{:.1f}" cy="{:.1f}" r="3.5" fill="{}"/>)"
                       "\n",
                       x(peak->first), y(static_cast<double>(peak->second)), colour);
    legend(colour,
           fmt::format("{} reserved, peak {}", s.name, bytes_label(static_cast<double>(peak->second), unit, 2)));
  }
  if (!live_.points.empty()) {
    out +=
      polyline(live_, live_colour, 1.2, "5,3");  // dashed: a resource that holds exactly the live bytes shows through
    auto const peak = peak_of(live_);
    auto const px   = x(peak->first);
    auto const py   = y(static_cast<double>(peak->second));
    auto const text =
      fmt::format("peak live {} at {:.3g} s", bytes_label(static_cast<double>(peak->second), unit, 2), peak->first);
    out += fmt::format(R"(<circle cx="{0:.1f}" cy="{1:.1f}" r="4" fill="none" stroke="{2}" stroke-width="1.5"/>)"
                       R"(<text x="{3:.1f}" y="{4:.1f}" text-anchor="{5}">{6}</text>)"
                       "\n",
                       px, py, live_colour, px < (plot_left + plot_right) / 2 ? px + 8 : px - 8,
                       std::max(py - 14, plot_top + 12), px < (plot_left + plot_right) / 2 ? "start" : "end",
                       xml_escaped(text));
    legend(live_colour, "live (the log's own count)");
  }
  out += "</svg>\n";
  return out;
}

}  // namespace rmm::replay
