#include <string>

#include <gtest/gtest.h>

#include "ecsd/protocol/depth.hpp"
#include "ecsd/protocol/ids.hpp"

namespace p = ecsd::protocol;
using nlohmann::json;

namespace {
std::string nested(std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}
}  // namespace

TEST(Depth, AtLimitPassesOverLimitFails) {
    EXPECT_FALSE(p::exceeds_depth(nested(64)));
    EXPECT_TRUE(p::exceeds_depth(nested(65)));
    EXPECT_TRUE(p::exceeds_depth(std::string(100000, '{')));
    // Texts no longer than the limit are passed without a look; one byte more is looked at.
    EXPECT_FALSE(p::exceeds_depth(std::string(3, '['), 3));
    EXPECT_TRUE(p::exceeds_depth(std::string(4, '['), 3));
    EXPECT_TRUE(p::exceeds_depth(std::string(4, '{'), 3));
    EXPECT_FALSE(p::exceeds_depth("[[[]", 3));
    // Past the counting pass's first block: the brackets far in still count.
    EXPECT_TRUE(p::exceeds_depth(std::string(5000, ' ') + nested(65)));
    EXPECT_FALSE(p::exceeds_depth(std::string(5000, ' ') + nested(64)));
    EXPECT_FALSE(p::exceeds_depth(std::string(9000, '{') + "", 9000));
    EXPECT_TRUE(p::exceeds_depth(std::string(9001, '{'), 9000));
}

TEST(Depth, BracketsInStringsDoNotCount) {
    const std::string s = R"({"a":"[[[[[[[[[[[[\"[[[[[["})";
    EXPECT_FALSE(p::exceeds_depth(s, 1));
    EXPECT_TRUE(p::exceeds_depth(R"({"a":[1]})", 1));
}

TEST(Depth, SiblingsDoNotAccumulate) {
    std::string s = "[";
    for (int i = 0; i < 200; ++i) s += "[],";
    s += "[]]";
    EXPECT_FALSE(p::exceeds_depth(s, 2));
}

TEST(EntityId, AcceptsIntegersBelowTwoToThe53) {
    EXPECT_EQ(p::entity_id_from_json(json::parse("0")), 0U);
    EXPECT_EQ(p::entity_id_from_json(json::parse("42")), 42U);
    EXPECT_EQ(p::entity_id_from_json(json::parse("9007199254740991")), p::max_entity_id);
}

TEST(EntityId, RefusesOutOfRangeAndNonIntegers) {
    EXPECT_FALSE(p::entity_id_from_json(json::parse("9007199254740992")));
    EXPECT_FALSE(p::entity_id_from_json(json::parse("9223372036854775808")));
    EXPECT_FALSE(p::entity_id_from_json(json::parse("18446744073709551615")));
    EXPECT_FALSE(p::entity_id_from_json(json::parse("18446744073709551616")));  // parses as a double
    EXPECT_FALSE(p::entity_id_from_json(json::parse("1.5")));
    EXPECT_FALSE(p::entity_id_from_json(json::parse("1.0")));
    EXPECT_FALSE(p::entity_id_from_json(json::parse("-1")));
    EXPECT_FALSE(p::entity_id_from_json(json::parse("\"1\"")));
    EXPECT_FALSE(p::entity_id_from_json(json(nullptr)));
    EXPECT_THROW({ const json v = json::parse("1e400"); }, json::out_of_range);  // never reaches the helper
}
