// Collision detection (spatial-hash broadphase, circle narrowphase) and response.
//
// Broadphase: cells are twice the largest radius, so two touching circles sit in
// the same or adjacent cells. A counting sort by cell (a dense row-major grid, or
// 2n hashed buckets when the world is sparse) makes each cell contiguous, so the
// pair search is O(n) and walks memory in spatial order.
#include "world/collision.hpp"

#include <algorithm>
#include <cmath>

#include "world/systems.hpp"
#include "world/world.hpp"

namespace ecsd::world {

namespace {
std::uint32_t bucket_for(std::int64_t cx, std::int64_t cy, std::uint32_t mask) {
    const auto h = static_cast<std::uint64_t>(cx) * 0x9E3779B97F4A7C15ull ^
                   static_cast<std::uint64_t>(cy) * 0xC2B2AE3D27D4EB4Full;
    return static_cast<std::uint32_t>((h ^ (h >> 29)) & mask);
}

bool layers_meet(const collision_body& a, const collision_body& b) {
    return (a.layer & b.mask) && (b.layer & a.mask);
}

// Circles that overlap or touch. Touching counts (within rounding, a nanometre a metre of radius):
// response leaves bodies exactly touching, and a sleeping pile (rest_system) must stay in contact
// with what holds it up, or it would wake every other tick.
bool overlap(const collision_body& a, const collision_body& b) {
    constexpr double touch = 1e-9;
    const double dx = b.x - a.x, dy = b.y - a.y, rr = (a.r + b.r) * (1 + touch) + touch;
    return dx * dx + dy * dy < rr * rr;
}

// A counting sort's step for counts made in pieces: for each of the n keys, its start in `start`,
// and each piece's count turned into that piece's first place among the key's entries (the pieces
// in order). Returns the total. Entries written through the cursors then keep piece order within a
// key, as one pass in order puts them.
std::uint32_t counts_to_cursors(std::vector<std::vector<std::uint32_t>>& fill, std::uint32_t* start,
                                std::uint32_t n) {
    std::uint32_t at = 0;
    for (std::uint32_t k = 0; k < n; ++k) {
        start[k] = at;
        for (auto& piece : fill) at += std::exchange(piece[k], at);
    }
    return at;
}

// Collects every collider's search fields, id and Position in pieces side by side: each piece
// writes from its own first place and the pieces are closed up in order, so the bodies come out
// as one thread gathers them. The order is the smaller pool's packed order (Position's on a tie),
// the one `each<const Position, const Collider>` walked before the gather was split; any fixed
// order would do, as the stable sort by bucket comes next. Velocity and RigidBody are looked up
// later, once the bodies are sorted (see link_bodies).
void gather(world& w, collision_state& st, double& max_r) {
    auto& reg = w.registry();
    auto& positions = reg.storage<Position>();
    const auto& colliders = reg.storage<Collider>();
    const bool by_collider = colliders.size() < positions.size();
    const auto n = static_cast<std::uint32_t>(by_collider ? colliders.size() : positions.size());
    const auto& entities = reg.entities();
    auto& workers = w.workers();
    const unsigned parts = workers.pieces(n, world::min_piece / 4);
    st.piece_kept.assign(parts, {0, 0});
    st.piece_max.assign(parts, 0.0);
    st.unsorted.resize(n);
    workers.parallel_for(n, world::min_piece / 4, [&](unsigned piece, std::uint32_t from, std::uint32_t to) {
        auto k = from;
        double most = 0;
        for (auto i = from; i < to; ++i) {
            const auto slot = by_collider ? colliders.slot_at(i) : positions.slot_at(i);
            const auto pp = by_collider ? positions.find(slot) : i;
            const auto cp = by_collider ? i : colliders.find(slot);
            if (pp == ecs::null_index || cp == ecs::null_index) continue;
            const Collider& c = colliders.at(cp);
            // The walk reads Position; response writes it through this pointer.
            Position& p = positions.at(pp);
            const double r = std::max(0.0, c.radius);
            st.unsorted[k++] = {{p.x, p.y, r, c.layer, c.mask, 0, 0}, entities.id_of(slot), &p};
            most = std::max(most, r);
        }
        st.piece_kept[piece] = {from, k};
        st.piece_max[piece] = most;
    });
    // Close up the pieces (every collider usually has a Position: nothing moves).
    std::uint32_t end = 0;
    for (const auto& [from, to] : st.piece_kept) {
        if (end != from)
            std::copy(st.unsorted.begin() + from, st.unsorted.begin() + to, st.unsorted.begin() + end);
        end += to - from;
    }
    st.unsorted.resize(end);
    for (unsigned piece = 0; piece < parts; ++piece) max_r = std::max(max_r, st.piece_max[piece]);
}

// Fills each sorted body's Velocity, inverse mass and restitution: lookups only, so the bodies
// are cut into pieces run side by side.
void link_bodies(world& w, collision_state& st) {
    auto& reg = w.registry();
    auto& vel = reg.storage<Velocity>();
    auto& rbs = reg.storage<RigidBody>();
    auto& resting = reg.storage<Resting>();
    const bool any_resting = !resting.empty();
    const auto n = static_cast<std::uint32_t>(st.links.size());
    w.workers().parallel_for(n, world::min_piece / 4, [&](unsigned, std::uint32_t from, std::uint32_t to) {
        for (std::uint32_t k = from; k < to; ++k) {
            auto& l = st.links[k];
            const auto slot = ecs::index_of(l.id);
            const auto vp = vel.find(slot);
            const auto rp = rbs.find(slot);
            l.vel = vp != ecs::null_index ? &vel.at(vp) : nullptr;
            const RigidBody* rb = rp != ecs::null_index ? &rbs.at(rp) : nullptr;
            // A mass too small to invert safely counts as immovable rather than as infinitely light.
            l.inv_mass = (l.vel && rb && rb->mass > 1e-9) ? 1.0 / rb->mass : 0.0;
            l.restitution = rb ? rb->restitution : 1.0;
            l.still = l.inv_mass == 0;
            if (any_resting && !l.still) {
                const auto sp = resting.find(slot);
                l.still = sp != ecs::null_index && rest_system::asleep(resting.at(sp));
            }
        }
    });
}
}  // namespace

void collision_detection_system::run(world& w) {
    auto& st = w.state<collision_detection_system>();
    auto& reg = w.registry();
    double max_r = 0;
    gather(w, st, max_r);
    const auto n = static_cast<std::uint32_t>(st.unsorted.size());
    st.pairs.clear();
    st.dropped.clear();
    st.tick = w.tick();
    st.bodies.resize(n);
    st.links.resize(n);
    if (n > 0) {
        const double cell = max_r > 0 ? 2 * max_r : 1.0;
        std::int64_t min_x = INT64_MAX, min_y = INT64_MAX, max_x = INT64_MIN, max_y = INT64_MIN;
        // Cells are clamped to +-2^40 so that far-away bodies (x = 1e300 is a valid Position)
        // never overflow the conversion or the grid arithmetic; they just share edge cells.
        constexpr double cell_limit = 1099511627776.0;
        const auto cell_of = [&](double v) {
            // floor(), clamped, without a call: baseline x86-64 has no rounding instruction, so
            // std::floor is a library call. Clamped first, the quotient converts exactly.
            const double q = std::clamp(v / cell, -cell_limit, cell_limit);
            const auto t = static_cast<std::int64_t>(q);  // toward zero
            return t - static_cast<std::int64_t>(static_cast<double>(t) > q);
        };
        auto& workers = w.workers();
        // Each piece's cell extent: least x, least y, most x, most y.
        st.piece_extent.assign(workers.pieces(n, world::min_piece / 4),
                               {INT64_MAX, INT64_MAX, INT64_MIN, INT64_MIN});
        workers.parallel_for(n, world::min_piece / 4,
                             [&](unsigned piece, std::uint32_t from, std::uint32_t to) {
                                 auto x = st.piece_extent[piece];
                                 for (auto i = from; i < to; ++i) {
                                     auto& b = st.unsorted[i].body;
                                     b.cx = cell_of(b.x);
                                     b.cy = cell_of(b.y);
                                     x[0] = std::min(x[0], b.cx);
                                     x[1] = std::min(x[1], b.cy);
                                     x[2] = std::max(x[2], b.cx);
                                     x[3] = std::max(x[3], b.cy);
                                 }
                                 st.piece_extent[piece] = x;
                             });
        for (const auto& x : st.piece_extent) {
            min_x = std::min(min_x, x[0]);
            min_y = std::min(min_y, x[1]);
            max_x = std::max(max_x, x[2]);
            max_y = std::max(max_y, x[3]);
        }
        // A compact world gets a dense grid in row-major order, so spatial neighbours are
        // memory neighbours; a sparse one hashes cells into 2n buckets.
        const double span = static_cast<double>(max_x - min_x + 1) * static_cast<double>(max_y - min_y + 1);
        const bool dense = span <= 4.0 * n + 1024;
        st.banded = dense;
        st.min_cy = min_y;
        const std::int64_t width = max_x - min_x + 1;
        std::uint32_t buckets = 16;
        if (dense) {
            buckets = static_cast<std::uint32_t>(span);
        } else {
            while (buckets < 2 * n) buckets <<= 1;
        }
        const std::uint32_t mask = buckets - 1;  // used by the hashed layout only
        const auto bucket_of_cell = [&](std::int64_t cx, std::int64_t cy) -> std::uint32_t {
            if (!dense) return bucket_for(cx, cy, mask);
            if (cx < min_x || cx > max_x || cy < min_y || cy > max_y) return buckets;  // outside: empty
            return static_cast<std::uint32_t>((cy - min_y) * width + (cx - min_x));
        };
        // A counting sort by bucket, stable, in pieces: each piece counts its own bodies a bucket,
        // then writes them from where the pieces before it left off in each bucket. Piece k's
        // bodies come before piece k + 1's in a bucket, as one pass in order puts them.
        st.bucket_of.resize(n);
        const unsigned parts = workers.pieces(n, world::min_piece / 4);
        st.piece_fill.resize(parts);
        workers.parallel_for(
            n, world::min_piece / 4, [&](unsigned piece, std::uint32_t from, std::uint32_t to) {
                auto& count = st.piece_fill[piece];
                count.assign(static_cast<std::size_t>(buckets) + 1, 0);  // [buckets]: outside the grid
                for (auto i = from; i < to; ++i) {
                    const auto k = bucket_of_cell(st.unsorted[i].body.cx, st.unsorted[i].body.cy);
                    st.bucket_of[i] = k;
                    ++count[k];
                }
            });
        st.bucket_start.resize(static_cast<std::size_t>(buckets) + 2);  // [buckets] is an empty sentinel
        st.bucket_start[buckets + 1] = counts_to_cursors(st.piece_fill, st.bucket_start.data(), buckets + 1);
        workers.parallel_for(n, world::min_piece / 4,
                             [&](unsigned piece, std::uint32_t from, std::uint32_t to) {
                                 auto* fill = st.piece_fill[piece].data();
                                 for (auto i = from; i < to; ++i) {
                                     const auto k = fill[st.bucket_of[i]]++;
                                     const auto& g = st.unsorted[i];
                                     st.bodies[k] = g.body;
                                     st.links[k].id = g.id;
                                     st.links[k].pos = g.pos;
                                 }
                             });
        link_bodies(w, st);
        // Narrowphase over the own cell (later bodies only) and four forward cells: each pair once.
        // In the hashed layout a bucket can hold other cells too, hence the cell check. Bodies are
        // cut into pieces searched side by side on the world's threads, each into its own list;
        // joined in piece order, the lists are exactly what one thread would have found.
        static constexpr std::int64_t forward[4][2] = {{1, 0}, {-1, 1}, {0, 1}, {1, 1}};
        // The dense grid holds one cell per bucket, row by row, so the cells searched lie in two
        // runs of buckets: the own cell's later bodies and the next cell on the row, then the
        // three cells above. Two ranges of bodies, no cell checks, in the order the five cells'
        // loops below visit them: the same pairs in the same order.
        const auto search_dense = [&](std::vector<std::pair<std::uint32_t, std::uint32_t>>& out,
                                      std::uint32_t begin, std::uint32_t end) {
            const auto* bodies = st.bodies.data();
            const auto* start = st.bucket_start.data();
            // Every candidate is written and the count moves on by whether it touches: whether two
            // bodies touch is a coin toss a branch predictor keeps losing.
            std::size_t count = out.size();
            const auto scan = [&](std::uint32_t i, const collision_body& a, std::uint32_t from,
                                  std::uint32_t to) {
                auto* o = out.data();
                for (auto j = from; j < to; ++j) {
                    const auto& b = bodies[j];
                    o[count] = {i, j};
                    count += ((a.layer & b.mask) != 0) & ((b.layer & a.mask) != 0) & overlap(a, b);
                }
            };
            for (std::uint32_t i = begin; i < end; ++i) {
                const auto& a = bodies[i];
                const auto own = static_cast<std::uint32_t>((a.cy - min_y) * width + (a.cx - min_x));
                const std::uint32_t left = a.cx > min_x ? 1 : 0, right = a.cx < max_x ? 1 : 0;
                const auto above = own + static_cast<std::uint32_t>(width);
                const std::uint32_t row_end = start[own + 1 + right];
                const std::uint32_t up_from = a.cy < max_y ? start[above - left] : 0,
                                    up_to = a.cy < max_y ? start[above + right + 1] : 0;
                const std::size_t room = count + (row_end - i - 1) + (up_to - up_from);
                if (out.size() < room) out.resize(std::max(room, 2 * out.size()));
                scan(i, a, i + 1, row_end);
                scan(i, a, up_from, up_to);
            }
            out.resize(count);
        };
        const auto search = [&](std::vector<std::pair<std::uint32_t, std::uint32_t>>& out,
                                std::uint32_t begin, std::uint32_t end) {
            if (dense) {
                search_dense(out, begin, end);
                return;
            }
            for (std::uint32_t i = begin; i < end; ++i) {
                const auto& a = st.bodies[i];
                const auto own = bucket_of_cell(a.cx, a.cy);
                for (auto j = i + 1; j < st.bucket_start[own + 1]; ++j) {
                    const auto& b = st.bodies[j];
                    if (b.cx == a.cx && b.cy == a.cy && layers_meet(a, b) && overlap(a, b))
                        out.emplace_back(i, j);
                }
                for (const auto& d : forward) {
                    const std::int64_t cx = a.cx + d[0], cy = a.cy + d[1];
                    const auto k = bucket_of_cell(cx, cy);
                    for (auto j = st.bucket_start[k]; j < st.bucket_start[k + 1]; ++j) {
                        const auto& b = st.bodies[j];
                        if (b.cx == cx && b.cy == cy && layers_meet(a, b) && overlap(a, b))
                            out.emplace_back(i, j);
                    }
                }
            }
        };
        if (max_r > 0) {
            const unsigned pieces = workers.pieces(n, world::min_piece / 4);
            if (pieces <= 1) {
                search(st.pairs, 0, n);
            } else {
                st.piece_pairs.resize(pieces);
                workers.parallel_for(n, world::min_piece / 4,
                                     [&](unsigned piece, std::uint32_t b, std::uint32_t e) {
                                         // Filled through a vector of this thread's own: the
                                         // pieces' vectors sit side by side, and growing them in
                                         // place had both threads writing one cache line.
                                         std::vector<std::pair<std::uint32_t, std::uint32_t>> out;
                                         out.swap(st.piece_pairs[piece]);
                                         out.clear();
                                         search(out, b, e);
                                         out.swap(st.piece_pairs[piece]);
                                     });
                // Joined in piece order, each piece's list copied into place by a thread of its own.
                std::size_t total = 0;
                for (unsigned k = 0; k < pieces; ++k) total += st.piece_pairs[k].size();
                st.pairs.resize(total);
                workers.parallel_for(pieces, 1, [&](unsigned, std::uint32_t b, std::uint32_t e) {
                    std::size_t place = 0;
                    for (unsigned k = 0; k < b; ++k) place += st.piece_pairs[k].size();
                    for (auto k = b; k < e; ++k) {
                        std::copy(st.piece_pairs[k].begin(), st.piece_pairs[k].end(),
                                  st.pairs.data() + place);
                        place += st.piece_pairs[k].size();
                    }
                });
            }
        }
    }
    // Adjacency lists (CSR), written into Contacts. The order within a list follows the grid
    // (deterministic for a given world state), not entity ids: sorting cost more than the search.
    // In pieces of the pairs, as the counting sort above: each piece counts its pairs' ends a body,
    // then writes them from where the pieces before it left off in each list, so each list holds
    // its pairs in pair order whatever the thread count.
    auto& workers = w.workers();
    const auto np = static_cast<std::uint32_t>(st.pairs.size());
    st.piece_fill.resize(workers.pieces(np, world::min_piece / 4));
    workers.parallel_for(np, world::min_piece / 4, [&](unsigned piece, std::uint32_t from, std::uint32_t to) {
        auto& count = st.piece_fill[piece];
        count.assign(n, 0);
        for (auto k = from; k < to; ++k) {
            ++count[st.pairs[k].first];
            ++count[st.pairs[k].second];
        }
    });
    st.offsets.resize(n + 1);
    st.offsets[n] = counts_to_cursors(st.piece_fill, st.offsets.data(), n);
    st.adjacency.resize(st.offsets[n]);
    // Ids go in here, while bodies i and j (neighbours in space and in memory) are in cache.
    workers.parallel_for(np, world::min_piece / 4, [&](unsigned piece, std::uint32_t from, std::uint32_t to) {
        auto* fill = st.piece_fill[piece].data();
        for (auto k = from; k < to; ++k) {
            const auto [i, j] = st.pairs[k];
            st.adjacency[fill[i]++].id = st.links[j].id;
            st.adjacency[fill[j]++].id = st.links[i].id;
        }
    });
    auto& contacts = reg.storage<Contacts>();
    // Bodies touching something for the first time get their Contacts first (adding one may move
    // the pool's values, not their places), and every body's place in the pool is noted. Then the
    // lists are written in pool order, side by side in pieces cut by place: each thread writes its
    // own stretch of the pool and of its write stamps. Cut by body, neighbours in space lie
    // anywhere in the pool, and two threads kept writing the same cache lines.
    const auto note_places = [&] {
        st.body_at.assign(contacts.size() + n, ecs::null_index);
        // Places looked up in pieces; the bodies that touch something for the first time are
        // kept in order, per piece, and get their Contacts after, one by one.
        st.piece_new.resize(workers.pieces(n, world::min_piece / 4));
        workers.parallel_for(
            n, world::min_piece / 4, [&](unsigned piece, std::uint32_t from, std::uint32_t to) {
                auto& fresh = st.piece_new[piece];
                fresh.clear();
                for (auto i = from; i < to; ++i) {
                    const auto pos = contacts.find(ecs::index_of(st.links[i].id));
                    if (pos != ecs::null_index) {
                        st.body_at[pos] = i;
                    } else if (st.offsets[i + 1] != st.offsets[i]) {  // else touches nothing and never did
                        fresh.push_back(i);
                    }
                }
            });
        bool added = false;
        for (const auto& fresh : st.piece_new) {
            for (const auto i : fresh) {
                reg.emplace<Contacts>(st.links[i].id);
                added = true;
                const auto pos = contacts.find(ecs::index_of(st.links[i].id));
                if (pos == ecs::null_index) continue;  // deferred (a walk is open): written next tick
                st.body_at[pos] = i;
            }
        }
        return added;
    };
    // An add appends to a pool outside owning groups, so the places noted before it still hold.
    // Were Contacts ever in a group, an add could move others: then a second pass notes them all.
    const bool grouped = contacts.owner_group >= 0 || contacts.nested_group >= 0;
    if (note_places() && grouped) (void)note_places();
    const auto places = static_cast<std::uint32_t>(contacts.size());
    w.workers().parallel_for(places, world::min_piece / 4,
                             [&](unsigned, std::uint32_t from, std::uint32_t to) {
                                 for (std::uint32_t pos = from; pos < to; ++pos) {
                                     // Each list lives in a block of its own: asked for well ahead,
                                     // the compare below does not wait on memory.
                                     if (pos + 16 < to)
                                         __builtin_prefetch(contacts.at(pos + 16).entities.data());
                                     const auto i = st.body_at[pos];
                                     if (i == ecs::null_index || st.offsets[i + 1] == st.offsets[i])
                                         continue;  // removed below
                                     auto& list = contacts.at(pos).entities;
                                     const auto first = st.adjacency.begin() + st.offsets[i],
                                                last = st.adjacency.begin() + st.offsets[i + 1];
                                     // The same contacts as last tick (or none, as before) are not a write: a
                                     // resting pile costs a compare, and changed(Contacts) names only the
                                     // bodies whose contacts changed.
                                     if (std::equal(first, last, list.begin(), list.end())) continue;
                                     list.assign(first, last);
                                     contacts.mark_written(pos);
                                 }
                             });
    // An entity has Contacts only while it touches something (`query 'AI, Contacts'` counts the
    // touching): a body whose last contact ended, or that is no longer a collider, loses them.
    st.untouched.clear();
    for (std::uint32_t pos = 0; pos < places; ++pos) {
        const auto i = st.body_at[pos];
        if (i == ecs::null_index || st.offsets[i + 1] == st.offsets[i])
            st.untouched.push_back(reg.entities().id_of(contacts.slot_at(pos)));
    }
    for (const auto e : st.untouched) reg.remove<Contacts>(e);
    // Recorded after the Contacts changes: response trusts the body pointers only at this version.
    st.version = reg.structure_version();
}

namespace {
constexpr double bounce_threshold = 1.0;  // m/s of closing speed, below which contacts are inelastic
constexpr double overlap_slop = 0.005;    // m two bodies may overlap at rest (Box2D's linear slop)
constexpr double correction = 0.4;        // of the overlap past the slop taken out per tick (Baumgarte)
}  // namespace

void collision_response_system::run(world& w) {
    auto& st = w.state<collision_detection_system>();
    if (st.tick != w.tick()) return;  // detection did not run this tick (disabled): nothing to respond to
    if (st.version != w.registry().structure_version()) {
        // Something was added or removed since detection (a system run by hand between
        // ticks): the body pointers may dangle, so detect again, keeping the ghost's drops.
        auto dropped = std::move(st.dropped);
        collision_detection_system::run(w);
        st.dropped = std::move(dropped);
    }
    std::sort(st.dropped.begin(), st.dropped.end());
    const auto respond = [&](std::uint32_t i, std::uint32_t j) {
        const auto& a = st.links[i];
        const auto& b = st.links[j];
        const double ia = a.inv_mass, ib = b.inv_mass;
        // Two sleeping (or a sleeping and an immovable) bodies stay as they lie, overlap and all
        // (a pile at rest is sunk into itself): pushing them kept a settled pile moving.
        if (a.still && b.still) return;
        if (!st.dropped.empty() &&
            std::binary_search(st.dropped.begin(), st.dropped.end(),
                               std::pair<entity_id, entity_id>(std::min(a.id, b.id), std::max(a.id, b.id))))
            return;  // a ghost passes through this one
        // Read once into locals and written once at the end: as `pa.x -= ...` then a clamp, each
        // value went through memory twice, a 16-byte store read back in 8-byte halves (which
        // the store buffer may not forward) on the chain from one pair to the next.
        Position& pa = *a.pos;
        Position& pb = *b.pos;
        double ax = pa.x, ay = pa.y, bx = pb.x, by = pb.y;
        double nx = bx - ax, ny = by - ay;
        const double d = std::sqrt(nx * nx + ny * ny);
        if (d > 0) {
            const double inv_d = 1 / d;  // one division, not two (as 1 / (ia + ib) below, not five)
            nx *= inv_d;
            ny *= inv_d;
        } else {
            nx = 1;
            ny = 0;
        }
        const double inv_sum = 1 / (ia + ib);
        const double depth = st.bodies[i].r + st.bodies[j].r - d;

        if (depth > overlap_slop) {
            // Apart to within the slop, not to just touching: a body resting on two others sinks
            // into them by a tick of gravity, and pushing it fully out again pushed them apart
            // (sideways, where nothing holds them) a little every tick.
            const double out = (depth - overlap_slop) * correction;
            const double push_a = out * ia * inv_sum, push_b = out * ib * inv_sum;
            ax = bounded(ax - nx * push_a);
            ay = bounded(ay - ny * push_a);
            bx = bounded(bx + nx * push_b);
            by = bounded(by + ny * push_b);
            pa = {ax, ay};
            pb = {bx, by};
        }
        const double vax = a.vel ? a.vel->x : 0, vay = a.vel ? a.vel->y : 0;
        const double vbx = b.vel ? b.vel->x : 0, vby = b.vel ? b.vel->y : 0;
        const double rel = (vbx - vax) * nx + (vby - vay) * ny;
        if (rel >= 0) return;  // already separating
        // Slow contacts do not bounce (Box2D's velocity threshold): a body resting on another is
        // pulled into it by one tick of gravity, and bouncing that back kept piles jittering.
        const double e = rel > -bounce_threshold ? 0.0 : std::min(a.restitution, b.restitution);
        const double impulse = -(1 + e) * rel * inv_sum;
        // Coulomb friction along the contact, at most friction × the normal impulse: without it
        // a heap never settled (a body resting on two others pushes them apart for ever).
        const double tx = -ny, ty = nx;
        const double slide = (vbx - vax) * tx + (vby - vay) * ty;
        const double grip_limit = collision_response_system::friction * impulse;
        const double grip = std::clamp(-slide * inv_sum, -grip_limit, grip_limit);
        if (ia > 0)
            *a.vel = {bounded(vax - (impulse * ia * nx + grip * ia * tx)),
                      bounded(vay - (impulse * ia * ny + grip * ia * ty))};
        if (ib > 0)
            *b.vel = {bounded(vbx + (impulse * ib * nx + grip * ib * tx)),
                      bounded(vby + (impulse * ib * ny + grip * ib * ty))};
    };
    const auto& pairs = st.pairs;
    if (!st.banded) {  // hashed cells: one thread, in pair order
        for (const auto& [i, j] : pairs) respond(i, j);
        return;
    }
    // Dense grid: rows of cells make bands of band_rows rows. A pair inside one band touches only
    // that band's bodies, and the pairs follow their first body, which follows the rows: so the
    // pairs inside each band lie together, pieces cut at band edges share no body, and they run
    // side by side. Each piece notes the pairs across two bands it passes over; they follow, in
    // pair order (piece by piece), on one thread. The order is the same for every thread count,
    // so is the result.
    const auto band = [&](std::uint32_t body) {
        return (st.bodies[body].cy - st.min_cy) / collision_state::band_rows;
    };
    const auto np = static_cast<std::uint32_t>(pairs.size());
    const auto band_edge = [&](std::uint32_t k) {  // k, moved on to where a band's pairs begin
        if (k == 0) return k;
        while (k < np && band(pairs[k].first) == band(pairs[k - 1].first)) ++k;
        return k;
    };
    auto& workers = w.workers();
    st.piece_cross.resize(workers.pieces(np, world::min_piece / 4));
    workers.parallel_for(np, world::min_piece / 4, [&](unsigned piece, std::uint32_t from, std::uint32_t to) {
        std::vector<std::uint32_t> cross;  // this thread's own, as the search's pair lists
        cross.swap(st.piece_cross[piece]);
        cross.clear();
        for (std::uint32_t k = band_edge(from), end = band_edge(to); k < end; ++k) {
            if (band(pairs[k].first) == band(pairs[k].second)) {
                respond(pairs[k].first, pairs[k].second);
            } else {
                cross.push_back(k);
            }
        }
        cross.swap(st.piece_cross[piece]);
    });
    for (const auto& cross : st.piece_cross)
        for (const auto k : cross) respond(pairs[k].first, pairs[k].second);
}

}  // namespace ecsd::world
