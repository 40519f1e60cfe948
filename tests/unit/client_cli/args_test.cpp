#include "args.hpp"

#include <gtest/gtest.h>

#include "errors.hpp"

namespace ecsd::cli {
namespace {

json components(std::vector<std::string> words) {
    return parse_components(words);
}

TEST(parse_components, name_equals_json) {
    EXPECT_EQ(components({R"(Position={"x":0,"y":10})", "Health=100"}),
              json::parse(R"({"Position":{"x":0,"y":10},"Health":100})"));
}

TEST(parse_components, bare_name_sends_empty_object_for_defaults) {
    EXPECT_EQ(components({"RigidBody", "Frozen"}), json::parse(R"({"RigidBody":{},"Frozen":{}})"));
}

TEST(parse_components, value_may_contain_equals_and_blanks) {
    EXPECT_EQ(components({R"(Label= {"text":"a=b"} )"}), json::parse(R"({"Label":{"text":"a=b"}})"));
}

TEST(parse_components, none_is_an_empty_object) {
    EXPECT_EQ(components({}), json::object());
}

TEST(parse_components, rejects_bad_json_missing_value_empty_name_and_duplicates) {
    EXPECT_THROW((void)components({"Position={x:1}"}), usage_error);
    EXPECT_THROW((void)components({"Name=Bob"}), usage_error);
    EXPECT_THROW((void)components({"Position="}), usage_error);
    EXPECT_THROW((void)components({"={}"}), usage_error);
    EXPECT_THROW((void)components({"A", "A={}"}), usage_error);
}

TEST(parse_component_names, bare_names_only) {
    const std::vector<std::string> ok{"Velocity", "Frozen"};
    EXPECT_EQ(parse_component_names(ok), json::parse(R"(["Velocity","Frozen"])"));
    const std::vector<std::string> bad{"Velocity={}"};
    EXPECT_THROW((void)parse_component_names(bad), usage_error);
}

TEST(parse_entity, accepts_integers_below_2_pow_53) {
    EXPECT_EQ(parse_entity("0"), 0U);
    EXPECT_EQ(parse_entity("4294967296"), 4294967296U);
    EXPECT_EQ(parse_entity("9007199254740991"), 9007199254740991U);
}

TEST(parse_entity, rejects_everything_else) {
    for (const char* bad :
         {"", "-1", "1.5", "abc", "12abc", "9007199254740992", "18446744073709551616", " 1"}) {
        EXPECT_THROW((void)parse_entity(bad), usage_error) << bad;
    }
}

TEST(parse_count, names_the_argument_in_the_error) {
    EXPECT_EQ(parse_count("60", "TICKS"), 60U);
    try {
        (void)parse_count("x", "TICKS");
        FAIL() << "no exception";
    } catch (const usage_error& e) {
        EXPECT_NE(std::string(e.what()).find("TICKS"), std::string::npos);
    }
}

TEST(parse_json, any_json_text) {
    EXPECT_EQ(parse_json("[1,2]", "X"), json::parse("[1,2]"));
    EXPECT_EQ(parse_json("\"s\"", "X"), "s");
    EXPECT_THROW((void)parse_json("{", "X"), usage_error);
    try {
        (void)parse_json(R"({"hp":1e400})", "Health");
        FAIL() << "1e400 accepted";
    } catch (const usage_error& e) {
        EXPECT_STREQ(e.what(), "Health: 1e400 is out of range for JSON doubles (at most about 1.8e308)");
    }
}

TEST(split_list, commas_and_repeats) {
    const std::vector<std::string> words{"Position, Velocity", "Health,", ""};
    EXPECT_EQ(split_list(words), json::parse(R"(["Position","Velocity","Health"])"));
}

}  // namespace
}  // namespace ecsd::cli
