#pragma once
// Names that become file names. A world's name names its snapshot and journal in --data-dir, so
// it is checked here, once, for every request that takes one and for every path built from one.

#include <optional>
#include <string>
#include <string_view>

namespace ecsd::protocol {

/// @brief Longest world name.
inline constexpr std::size_t max_world_name = 64;

/// @brief Why `name` is not an allowed world name, or nullopt when it is. Allowed: 1 to 64
/// characters from A-Z a-z 0-9 _ . - that do not start with a dot (no paths, no hidden files,
/// nothing a file system treats specially).
[[nodiscard]] std::optional<std::string> world_name_problem(std::string_view name);

}  // namespace ecsd::protocol
