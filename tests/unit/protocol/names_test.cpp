// World names become file names in --data-dir: the one rule every request and path goes through.
#include "ecsd/protocol/names.hpp"

#include <string>

#include <gtest/gtest.h>

namespace ecsd::protocol {
namespace {

TEST(WorldNames, LettersDigitsUnderscoreDotAndDashUpTo64) {
    for (const char* ok : {"default", "arena-2", "zone_7.north", "A", "a.b.c", "x-"})
        EXPECT_FALSE(world_name_problem(ok)) << ok;
    EXPECT_FALSE(world_name_problem(std::string(64, 'w')));
}

TEST(WorldNames, NothingThatCouldLeaveTheDataFolderOrHideInIt) {
    for (const char* bad :
         {"../victim", "/abs/path", "a/b", "a\\b", ".hidden", "..", ".", "a b", "é", "a:b", "*"})
        EXPECT_TRUE(world_name_problem(bad)) << bad;
    EXPECT_TRUE(world_name_problem(std::string("a\0b", 3))) << "a NUL byte";
    EXPECT_TRUE(world_name_problem(""));
    EXPECT_TRUE(world_name_problem(std::string(65, 'w')));
    EXPECT_NE(world_name_problem("a/b")->find("'/'"), std::string::npos) << "the message names the character";
    EXPECT_NE(world_name_problem(std::string("a\0b", 3))->find("byte 0"), std::string::npos);
}

}  // namespace
}  // namespace ecsd::protocol
