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

TEST(evaluate, numbers_variables_and_the_four_operations) {
    const variables vars{{"i", 3}, {"r", json::parse(R"({"total":10,"pos":{"x":1.5}})")}, {"s", "abc"}};
    EXPECT_TRUE(is_expression(parse_line("$x = $i * 0.8").words));
    EXPECT_FALSE(is_expression(parse_line("$x = spawn Position").words));
    EXPECT_DOUBLE_EQ(evaluate(parse_line("$x = $i * 0.8").words, vars).get<double>(), 2.4000000000000004);
    EXPECT_EQ(evaluate(parse_line("$x = $i * 2 + 1").words, vars), 7);  // integers stay exact
    EXPECT_TRUE(evaluate(parse_line("$x = $i * 2 + 1").words, vars).is_number_integer());
    EXPECT_EQ(evaluate(parse_line("$x = ($i + 1) * 2").words, vars), 8);       // parentheses first
    EXPECT_EQ(evaluate(parse_line("$x = 1 + 2 * 3 - 4 / 2").words, vars), 5);  // * and / before + and -
    EXPECT_EQ(evaluate(parse_line("$x = -$i").words, vars), -3);
    EXPECT_EQ(evaluate(parse_line("$x = 7 / 2").words, vars), 3.5);
    EXPECT_EQ(evaluate(parse_line("$x = 0.5 * 4").words, vars), 2);  // a whole result is an integer
    EXPECT_TRUE(evaluate(parse_line("$x = 0.5 * 4").words, vars).is_number_integer());
    EXPECT_EQ(evaluate(parse_line("$x = ${r.total}/4").words, vars), 2.5);
    EXPECT_EQ(evaluate(parse_line("$x = ${r.pos.x}*2").words, vars), 3);
    EXPECT_EQ(evaluate(parse_line("$x = 1e3").words, vars), 1000);
    EXPECT_EQ(evaluate(parse_line("$x = 12").words, vars), 12);
    EXPECT_EQ(evaluate(parse_line("$x = $s").words, vars), "abc");  // a copy, whatever it holds
    EXPECT_EQ(evaluate(parse_line("$x = $r").words, vars), vars.at("r"));
}

TEST(evaluate, mistakes_are_usage_errors_that_say_what_is_wrong) {
    const variables vars{{"i", 3}, {"s", "abc"}};
    for (const char* line : {"$x = 1 / 0", "$x = $s * 2", "$x = $nope + 1", "$x = (1 + 2", "$x = 1 +",
                             "$x = 2 3", "$x = $i * abc"}) {
        EXPECT_THROW((void)evaluate(parse_line(line).words, vars), usage_error) << line;
    }
    try {
        (void)evaluate(parse_line("$x = $s * 2").words, vars);
    } catch (const usage_error& e) {
        EXPECT_NE(std::string(e.what()).find("$s holds 'abc', not a number"), std::string::npos) << e.what();
    }
}

}  // namespace
}  // namespace ecsd::cli
