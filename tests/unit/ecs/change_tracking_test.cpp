#include <gtest/gtest.h>

#include "ecs/registry.hpp"
#include "test_components.hpp"

using namespace ecsd::ecs;
using test::Position;

class ChangeTracking : public ::testing::Test {
  protected:
    ChangeTracking() {
        reg.register_component<Position>();
        reg.register_component<test::Velocity>();
    }
    std::vector<entity_id> run(const char* text) {
        std::vector<entity_id> out;
        reg.for_each_match(reg.resolve(parse_query(text)), [&](entity_id e) { out.push_back(e); });
        return out;
    }
    registry reg;
};

TEST_F(ChangeTracking, AddedChangedRemovedAndDiedAreSeenForOneTickThenCleared) {
    const auto a = reg.create();
    const auto b = reg.create();
    const auto c = reg.create();
    reg.emplace<Position>(a);
    reg.emplace<Position>(b);
    reg.emplace<test::Velocity>(c);
    reg.end_tick();  // tick 1 ends: its additions stay visible through tick 2
    EXPECT_EQ(run("added(Position)"), (std::vector<entity_id>{a, b}));
    reg.end_tick();
    EXPECT_TRUE(run("added(Position)").empty());
    EXPECT_TRUE(run("changed(Position)").empty());

    reg.insert_json(b, reg.id_of<Position>(), {{"x", 1}});
    reg.remove<test::Velocity>(c);
    reg.destroy(a);
    EXPECT_EQ(run("changed(Position)"), (std::vector<entity_id>{b}));
    EXPECT_EQ(run("removed(Velocity)"), (std::vector<entity_id>{c}));
    EXPECT_EQ(run("died"), (std::vector<entity_id>{a}));
    EXPECT_EQ(run("removed(Position)"), (std::vector<entity_id>{a}));

    reg.end_tick();
    reg.end_tick();
    EXPECT_TRUE(run("changed(Position)").empty());
    EXPECT_TRUE(run("removed(Velocity)").empty());
    EXPECT_TRUE(run("died").empty());
}

TEST_F(ChangeTracking, TouchAndMutableWalksCountAsChanged) {
    const auto a = reg.create();
    const auto b = reg.create();
    reg.emplace<Position>(a);
    reg.emplace<Position>(b);
    reg.emplace<test::Velocity>(b);
    reg.end_tick();
    reg.end_tick();
    reg.touch<Position>(a);
    EXPECT_EQ(run("changed(Position)"), (std::vector<entity_id>{a}));
    reg.end_tick();
    reg.end_tick();
    reg.each<Position, const test::Velocity>([](Position& p, const test::Velocity&) { p.x += 1; });
    EXPECT_EQ(run("changed(Position)"), (std::vector<entity_id>{b}));
    EXPECT_TRUE(run("changed(Velocity)").empty());  // walked as const: not written
}

// memory_bytes() is what the registry holds: the change records a tick writes are part of it
// (issue 16 found them left out, so the counter read less than the RSS it stood for).
TEST_F(ChangeTracking, MemoryBytesCountsTheChangeRecords) {
    constexpr std::size_t n = 20'000;
    std::vector<entity_id> ids;
    for (std::size_t i = 0; i < n; ++i) {
        ids.push_back(reg.create());
        reg.emplace<Position>(ids.back(), {});
    }
    reg.end_tick();
    reg.end_tick();  // the records of the creations have rotated out
    const auto before = reg.memory_bytes();
    // Every other entity: ids that do not follow each other cost a word each in the records.
    for (std::size_t i = 0; i < n; i += 2) reg.destroy(ids[i]);  // capacities stay; records grow
    EXPECT_GE(reg.memory_bytes(), before + 2 * (n / 2) * sizeof(entity_id))
        << "one died record and one removed record per destroyed entity";
}

TEST_F(ChangeTracking, EntitiesDestroyedInOrderAreRecordedAsRuns) {
    constexpr std::size_t n = 20'000;
    std::vector<entity_id> ids;
    for (std::size_t i = 0; i < n; ++i) {
        ids.push_back(reg.create());
        reg.emplace<Position>(ids.back(), {});
    }
    // One survivor, so the pool is closed up and keeps its pages (emptied whole it would shrink,
    // and the records' growth would hide behind that).
    reg.emplace<Position>(reg.create(), {});
    reg.end_tick();
    reg.end_tick();
    const auto full = reg.memory_bytes();
    reg.destroy(ids);
    // As words the died and removed records would take 2 * n * 8 bytes on top of the free queue.
    EXPECT_LT(reg.memory_bytes() - full, 2 * n * sizeof(entity_id));
    const auto died = reg.died();
    EXPECT_EQ(died, ids) << "each id is still there, in order";
}

// A write stamp is one byte (the low byte of the tick count), so after 256 ticks an old stamp
// would read as written now; age_stamps() pins old stamps past the horizon before that. Over 1000
// ticks, a value written once is "changed" only in its tick and the next, whatever the tick
// count's low byte, and a question about writes since a floor past the horizon answers "maybe".
TEST_F(ChangeTracking, OneByteStampsNeverWrapIntoChanged) {
    const auto a = reg.create();
    const auto b = reg.create();
    reg.emplace<Position>(a);
    reg.emplace<Position>(b);
    const auto& pool = reg.storage<Position>();
    for (std::uint32_t tick = 0; tick < 1000; ++tick) {
        if (tick == 300) reg.touch<Position>(b);
        const auto changed = run("changed(Position)");
        if (tick <= 1) {
            EXPECT_EQ(changed, (std::vector<entity_id>{a, b})) << "tick " << tick;  // the additions
        } else if (tick == 300 || tick == 301) {
            EXPECT_EQ(changed, (std::vector<entity_id>{b})) << "tick " << tick;
        } else {
            EXPECT_TRUE(changed.empty()) << "tick " << tick << ": " << changed.size() << " read as changed";
        }
        const auto pos = pool.index(index_of(a));
        if (tick >= pool::stamp_horizon) {  // written at tick 0: not within the last 127 ticks
            EXPECT_FALSE(pool.written_since(pos, reg.epoch() - (pool::stamp_horizon - 1))) << "tick " << tick;
        }
        EXPECT_TRUE(pool.written_since(pos, reg.epoch() - pool::stamp_horizon));  // past the horizon: maybe
        reg.end_tick();
    }
}

// age_stamps() looks at one block of positions in 64 each tick; a stamp that moves is looked at as
// it moves. Here one stamp is moved, every tick, into the block that tick's sweep has just passed,
// so the sweep never sees it: only the look on each move keeps it from wrapping into "changed".
TEST_F(ChangeTracking, AStampThatDodgesEverySweepStillNeverWrapsIntoChanged) {
    constexpr std::uint32_t n = pool::stamp_rounds * pool::stamp_block + 1;
    std::vector<entity_id> ids;
    for (std::uint32_t i = 0; i < n; ++i) {
        ids.push_back(reg.create());
        reg.emplace<Position>(ids.back());
    }
    auto& pool = reg.storage<Position>();
    const auto s = ids.back();
    for (std::uint32_t tick = 0; tick < 600; ++tick) {
        reg.end_tick();
        // The block this end_tick swept; move s to its first position (swap with whoever is there).
        const std::uint32_t swept = (reg.epoch() % pool::stamp_rounds) * pool::stamp_block;
        pool.swap_positions(pool.index(index_of(s)), swept);
        ASSERT_EQ(pool.index(index_of(s)), swept);
        if (tick >= 2) {
            ASSERT_FALSE(pool.written_since(swept, reg.change_floor())) << "tick " << tick;
        }
    }
}

// A forked save copies first the arrays the next tick is about to write: those written last tick.
TEST_F(ChangeTracking, TheArraysWrittenLatelyAreTheValuesAndStampsOfPoolsWrittenLastTick) {
    std::vector<entity_id> ids;
    for (int i = 0; i < 1000; ++i) {
        ids.push_back(reg.create());
        reg.emplace<Position>(ids.back());
        reg.emplace<test::Velocity>(ids.back());
    }
    auto& pos = reg.storage<Position>();
    auto& vel = reg.storage<test::Velocity>();
    const auto lately = [&] { return reg.arrays_written_lately(); };
    using arrays = std::vector<const void*>;
    EXPECT_EQ(lately(), (arrays{pos.value_array(), pos.stamps(), vel.value_array(), vel.stamps()}))
        << "both were just added";
    reg.end_tick();
    reg.end_tick();
    EXPECT_TRUE(lately().empty()) << "nothing written for two ticks";
    for (const auto e : ids) reg.touch<Position>(e);  // a movement system's tick
    EXPECT_EQ(lately(), (arrays{pos.value_array(), pos.stamps()}));
    reg.end_tick();
    EXPECT_EQ(lately(), (arrays{pos.value_array(), pos.stamps()})) << "the tick just ended wrote them";
    reg.end_tick();
    EXPECT_TRUE(lately().empty());
}
