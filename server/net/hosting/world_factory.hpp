#pragma once
// Builds a world::world from the settings a client (world.create) or start-up (the "default" world) asks for.

#include <memory>
#include <string>

#include <nlohmann/json.hpp>

namespace ecsd::world {
class world;
}

namespace ecsd::net {

/// @brief Creates a world named `name` from world.create's params (tick_hz, gravity, bounds, paused);
/// missing members take world_settings' defaults.
[[nodiscard]] std::shared_ptr<world::world> make_world(const std::string& name, const nlohmann::json& params);

}  // namespace ecsd::net
