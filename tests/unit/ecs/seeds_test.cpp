// The seed articles' scenarios, each named after its article.
#include <algorithm>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include <gtest/gtest.h>

#include "ecs/registry.hpp"
#include "test_components.hpp"

using namespace ecsd::ecs;

// Seed 003 (C#, "Pools"): a system over Physical + Visible keeps its member set current.
TEST(Seed003Pools, SystemMembersFollowComponentsComingAndGoing) {
    registry reg;
    reg.register_component<test::Physical>();
    reg.register_component<test::Visible>();
    const int system = reg.track(reg.resolve(parse_query("Physical, Visible")));
    const auto e = reg.create();
    reg.emplace<test::Physical>(e);
    EXPECT_EQ(reg.member_count(system), 0u);
    reg.emplace<test::Visible>(e);
    EXPECT_EQ(reg.member_count(system), 1u);
    reg.remove<test::Visible>(e);
    EXPECT_EQ(reg.member_count(system), 0u);
}

// Two systems over the same terms share one member set (it costs 8 bytes per member); other
// terms get their own.
TEST(Seed003Pools, SystemsWithTheSameTermsShareOneMemberSet) {
    registry reg;
    reg.register_component<test::Physical>();
    reg.register_component<test::Visible>();
    const int a = reg.track(reg.resolve(parse_query("Physical, Visible")));
    const int b = reg.track(reg.resolve(parse_query("Visible, Physical")));
    const int c = reg.track(reg.resolve(parse_query("Physical, !Visible")));
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    const auto e = reg.create();
    reg.emplace<test::Physical>(e);
    EXPECT_EQ(reg.member_count(a), 0u);
    EXPECT_EQ(reg.member_count(c), 1u);
    reg.emplace<test::Visible>(e);
    EXPECT_EQ(reg.member_count(b), 1u);
    EXPECT_EQ(reg.member_count(c), 0u);
}

// A system whose terms are exactly an owning group's components keeps no set of its own: the
// group's aligned prefix is its member set, whether the group came before the system or after.
// Members follow adds, removes and both kinds of destroy; tracking costs no memory per member.
TEST(Seed003Pools, ASystemOverAnOwningGroupUsesTheGroupAsItsMemberSet) {
    for (const bool group_first : {true, false}) {
        SCOPED_TRACE(group_first ? "group, then system" : "system, then group");
        auto make = [&](bool with_system) {
            auto reg = std::make_unique<registry>();
            reg->register_component<test::Position>();
            reg->register_component<test::Velocity>();
            reg->register_component<test::Player>();
            int sys = -1;
            if (group_first) reg->own_group<test::Position, test::Velocity>();
            if (with_system) sys = reg->track(reg->resolve(parse_query("Velocity, Position")));
            if (!group_first) reg->own_group<test::Position, test::Velocity>();
            return std::pair{std::move(reg), sys};
        };
        auto populate = [](registry& r) {
            std::vector<entity_id> out;
            for (int i = 0; i < 1000; ++i) {
                out.push_back(r.create());
                r.emplace<test::Position>(out.back());
                if (i % 4 != 0) r.emplace<test::Velocity>(out.back());
            }
            return out;
        };
        // Not a structured binding: a lambda below uses reg, which clang 14 cannot capture from one.
        auto made = make(true);
        auto& reg = made.first;
        const int sys = made.second;
        const auto twin = make(false).first;
        const int with_player = reg->track(reg->resolve(parse_query("Position, Velocity, Player")));
        const auto ids = populate(*reg);
        populate(*twin);
        EXPECT_EQ(reg->member_count(sys), 750u);
        EXPECT_FALSE(reg->is_member(sys, index_of(ids[0])));
        EXPECT_TRUE(reg->is_member(sys, index_of(ids[1])));
        // The tracked query holds no set: beside its twin without the system, the registry holds less than
        // a byte per member more (the two tracked queries' entries); a set would take 8 B a member.
        EXPECT_LT(reg->memory_bytes(), twin->memory_bytes() + 750);

        reg->remove<test::Velocity>(ids[1]);
        reg->emplace<test::Velocity>(ids[0]);
        reg->emplace<test::Player>(ids[2]);
        reg->destroy(ids[3]);
        reg->end_tick();
        const std::vector<entity_id> bulk(ids.begin() + 500, ids.end());
        reg->destroy(std::span<const entity_id>(bulk));
        std::vector<entity_id> expected, listed;
        reg->for_each_match(reg->resolve(parse_query("Position, Velocity")),
                            [&](entity_id e) { expected.push_back(e); });
        reg->for_each_member(sys, [&](std::uint32_t slot) { listed.push_back(reg->entities().id_of(slot)); });
        std::sort(expected.begin(), expected.end());
        std::sort(listed.begin(), listed.end());
        EXPECT_EQ(listed, expected);
        EXPECT_EQ(reg->member_count(sys), expected.size());
        EXPECT_EQ(expected.size(), 374u);  // 375 of the first 500 had both; -1 +1 -1 (destroyed)
        EXPECT_TRUE(reg->is_member(sys, index_of(ids[0])));
        EXPECT_FALSE(reg->is_member(sys, index_of(ids[1])));
        EXPECT_EQ(reg->member_count(with_player), 1u);
    }
}

// Seed 000 (iThome): entitySignatureChanged also handles exclusion and destruction.
TEST(Seed000Systems, SignatureChangesUpdateSystemsWithNoneAndAny) {
    registry reg;
    reg.register_component<test::Position>();
    reg.register_component<test::Velocity>();
    reg.register_component<test::Player>();
    const int movers = reg.track(reg.resolve(parse_query("Position, Velocity, !Player")));
    const auto e = reg.create();
    reg.emplace<test::Position>(e);
    reg.emplace<test::Velocity>(e);
    EXPECT_TRUE(reg.is_member(movers, index_of(e)));
    reg.emplace<test::Player>(e);
    EXPECT_FALSE(reg.is_member(movers, index_of(e)));
    reg.remove<test::Player>(e);
    EXPECT_TRUE(reg.is_member(movers, index_of(e)));
    reg.destroy(e);
    EXPECT_EQ(reg.member_count(movers), 0u);
}

// Seed 004 (Lua, "ECS的初步实现"): world:register("vector2", {x=0, y=0}) and defaults.
TEST(Seed004RegisterAtRunTime, ComponentWithDefaultsIsStoredAndQueriedLikeATypedOne) {
    registry reg;
    const auto v2 = reg.register_dynamic("vector2", {{"x", 0}, {"y", 0}});
    const auto e = reg.create();
    reg.emplace_json(e, v2, {{"y", 4}});
    EXPECT_EQ(reg.get_json(e, v2), (json{{"x", 0.0}, {"y", 4.0}}));
    std::vector<entity_id> found;
    reg.for_each_match(reg.resolve(parse_query("vector2")), [&](entity_id x) { found.push_back(x); });
    EXPECT_EQ(found, std::vector<entity_id>{e});
}

// Seed 004: deletion is deferred to the end of the frame (world:update).
TEST(Seed004DeferredDeletion, DestroyDuringSystemWalkAppliesAtEndOfTick) {
    registry reg;
    reg.register_component<test::Health>();
    for (int i = 0; i < 5; ++i) reg.emplace<test::Health>(reg.create(), {i, 10});
    reg.each<test::Health>([&](entity_id e, test::Health& h) {
        if (h.hp % 2 == 0) reg.destroy(e);
    });
    EXPECT_EQ(reg.size(), 5u);
    reg.end_tick();
    EXPECT_EQ(reg.size(), 2u);
}

// Seed 004's ECS.fetch_world("Admin"): named, independent worlds are served by ecsd itself
// (world.create / world.list; server/net/world_directory), tested in
// tests/integration/world_methods_test.cpp.
