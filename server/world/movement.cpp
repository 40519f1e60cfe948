#include <algorithm>
#include <cmath>
#include <limits>

#include "ecs/value_codec.hpp"
#include "world/collision.hpp"
#include "world/systems.hpp"
#include "world/world.hpp"

namespace ecsd::world {

// Each mover writes only its own Position and Velocity, so the walk is cut into pieces run side by
// side on the world's threads (world::walk_split_nested): the result is the same for any thread
// count. RigidBody is nested in the Position+Velocity group, so movers with one walk three packed
// arrays and the rest two, with no lookup per entity.
void movement_system::run(world& w) {
    const double dt = w.dt();
    const double gx = w.settings().gravity_x * dt;
    const double gy = w.settings().gravity_y * dt;
    auto& reg = w.registry();
    auto& positions = reg.storage<Position>();
    auto& resting = reg.storage<Resting>();
    const Position* first = positions.data();
    // A sleeping body (rest_system) stands still: no gravity, no move. Sleepers have a Velocity of
    // exactly 0, so only those pay for the lookup. The walk hands packed Position values, so a
    // value's place in the pool is its offset from the first.
    const auto sleeping = [&](const Position& p) {
        const auto slot = positions.slot_at(static_cast<std::uint32_t>(&p - first));
        const auto at = resting.find(slot);
        return at != ecs::null_index && rest_system::asleep(resting.at(at));
    };
    const bool any_resting = !resting.empty();
    // Where each slow body with a RigidBody starts the tick, for rest_system: how far a body moved
    // in a tick tells rest, not its velocity (in a pile, a body's velocity stays about a third of
    // a metre a second downwards, which response takes out of its position again every tick).
    auto& rest = w.state<rest_system>();
    auto* starts = rest.starts_for(positions.size());
    const std::uint64_t stamp = w.tick() + 1;
    constexpr double slow = rest_state::moving_speed * rest_state::moving_speed;
    rest.noted.store(false, std::memory_order_relaxed);
    auto& noted = rest.noted;
    const std::uint32_t* slots = positions.slots();
    w.walk_split_nested<movement_system, Position, Velocity, const RigidBody>(
        [first, starts, stamp, slots, any_resting, &sleeping, &noted, dt, gx, gy](Position& p, Velocity& v,
                                                                                  const RigidBody& body) {
            if (v.x * v.x + v.y * v.y < slow) [[unlikely]] {
                const auto at = static_cast<std::uint32_t>(&p - first);
                starts[at] = {stamp, slots[at], p.x, p.y};
                if (!noted.load(std::memory_order_relaxed)) noted.store(true, std::memory_order_relaxed);
                if (any_resting && v.x == 0 && v.y == 0 && sleeping(p)) return;
            }
            if (body.mass > 0) {  // mass 0: immovable, gravity too
                v.x = bounded(v.x + gx * body.gravity_scale);
                v.y = bounded(v.y + gy * body.gravity_scale);
            }
            p.x = bounded(p.x + v.x * dt);
            p.y = bounded(p.y + v.y * dt);
        },
        [dt](Position& p, const Velocity& v) {
            p.x = bounded(p.x + v.x * dt);
            p.y = bounded(p.y + v.y * dt);
        });
}

namespace {
/// @brief Puts a coordinate that crossed an edge back on it and bounces its speed off the edge.
/// `inward` is +1 for a lower edge (left, bottom) and -1 for an upper one.
/// `along` is the velocity along the edge: friction takes at most collision_response_system::
/// friction times the change of v from it, as a contact's.
inline void keep_inside(double& p, double& v, double& along, double edge, double inward, double restitution,
                        double rest_speed) {
    p = edge;
    if (v * inward >= 0) return;  // already moving back in
    const double before = v;
    v = -v * restitution;
    if (std::fabs(v) < rest_speed) v = 0;  // a bounce gravity would undo within two ticks: at rest
    const double grip = collision_response_system::friction * std::fabs(v - before);
    along = std::fabs(along) <= grip ? 0.0 : along - std::copysign(grip, along);
}
}  // namespace

void bounds_system::run(world& w) {
    const auto& b = w.settings().bounds;
    if (!b.any()) return;
    auto& reg = w.registry();
    const auto& bodies = reg.storage<RigidBody>();
    const auto& colliders = reg.storage<Collider>();
    const double dt = w.dt();
    const double rest_x = 2 * std::fabs(w.settings().gravity_x) * dt;
    const double rest_y = 2 * std::fabs(w.settings().gravity_y) * dt;
    // Most entities lie well inside: one test against the edges moved in by the widest collider
    // (a pass over the colliders' packed radii) clears them without looking up their own. NaN
    // fails every comparison, as it does in the exact test.
    double widest = 0;
    for (std::uint32_t i = 0; i < colliders.size(); ++i) widest = std::max(widest, colliders.at(i).radius);
    constexpr double inf = std::numeric_limits<double>::infinity();
    // A little farther in than that, so that rounding can never clear one the exact test would catch.
    const auto in_by = [widest](double edge) { return widest + (std::fabs(edge) + widest) * 1e-12; };
    const double lo_x = b.left ? *b.left + in_by(*b.left) : -inf;
    const double hi_x = b.right ? *b.right - in_by(*b.right) : inf;
    const double lo_y = b.bottom ? *b.bottom + in_by(*b.bottom) : -inf;
    const double hi_y = b.top ? *b.top - in_by(*b.top) : inf;
    const auto near_an_edge = [&](entity_id e) {
        const auto slot = ecs::index_of(e);
        const double r = colliders.contains(slot) ? std::max(0.0, colliders.get(slot).radius) : 0.0;
        auto& pw = reg.get<Position>(e);
        const bool out = (b.left && pw.x - r < *b.left) || (b.right && pw.x + r > *b.right) ||
                         (b.bottom && pw.y - r < *b.bottom) || (b.top && pw.y + r > *b.top);
        if (!out) return;
        auto& vw = reg.get<Velocity>(e);
        reg.touch<Position>(e);
        reg.touch<Velocity>(e);
        const double bounce =
            bodies.contains(slot) ? bodies.get(slot).restitution : 1.0;  // as collision response
        if (b.left && pw.x - r < *b.left) keep_inside(pw.x, vw.x, vw.y, *b.left + r, +1, bounce, rest_x);
        if (b.right && pw.x + r > *b.right) keep_inside(pw.x, vw.x, vw.y, *b.right - r, -1, bounce, rest_x);
        if (b.bottom && pw.y - r < *b.bottom)
            keep_inside(pw.y, vw.y, vw.x, *b.bottom + r, +1, bounce, rest_y);
        if (b.top && pw.y + r > *b.top) keep_inside(pw.y, vw.y, vw.x, *b.top - r, -1, bounce, rest_y);
    };
    // Read, not written: only the few entities past an edge are written, and only they are stamped
    // (a watch of Velocity re-reads only what a stamp says changed; a walk with Velocity& would
    // stamp every entity inside the bounds every tick).
    w.walk<bounds_system, const Position, const Velocity>(
        [&](entity_id e, const Position& p, const Velocity& /*v*/) {
            if (p.x < lo_x || p.x > hi_x || p.y < lo_y || p.y > hi_y) [[unlikely]]
                near_an_edge(e);
        });
}

void lifetime_system::run(world& w) {
    auto& reg = w.registry();
    const double dt = w.dt();
    w.walk<lifetime_system, Lifetime>([&](entity_id e, Lifetime& l) {
        l.remaining -= dt;
        if (l.remaining <= 1e-9) reg.destroy(e);  // deferred: we are inside a walk
    });
}

void cleanup_system::run(world& w) {
    w.registry().end_tick();
}

}  // namespace ecsd::world
