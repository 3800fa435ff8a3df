// SPDX-License-Identifier: Apache-2.0
#include "schema_parts.hpp"

#include <rmm/config/schema.hpp>

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <numeric>
#include <string>

namespace rmm::config {

namespace {

std::vector<layer_schema> const& registry()
{
  static std::vector<layer_schema> const schemas = [] {
    std::vector<layer_schema> all;
    for (auto&& family : {detail::resource_schemas(), detail::suballocator_schemas(), detail::adaptor_schemas()}) {
      all.insert(all.end(), family.begin(), family.end());
    }
    return all;
  }();
  return schemas;
}

std::size_t edit_distance(std::string_view a, std::string_view b)
{
  std::vector<std::size_t> row(b.size() + 1);
  std::iota(row.begin(), row.end(), std::size_t{0});
  for (std::size_t i = 1; i <= a.size(); ++i) {
    auto diagonal = row[0];
    row[0]        = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      auto const above = row[j];
      auto const same =
        std::tolower(static_cast<unsigned char>(a[i - 1])) == std::tolower(static_cast<unsigned char>(b[j - 1]));
      row[j]   = std::min({row[j] + 1, row[j - 1] + 1, diagonal + (same ? 0 : 1)});
      diagonal = above;
    }
  }
  return row[b.size()];
}

}  // namespace

key_schema const* layer_schema::find_key(std::string_view name) const noexcept
{
  auto it = std::find_if(keys.begin(), keys.end(), [&](key_schema const& k) { return k.name == name; });
  return it == keys.end() ? nullptr : &*it;
}

std::span<layer_schema const> layer_schemas() { return registry(); }

layer_schema const* find_layer_schema(std::string_view type) noexcept
{
  auto const& all = registry();
  auto it         = std::find_if(all.begin(), all.end(), [&](layer_schema const& s) { return s.type == type; });
  return it == all.end() ? nullptr : &*it;
}

std::string describe_expected(key_schema const& key)
{
  switch (key.kind) {
    case value_kind::boolean: return "true or false";
    case value_kind::integer:
      if (key.maximum != INT64_MAX) { return fmt::format("an integer from {} to {}", key.minimum, key.maximum); }
      return fmt::format("an integer of at least {}", key.minimum);
    case value_kind::size:
      return key.power_of_two ? "a power of two in bytes: an integer, or a string like \"4KiB\""
                              : "a size: bytes as an integer, or a string like \"512MiB\" or \"8GiB\"";
    case value_kind::size_or_percent:
      return "a size: bytes as an integer, a string like \"512MiB\" or \"8GiB\", or a percentage of free device "
             "memory like \"50%\"";
    case value_kind::size_list: return "a list of sizes in ascending order, like [256, 4096, \"64KiB\", \"1MiB\"]";
    case value_kind::choice: {
      std::string names;
      for (auto const choice : key.choices) { names += (names.empty() ? "" : ", ") + fmt::format("\"{}\"", choice); }
      return "one of " + names;
    }
    case value_kind::file_name_pattern:
      return "a file name as a string; %p stands for the process id, %d for the device, %% for %";
  }
  return "a value";
}

std::optional<std::string_view> closest_match(std::string_view word, std::span<std::string_view const> candidates)
{
  std::optional<std::string_view> best;
  auto best_distance = std::size_t{3};  // more than two edits away is not a typo
  for (auto const candidate : candidates) {
    auto const distance = edit_distance(word, candidate);
    if (distance < best_distance && distance < std::max<std::size_t>(candidate.size() / 2, 1)) {
      best          = candidate;
      best_distance = distance;
    }
  }
  return best;
}

}  // namespace rmm::config
