#pragma once
// Entity ids on the wire are JSON integers in [0, 2^53): every JSON implementation (including
// JavaScript's doubles) carries them exactly.

#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace ecsd::protocol {

/// @brief Largest entity id a message may carry: 2^53 - 1.
inline constexpr std::uint64_t max_entity_id = (std::uint64_t{1} << 53) - 1;

/// @brief The id in a JSON value, or nullopt for anything that is not an integer in
/// [0, 2^53): 2^63, 1.5, 1.0, -1, "1" and null are all refused (1e400 never parses at all).
[[nodiscard]] std::optional<std::uint64_t> entity_id_from_json(const nlohmann::json& value) noexcept;

/// @brief The JSON Schema of an entity id, for method tables and rpc.discover.
[[nodiscard]] nlohmann::json entity_id_schema();

}  // namespace ecsd::protocol
