#include "world_factory.hpp"

namespace ecsd::net {

// Placeholder until ecsd::world::World lands.
std::shared_ptr<world::World> make_world(const std::string&, const nlohmann::json&) { return nullptr; }

}  // namespace ecsd::net
