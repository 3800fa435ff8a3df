// SPDX-License-Identifier: Apache-2.0
#pragma once

// The resources rmm-replay can replay through, by name, and how it measures what each one holds
// from the device.
//
// A name is a stack, top first, joined by '+': "binning+pool+cuda", a short form of a
// configuration stack whose layers are the configuration's types, built by rmm::config. The
// bottom may be left out (cuda); "binning" alone means binning+pool+cuda. With a simulated device
// the bottom is the simulated device and may only be cuda or left out.

#include "simulated_device_resource.hpp"

#include <rmm/resource_ref.hpp>

#include <cstddef>
#include <memory>
#include <optional>
#include <stdexcept>
#include <string>
#include <vector>

namespace rmm::replay {

/// A resource name that does not parse; the message lists what is known.
struct unknown_resource : std::invalid_argument {
  using std::invalid_argument::invalid_argument;
};

/// What the user chose for every stack.
struct stack_settings {
  std::optional<std::size_t> simulated_device_size;  ///< replaces the cuda bottom when set
  std::size_t pool_initial_size{0};                  ///< pools start empty: growth shows in the figures
  /// How pools over cuda grow (the configuration's pool.growth); unset: "virtual_memory".
  std::optional<std::string> pool_growth;
  std::optional<std::size_t> arena_size;  ///< default: half the (real or simulated) device
  /// Default-stream requests from this size up share one arena (default: the arena's own default).
  std::optional<std::size_t> arena_shared_threshold;
};

/// Peak bytes a stack held from the device: sampled after each allocation, or counted below it.
class reserved_gauge {
 public:
  reserved_gauge()                                 = default;
  reserved_gauge(reserved_gauge const&)            = delete;
  reserved_gauge& operator=(reserved_gauge const&) = delete;
  reserved_gauge(reserved_gauge&&)                 = delete;
  reserved_gauge& operator=(reserved_gauge&&)      = delete;
  virtual ~reserved_gauge()                        = default;

  /// Called after every replayed step, from the replaying thread.
  virtual void sample() noexcept {}
  /// The peak since the stack was built.
  [[nodiscard]] virtual std::size_t peak_bytes() const = 0;
  /// What the stack holds now.
  [[nodiscard]] virtual std::size_t current_bytes() const = 0;
  /// How the figure is obtained, for the report.
  [[nodiscard]] virtual std::string method() const = 0;
};

struct resource_stack {
  std::string name;                       ///< as the user wrote it
  std::string description;                ///< "binning over pool over cuda"
  std::unique_ptr<reserved_gauge> gauge;  ///< declared first: outlives the resources it watches
  rmm::mr::any_device_resource top;
};

/// Builds a fresh stack for `name`. Throws unknown_resource for a name that does not parse or a
/// bottom that cannot be simulated; resource constructors may throw (e.g. no memory pools).
[[nodiscard]] resource_stack build_stack(std::string const& name, stack_settings const& settings);

/// Checks a name without building anything (throws unknown_resource).
void check_stack_name(std::string const& name, stack_settings const& settings);

/// What runs without --resource: pool, arena, binning, cuda_async, cuda (cuda_async is left out
/// with a simulated device: its pool lives in the driver).
[[nodiscard]] std::vector<std::string> default_stack_names(bool simulated_device);

/// One line per known name, for --help and error messages.
[[nodiscard]] std::string known_stack_names();

}  // namespace rmm::replay
