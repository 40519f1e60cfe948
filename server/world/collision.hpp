#pragma once
// State shared by collision detection, the ghost filter and collision response
// within one tick: the bodies gathered by detection and the contact pairs.
// Response reads the pairs instead of looking every contact up again.

#include <array>
#include <atomic>
#include <cstdint>
#include <utility>
#include <vector>

#include "memory/blocks.hpp"
#include "world/components.hpp"
#include "world/systems.hpp"

namespace ecsd::world {

// A body is kept in two arrays in the same order (sorted by grid bucket): what the pair search
// reads, and what response and the Contacts writes read. Split, the search walks 48 B a body
// instead of 88, and the counting sort moves less.
struct collision_body {
    double x, y, r;
    std::uint32_t layer, mask;
    std::int64_t cx, cy;  // grid cell
};

struct collision_link {
    ecs::entity_id id;
    Position* pos;    // valid until the next structural change (see version)
    Velocity* vel;    // null: immovable (no Velocity, e.g. Frozen)
    double inv_mass;  // 0: immovable
    double restitution;
    bool still;  // immovable or asleep (rest_system): two still bodies are not pushed apart
};

struct collision_state {
    std::vector<collision_body> bodies;                          // sorted by grid bucket
    std::vector<collision_link> links;                           // bodies' ids and pointers, same order
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;  // indices into bodies
    std::vector<std::pair<ecs::entity_id, ecs::entity_id>>
        dropped;                             // removed by the ghost filter (lower id first)
    std::uint64_t tick = ~std::uint64_t{0};  // the tick the pairs belong to
    std::uint64_t version = 0;               // registry structure version the body pointers belong to
    bool banded = false;      // a dense grid: bodies in row order, so response runs by bands of rows
    std::int64_t min_cy = 0;  // the grid's first row
    static constexpr std::int64_t band_rows = 32;
    // scratch, reused across ticks
    struct gathered {
        collision_body body;
        ecs::entity_id id;
        Position* pos;
    };
    std::vector<gathered> unsorted;
    std::vector<std::uint32_t> bucket_start;
    std::vector<std::uint32_t> bucket_of;
    std::vector<std::uint32_t> offsets;
    std::vector<entity_ref> adjacency;      // Contacts lists end to end (CSR, by offsets)
    std::vector<std::uint32_t> body_at;     // the body whose Contacts sit at each place in their pool
    std::vector<ecs::entity_id> untouched;  // bodies whose Contacts go this tick
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> piece_pairs;  // one per thread
    std::vector<std::vector<std::uint32_t>> piece_cross;  // response: pairs across bands, per piece
    // Per piece of the gather, the cells and the counting sorts (one each per thread):
    std::vector<std::pair<std::uint32_t, std::uint32_t>> piece_kept;  // the gather's places written
    std::vector<double> piece_max;                                    // the largest radius
    std::vector<std::array<std::int64_t, 4>> piece_extent;            // cells: min x, min y, max x, max y
    std::vector<std::vector<std::uint32_t>> piece_fill;               // counts, then write cursors
    std::vector<std::vector<std::uint32_t>> piece_new;                // bodies that get Contacts now
};

/// @brief rest_system's scratch, kept between ticks so a tick allocates nothing.
struct rest_state {
    /// Where a slow mover with mass stood when the tick began, noted by movement at the mover's
    /// place in the Position pool; `tick` (the tick + 1) says the note is this tick's, `slot` whose
    /// it is. Zeroed pages from the kernel (memory::map_zeroed, not calloc, which may zero recycled
    /// memory by writing it), written only for slow movers with a RigidBody: pages a world's fast or
    /// bodiless movers never touch cost it no memory (32 B an entity of RSS when they did).
    struct start {
        std::uint64_t tick;
        std::uint32_t slot;
        double x, y;
    };
    rest_state() = default;
    rest_state(const rest_state&) = delete;
    rest_state& operator=(const rest_state&) = delete;
    ~rest_state() { memory::unmap_zeroed(starts, starts_size * sizeof(start)); }
    start* starts = nullptr;
    std::size_t starts_size = 0;
    /// A table of at least n places; a new one is all zeros (no notes).
    start* starts_for(std::size_t n) {
        if (n > starts_size) {
            memory::unmap_zeroed(starts, starts_size * sizeof(start));
            starts = nullptr;
            starts_size = 0;
            const std::size_t size = n + n / 2;
            starts = static_cast<start*>(memory::map_zeroed(size * sizeof(start)));
            starts_size = size;
        }
        return starts;
    }
    /// Set by movement when it noted a start this tick: a world of fast movers skips rest's walk.
    std::atomic<bool> noted{false};
    /// Movers faster than this (m/s) at the start or end of a tick are not at rest: not noted.
    static constexpr double moving_speed = 1.0;
    struct body {
        ecs::entity_id id;
        bool slow;       // moved less than rest_speed * dt this tick
        bool supported;  // held up: touches an immovable collider or a floor edge, or feels no gravity
        bool wall;       // touches an edge gravity does not press it against
        double seconds;  // its Resting.seconds, 0 without one
        double x, y;     // where it is now
    };
    struct island {
        bool slow = true, supported = false, walls = false;
        std::uint32_t size = 0;
        double seconds = rest_system::sleep_after;
    };
    std::vector<body> bodies;            // the movers that may be at rest: slow, or resting
    std::vector<std::uint32_t> body_of;  // by entity slot: its place in bodies, moving, or null_index
    std::vector<std::uint32_t> parent;   // union-find over bodies
    std::vector<std::uint32_t> of_link;  // by collision_state::links place: its body, or null_index
    std::vector<island> islands;         // by root
    std::vector<ecs::entity_id> woken;
    // One per thread: the walk's candidates and whether it saw a speed to round to 0; what the
    // pairs say of the candidates (a body and another, or not_slow / held_up; see rest.cpp).
    std::vector<std::vector<body>> piece_bodies;
    std::vector<unsigned char> piece_tiny;
    std::vector<std::vector<std::pair<std::uint32_t, std::uint32_t>>> piece_events;  // sized to the piece
    std::vector<std::size_t> piece_noted;  // how many of piece_events' first places hold notes
};

}  // namespace ecsd::world
