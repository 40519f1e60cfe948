#include "persist/snapshot.hpp"

#include <cctype>
#include <cstring>

#include <gtest/gtest.h>

#include "persist/snapshot_binary.hpp"

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

namespace {
/// @brief busy_world with every kind of storage the binary form lays out differently: raw structs,
/// structs with strings or lists (JSON text), tags, and run-time components.
std::unique_ptr<world::world> every_kind_world() {
    auto w = busy_world();
    w->spawn({{"Position", {{"x", 1.5}}}, {"Player", json::object()}, {"Name", {{"name", "hero"}}}});
    w->spawn({{"Health", {{"hp", 7}}}, {"AI", {{"kind", "slime"}}}, {"Appearance", {{"name", "slime.png"}}}});
    w->step(1);  // contacts (a list of ids) are written by the collision system
    return w;
}
}  // namespace

TEST(BinarySnapshot, RoundTripIsTheSameWorldInEveryDetail) {
    auto a = every_kind_world();
    for (const bool compressed : {false, true}) {
        const std::string bytes = persist::binary_snapshot(*a, 9, compressed);
        ASSERT_TRUE(persist::is_binary_snapshot(bytes));
        EXPECT_EQ(persist::binary_snapshot_journal_seq(bytes), 9u);
        EXPECT_EQ(persist::check_binary_seal(bytes).status, persist::snapshot_seal::state::good);
        auto b = persist::from_binary_snapshot(bytes, "test");
        // The JSON form lists settings, allocator, every value and each storage's dense order:
        // equal text is an equal world, down to the order ids come back in.
        EXPECT_EQ(persist::snapshot_text(*b, 9), persist::snapshot_text(*a, 9))
            << "compressed " << compressed;
        EXPECT_EQ(b->state_hash(), a->state_hash());
        for (int t = 0; t < 30; ++t) {
            a->step(1);
            b->step(1);
        }
        EXPECT_EQ(b->state_hash(), a->state_hash()) << "diverged after the restore";
        for (int i = 0; i < 4; ++i) EXPECT_EQ(a->spawn(json::object()), b->spawn(json::object()));
    }
}

TEST(Snapshot, BodiesAtRestKeepTheirCountSoARestoredWorldSleepsOnTheSameTick) {
    // rest_system's timer lives in Resting, a component: a restored heap goes to sleep on the
    // same tick as the original, in both forms, and their states never part.
    world::world_settings s = paused();
    s.gravity_y = -9.81;
    s.bounds.right = 2;
    world::world a(s);
    for (int i = 0; i < 10; ++i)
        a.spawn({{"Position", {{"x", -1.5 + 0.3 * i}, {"y", 0.9 * i}}},
                 {"RigidBody", {{"restitution", 0.2}}},
                 {"Collider", {{"radius", 0.45}}}});
    for (int t = 0; t < 600 && a.registry().storage<world::Resting>().empty(); ++t) a.step(1);
    a.step(3);  // resting, not yet asleep
    ASSERT_FALSE(a.registry().storage<world::Resting>().empty());
    auto b = round_trip(a);
    auto c = persist::from_binary_snapshot(persist::binary_snapshot(a, 1, true), "test");
    for (int t = 0; t < 900; ++t) {
        a.step(1);
        b->step(1);
        c->step(1);
        ASSERT_EQ(b->state_hash(), a.state_hash()) << "JSON: diverged " << t << " ticks after the restore";
        ASSERT_EQ(c->state_hash(), a.state_hash()) << "binary: diverged " << t << " ticks after the restore";
    }
    EXPECT_EQ(a.query("Resting.seconds >= 0.5", std::nullopt, 100, 0)["total"], 10) << "the heap sleeps";
}

TEST(BinarySnapshot, EmptyWorldAndChurnedAllocatorRoundTrip) {
    world::world empty(paused());
    EXPECT_EQ(persist::snapshot_text(
                  *persist::from_binary_snapshot(persist::binary_snapshot(empty, 0, false), "t"), 0),
              persist::snapshot_text(empty, 0));
    // Many dead and live slots interleaved: the allocator and the dense orders do not form runs.
    world::world w(paused());
    std::vector<ecs::entity_id> ids;
    for (int i = 0; i < 500; ++i)
        ids.push_back(w.spawn({{"Position", {{"x", i}}}, {"Velocity", json::object()}}));
    for (std::size_t i = 0; i < ids.size(); i += 3) w.despawn(ids[i]);
    w.step(1);
    for (int i = 0; i < 50; ++i) w.spawn({{"Velocity", {{"y", i}}}});
    const auto back = persist::from_binary_snapshot(persist::binary_snapshot(w, 1, false), "t");
    EXPECT_EQ(persist::snapshot_text(*back, 1), persist::snapshot_text(w, 1));
}

TEST(BinarySnapshot, RawValuesTakeLittleMoreThanTheirBytes) {
    // 10k Position+Velocity (32 bytes of doubles each) spawned in one go: the slots form runs.
    world::world w(paused());
    const json one = {{"Position", {{"x", 1}}}, {"Velocity", {{"y", 2}}}};
    for (int i = 0; i < 10000; ++i) w.spawn(one);
    const std::size_t raw = 10000 * 32;
    const auto plain = persist::binary_snapshot(w, 0, false).size();
    EXPECT_LE(plain, raw * 5 / 4) << "at most 1.25 x the raw component bytes";
    EXPECT_GE(plain, raw);
    EXPECT_LT(persist::binary_snapshot(w, 0, true).size(), plain) << "zstd shrinks repeated values";
}

TEST(BinarySnapshot, EveryCutAndEveryChangedByteIsAPersistErrorOrLoads) {
    const auto w = every_kind_world();
    const std::string bytes = persist::binary_snapshot(*w, 3, false);
    for (std::size_t n = 0; n < bytes.size(); n += 7) {
        const auto cut = bytes.substr(0, n);
        EXPECT_NE(persist::check_binary_seal(cut).status, persist::snapshot_seal::state::good);
        EXPECT_THROW((void)persist::from_binary_snapshot(cut, "cut"), persist::persist_error) << n;
    }
    for (std::size_t at = 8; at < bytes.size(); at += 5) {
        std::string changed = bytes;
        changed[at] = static_cast<char>(changed[at] ^ 0x5a);
        EXPECT_EQ(persist::check_binary_seal(changed).status, persist::snapshot_seal::state::mismatch) << at;
        try {
            (void)persist::from_binary_snapshot(changed, "changed");  // a changed value may still load
        } catch (const persist::persist_error&) {
        }
    }
}

TEST(BinarySnapshot, NewerVersionsAndUnknownFlagsAreClearErrors) {
    std::string bytes = persist::binary_snapshot(*busy_world(), 0, false);
    std::string newer = bytes;
    newer[8] = static_cast<char>(persist::binary_snapshot_version + 1);
    try {
        persist::check_binary_header(newer, "data/arena.snapshot");
        FAIL();
    } catch (const persist::persist_error& e) {
        EXPECT_NE(std::string(e.what()).find("data/arena.snapshot"), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("newer"), std::string::npos);
    }
    std::string flagged = bytes;
    flagged[12] = 4;
    EXPECT_THROW((void)persist::from_binary_snapshot(flagged, "x"), persist::persist_error);
    EXPECT_THROW(persist::check_binary_header("{\"format\":1}", "x"), persist::persist_error);
    // A compressed body whose header claims far more than the frame holds: refused, nothing
    // allocated for the claim.
    std::string claims = persist::binary_snapshot(*busy_world(), 0, true);
    const std::uint64_t huge = std::uint64_t{1} << 40;
    std::memcpy(claims.data() + 32, &huge, sizeof huge);
    EXPECT_THROW((void)persist::from_binary_snapshot(claims, "x"), persist::persist_error);
    const auto packed = persist::binary_snapshot(*busy_world(), 0, true);
    for (std::size_t n = 40; n < packed.size(); n += 11)
        EXPECT_THROW((void)persist::from_binary_snapshot(packed.substr(0, n), "cut"), persist::persist_error);
    EXPECT_EQ(persist::parse_snapshot_format("zstd"), persist::snapshot_format::zstd);
    EXPECT_FALSE(persist::parse_snapshot_format("xml"));
}
