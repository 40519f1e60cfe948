#include "shell.hpp"

#include <gtest/gtest.h>

namespace ecsd::cli {
namespace {

using words = std::vector<std::string>;

TEST(complete, first_word_is_a_verb_group_or_local_command) {
    EXPECT_EQ(complete({}, "sp", nullptr), (words{"spawn", "spells"}));
    EXPECT_EQ(complete({}, "wor", nullptr), (words{"world", "worlds"}));
    EXPECT_EQ(complete({}, "ex", nullptr), (words{"exit"}));
}

TEST(complete, group_members_and_options) {
    EXPECT_EQ(complete({"world"}, "", nullptr), (words{"create", "destroy", "info"}));
    EXPECT_EQ(complete({"query", "Position"}, "--l", nullptr), (words{"--limit"}));
    EXPECT_EQ(complete({"help"}, "desp", nullptr), (words{"despawn"}));
}

TEST(names_in, listings_of_various_shapes) {
    EXPECT_EQ(names_in(json::parse(R"(["a","b"])")), (words{"a", "b"}));
    EXPECT_EQ(names_in(json::parse(R"([{"name":"physics"},{"name":"gravity"}])")),
              (words{"physics", "gravity"}));
    EXPECT_EQ(names_in(json::parse(R"({"components":[{"name":"Position","schema":{}}]})")),
              (words{"Position"}));
    EXPECT_EQ(names_in(json::parse(R"({"Position":{"x":"f32"},"Frozen":{}})")),
              (words{"Position", "Frozen"}));
}

}  // namespace
}  // namespace ecsd::cli
