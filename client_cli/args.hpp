#pragma once

// Pure helpers that turn command-line words into JSON-RPC params. No I/O; unit-tested.

#include <cstdint>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include "json.hpp"

namespace ecsd::cli {

/// @brief Parses `Name=JSON` words into `{Name: value}`; a bare `Name` takes its defaults, sent as `{}`.
/// @throws usage_error on an empty name, a missing or malformed value, or a name given twice.
[[nodiscard]] json parse_components(std::span<const std::string> words);

/// @brief Parses bare component names (`remove ID Velocity Frozen`); `Name=...` is a usage error.
[[nodiscard]] json parse_component_names(std::span<const std::string> words);

/// @brief Parses an entity id: a decimal integer below 2^53, as the protocol requires.
[[nodiscard]] std::uint64_t parse_entity(std::string_view word);

/// @brief An entity as a request names it: an id (a word starting with a digit or a sign, parsed
///        as parse_entity does, so `-1` is a mistake) or the entity's Name (any other word of 1 to 64
///        characters), which the server looks up.
[[nodiscard]] json parse_entity_ref(std::string_view word);

/// @brief Parses a non-negative integer argument such as a tick count or a limit.
[[nodiscard]] std::uint64_t parse_count(std::string_view word, std::string_view what);

/// @brief Parses one JSON text given as an argument; `what` names it in the error message.
[[nodiscard]] json parse_json(std::string_view text, std::string_view what);

/// @brief Splits `a,b, c` (and repeated options) into a JSON array of trimmed, non-empty names.
[[nodiscard]] json split_list(std::span<const std::string> words);

}  // namespace ecsd::cli
