// SPDX-License-Identifier: Apache-2.0
#pragma once

// Typed access to a validated layer's parameters, for the schema files' checks and factories.
// The loader has already checked every value against its key's kind, so a mismatch here is a bug.

#include <rmm/config/description.hpp>
#include <rmm/config/error.hpp>
#include <rmm/config/schema.hpp>

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace rmm::config::detail {

[[nodiscard]] std::optional<size_spec> size_value(layer_description const& layer, std::string_view key);
[[nodiscard]] std::optional<std::uint64_t> resolved_size(layer_description const& layer,
                                                         std::string_view key,
                                                         build_context const& context);
[[nodiscard]] bool bool_value(layer_description const& layer, std::string_view key);
[[nodiscard]] std::optional<std::int64_t> integer_value(layer_description const& layer, std::string_view key);
[[nodiscard]] std::optional<std::string> string_value(layer_description const& layer, std::string_view key);
[[nodiscard]] std::vector<std::uint64_t> size_list_value(layer_description const& layer, std::string_view key);

/// "initial_size = \"50%\" (70 GiB on this device)": the "found" half of a message about a size.
[[nodiscard]] std::string describe_size_setting(parameter const& setting, std::optional<build_context> context);

/// Of two settings that conflict, the one set by the later source (environment > file > default;
/// `second` on a tie): the one the user most likely just changed, so the error points there.
[[nodiscard]] parameter const& set_last(parameter const& first, parameter const& second) noexcept;

/// Throws config_error at `setting`'s position.
[[noreturn]] void fail_at(parameter const& setting, std::string found, std::string expected);

/// Throws when `key`'s resolved size exceeds the device's capacity: such a layer cannot be built
/// on this device whatever else runs on it.
void check_fits_device(layer_description const& layer, std::string_view key, build_context const& context);

}  // namespace rmm::config::detail
