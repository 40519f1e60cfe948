#pragma once
// The built-in systems. Each is a struct that says, in one place, what the world needs to know
// about it (flecs declares a system the same way: its terms and its phase in one call):
//   name   what clients call it (world.list_systems, world.set_system_enabled, world.run_system)
//   when   its phase; the pipeline runs phases in order, systems of one phase in install order
//   terms  the components its walk iterates; its signature (the member set clients see) is
//          derived from them, and world::walk<S, T...> refuses at compile time a walk over other
//          components, so the signature cannot drift from the code
//   state  (optional) what it keeps between ticks; world::state<S>() is its home, and other
//          systems read it by naming the system that owns it
//   run    the work, a plain function over the world

#include <algorithm>
#include <cstdint>
#include <string_view>

#include "ecs/value_codec.hpp"
#include "world/components.hpp"

namespace ecsd::world {

class world;
struct collision_state;

/// @brief The stages of a tick, in the order they run.
enum class system_phase : std::uint8_t { input, simulation, collision, post, cleanup };
/// @brief The phase's name as clients see it ("input", "simulation", ...).
[[nodiscard]] std::string_view phase_name(system_phase p) noexcept;

/// @brief `terms` of a system that works on every live entity (signature `*`).
struct every_entity {};

/// @brief Clamps to the ±1e15 every number field accepts, so what the systems produce always
/// saves and loads again. (Inline: collision response calls it four times a contact pair.)
inline double bounded(double v) noexcept {
    return std::clamp(v, -ecs::internal::max_number, ecs::internal::max_number);
}
inline void keep_in_range(Position& p) noexcept {
    p.x = bounded(p.x);
    p.y = bounded(p.y);
}
inline void keep_in_range(Velocity& v) noexcept {
    v.x = bounded(v.x);
    v.y = bounded(v.y);
}

/// @brief Reads MagicInput, casts the spell from the table, removes the MagicInput.
struct spells_system {
    static constexpr std::string_view name = "spells";
    static constexpr system_phase when = system_phase::input;
    using terms = type_list<MagicInput>;
    static void run(world& w);
};
/// @brief v += g * gravity_scale * dt for RigidBody movers with mass (mass 0 is immovable: no
/// gravity); p += v * dt for every mover.
struct movement_system {
    static constexpr std::string_view name = "movement";
    static constexpr system_phase when = system_phase::simulation;
    using terms = type_list<Position, Velocity>;
    static void run(world& w);
};
/// @brief Uniform-grid broadphase + circle narrowphase; writes Contacts and keeps the pairs (its
/// state) for the ghost filter and collision response.
struct collision_detection_system {
    static constexpr std::string_view name = "collision_detection";
    static constexpr system_phase when = system_phase::collision;
    using terms = type_list<Position, Collider>;
    using state = collision_state;
    static void run(world& w);
};
/// @brief Drops contacts a Ghost passes through; counts Ghost down and removes it.
struct ghost_filter_system {
    static constexpr std::string_view name = "ghost_filter";
    static constexpr system_phase when = system_phase::collision;
    using terms = type_list<Ghost>;
    static void run(world& w);
};
/// @brief Separates overlapping bodies and reflects velocities by restitution and mass. It walks
/// the pairs detection found (bodies with Position and Collider, whose Contacts it answers).
struct collision_response_system {
    static constexpr std::string_view name = "collision_response";
    static constexpr system_phase when = system_phase::collision;
    using terms = type_list<Position, Collider, Contacts>;
    static void run(world& w);
};
/// @brief Keeps movers inside the world's bounds, bouncing them off its edges (world_bounds).
struct bounds_system {
    static constexpr std::string_view name = "bounds";
    static constexpr system_phase when = system_phase::collision;
    using terms = type_list<Position, Velocity>;
    static void run(world& w);
};
/// @brief Counts Lifetime down and destroys at zero.
struct lifetime_system {
    static constexpr std::string_view name = "lifetime";
    static constexpr system_phase when = system_phase::post;
    using terms = type_list<Lifetime>;
    static void run(world& w);
};
/// @brief Applies deferred destruction and rotates the per-tick change records.
struct cleanup_system {
    static constexpr std::string_view name = "cleanup";
    static constexpr system_phase when = system_phase::cleanup;
    using terms = every_entity;
    static void run(world& w);
};

/// @brief Every built-in system, in install order (which orders systems within a phase).
using builtin_systems =
    type_list<spells_system, movement_system, collision_detection_system, ghost_filter_system,
              collision_response_system, bounds_system, lifetime_system, cleanup_system>;

}  // namespace ecsd::world
