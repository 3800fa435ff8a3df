// SPDX-License-Identifier: Apache-2.0
#pragma once

// The layer schemas, one file per family: each type's keys, rules and factory live together.

#include <rmm/config/schema.hpp>

#include <vector>

namespace rmm::config::detail {

[[nodiscard]] std::vector<layer_schema> resource_schemas();      // schema_resources.cpp
[[nodiscard]] std::vector<layer_schema> suballocator_schemas();  // schema_suballocators.cpp
[[nodiscard]] std::vector<layer_schema> adaptor_schemas();       // schema_adaptors.cpp

}  // namespace rmm::config::detail
