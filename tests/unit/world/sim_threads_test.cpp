// A world's tick on several threads computes what it computes on one: the state hash after every
// tick is the same at 1, 2 and 4 threads, over worlds large enough to be split (movement and the
// collision search cut into pieces). Labelled `threads`: scripts/test.sh --tsan runs it under
// ThreadSanitizer.
#include <algorithm>
#include <atomic>
#include <cstdint>
#include <random>
#include <vector>

#include <gtest/gtest.h>

#include "world/collision.hpp"
#include "world/sim_workers.hpp"
#include "world/world.hpp"

using namespace ecsd::world;
using ecsd::ecs::json;

namespace {
world_settings settings_with(unsigned threads) {
    world_settings s;
    s.paused = true;
    s.threads = threads;
    s.bounds.bottom = -1;
    return s;
}

// Movers enough for several pieces, colliders packed so that they touch, a few without a
// RigidBody or with mass 0, monsters to kill, and entities that come and go while it runs.
void populate(world& w, std::uint32_t seed) {
    std::mt19937 rng(seed);
    std::uniform_real_distribution<double> speed(-2, 2), jitter(-0.1, 0.1);
    auto& reg = w.registry();
    for (int i = 0; i < 3 * static_cast<int>(world::min_piece); ++i) {
        const auto e = reg.create();
        reg.emplace<Position>(e, {static_cast<double>(i % 500), 50.0 + i / 500});
        reg.emplace<Velocity>(e, {speed(rng), speed(rng)});
        if (i % 7 != 0) reg.emplace<RigidBody>(e, {i % 11 == 0 ? 0.0 : 1.0, 0.5, 1.0 + (i % 3)});
    }
    for (int i = 0; i < static_cast<int>(world::min_piece); ++i) {
        const auto e = reg.create();
        reg.emplace<Position>(e, {(i % 128) * 0.9 + jitter(rng), (i / 128) * 0.9 + jitter(rng)});
        reg.emplace<Velocity>(e, {speed(rng), speed(rng)});
        reg.emplace<RigidBody>(e, {1, 0.5, 0});
        reg.emplace<Collider>(e, {0.5, 1, 0xFFFFFFFFu});
        if (i % 9 == 0) reg.emplace<AI>(e);
        if (i % 9 == 0) reg.emplace<Health>(e);
    }
}
}  // namespace

TEST(SimPool, PiecesCoverTheRangeInOrderOncePerElement) {
    for (unsigned threads : {1U, 2U, 3U, 4U}) {
        sim_workers workers(threads);
        EXPECT_EQ(workers.threads(), threads);
        for (std::uint32_t n : {0U, 1U, 99U, 100U, 1000U, 100003U}) {
            std::vector<std::atomic<int>> hits(n);
            std::vector<std::pair<std::uint32_t, std::uint32_t>> ranges(threads, {1, 0});
            const unsigned pieces = workers.pieces(n, 100);
            EXPECT_GE(pieces, 1U);
            EXPECT_LE(pieces, threads);
            workers.parallel_for(n, 100, [&](unsigned piece, std::uint32_t b, std::uint32_t e) {
                ranges[piece] = {b, e};
                for (auto i = b; i < e; ++i) hits[i].fetch_add(1);
            });
            for (std::uint32_t i = 0; i < n; ++i)
                ASSERT_EQ(hits[i].load(), 1) << "element " << i << " of " << n;
            std::uint32_t next = 0;
            for (unsigned k = 0; k < pieces; ++k) {
                EXPECT_EQ(ranges[k].first, next) << "piece " << k << " starts where the last ended";
                next = ranges[k].second;
            }
            EXPECT_EQ(next, n);
        }
    }
}

TEST(SimPool, ManyJobsInARowEachWaitForAllPieces) {
    sim_workers workers(4);
    std::vector<std::uint64_t> sums(4);
    std::uint64_t total = 0;
    for (int job = 0; job < 2000; ++job) {
        workers.parallel_for(4000, 1000, [&](unsigned piece, std::uint32_t b, std::uint32_t e) {
            std::uint64_t s = 0;
            for (auto i = b; i < e; ++i) s += i;
            sums[piece] = s;
        });
        total += sums[0] + sums[1] + sums[2] + sums[3];
    }
    EXPECT_EQ(total, 2000ULL * (3999ULL * 4000ULL / 2));
}

TEST(SimThreads, TheStateHashIsTheSameAtOneTwoAndFourThreadsEveryTick) {
    world one(settings_with(1)), two(settings_with(2)), four(settings_with(4));
    EXPECT_EQ(one.threads(), 1U);
    EXPECT_EQ(two.threads(), 2U);
    EXPECT_EQ(four.info()["threads"], 4);
    for (world* w : {&one, &two, &four}) populate(*w, 7);
    ASSERT_EQ(one.state_hash(), four.state_hash());
    const auto killer = one.spawn({{"Health", json::object()}, {"Player", json::object()}});
    for (world* w : {&two, &four})
        ASSERT_EQ(w->spawn({{"Health", json::object()}, {"Player", json::object()}}), killer);
    std::size_t candidates = 0;  // bodies rest looked at in a tick: its split walk and pair pass ran
    for (int t = 0; t < 40; ++t) {
        if (t == 10)
            for (world* w : {&one, &two, &four}) w->cast_spell(killer, "kill_all_monsters", 0, 0);
        if (t == 20)
            for (world* w : {&one, &two, &four}) w->registry().destroy(ecsd::ecs::make_entity(100, 1));
        one.step(1);
        two.step(1);
        four.step(1);
        const auto h = one.state_hash();
        ASSERT_EQ(two.state_hash(), h) << "2 threads diverged at tick " << t;
        ASSERT_EQ(four.state_hash(), h) << "4 threads diverged at tick " << t;
        candidates = std::max(candidates, one.state<rest_system>().bodies.size());
    }
    EXPECT_GT(candidates, 100U) << "bodies slow enough to be at rest";
    // The worlds did move and collide: the hash is not that of the start.
    world fresh(settings_with(1));
    populate(fresh, 7);
    EXPECT_NE(fresh.state_hash(), one.state_hash());
    EXPECT_GT(one.state<collision_detection_system>().pairs.size(), 1000U);
    EXPECT_EQ(one.state<collision_detection_system>().pairs, four.state<collision_detection_system>().pairs);
}

TEST(SimThreads, ZeroMeansTheServersDefaultAndMoreThanTheLimitIsRefused) {
    world w(settings_with(0));
    EXPECT_EQ(w.threads(), 1U);
    w.set_default_threads(3);
    EXPECT_EQ(w.threads(), 3U);
    EXPECT_EQ(w.info()["threads"], 3);
    world own(settings_with(2));
    own.set_default_threads(3);
    EXPECT_EQ(own.threads(), 2U) << "a world that names its threads keeps them";
    EXPECT_THROW(world(settings_with(world_settings::max_threads + 1)), ecsd::ecs::ecs_error);
}
