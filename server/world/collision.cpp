// Collision detection (uniform-grid broadphase, circle narrowphase) and response.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <vector>

#include "world/systems.hpp"
#include "world/world.hpp"

namespace ecsd::world {

namespace {
struct body {
    entity_id id;
    double x, y, r;
    std::uint32_t layer, mask;
};

/// @brief Reused across ticks so a steady world allocates nothing here.
struct scratch {
    std::vector<body> bodies;
    std::vector<std::int64_t> cell_keys;  // open-addressed table of cells
    std::vector<std::uint32_t> cell_head;
    std::vector<std::uint32_t> next;
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    std::vector<std::uint32_t> offsets;
    std::vector<std::uint32_t> adjacency;
};
thread_local scratch tmp;

constexpr std::uint32_t none = 0xFFFFFFFFu;

std::int64_t cell_key(std::int64_t cx, std::int64_t cy) { return (cx * 73856093) ^ (cy * 19349663); }

std::size_t slot_for(const std::vector<std::int64_t>& keys, std::int64_t key, std::size_t mask) {
    std::size_t h = static_cast<std::size_t>(key * static_cast<std::int64_t>(0x9E3779B97F4A7C15ull)) & mask;
    while (keys[h] != key && keys[h] != INT64_MIN) h = (h + 1) & mask;
    return h;
}
}  // namespace

void collision_detection_system(World& w) {
    auto& reg = w.registry();
    auto& bodies = tmp.bodies;
    bodies.clear();
    double max_r = 0;
    reg.each<const Position, const Collider>([&](entity_id e, const Position& p, const Collider& c) {
        const double r = std::max(0.0, c.radius);
        bodies.push_back({e, p.x, p.y, r, c.layer, c.mask});
        max_r = std::max(max_r, r);
    });
    const std::size_t n = bodies.size();
    tmp.pairs.clear();
    if (n > 1 && max_r > 0) {
        // Broadphase: cells twice the largest radius, so touching circles are in adjacent cells.
        const double cell = 2 * max_r;
        std::size_t cap = 16;
        while (cap < n * 2) cap <<= 1;
        tmp.cell_keys.assign(cap, INT64_MIN);
        tmp.cell_head.assign(cap, none);
        tmp.next.assign(n, none);
        std::vector<std::int64_t> cx(n), cy(n);
        for (std::uint32_t i = 0; i < n; ++i) {
            cx[i] = static_cast<std::int64_t>(std::floor(bodies[i].x / cell));
            cy[i] = static_cast<std::int64_t>(std::floor(bodies[i].y / cell));
            const auto key = cell_key(cx[i], cy[i]);
            const auto s = slot_for(tmp.cell_keys, key, cap - 1);
            tmp.cell_keys[s] = key;
            tmp.next[i] = tmp.cell_head[s];
            tmp.cell_head[s] = i;
        }
        for (std::uint32_t i = 0; i < n; ++i) {
            const body& a = bodies[i];
            for (std::int64_t dx = -1; dx <= 1; ++dx) {
                for (std::int64_t dy = -1; dy <= 1; ++dy) {
                    const auto key = cell_key(cx[i] + dx, cy[i] + dy);
                    const auto s = slot_for(tmp.cell_keys, key, cap - 1);
                    if (tmp.cell_keys[s] != key) continue;
                    for (std::uint32_t j = tmp.cell_head[s]; j != none; j = tmp.next[j]) {
                        if (j <= i) continue;  // each pair once
                        // Different cells can share a hash key: check the real cell too.
                        if (cx[j] != cx[i] + dx || cy[j] != cy[i] + dy) continue;
                        const body& b = bodies[j];
                        if (!((a.layer & b.mask) && (b.layer & a.mask))) continue;
                        const double ddx = b.x - a.x, ddy = b.y - a.y, rr = a.r + b.r;
                        if (ddx * ddx + ddy * ddy < rr * rr) tmp.pairs.emplace_back(i, j);
                    }
                }
            }
        }
    }
    // Adjacency lists (CSR), each sorted by entity id for a deterministic Contacts order.
    tmp.offsets.assign(n + 1, 0);
    for (auto [i, j] : tmp.pairs) {
        ++tmp.offsets[i + 1];
        ++tmp.offsets[j + 1];
    }
    for (std::size_t i = 0; i < n; ++i) tmp.offsets[i + 1] += tmp.offsets[i];
    tmp.adjacency.resize(tmp.offsets[n]);
    {
        std::vector<std::uint32_t> fill(tmp.offsets.begin(), tmp.offsets.end() - 1);
        for (auto [i, j] : tmp.pairs) {
            tmp.adjacency[fill[i]++] = j;
            tmp.adjacency[fill[j]++] = i;
        }
    }
    auto& contacts = reg.storage<Contacts>();
    for (std::uint32_t i = 0; i < n; ++i) {
        const auto begin = tmp.offsets[i], end = tmp.offsets[i + 1];
        const entity_id e = bodies[i].id;
        Contacts* c = contacts.contains(ecs::index_of(e)) ? &contacts.get(ecs::index_of(e)) : nullptr;
        if (!c) {
            if (begin == end) continue;
            reg.emplace<Contacts>(e);
            c = &contacts.get(ecs::index_of(e));
        } else if (c->entities.empty() && begin == end) {
            continue;  // nothing was touching and nothing is: not a write
        }
        c->entities.clear();
        for (auto k = begin; k < end; ++k) c->entities.push_back({bodies[tmp.adjacency[k]].id});
        std::sort(c->entities.begin(), c->entities.end(),
                  [](ecs::entity_ref x, ecs::entity_ref y) { return x.id < y.id; });
        reg.touch<Contacts>(e);
    }
}

void collision_response_system(World& w) {
    auto& reg = w.registry();
    auto& pos = reg.storage<Position>();
    auto& vel = reg.storage<Velocity>();
    auto& rbs = reg.storage<RigidBody>();
    auto& cols = reg.storage<Collider>();
    const auto inverse_mass = [&](std::uint32_t s) {
        if (!vel.contains(s) || !rbs.contains(s)) return 0.0;  // static or frozen: immovable
        const double m = rbs.get(s).mass;
        return m > 0 ? 1.0 / m : 0.0;
    };
    reg.each<const Contacts>([&](entity_id a, const Contacts& c) {
        const auto sa = ecs::index_of(a);
        if (!pos.contains(sa) || !cols.contains(sa)) return;
        for (const auto& ref : c.entities) {
            const entity_id b = ref.id;
            if (b <= a || !reg.alive(b)) continue;  // each pair once, from its lower id
            const auto sb = ecs::index_of(b);
            if (!pos.contains(sb) || !cols.contains(sb)) continue;
            const double ia = inverse_mass(sa), ib = inverse_mass(sb);
            if (ia + ib == 0) continue;
            Position& pa = pos.get(sa);
            Position& pb = pos.get(sb);
            double nx = pb.x - pa.x, ny = pb.y - pa.y;
            const double d = std::sqrt(nx * nx + ny * ny);
            if (d > 0) {
                nx /= d;
                ny /= d;
            } else {
                nx = 1;
                ny = 0;
            }
            const double overlap = cols.get(sa).radius + cols.get(sb).radius - d;
            if (overlap > 0) {
                pa.x -= nx * overlap * ia / (ia + ib);
                pa.y -= ny * overlap * ia / (ia + ib);
                pb.x += nx * overlap * ib / (ia + ib);
                pb.y += ny * overlap * ib / (ia + ib);
            }
            Velocity* va = vel.contains(sa) ? &vel.get(sa) : nullptr;
            Velocity* vb = vel.contains(sb) ? &vel.get(sb) : nullptr;
            const double rel = ((vb ? vb->x : 0) - (va ? va->x : 0)) * nx + ((vb ? vb->y : 0) - (va ? va->y : 0)) * ny;
            if (rel >= 0) continue;  // already separating
            const double e = std::min(rbs.contains(sa) ? rbs.get(sa).restitution : 1.0,
                                      rbs.contains(sb) ? rbs.get(sb).restitution : 1.0);
            const double j = -(1 + e) * rel / (ia + ib);
            if (va && ia > 0) {
                va->x -= j * ia * nx;
                va->y -= j * ia * ny;
            }
            if (vb && ib > 0) {
                vb->x += j * ib * nx;
                vb->y += j * ib * ny;
            }
        }
    });
}

}  // namespace ecsd::world
