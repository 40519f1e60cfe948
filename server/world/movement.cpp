#include "world/systems.hpp"
#include "world/world.hpp"

namespace ecsd::world {

void movement_system(World& w) {
    auto& reg = w.registry();
    const double dt = w.dt();
    const double gx = w.settings().gravity_x * dt;
    const double gy = w.settings().gravity_y * dt;
    auto& bodies = reg.storage<RigidBody>();
    if (bodies.empty()) {  // nothing feels gravity: one tight pass over the owning group
        reg.each<Position, const Velocity>([dt](Position& p, const Velocity& v) {
            p.x += v.x * dt;
            p.y += v.y * dt;
        });
        return;
    }
    reg.each<Position, Velocity>([&](entity_id e, Position& p, Velocity& v) {
        const auto slot = ecs::index_of(e);
        if (bodies.contains(slot)) {
            const double scale = bodies.get(slot).gravity_scale;
            v.x += gx * scale;
            v.y += gy * scale;
        }
        p.x += v.x * dt;
        p.y += v.y * dt;
    });
}

void lifetime_system(World& w) {
    auto& reg = w.registry();
    const double dt = w.dt();
    reg.each<Lifetime>([&](entity_id e, Lifetime& l) {
        l.remaining -= dt;
        if (l.remaining <= 1e-9) reg.destroy(e);  // deferred: we are inside a walk
    });
}

void cleanup_system(World& w) { w.registry().end_tick(); }

}  // namespace ecsd::world
