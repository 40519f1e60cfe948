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
            EXPECT_EQ(e.why(), reason::invalid_params);
            EXPECT_NE(std::string(e.what()).find("character"), std::string::npos) << e.what();
        }
    }
}

TEST(QueryText, NearTakesAPointAnIdOrAName) {
    const auto point = parse_query("near(1, -2, 3)");
    ASSERT_TRUE(point.near);
    EXPECT_EQ(point.near->x, 1.0);
    EXPECT_EQ(point.near->y, -2.0);
    EXPECT_FALSE(point.near->entity);
    const auto id = parse_query("Position, near(4294967296, 5)");
    ASSERT_TRUE(id.near);
    EXPECT_EQ(id.near->entity, 4294967296U);
    EXPECT_FALSE(id.near->entity_name);
    const auto named = parse_query("near( hero , 2.5), Health");
    ASSERT_TRUE(named.near);
    EXPECT_EQ(named.near->entity_name, "hero");
    EXPECT_FALSE(named.near->entity);
    EXPECT_EQ(named.near->r, 2.5);
    const auto quoted = parse_query(R"(near("big boss", 1))");
    ASSERT_TRUE(quoted.near);
    EXPECT_EQ(quoted.near->entity_name, "big boss");
    for (const char* bad : {"near(-3, 1)", "near(1.5, 1)", "near(, 1)", R"(near("", 1))", "near(hero, -1)"}) {
        EXPECT_THROW((void)parse_query(bad), ecs_error) << bad;
    }
}

TEST(QueryText, OptionalTermsFilterNothingButMustName) {
    const auto q = parse_query("Position, ?Health");
    EXPECT_EQ(q.all, (std::vector<std::string>{"Position"}));
    EXPECT_EQ(q.optional, (std::vector<std::string>{"Health"}));
    registry reg;
    reg.register_component<test::Position>();
    EXPECT_THROW((void)reg.resolve(parse_query("Position, ?Nope")), ecs_error)
        << "an unknown optional name is still an error";
    EXPECT_THROW((void)parse_query("Position, ?"), ecs_error);
}

TEST(QueryText, ValueFiltersParseAndImplyTheirComponent) {
    const auto q =
        parse_query(R"(Position, Health.hp < 50, AI.kind == "boss, the big one", Position.y >= -2.5)");
    EXPECT_EQ(q.all, (std::vector<std::string>{"Position", "Health", "AI"}));
    ASSERT_EQ(q.where.size(), 3u);
    EXPECT_EQ(q.where[0].component, "Health");
    EXPECT_EQ(q.where[0].field, "hp");
    EXPECT_EQ(q.where[0].op, "<");
    EXPECT_EQ(q.where[0].value, 50);
    EXPECT_EQ(q.where[1].value, "boss, the big one") << "a comma inside the quoted text separates nothing";
    EXPECT_EQ(q.where[2].op, ">=");
    EXPECT_EQ(q.where[2].value, -2.5);
    EXPECT_EQ(parse_query("!Frozen").where.size(), 0u) << "a leading ! is a none term";
    for (const char* bad : {"Health.hp = 5", "Health < 5", "Health.hp < boss", "Health.hp < true",
                            "Health.hp <", "Health. < 1"})
        EXPECT_THROW((void)parse_query(bad), ecs_error) << bad;
}

// Issue 44: the hurt (Health.hp < Health.max) could not be asked for, nor who touches something,
// and every error said "character 1".
TEST(QueryText, AFieldComparesWithAnotherFieldOrAList) {
    const auto q = parse_query("Health.hp < Health.max, Contacts.entities != [], Position.x == [1, 2]");
    ASSERT_EQ(q.where.size(), 3u);
    EXPECT_TRUE(q.where[0].with_field());
    EXPECT_EQ(q.where[0].other_component, "Health");
    EXPECT_EQ(q.where[0].other_field, "max");
    EXPECT_EQ(q.where[1].value, nlohmann::json::array());
    EXPECT_FALSE(q.where[1].with_field());
    EXPECT_EQ(q.where[2].value, nlohmann::json::array({1, 2})) << "a comma inside [] separates nothing";
    EXPECT_EQ(q.all, (std::vector<std::string>{"Health", "Contacts", "Position"}));
    const auto mixed = parse_query("Health.hp >= Shield.points");
    EXPECT_EQ(mixed.all, (std::vector<std::string>{"Health", "Shield"})) << "both components are required";
    EXPECT_TRUE(filter_passes(q.where[0], 5, 10));
    EXPECT_FALSE(filter_passes(q.where[0], 10, 10));
    EXPECT_FALSE(filter_passes(q.where[0], 5, "10")) << "kinds never order against each other";
    EXPECT_THROW((void)parse_query("Contacts.entities < []"), ecs_error) << "a list only with == and !=";
}

TEST(QueryText, AnErrorPointsAtTheCharacterThatIsWrong) {
    const auto position_of = [](const char* text) -> std::string {
        try {
            (void)parse_query(text);
        } catch (const ecs_error& e) {
            const std::string m = e.what();
            const auto at = m.rfind("at character ");
            return at == std::string::npos ? m : m.substr(at + 13);
        }
        return "accepted";
    };
    EXPECT_EQ(position_of("Health.hp < Health"), "13");  // the right side, not the term
    EXPECT_EQ(position_of("Position, Health.hp <"), "22");
    EXPECT_EQ(position_of("Position,  Posi tion"), "16");
    EXPECT_EQ(position_of("Position, !3D"), "12");
    EXPECT_EQ(position_of("Health.hp = 5"), "11");
}

TEST(QueryText, FilterComparisons) {
    const value_filter lt{"Health", "hp", "<", 50};
    EXPECT_TRUE(filter_passes(lt, 49.5));
    EXPECT_FALSE(filter_passes(lt, 50));
    EXPECT_FALSE(filter_passes(lt, "10")) << "text never orders against a number";
    const value_filter eq{"AI", "kind", "==", "boss"};
    EXPECT_TRUE(filter_passes(eq, "boss"));
    EXPECT_FALSE(filter_passes(eq, "slime"));
    const value_filter ne{"AI", "kind", "!=", "boss"};
    EXPECT_TRUE(filter_passes(ne, "slime"));
    EXPECT_EQ(filter_problem({"A", "b", "<", true}), "< compares numbers or text, not true");
    EXPECT_EQ(filter_problem({"A", "b", "~", 1}), "unknown operator '~' (== != < <= > >=)");
    EXPECT_EQ(filter_problem({"A", "b", "==", nullptr}), std::nullopt);
}

TEST(QueryResolve, UnknownComponentIsNoSuchComponent) {
    registry reg;
    reg.register_component<test::Position>();
    try {
        (void)reg.resolve(parse_query("Position, Nope"));
        FAIL();
    } catch (const ecs_error& e) {
        EXPECT_EQ(e.why(), reason::no_such_component);
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
