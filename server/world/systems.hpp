#pragma once
// The built-in systems, in pipeline order. Each is a plain function over the
// world; world.cpp lists them with their names, phases and signatures.

namespace ecsd::world {

class World;
struct Position;
struct Velocity;

/// @brief Clamps to the ±1e15 every number field accepts, so what the systems produce always
/// saves and loads again.
void keep_in_range(Position& p) noexcept;
void keep_in_range(Velocity& v) noexcept;

/// @brief Reads MagicInput, casts the spell from the table, removes the MagicInput.
void spells_system(World& w);
/// @brief v += g * gravity_scale * dt for RigidBody movers with mass (mass 0 is immovable: no
/// gravity); p += v * dt for every mover.
void movement_system(World& w);
/// @brief Uniform-grid broadphase + circle narrowphase; writes Contacts.
void collision_detection_system(World& w);
/// @brief Drops contacts a Ghost passes through; counts Ghost down and removes it.
void ghost_filter_system(World& w);
/// @brief Separates overlapping bodies and reflects velocities by restitution and mass.
void collision_response_system(World& w);
/// @brief Keeps movers inside the world's bounds, bouncing them off its edges (WorldBounds).
void bounds_system(World& w);
/// @brief Counts Lifetime down and destroys at zero.
void lifetime_system(World& w);
/// @brief Applies deferred destruction and rotates the per-tick change records.
void cleanup_system(World& w);

}  // namespace ecsd::world
