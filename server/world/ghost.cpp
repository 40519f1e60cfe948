// The ghost power-up: between collision detection and response, drop the
// contacts between a Ghost and the entities it passes through; expire on a timer.
#include <algorithm>

#include "world/collision.hpp"
#include "world/systems.hpp"
#include "world/world.hpp"

namespace ecsd::world {

void ghost_filter_system::run(world& w) {
    auto& reg = w.registry();
    auto& contacts = reg.storage<Contacts>();
    const double dt = w.dt();
    auto& dropped_pairs = w.state<collision_detection_system>().dropped;  // looked up once a tick
    w.walk<ghost_filter_system, Ghost>([&](entity_id g, Ghost& ghost) {
        std::vector<ecs::component_id> passes;
        for (const auto& name : ghost.passes)
            if (auto id = reg.find_component(name)) passes.push_back(*id);
        const auto passes_through = [&](entity_id other) {
            return std::any_of(passes.begin(), passes.end(), [&](auto c) { return reg.has(other, c); });
        };
        if (contacts.contains(ecs::index_of(g)) && !passes.empty()) {
            auto& mine = contacts.get(ecs::index_of(g)).entities;
            std::vector<entity_id> dropped;
            std::erase_if(mine, [&](ecs::entity_ref r) {
                const bool drop = reg.alive(r.id) && passes_through(r.id);
                if (drop) dropped.push_back(r.id);
                return drop;
            });
            for (auto other : dropped) {  // the contact is gone from both sides, and from response
                dropped_pairs.emplace_back(std::minmax(g, other));
                if (!contacts.contains(ecs::index_of(other))) continue;
                std::erase_if(contacts.get(ecs::index_of(other)).entities,
                              [&](ecs::entity_ref r) { return r.id == g; });
            }
        }
        ghost.remaining -= dt;
        if (ghost.remaining <= 1e-9) reg.remove<Ghost>(g);  // deferred to the end of the tick
    });
}

}  // namespace ecsd::world
