// `expect` and `repeat` parsing: pure functions, no server.
#include "expect.hpp"

#include <gtest/gtest.h>

#include "errors.hpp"
#include "line_parser.hpp"

using namespace ecsd::cli;

TEST(Expect, ComparesNumbersAsNumbersAndTextsAsTexts) {
    EXPECT_EQ(failed_expectation({"3", "==", "3.0"}), std::nullopt);
    EXPECT_EQ(failed_expectation({"2", "<", "10"}), std::nullopt)
        << "10 is not before 2 as text, but as a number it is larger";
    EXPECT_EQ(failed_expectation({"abc", "<", "abd"}), std::nullopt);
    EXPECT_EQ(failed_expectation({"hero", "==", "hero"}), std::nullopt);
    EXPECT_EQ(failed_expectation({"5", ">=", "5"}), std::nullopt);
    EXPECT_EQ(failed_expectation({R"({"a":1})", "==", R"({"a":1})"}), std::nullopt);
    EXPECT_EQ(failed_expectation({"3", "==", "0"}), "expected 3 == 0");
    EXPECT_EQ(failed_expectation({"hero", "!=", "hero"}), "expected hero != hero");
    EXPECT_EQ(failed_expectation({"4", "<=", "3"}), "expected 4 <= 3");
}

TEST(Expect, OneValueMustBeTrue) {
    EXPECT_EQ(failed_expectation({"true"}), std::nullopt);
    EXPECT_EQ(failed_expectation({"7"}), std::nullopt);
    EXPECT_EQ(failed_expectation({"word"}), std::nullopt);
    for (const std::string no : {"false", "null", "0", "[]", "{}", R"("")"})
        EXPECT_NE(failed_expectation({no}), std::nullopt) << no;
}

TEST(Expect, MalformedChecksAreUsageErrors) {
    EXPECT_THROW((void)failed_expectation({}), usage_error);
    EXPECT_THROW((void)failed_expectation({"1", "=", "1"}), usage_error);
    EXPECT_THROW((void)failed_expectation({"1", "<", "abc"}), usage_error) << "ordering a number and a text";
    EXPECT_THROW((void)failed_expectation({"1", "<"}), usage_error);
}

TEST(Repeat, TheRepeatedTextIsTheRawRestOfTheLine) {
    EXPECT_EQ(words_after("repeat 3 echo 'a  b' $i", 2), "echo 'a  b' $i");
    EXPECT_EQ(words_after("  repeat\t20   spawn", 2), "spawn");
    EXPECT_EQ(words_after("repeat 3", 2), "");
}
