#pragma once
// Entity identifiers: one integer holding a slot index and a generation (EnTT's
// and flecs's scheme). Ids stay below 2^53 so every JSON client reads them exactly.

#include <cstdint>

namespace ecsd::ecs {

/// @brief An entity id: (generation << 32) | slot index. Zero is never a live id.
using entity_id = std::uint64_t;

/// @brief Index of a component type inside one registry.
using component_id = std::uint32_t;

inline constexpr entity_id null_entity = 0;
inline constexpr unsigned index_bits = 32;
inline constexpr unsigned generation_bits = 21;  // 32 + 21 = 53 bits: exact in a double
inline constexpr std::uint32_t index_mask = 0xFFFFFFFFu;
inline constexpr std::uint32_t max_generation = (1u << generation_bits) - 1;
inline constexpr std::uint32_t null_index = 0xFFFFFFFFu;

[[nodiscard]] constexpr std::uint32_t index_of(entity_id e) noexcept {
    return static_cast<std::uint32_t>(e & index_mask);
}
[[nodiscard]] constexpr std::uint32_t generation_of(entity_id e) noexcept {
    return static_cast<std::uint32_t>(e >> index_bits);
}
[[nodiscard]] constexpr entity_id make_entity(std::uint32_t index, std::uint32_t generation) noexcept {
    return (static_cast<entity_id>(generation) << index_bits) | index;
}
/// @brief True when the integer could name an entity at all (below 2^53, generation >= 1).
[[nodiscard]] constexpr bool well_formed(entity_id e) noexcept {
    return generation_of(e) >= 1 && generation_of(e) <= max_generation;
}

}  // namespace ecsd::ecs
