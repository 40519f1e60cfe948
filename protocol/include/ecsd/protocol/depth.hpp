#pragma once
// Nesting limit, checked on the raw text before parsing so a hostile line such as
// "[[[[...]]]]" never reaches the recursive parts of the JSON library.

#include <cstddef>
#include <string_view>

namespace ecsd::protocol {

/// @brief Deepest nesting of arrays/objects a message may have (the outermost counts as 1).
inline constexpr std::size_t max_nesting_depth = 64;

/// @brief True when brackets outside strings nest deeper than max_depth. Never throws; does not
/// validate the JSON (the parser does that afterwards).
[[nodiscard]] bool exceeds_depth(std::string_view text, std::size_t max_depth = max_nesting_depth) noexcept;

}  // namespace ecsd::protocol
