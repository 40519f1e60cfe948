#pragma once
// Nesting limit, checked on the raw text before parsing so a hostile line such as
// "[[[[...]]]]" never reaches the recursive parts of the JSON library.

#include <cstddef>
#include <string_view>

namespace ecsd::protocol {

/// @brief Deepest nesting of arrays/objects a message may have (the outermost counts as 1).
inline constexpr std::size_t max_nesting_depth = 64;

/// @brief Deepest nesting of a stored or imported document (a snapshot, a journal record, an
/// import): a request's values (at most max_nesting_depth deep) sit a few levels further in there.
/// Every text the server reads is held to one of the two before it is parsed, so no tree it builds
/// can be deep enough for a recursive copy, dump or comparison to run out of stack.
inline constexpr std::size_t max_document_depth = max_nesting_depth + 16;

/// @brief True when brackets outside strings nest deeper than max_depth. Never throws; does not
/// validate the JSON (the parser does that afterwards).
[[nodiscard]] bool exceeds_depth(std::string_view text, std::size_t max_depth = max_nesting_depth) noexcept;

}  // namespace ecsd::protocol
