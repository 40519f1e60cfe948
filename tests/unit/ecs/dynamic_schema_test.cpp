#include "ecs/dynamic_schema.hpp"

#include <gtest/gtest.h>

using namespace ecsd::ecs;

TEST(DynamicSchema, InfersTypesFromDefaultsAndTakesTheLongForm) {
    const auto s = dynamic_schema::parse("Stats", {{"speed", 1.5},
                                                   {"alive", true},
                                                   {"label", "x"},
                                                   {"path", json::array({1, 2})},
                                                   {"level", {{"type", "integer"}, {"default", 3}}},
                                                   {"owner", {{"type", "entity"}}}});
    const auto v = s.make_value(json::object());
    EXPECT_EQ(v["speed"], 1.5);
    EXPECT_EQ(v["level"], 3);
    EXPECT_EQ(v["owner"], 0);
    EXPECT_EQ(v["path"], json::array({1.0, 2.0}));
}

TEST(DynamicSchema, WrongFieldOrTypeIsInvalidValue) {
    const auto s = dynamic_schema::parse("Stats", {{"level", {{"type", "integer"}}}, {"label", "x"}});
    for (const json& bad : {json{{"level", 1.5}}, json{{"level", "high"}}, json{{"nope", 1}},
                            json{{"label", 3}}, json::array(), json{{"level", 1e300}}}) {
        try {
            (void)s.make_value(bad);
            FAIL() << bad.dump();
        } catch (const ecs_error& e) {
            EXPECT_EQ(e.why(), reason::invalid_value);
        }
    }
}

TEST(DynamicSchema, AnOutOfRangeNumberIsToldTheAllowedRange) {
    const auto s = dynamic_schema::parse(
        "Stats", {{"level", {{"type", "integer"}}}, {"owner", {{"type", "entity"}}}, {"speed", 1.0}});
    const auto message = [&](const json& value) {
        try {
            (void)s.make_value(value);
        } catch (const ecs_error& e) {
            return std::string(e.what());
        }
        return std::string("accepted");
    };
    EXPECT_EQ(message({{"level", 1e300}}),
              "Stats.level: expected an integer from -2^53 to 2^53, got a number "
              "outside that range");
    EXPECT_EQ(message({{"level", 1.5}}), "Stats.level: expected an integer from -2^53 to 2^53, got 1.5");
    EXPECT_EQ(message({{"owner", 1e300}}),
              "Stats.owner: expected an integer from 0 to 2^53 - 1, got a number outside that range");
    EXPECT_EQ(message({{"speed", 1e300}}),
              "Stats.speed: expected a number between -1e15 and 1e15, got a number outside that range");
    EXPECT_EQ(message({{"speed", 1e16}}), "Stats.speed: expected a number between -1e15 and 1e15, got 1e+16");
}

TEST(DynamicSchema, BadDefinitionIsRejected) {
    EXPECT_THROW((void)dynamic_schema::parse("X", {{"f", {{"type", "quaternion"}}}}), ecs_error);
    EXPECT_THROW((void)dynamic_schema::parse("X", {{"f", nullptr}}), ecs_error);
    EXPECT_THROW((void)dynamic_schema::parse("X", json::array()), ecs_error);
}

TEST(NumberFields, HugeValuesAreRefusedSoTheSimulationCannotOverflow) {
    const auto s = dynamic_schema::parse("Body", {{"mass", 1.0}});
    EXPECT_NO_THROW((void)s.make_value({{"mass", 1e15}}));
    EXPECT_THROW((void)s.make_value({{"mass", 1e16}}), ecs_error);
    EXPECT_THROW((void)s.make_value({{"mass", -1e300}}), ecs_error);
}
