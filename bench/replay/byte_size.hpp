#pragma once

// Sizes on the command line: "1048576", "512MiB", "80GiB", "1.5 GiB", "80GB".

#include <cstddef>
#include <optional>
#include <string_view>

namespace rmm::replay {

/// Bytes, or a number (decimals allowed) with a unit: B, KiB, MiB, GiB, TiB (powers of 1024) or
/// KB, MB, GB, TB (powers of 1000), case-insensitive, optionally after a space. nullopt when the
/// text is not such a size or the value does not fit in size_t.
[[nodiscard]] std::optional<std::size_t> parse_byte_size(std::string_view text);

}  // namespace rmm::replay
