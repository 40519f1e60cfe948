#pragma once
// The built-in systems, in pipeline order. Each is a plain function over the
// world; world.cpp lists them with their names, phases and signatures.

namespace ecsd::world {

class World;

/// @brief Reads MagicInput, casts the spell from the table, removes the MagicInput (seed 001).
void spells_system(World& w);
/// @brief v += g * gravity_scale * dt for RigidBody movers; p += v * dt for every mover (seeds 000, 001).
void movement_system(World& w);
/// @brief Uniform-grid broadphase + circle narrowphase; writes Contacts.
void collision_detection_system(World& w);
/// @brief Drops contacts a Ghost passes through; counts Ghost down and removes it (seed 001).
void ghost_filter_system(World& w);
/// @brief Separates overlapping bodies and reflects velocities by restitution and mass.
void collision_response_system(World& w);
/// @brief Counts Lifetime down and destroys at zero.
void lifetime_system(World& w);
/// @brief Applies deferred destruction and rotates the per-tick change records (seed 004).
void cleanup_system(World& w);

}  // namespace ecsd::world
