// SPDX-License-Identifier: Apache-2.0
#pragma once

// Converting and range-checking parameter values, shared by the TOML reader and the environment.

#include <rmm/config/description.hpp>
#include <rmm/config/schema.hpp>

#include <cstddef>
#include <limits>
#include <optional>
#include <string>
#include <string_view>
#include <variant>

namespace rmm::config::detail {

/// What is wrong with a value: the two halves of a config_error message. `element` is the index
/// of the offending list element, if any.
struct value_problem {
  std::string found;
  std::string expected;
  std::size_t element{std::numeric_limits<std::size_t>::max()};
};

/// `text` in double quotes for a message: control characters escaped, long text shortened, so a
/// message stays one readable line whatever the input.
[[nodiscard]] std::string quoted(std::string_view text);

/// A key's value from text: an environment variable's value, or a TOML string for sizes.
/// Lists are comma-separated. The result has passed check_value.
[[nodiscard]] std::variant<parameter_value, value_problem> parse_value_text(key_schema const& key,
                                                                            std::string_view text);

/// A size (or percentage, if the key accepts one) from text, range-checked.
[[nodiscard]] std::variant<size_spec, value_problem> parse_size_text(key_schema const& key, std::string_view text);

/// Whether `value` is within `key`'s range (sizes above the minimum, integers in bounds, powers of
/// two, list order, known choices, valid file name patterns).
[[nodiscard]] std::optional<value_problem> check_value(key_schema const& key, parameter_value const& value);

/// An empty layer of `schema`: every key present, unset.
[[nodiscard]] layer_description empty_layer(layer_schema const& schema, value_origin origin, source_location location);

/// Every [shim] key, unset.
[[nodiscard]] std::vector<parameter> empty_shim_settings();

/// Sets unset keys to their defaults, refuses missing required keys, runs each layer's own
/// check, and checks the shape of the stack (resources only at the bottom, an upstream below
/// every sub-allocator and adaptor).
void finish_and_validate(stack_description& stack);

}  // namespace rmm::config::detail
