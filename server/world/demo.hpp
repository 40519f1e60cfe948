#pragma once
// The demo scene (`ecsd --demo`, which scripts/run.sh sets): what a newcomer sees move in the viewer
// before writing a line. A box 40 m wide with a ground at y = 0; slimes (monsters) fall, bounce and
// come to rest; wisps without gravity cross the box for ever and knock them about; trees stand
// still; one player. Prefabs for each, so the viewer's shift-click spawns more.

#include <nlohmann/json.hpp>

namespace ecsd::world {

class world;

/// @brief world.create's params for the demo world: its bounds.
[[nodiscard]] nlohmann::json demo_params();
/// @brief Defines the demo's prefabs and spawns its scene into `w` (meant for an empty world).
void populate_demo(world& w);

}  // namespace ecsd::world
