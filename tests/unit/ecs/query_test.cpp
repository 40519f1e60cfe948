#include "ecs/query.hpp"

#include <gtest/gtest.h>

#include "ecs/error.hpp"
#include "ecs/registry.hpp"
#include "test_components.hpp"

using namespace ecsd::ecs;

TEST(QueryText, ParsesAllNoneAndAnyGroups) {
    const auto q = parse_query("Position, Velocity, !Frozen, Health|Shield");
    EXPECT_EQ(q.all, (std::vector<std::string>{"Position", "Velocity"}));
    EXPECT_EQ(q.none, (std::vector<std::string>{"Frozen"}));
    ASSERT_EQ(q.any.size(), 1u);
    EXPECT_EQ(q.any[0], (std::vector<std::string>{"Health", "Shield"}));
}

TEST(QueryText, ParsesChangeFilters) {
    const auto q = parse_query("Position, changed(Position), added(Health), removed(Velocity)");
    EXPECT_EQ(q.changed, (std::vector<std::string>{"Position"}));
    EXPECT_EQ(q.added, (std::vector<std::string>{"Health"}));
    EXPECT_EQ(q.removed, (std::vector<std::string>{"Velocity"}));
    EXPECT_TRUE(parse_query("died").died);
    EXPECT_TRUE(parse_query("*").match_all);
}

TEST(QueryText, BadTextIsAClearError) {
    for (const char* bad : {"", "Position,,Velocity", "Posi tion", "!", "A|", "changed(Position", "3D"}) {
        try {
            (void)parse_query(bad);
            FAIL() << "accepted: " << bad;
        } catch (const ecs_error& e) {
            EXPECT_STREQ(e.reason(), reason::invalid_params);
            EXPECT_NE(std::string(e.what()).find("character"), std::string::npos) << e.what();
        }
    }
}

TEST(QueryResolve, UnknownComponentIsNoSuchComponent) {
    registry reg;
    reg.register_component<test::Position>();
    try {
        (void)reg.resolve(parse_query("Position, Nope"));
        FAIL();
    } catch (const ecs_error& e) {
        EXPECT_STREQ(e.reason(), reason::no_such_component);
    }
}

TEST(QueryMatch, AllAnyNoneOverEntities) {
    registry reg;
    reg.register_component<test::Position>();
    reg.register_component<test::Velocity>();
    reg.register_component<test::Health>();
    reg.register_component<test::Player>();
    const auto mover = reg.create();
    reg.emplace<test::Position>(mover);
    reg.emplace<test::Velocity>(mover);
    const auto player = reg.create();
    reg.emplace<test::Position>(player);
    reg.emplace<test::Velocity>(player);
    reg.emplace<test::Player>(player);
    const auto rock = reg.create();
    reg.emplace<test::Position>(rock);
    reg.emplace<test::Health>(rock);

    auto run = [&](const char* text) {
        std::vector<entity_id> out;
        reg.for_each_match(reg.resolve(parse_query(text)), [&](entity_id e) { out.push_back(e); });
        return out;
    };
    EXPECT_EQ(run("Position, Velocity, !Player"), (std::vector<entity_id>{mover}));
    EXPECT_EQ(run("Position, Velocity|Health"), (std::vector<entity_id>{mover, player, rock}));
    EXPECT_EQ(run("Player|Health"), (std::vector<entity_id>{player, rock}));
    EXPECT_EQ(run("*"), (std::vector<entity_id>{mover, player, rock}));
}
