// The seed articles' scenarios, each named after its article.
#include <gtest/gtest.h>

#include "ecs/registry.hpp"
#include "test_components.hpp"

using namespace ecsd::ecs;

// Seed 003 (C#, "Pools"): a system over Physical + Visible keeps its member set current.
TEST(Seed003Pools, SystemMembersFollowComponentsComingAndGoing) {
    registry reg;
    reg.register_component<test::Physical>();
    reg.register_component<test::Visible>();
    const int system = reg.watch(reg.resolve(parse_query("Physical, Visible")));
    const auto e = reg.create();
    reg.emplace<test::Physical>(e);
    EXPECT_EQ(reg.members(system).size(), 0u);
    reg.emplace<test::Visible>(e);
    EXPECT_EQ(reg.members(system).size(), 1u);
    reg.remove<test::Visible>(e);
    EXPECT_EQ(reg.members(system).size(), 0u);
}

// Two systems over the same terms share one member set (it costs 8 bytes per member); other
// terms get their own.
TEST(Seed003Pools, SystemsWithTheSameTermsShareOneMemberSet) {
    registry reg;
    reg.register_component<test::Physical>();
    reg.register_component<test::Visible>();
    const int a = reg.watch(reg.resolve(parse_query("Physical, Visible")));
    const int b = reg.watch(reg.resolve(parse_query("Visible, Physical")));
    const int c = reg.watch(reg.resolve(parse_query("Physical, !Visible")));
    EXPECT_EQ(a, b);
    EXPECT_NE(a, c);
    const auto e = reg.create();
    reg.emplace<test::Physical>(e);
    EXPECT_EQ(reg.members(a).size(), 0u);
    EXPECT_EQ(reg.members(c).size(), 1u);
    reg.emplace<test::Visible>(e);
    EXPECT_EQ(reg.members(b).size(), 1u);
    EXPECT_EQ(reg.members(c).size(), 0u);
}

// Seed 000 (iThome): entitySignatureChanged also handles exclusion and destruction.
TEST(Seed000Systems, SignatureChangesUpdateSystemsWithNoneAndAny) {
    registry reg;
    reg.register_component<test::Position>();
    reg.register_component<test::Velocity>();
    reg.register_component<test::Player>();
    const int movers = reg.watch(reg.resolve(parse_query("Position, Velocity, !Player")));
    const auto e = reg.create();
    reg.emplace<test::Position>(e);
    reg.emplace<test::Velocity>(e);
    EXPECT_TRUE(reg.members(movers).contains(index_of(e)));
    reg.emplace<test::Player>(e);
    EXPECT_FALSE(reg.members(movers).contains(index_of(e)));
    reg.remove<test::Player>(e);
    EXPECT_TRUE(reg.members(movers).contains(index_of(e)));
    reg.destroy(e);
    EXPECT_EQ(reg.members(movers).size(), 0u);
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
