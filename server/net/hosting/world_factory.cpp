#include "hosting/world_factory.hpp"

#include "world/world.hpp"

namespace ecsd::net {

std::shared_ptr<world::world> make_world(const std::string& name, const nlohmann::json& params) {
    world::world_settings settings;
    settings.name = name;
    settings.tick_hz = params.value("tick_hz", settings.tick_hz);
    settings.paused = params.value("paused", settings.paused);
    settings.threads = params.value("threads", settings.threads);
    if (auto g = params.find("gravity"); g != params.end()) {
        if (g->is_number()) {
            settings.gravity_x = 0;
            settings.gravity_y = g->get<double>();
        } else {
            settings.gravity_x = g->value("x", settings.gravity_x);
            settings.gravity_y = g->value("y", settings.gravity_y);
        }
    }
    if (auto b = params.find("bounds"); b != params.end())
        settings.bounds = world::world_bounds::from_json(*b);
    return std::make_shared<world::world>(std::move(settings));  // throws ecs_error on bad settings
}

}  // namespace ecsd::net
