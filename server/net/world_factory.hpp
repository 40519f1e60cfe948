#pragma once
// Builds a World from the settings a client (world.create) or start-up (the "default" world) asks for.

#include <memory>
#include <nlohmann/json.hpp>
#include <string>

namespace ecsd::world {
class World;
}

namespace ecsd::net {

/// @brief Creates a World named `name` from world.create's params (tick_hz, gravity, bounds, paused);
/// missing members take the World's defaults.
[[nodiscard]] std::shared_ptr<world::World> make_world(const std::string& name, const nlohmann::json& params);

}  // namespace ecsd::net
