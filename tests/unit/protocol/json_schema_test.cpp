#include "ecsd/protocol/json_schema.hpp"

#include <gtest/gtest.h>

#include "ecsd/protocol/ids.hpp"

namespace p = ecsd::protocol;
using nlohmann::json;

namespace {

const p::json_schema step_schema(json{
    {"type", "object"},
    {"properties",
     {{"world", {{"type", "string"}, {"minLength", 1}, {"maxLength", 4}}},
      {"ticks", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100}}},
      {"entity", p::entity_id_schema()},
      {"mode", {{"enum", {"a", "b"}}}},
      {"tags", {{"type", "array"}, {"items", {{"type", "string"}}}, {"maxItems", 2}}}}},
    {"required", {"ticks"}},
    {"additionalProperties", false}});

}  // namespace

TEST(JsonSchema, AcceptsConformingValues) {
    EXPECT_FALSE(step_schema.validate(json{{"ticks", 3}}));
    EXPECT_FALSE(step_schema.validate(json{{"ticks", 3}, {"world", "w"}, {"entity", 5}, {"tags", {"x"}}}));
    EXPECT_FALSE(p::json_schema().validate(json{{"anything", 1}}));
}

TEST(JsonSchema, ReportsLocationOfFirstProblem) {
    EXPECT_EQ(*step_schema.validate(json::object()), "params: missing required member 'ticks'");
    EXPECT_EQ(*step_schema.validate(json{{"ticks", "3"}}), "params.ticks: expected integer, got string");
    EXPECT_EQ(*step_schema.validate(json{{"ticks", 1.5}}),
              "params.ticks: expected an integer from 1 to 100, got 1.5");
    // A number an integer field cannot hold says the range, not how the parser stored it.
    EXPECT_EQ(*step_schema.validate(json{{"ticks", 1e300}}),
              "params.ticks: expected an integer from 1 to 100, got a number outside that range");
    EXPECT_EQ(
        *step_schema.validate(json{{"ticks", 1}, {"entity", 1e300}}),
        "params.entity: expected an integer from 0 to 9007199254740991, got a number outside that range");
    EXPECT_EQ(*step_schema.validate(json{{"ticks", 0}}), "params.ticks: must be >= 1");
    // An unsigned value past INT64_MAX is not "below 0" (nlohmann compares it as negative).
    EXPECT_EQ(
        *step_schema.validate(json{{"ticks", 1}, {"entity", std::uint64_t{1} << 63}}),
        "params.entity: 9223372036854775808 is out of range: expected an integer from 0 to 9007199254740991");
    EXPECT_EQ(
        *step_schema.validate(json{{"ticks", 1}, {"entity", std::uint64_t{1} << 53}}),
        "params.entity: 9007199254740992 is out of range: expected an integer from 0 to 9007199254740991");
    EXPECT_EQ(*step_schema.validate(json{{"ticks", std::uint64_t{1} << 63}}),
              "params.ticks: 9223372036854775808 is out of range: expected an integer from 1 to 100");
    EXPECT_EQ(*step_schema.validate(json{{"ticks", 1}, {"x", 1}}), "params.x: unknown member");
    EXPECT_EQ(*step_schema.validate(json{{"ticks", 1}, {"tags", {"a", 2}}}),
              "params.tags[1]: expected string, got number");
    EXPECT_TRUE(step_schema.validate(json{{"ticks", 1}, {"tags", {"a", "b", "c"}}}));
    EXPECT_TRUE(step_schema.validate(json{{"ticks", 1}, {"mode", "c"}}));
    EXPECT_TRUE(step_schema.validate(json{{"ticks", 1}, {"world", ""}}));
    EXPECT_TRUE(step_schema.validate(json{{"ticks", 1}, {"world", "abcde"}}));
    EXPECT_FALSE(step_schema.validate(json{{"ticks", 1}, {"world", "\xc3\xa9\xc3\xa9"}}));  // 2 code points
    EXPECT_TRUE(step_schema.validate(json::array()));
}

TEST(JsonSchema, EntityIdRangeIsExact) {
    EXPECT_FALSE(step_schema.validate(json{{"ticks", 1}, {"entity", p::max_entity_id}}));
    EXPECT_TRUE(step_schema.validate(json{{"ticks", 1}, {"entity", p::max_entity_id + 1}}));
    EXPECT_TRUE(step_schema.validate(json{{"ticks", 1}, {"entity", json::parse("9223372036854775808")}}));
    EXPECT_TRUE(step_schema.validate(json{{"ticks", 1}, {"entity", -1}}));
}

TEST(JsonSchema, AnyOfAndOneOf) {
    p::json_schema s(json{{"anyOf", {{{"type", "string"}}, {{"type", "object"}}}}});
    EXPECT_FALSE(s.validate("Position, Velocity"));
    EXPECT_FALSE(s.validate(json::object()));
    EXPECT_TRUE(s.validate(1));
    p::json_schema one(json{{"oneOf", {{{"type", "integer"}}, {{"type", "number"}}}}});
    EXPECT_TRUE(one.validate(1));  // matches both
    EXPECT_FALSE(one.validate(1.5));
}

TEST(JsonSchema, UnknownKeywordFailsAtCompileTime) {
    EXPECT_THROW(p::json_schema(json{{"typo", 1}}), std::invalid_argument);
    EXPECT_THROW(p::json_schema(json{{"type", "strnig"}}), std::invalid_argument);
    EXPECT_NO_THROW(p::json_schema(json{{"description", "x"}, {"x-flags", 1}}));
}
