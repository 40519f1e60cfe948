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
    /// Coulomb friction of every contact (and of the bounds' edges): a sliding contact loses at
    /// most this times its normal impulse along the contact.
    static constexpr double friction = 0.5;
    static void run(world& w);
};
/// @brief Keeps movers inside the world's bounds, bouncing them off its edges (world_bounds).
struct bounds_system {
    static constexpr std::string_view name = "bounds";
    static constexpr system_phase when = system_phase::collision;
    using terms = type_list<Position, Velocity>;
    static void run(world& w);
};
/// @brief Puts bodies at rest to sleep, as physics engines do (Box2D's islands). Bodies with mass
/// that touch form an island. When each has moved less than rest_speed * dt in the tick (or, once
/// resting, stays within rest_radius of where it came to rest: piles settle into small cycles) and
/// something holds the island up (an immovable collider, a floor edge, or no gravity), they count
/// up one Resting.seconds; at sleep_after their Velocity becomes 0 and they sleep. A member moving
/// away, or the island losing its support, wakes them all (Resting removed). Velocities under
/// zero_speed become 0.
struct rest_state;
struct rest_system {
    static constexpr std::string_view name = "rest";
    static constexpr system_phase when = system_phase::collision;
    using terms = type_list<Position, Velocity, RigidBody>;
    using state = rest_state;
    static constexpr double sleep_after = 0.5;   // seconds at rest before a body sleeps
    static constexpr double rest_speed = 0.05;   // m/s: a body that moved less in a tick is still
    static constexpr double rest_radius = 0.01;  // m a resting body may wander from where it stopped
    static constexpr double zero_speed = 1e-6;   // m/s: slower than this is standing still
    [[nodiscard]] static bool asleep(const Resting& r) noexcept {
        return r.seconds >= sleep_after - 1e-9;  // the sum of ticks' dt, rounded
    }
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
              collision_response_system, bounds_system, rest_system, lifetime_system, cleanup_system>;

}  // namespace ecsd::world
