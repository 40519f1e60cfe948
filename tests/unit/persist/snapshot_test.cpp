#include "persist/snapshot.hpp"

#include <cctype>

#include <gtest/gtest.h>

using namespace ecsd;
using ecsd::ecs::json;

namespace {
world::world_settings paused() {
    world::world_settings s;
    s.name = "arena";
    s.paused = true;
    s.gravity_y = -3;
    s.bounds.bottom = -1;
    s.bounds.left = -2;
    return s;
}

/// @brief A world with movers, colliders, a run-time component, a prefab, dead ids and a disabled system.
std::unique_ptr<world::world> busy_world() {
    auto w = std::make_unique<world::world>(paused());
    w->register_component("vector2", {{"x", 0}, {"y", 0}});
    w->define_prefab("rock", {{"Position", json::object()}, {"Collider", {{"radius", 0.5}}}});
    for (int i = 0; i < 60; ++i)
        w->spawn({{"Position", {{"x", (i % 8) * 0.9}, {"y", (i / 8) * 0.9}}},
                  {"Velocity", {{"x", (i % 3) - 1}}},
                  {"RigidBody", {{"restitution", 0.4}}},
                  {"Collider", {{"radius", 0.5}}},
                  {"vector2", {{"x", i}}}});
    w->spawn_prefab("rock", 5, {{"Position", {{"y", -2}}}});
    for (std::uint64_t slot : {3u, 10u, 11u, 40u})
        w->despawn(ecs::make_entity(static_cast<std::uint32_t>(slot), 1));
    w->set_system_enabled("lifetime", false);
    w->step(30);
    return w;
}

std::unique_ptr<world::world> round_trip(const world::world& w) {
    const std::string text = persist::snapshot_text(w, 7);
    EXPECT_EQ(json::parse(text), persist::to_snapshot(w, 7));  // the streamed text is the same document
    return persist::from_snapshot(json::parse(text), "test");
}
}  // namespace

TEST(Snapshot, RoundTripKeepsHashIdsAndStaleIds) {
    auto a = busy_world();
    auto b = round_trip(*a);
    EXPECT_EQ(a->state_hash(), b->state_hash());
    EXPECT_EQ(a->tick(), b->tick());
    EXPECT_EQ(b->settings().gravity_y, -3);
    EXPECT_EQ(b->settings().bounds.bottom, -1.0);
    EXPECT_EQ(b->settings().bounds.left, -2.0);
    EXPECT_FALSE(b->settings().bounds.top);
    EXPECT_TRUE(b->paused());
    EXPECT_FALSE(b->system("lifetime").enabled);
    EXPECT_EQ(b->prefabs().count("rock"), 1u);
    const auto stale = ecs::make_entity(10, 1);
    EXPECT_FALSE(b->registry().alive(stale));
    EXPECT_TRUE(b->registry().entities().stale(stale));
    // The allocator continues exactly where it was: same next ids, never a reused one.
    for (int i = 0; i < 6; ++i) EXPECT_EQ(a->spawn(json::object()), b->spawn(json::object()));
}

TEST(Snapshot, RestoredWorldEvolvesBitIdentically) {
    auto a = busy_world();
    auto b = round_trip(*a);
    for (int t = 0; t < 120; ++t) {
        a->step(1);
        b->step(1);
        ASSERT_EQ(a->state_hash(), b->state_hash()) << "diverged " << t << " ticks after the restore";
    }
}

TEST(Snapshot, EmptyWorldAndComponentlessEntitiesStream) {
    world::world w(paused());
    EXPECT_EQ(json::parse(persist::snapshot_text(w, 0)), persist::to_snapshot(w, 0));
    w.spawn(json::object());
    EXPECT_EQ(json::parse(persist::snapshot_text(w, 0)), persist::to_snapshot(w, 0));
    EXPECT_EQ(round_trip(w)->registry().size(), 1u);
}

TEST(Snapshot, JournalSeqIsKept) {
    auto a = busy_world();
    EXPECT_EQ(persist::snapshot_journal_seq(persist::to_snapshot(*a, 42)), 42u);
}

TEST(Snapshot, NewerVersionOrNotASnapshotIsAClearError) {
    auto doc = persist::to_snapshot(*busy_world(), 0);
    doc["version"] = persist::snapshot_version + 1;
    try {
        (void)persist::from_snapshot(doc, "data/arena.snapshot.json");
        FAIL();
    } catch (const persist::persist_error& e) {
        EXPECT_NE(std::string(e.what()).find("data/arena.snapshot.json"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos);
    }
    EXPECT_THROW((void)persist::from_snapshot(json{{"hello", "world"}}, "x"), persist::persist_error);
    EXPECT_THROW((void)persist::from_snapshot(json::array(), "x"), persist::persist_error);
    auto broken = persist::to_snapshot(*busy_world(), 0);
    broken["entities"][0]["components"]["Position"]["x"] = "left";
    EXPECT_THROW((void)persist::from_snapshot(broken, "x"), persist::persist_error);
    auto dup = persist::to_snapshot(*busy_world(), 0);
    dup["entities"].push_back(dup["entities"][0]);
    EXPECT_THROW((void)persist::from_snapshot(dup, "x"), persist::persist_error);
}

TEST(SnapshotChecksum, ASealedSnapshotIsValidJsonAndVerifies) {
    auto w = busy_world();
    const std::string text = persist::seal_snapshot(persist::snapshot_text(*w, 3));
    auto doc = json::parse(text);
    EXPECT_TRUE(doc["checksum"].get<std::string>().starts_with("crc32:"));
    doc.erase("checksum");
    EXPECT_EQ(doc, persist::to_snapshot(*w, 3));
    const auto seal = persist::check_snapshot_seal(text);
    EXPECT_EQ(seal.status, persist::snapshot_seal::state::good);
    EXPECT_EQ(seal.offset, text.rfind(",\"checksum\""));
    EXPECT_EQ(persist::from_snapshot(json::parse(text), "test")->state_hash(), w->state_hash());
}

TEST(SnapshotChecksum, AChangedDigitFailsTheChecksum) {
    auto w = busy_world();
    std::string text = persist::seal_snapshot(persist::snapshot_text(*w, 3));
    const auto at = text.find("\"x\":", text.find("\"entities\"")) + 4;
    ASSERT_TRUE(std::isdigit(static_cast<unsigned char>(text[at + 1])) ||
                std::isdigit(static_cast<unsigned char>(text[at])));
    const auto digit = std::isdigit(static_cast<unsigned char>(text[at])) ? at : at + 1;
    text[digit] = text[digit] == '7' ? '8' : '7';  // still valid JSON, a different value
    EXPECT_TRUE(json::accept(text));
    const auto seal = persist::check_snapshot_seal(text);
    EXPECT_EQ(seal.status, persist::snapshot_seal::state::mismatch);
    EXPECT_NE(seal.stored, seal.computed);
}

TEST(SnapshotChecksum, ASnapshotWithoutOneReadsAsMissing) {
    auto w = busy_world();
    EXPECT_EQ(persist::check_snapshot_seal(persist::snapshot_text(*w, 0)).status,
              persist::snapshot_seal::state::missing);
    EXPECT_EQ(persist::check_snapshot_seal("{}").status, persist::snapshot_seal::state::missing);
    // A component value named "checksum" inside the document is not the seal.
    EXPECT_EQ(persist::check_snapshot_seal(R"({"a":{"checksum":"crc32:00000000"},"b":1})").status,
              persist::snapshot_seal::state::missing);
}
