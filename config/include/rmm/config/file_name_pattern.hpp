// SPDX-License-Identifier: Apache-2.0
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace rmm::config {

/**
 * @brief What is wrong with `pattern`, if anything.
 *
 * Valid patterns are non-empty, hold no NUL character and use only the placeholders %p, %d and %%.
 *
 * @param pattern the file name pattern
 * @return the problem ("the unknown placeholder '%x'"), or nullopt when the pattern is valid
 */
[[nodiscard]] std::optional<std::string> file_name_pattern_problem(std::string_view pattern);

/**
 * @brief `pattern` with %p replaced by `process_id`, %d by `device` and %% by %.
 *
 * @param pattern a valid pattern (see file_name_pattern_problem)
 * @param process_id the process id %p stands for
 * @param device the device %d stands for
 * @return the file name
 */
[[nodiscard]] std::string expand_file_name_pattern(std::string_view pattern, long process_id, int device);

}  // namespace rmm::config
