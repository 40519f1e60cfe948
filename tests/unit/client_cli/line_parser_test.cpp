#include "line_parser.hpp"

#include <gtest/gtest.h>

#include "errors.hpp"

namespace ecsd::cli {
namespace {

using words = std::vector<std::string>;

TEST(split_words, blanks_separate_words) {
    EXPECT_EQ(split_words("  get   42\tPosition "), (words{"get", "42", "Position"}));
    EXPECT_TRUE(split_words("").empty());
    EXPECT_TRUE(split_words("   \t").empty());
}

TEST(split_words, single_quotes_keep_everything) {
    EXPECT_EQ(split_words(R"(spawn Position='{"x": 0, "y": 10}' Frozen)"),
              (words{"spawn", R"(Position={"x": 0, "y": 10})", "Frozen"}));
    EXPECT_EQ(split_words(R"(echo 'a\b # c')"), (words{"echo", R"(a\b # c)"}));
}

TEST(split_words, double_quotes_honour_escaped_quote_and_backslash) {
    EXPECT_EQ(split_words(R"(echo "say \"hi\" \\ \n")"), (words{"echo", R"(say "hi" \ \n)"}));
}

TEST(split_words, backslash_escapes_outside_quotes) {
    EXPECT_EQ(split_words(R"(echo a\ b \#x)"), (words{"echo", "a b", "#x"}));
}

TEST(split_words, hash_at_word_start_is_a_comment) {
    EXPECT_TRUE(split_words("# a comment").empty());
    EXPECT_EQ(split_words("step 5 # five ticks"), (words{"step", "5"}));
    EXPECT_EQ(split_words("echo a#b '#c'"), (words{"echo", "a#b", "#c"}));
}

TEST(split_words, empty_quotes_make_an_empty_word) {
    EXPECT_EQ(split_words("echo '' x"), (words{"echo", "", "x"}));
}

TEST(split_words, unterminated_quotes_are_errors) {
    EXPECT_THROW((void)split_words("echo 'abc"), usage_error);
    EXPECT_THROW((void)split_words("echo \"abc"), usage_error);
    EXPECT_THROW((void)split_words("echo abc\\"), usage_error);
}

TEST(parse_line, assignment) {
    const auto p = parse_line(R"($e = spawn Position='{"x":1}')");
    ASSERT_TRUE(p.assign_to.has_value());
    EXPECT_EQ(*p.assign_to, "e");
    EXPECT_EQ(p.words, (words{"spawn", R"(Position={"x":1})"}));
}

TEST(parse_line, plain_command_and_comment) {
    EXPECT_FALSE(parse_line("get $e").assign_to.has_value());
    EXPECT_EQ(parse_line("get $e").words, (words{"get", "$e"}));
    EXPECT_TRUE(parse_line("  # nothing").words.empty());
}

TEST(parse_line, malformed_assignments) {
    EXPECT_THROW((void)parse_line("$1x = ping"), usage_error);
    EXPECT_THROW((void)parse_line("$e ="), usage_error);
    EXPECT_THROW((void)parse_line("$ = ping"), usage_error);
}

TEST(substitute, plain_and_braced_references) {
    const variables vars{{"e", 4294967296}, {"name", "tree"}, {"world", "arena"}};
    EXPECT_EQ(substitute("$e", vars), "4294967296");
    EXPECT_EQ(substitute("${name}s", vars), "trees");
    EXPECT_EQ(substitute("$name-$world", vars), "tree-arena");
    EXPECT_EQ(substitute(R"(Target={"entity":$e})", vars), R"(Target={"entity":4294967296})");
}

TEST(substitute, json_values_and_paths) {
    const variables vars{{"r", json::parse(R"({"entities":[7,8],"tick":3,"meta":{"ok":true}})")}};
    EXPECT_EQ(substitute("${r.entities.1}", vars), "8");
    EXPECT_EQ(substitute("${r.entities}", vars), "[7,8]");
    EXPECT_EQ(substitute("${r.meta}", vars), R"({"ok":true})");
    EXPECT_THROW((void)substitute("${r.nothing}", vars), usage_error);
    EXPECT_THROW((void)substitute("${r.entities.2}", vars), usage_error);
}

TEST(substitute, literal_dollars) {
    const variables vars;
    EXPECT_EQ(substitute("$$e", vars), "$e");
    EXPECT_EQ(substitute("cost: 5$", vars), "cost: 5$");
    EXPECT_EQ(substitute("$5", vars), "$5");
}

TEST(substitute, undefined_variable_is_an_error) {
    const variables vars;
    EXPECT_THROW((void)substitute("get $nope", vars), usage_error);
    EXPECT_THROW((void)substitute("${nope", vars), usage_error);
}

TEST(value_to_store, entity_id_or_whole_result) {
    EXPECT_EQ(value_to_store(json::parse(R"({"entity":42})")), 42);
    EXPECT_EQ(value_to_store(json::parse(R"({"entities":[1,2]})")), json::parse(R"({"entities":[1,2]})"));
    EXPECT_EQ(value_to_store("pong"), "pong");
    EXPECT_EQ(value_to_store(json::parse(R"({"entity":"x"})")), json::parse(R"({"entity":"x"})"));
}

}  // namespace
}  // namespace ecsd::cli
