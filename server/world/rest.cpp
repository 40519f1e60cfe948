// Bodies at rest go to sleep (rest_system in systems.hpp says the rules). Without it a pile that
// settled long ago still moved by 1e-13 m a tick (gravity in, collision response out), and every
// watcher of it got a Position change every tick.
#include <algorithm>
#include <cmath>
#include <numeric>
#include <type_traits>
#include <utility>
#include <vector>

#include "world/collision.hpp"
#include "world/systems.hpp"
#include "world/world.hpp"

namespace ecsd::world {

namespace {

std::uint32_t find(std::vector<std::uint32_t>& parent, std::uint32_t k) {
    while (parent[k] != k) {
        parent[k] = parent[parent[k]];  // path halving
        k = parent[k];
    }
    return k;
}

// The piece of rest's walk the calling thread runs (the walk hands each thread a range, not its
// piece): each piece gathers its candidates into a list of its own.
thread_local unsigned walk_piece = 0;

enum class edge_touch : std::uint8_t { none, wall, floor };
/// @brief Which edge the body lies on: a floor is one that gravity (gx, gy) presses it against.
edge_touch on_edge(const world_bounds& b, const Position& p, double r, double gx, double gy) {
    constexpr double touch = 1e-9;  // bounds_system puts a body exactly on the edge
    const bool bottom = b.bottom && p.y - r <= *b.bottom + touch, top = b.top && p.y + r >= *b.top - touch;
    const bool left = b.left && p.x - r <= *b.left + touch, right = b.right && p.x + r >= *b.right - touch;
    if ((bottom && gy < 0) || (top && gy > 0) || (left && gx < 0) || (right && gx > 0))
        return edge_touch::floor;
    return bottom || top || left || right ? edge_touch::wall : edge_touch::none;
}
}  // namespace

void rest_system::run(world& w) {
    auto& reg = w.registry();
    const double dt = w.dt();
    const double gx = w.settings().gravity_x, gy = w.settings().gravity_y;
    const double g = std::hypot(gx, gy);
    const auto& bounds = w.settings().bounds;
    auto& colliders = reg.storage<Collider>();
    auto& resting = reg.storage<Resting>();

    auto& rs = w.state<rest_system>();
    auto& bodies = rs.bodies;
    auto& body_of = rs.body_of;
    auto& parent = rs.parent;
    // The movers that may be at rest (slow this tick, or resting), in walk order (the same for a
    // given world state). body_of is all null_index between runs: the places set are reset.
    bodies.clear();
    auto& positions = reg.storage<Position>();
    const Position* first = positions.data();
    const auto* starts = rs.starts;
    const std::uint64_t stamp = w.tick() + 1;
    const double still = rest_speed * dt;  // metres a tick
    const bool has_bounds = bounds.any(), any_resting = !resting.empty();
    // Movement noted no slow mover and none rests: nothing may be at rest (a lively world's tick).
    if (!any_resting && !rs.noted.load(std::memory_order_relaxed)) return;
    // After the early return: a table of 4 bytes a slot is resident memory a lively world skips.
    body_of.resize(reg.entities().slot_count(), ecs::null_index);
    constexpr double noted = rest_state::moving_speed * rest_state::moving_speed;
    auto& workers = w.workers();
    const unsigned parts = workers.threads();
    rs.piece_bodies.resize(parts);
    for (auto& list : rs.piece_bodies) list.clear();
    rs.piece_tiny.assign(parts, 0);
    // The movers with a RigidBody are the first part of the Position+Velocity group (RigidBody is
    // nested in it): walked as three packed arrays, read only (nothing is stamped as written),
    // and a mover's slot is looked up only once it may be at rest.
    const auto visit = [&](const Position& p, const Velocity& v, const RigidBody& rb) {
        if (rb.mass <= 1e-9) return;  // immovable, as collision response counts it
        const double speed2 = v.x * v.x + v.y * v.y;
        if (speed2 < zero_speed * zero_speed && speed2 > 0) rs.piece_tiny[walk_piece] = 1;
        const auto at = static_cast<std::uint32_t>(&p - first);
        if (!any_resting && speed2 >= noted) return;  // moving: no candidate
        const auto slot = positions.slot_at(at);
        const entity_id e = reg.entities().id_of(slot);
        const auto rp = any_resting ? resting.find(slot) : ecs::null_index;
        bool slow = false;
        if (rp != ecs::null_index) {  // resting: still within rest_radius of where it came to rest
            const auto& r = resting.at(rp);
            const double dx = p.x - r.x, dy = p.y - r.y;
            slow = dx * dx + dy * dy < rest_radius * rest_radius;
        } else if (speed2 >= noted) {
            return;  // moving: no candidate (collision pairs name it as a moving body)
        } else {     // how far it moved this tick, if movement noted where it started
            if (starts != nullptr && at < rs.starts_size && starts[at].tick == stamp &&
                starts[at].slot == slot) {
                const double dx = p.x - starts[at].x, dy = p.y - starts[at].y;
                slow = dx * dx + dy * dy < still * still;
            }
            if (!slow) return;
        }
        const double pull = g * std::fabs(rb.gravity_scale);
        auto edge = edge_touch::none;
        if (has_bounds) {
            const auto cp = colliders.find(slot);
            const double r = cp != ecs::null_index ? std::max(0.0, colliders.at(cp).radius) : 0.0;
            edge = on_edge(bounds, p, r, gx * rb.gravity_scale, gy * rb.gravity_scale);
        }
        rs.piece_bodies[walk_piece].push_back(
            rest_state::body{e, slow, pull == 0 || edge == edge_touch::floor, edge == edge_touch::wall,
                             rp != ecs::null_index ? resting.at(rp).seconds : 0.0, p.x, p.y});
    };
    // The movers with a RigidBody in pieces side by side; the part without one (the second range
    // handed over) does nothing here, so it runs inline.
    bool with_part = true;
    reg.each_split_nested<const Position, const Velocity, const RigidBody>(
        visit, [](const Position&, const Velocity&) {},
        [&](std::uint32_t count, auto&& range) {
            if (!std::exchange(with_part, false)) {
                range(0U, count);
                return;
            }
            workers.parallel_for(count, world::min_piece,
                                 [&](unsigned piece, std::uint32_t b, std::uint32_t e) {
                                     walk_piece = piece;
                                     range(b, e);
                                     walk_piece = 0;
                                 });
        });
    bool any_tiny = false;
    for (unsigned piece = 0; piece < parts; ++piece) {  // joined in piece order: the walk's order
        any_tiny = any_tiny || rs.piece_tiny[piece] != 0;
        auto& list = rs.piece_bodies[piece];
        if (bodies.empty()) {
            bodies.swap(list);  // the first piece's list is taken whole (a piece keeps the other)
        } else {
            bodies.insert(bodies.end(), list.begin(), list.end());
        }
    }
    for (std::uint32_t k = 0; k < bodies.size(); ++k) body_of[ecs::index_of(bodies[k].id)] = k;
    // Nothing may rest, nothing resting, nothing to round to 0: most ticks of a lively world.
    if (bodies.empty() && !any_tiny && resting.empty()) return;
    // Islands: bodies with mass that touch. A contact with an immovable collider holds a body up.
    const auto n = static_cast<std::uint32_t>(bodies.size());
    parent.resize(n);
    std::iota(parent.begin(), parent.end(), 0U);
    auto& st = w.state<collision_detection_system>();
    if (st.tick == w.tick()) {
        std::sort(st.dropped.begin(), st.dropped.end());
        // Each collider's body, once (the pairs name colliders by their place in links), or what
        // it is if it is none: a moving body with mass, or an immovable one. The pairs below then
        // read this table alone, not the links (48 bytes a body) of every pair a candidate is in.
        constexpr std::uint32_t moving = ecs::null_index, immovable = ecs::null_index - 1;
        auto& of_link = rs.of_link;
        of_link.resize(st.links.size());
        workers.parallel_for(static_cast<std::uint32_t>(st.links.size()), world::min_piece / 4,
                             [&](unsigned, std::uint32_t from, std::uint32_t to) {
                                 for (auto k = from; k < to; ++k) {
                                     const auto body = body_of[ecs::index_of(st.links[k].id)];
                                     of_link[k] = body != ecs::null_index    ? body
                                                  : st.links[k].inv_mass > 0 ? moving
                                                                             : immovable;
                                 }
                             });
        // What each pair says of its candidates, noted in pieces side by side and applied after on
        // one thread (the flags, and islands joined under their least root, come out the same in
        // any order): two candidates join an island; a candidate touching a moving body is not at
        // rest; one touching an immovable collider is held up.
        constexpr std::uint32_t not_slow = moving, held_up = immovable;
        const auto apply = [&](std::uint32_t k, std::uint32_t what) {
            if (what == not_slow) {
                bodies[k].slow = false;
            } else if (what == held_up) {
                bodies[k].supported = true;
            } else {
                const auto ra = find(parent, k), rb = find(parent, what);
                if (ra != rb) parent[std::max(ra, rb)] = std::min(ra, rb);
            }
        };
        const auto np = static_cast<std::uint32_t>(st.pairs.size());
        const unsigned pieces = workers.pieces(np, world::min_piece / 4);
        rs.piece_events.resize(pieces);
        rs.piece_noted.assign(pieces, 0);
        workers.parallel_for(
            np, world::min_piece / 4, [&](unsigned piece, std::uint32_t from, std::uint32_t to) {
                auto& events = rs.piece_events[piece];
                if (events.size() < to - from) events.resize(to - from);  // room for every pair: no checks
                auto* out = events.data();
                std::size_t count = 0;
                // The loop made twice, with and without ghosts: with none the loop has no branch.
                const auto note_all = [&](auto ghosts) {
                    for (auto k = from; k < to; ++k) {
                        // A pair's note is (its candidate, the other end), whatever the other end is: a
                        // candidate, moving (not_slow) or immovable (held_up). So each is written and kept
                        // when either end is a candidate, without a branch (whether one is, a branch
                        // predictor keeps losing: about a third of the pairs).
                        const auto [i, j] = st.pairs[k];
                        const auto ka = of_link[i], kb = of_link[j];
                        const bool a_candidate = ka < immovable, b_candidate = kb < immovable;
                        out[count] = a_candidate ? std::pair(ka, kb) : std::pair(kb, ka);
                        bool keep = a_candidate | b_candidate;
                        // A ghost passing through holds nothing up and joins no island; touching a moving
                        // body still counts.
                        if constexpr (decltype(ghosts)::value) {
                            if (keep && out[count].second != not_slow) {
                                const auto a = st.links[i].id, b = st.links[j].id;
                                keep = !std::binary_search(st.dropped.begin(), st.dropped.end(),
                                                           std::pair(std::min(a, b), std::max(a, b)));
                            }
                        }
                        count += static_cast<std::size_t>(keep);
                    }
                };
                if (st.dropped.empty()) {
                    note_all(std::false_type{});
                } else {
                    note_all(std::true_type{});
                }
                rs.piece_noted[piece] = count;
            });
        for (unsigned piece = 0; piece < pieces; ++piece)
            for (std::size_t e = 0; e < rs.piece_noted[piece]; ++e)
                apply(rs.piece_events[piece][e].first, rs.piece_events[piece][e].second);
    }
    auto& islands = rs.islands;
    islands.assign(n, {});
    for (std::uint32_t k = 0; k < n; ++k) {
        parent[k] = find(parent, k);  // its root, once: the loop below reads it straight
        auto& is = islands[parent[k]];
        is.slow = is.slow && bodies[k].slow;
        is.supported = is.supported || bodies[k].supported;
        is.walls = is.walls || bodies[k].wall;
        ++is.size;
        is.seconds = std::min(is.seconds, bodies[k].seconds);
    }

    auto& velocities = reg.storage<Velocity>();
    auto& woken = rs.woken;
    woken.clear();
    // Stops a body (its Velocity to 0, stamped as written) when `tiny` says so of its velocity.
    const auto stop_if = [&](std::uint32_t slot, auto tiny) {
        const auto vp = velocities.index(slot);
        auto& v = velocities.at(vp);
        if ((v.x != 0 || v.y != 0) && tiny(v)) {
            v = {};
            velocities.mark_written(vp);
        }
    };
    const auto below_zero_speed = [](const Velocity& v) {
        return v.x * v.x + v.y * v.y < zero_speed * zero_speed;
    };
    // A body's Velocity is looked up only when something may be written to it: the walk saw a
    // speed to round to 0 (any_tiny), or its island sleeps. A crowd of slow bodies that never
    // sleep needs neither.
    for (std::uint32_t k = 0; k < n; ++k) {
        const auto& b = bodies[k];
        const auto& is = islands[parent[k]];  // roots do not move once the unions are done
        const auto slot = ecs::index_of(b.id);
        if (any_tiny) stop_if(slot, below_zero_speed);
        // A wall holds up a body wedged against it by others (friction), not a lone one.
        if (!is.slow || !(is.supported || (is.walls && is.size > 1))) {
            if (b.seconds > 0 || resting.contains(slot)) woken.push_back(b.id);
            continue;
        }
        // The island's count, one tick on, for every member (a newcomer starts it again), held at
        // sleep_after so that a sleeping pile writes nothing.
        const double seconds = std::min(is.seconds + dt, sleep_after);
        const auto rp = resting.find(slot);
        if (rp == ecs::null_index) {
            reg.emplace<Resting>(b.id, Resting{seconds, b.x, b.y});  // where it came to rest
        } else if (resting.at(rp).seconds != seconds) {
            resting.at(rp).seconds = seconds;
            resting.mark_written(rp);
        }
        if (seconds >= sleep_after - 1e-9) stop_if(slot, [](const Velocity&) { return true; });
    }
    for (const auto e : woken) reg.remove<Resting>(e);
    // Resting on what is no longer a body with mass (its Velocity or RigidBody removed, mass 0).
    woken.clear();
    for (std::size_t i = 0; i < resting.size(); ++i) {
        const auto slot = resting.slot_at(static_cast<std::uint32_t>(i));
        if (body_of[slot] == ecs::null_index) woken.push_back(reg.entities().id_of(slot));
    }
    for (const auto e : woken) reg.remove<Resting>(e);
    for (const auto& b : bodies) body_of[ecs::index_of(b.id)] = ecs::null_index;
}

}  // namespace ecsd::world
