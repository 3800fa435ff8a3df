// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <rmm/config/description.hpp>

#include <string>
#include <string_view>

namespace rmm::config::detail {

/// The layers and [shim] settings a TOML document states, each value checked against its key and
/// carrying its position; unset keys stay unset (defaults come later). An empty `layers` means
/// the document has no `resource` key. Throws config_error, also for TOML syntax errors.
[[nodiscard]] stack_description read_toml(std::string_view text, std::string const& source_name);

}  // namespace rmm::config::detail
