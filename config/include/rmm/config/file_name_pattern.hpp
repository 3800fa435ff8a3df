#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rmm::config {

/// What is wrong with `pattern` ("the unknown placeholder '%x'"), or nullopt when it is valid. Valid
/// patterns are non-empty, hold no NUL character and use only the placeholders %p, %d and %%.
[[nodiscard]] std::optional<std::string> file_name_pattern_problem(std::string_view pattern);

/// `pattern` with %p replaced by `process_id`, %d by `device` and %% by %.
[[nodiscard]] std::string expand_file_name_pattern(std::string_view pattern, long process_id, int device);

}  // namespace rmm::config
