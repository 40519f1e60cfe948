#include "output.hpp"

#include <sstream>

#include <gtest/gtest.h>

namespace ecsd::cli {
namespace {

TEST(format_table, pads_columns_and_uppercases_headers) {
    const table t{{"name", "phase"}, {{"physics", "update"}, {"gravity_long_name", "pre"}}};
    EXPECT_EQ(format_table(t),
              "NAME               PHASE\n"
              "physics            update\n"
              "gravity_long_name  pre\n");
}

TEST(format_table, trims_trailing_blanks_and_handles_short_rows) {
    const table t{{"a", "b"}, {{"x"}, {"", "y"}}};
    EXPECT_EQ(format_table(t), "A  B\nx\n   y\n");
}

TEST(format_table, counts_utf8_code_points_not_bytes) {
    const table t{{"k", "v"}, {{"héllo", "1"}, {"abc", "2"}}};
    EXPECT_EQ(format_table(t), "K      V\nhéllo  1\nabc    2\n");
    EXPECT_EQ(display_width("héllo"), 5U);
}

TEST(render, json_is_one_compact_line) {
    EXPECT_EQ(render(json::parse(R"({"entity": 1, "x": [1, 2]})"), output_format::json_lines),
              "{\"entity\":1,\"x\":[1,2]}\n");
    EXPECT_EQ(render("pong", output_format::json_lines), "\"pong\"\n");
    EXPECT_EQ(render(nullptr, output_format::json_lines), "null\n");
}

TEST(render, json_survives_invalid_utf8) {
    EXPECT_NO_THROW((void)render(json(std::string("\xff")), output_format::json_lines));
}

TEST(render_human, scalars) {
    EXPECT_EQ(render_human("pong"), "pong\n");
    EXPECT_EQ(render_human(60), "60\n");
    EXPECT_EQ(render_human(nullptr), "ok\n");
    EXPECT_EQ(render_human(json::array()), "(empty)\n");
}

TEST(render_human, object_as_key_value_rows) {
    EXPECT_EQ(render_human(json::parse(R"({"limits":{"max":1,"deep":{"a":1}},"uptime_s":3,"version":"0.1.0",
                                           "worlds":["default","arena"],"zone":"eu"})")),
              "KEY          VALUE\n"
              "version      0.1.0\n"
              "uptime_s     3\n"
              "worlds       default, arena\n"
              "limits.deep  {\"a\":1}\n"
              "limits.max   1\n"
              "zone         eu\n");
}

TEST(render_human, array_of_objects_as_table_with_union_of_keys) {
    EXPECT_EQ(render_human(json::parse(R"([{"name":"a","n":1},{"name":"bb","extra":true}])")),
              "NAME  EXTRA  N\n"
              "a            1\n"
              "bb    true\n");
}

TEST(render_human, identifying_columns_come_first) {
    EXPECT_EQ(render_human(json::parse(R"([{"enabled":true,"name":"movement"}])")),
              "NAME      ENABLED\n"
              "movement  true\n");
    EXPECT_EQ(render_human(json::parse(R"([{"components":{"Position":1},"entity":7}])")),
              "ENTITY  POSITION\n"
              "7       1\n");
}

TEST(render_human, list_inside_object_with_scalar_footer) {
    const auto result = json::parse(R"({"entities":[{"entity":1,"components":{"Position":{"x":0}}},
                                                    {"entity":22,"components":{"Velocity":{"x":1}}}],
                                       "total":2})");
    EXPECT_EQ(render_human(result),
              "ENTITY  POSITION  VELOCITY\n"
              "1       {\"x\":0}\n"
              "22                {\"x\":1}\n"
              "total: 2\n");
}

TEST(render_human, components_object_one_row_per_component_in_natural_order) {
    const auto result =
        json::parse(R"({"entity":5,"components":{"Frozen":{},"Mana":{"points":2},"Position":{"x":1}}})");
    EXPECT_EQ(render_human(result),
              "COMPONENT  VALUE\n"
              "Position   {\"x\":1}\n"
              "Frozen     {}\n"
              "Mana       {\"points\":2}\n"
              "entity: 5\n");
}

TEST(render_human, systems_columns_in_natural_order_not_alphabetical) {
    // The server's objects arrive with their members sorted.
    const auto systems =
        json::parse(R"({"systems":[{"enabled":true,"last_ms":0.5,"members":3,"name":"movement",
        "order":0,"p50_ms":0.25,"p99_ms":1.0,"phase":"update","runs":7,"signature":"Position, Velocity"}]})");
    const auto text = render_human(systems);
    EXPECT_EQ(text.substr(0, text.find('\n')),
              "ORDER  NAME      PHASE   ENABLED  MEMBERS  SIGNATURE           RUNS  LAST_MS  P50_MS  P99_MS");
    EXPECT_EQ(render_human(json::parse(R"([{"description":"heals","name":"heal"}])")),
              "NAME  DESCRIPTION\n"
              "heal  heals\n");
}

TEST(render_human, unknown_members_follow_known_ones_alphabetically) {
    EXPECT_EQ(render_human(json::parse(R"([{"zeta":1,"entity":2,"alpha":3,"name":"n"}])")),
              "ENTITY  NAME  ALPHA  ZETA\n"
              "2       n     3      1\n");
}

TEST(render_human, component_columns_in_natural_order_or_as_requested) {
    const auto rows = json::parse(R"([{"components":{"Frozen":{},"Mana":1,"Position":2,"Velocity":3,"Aura":4},
                                       "entity":1}])");
    EXPECT_EQ(render_human(rows),
              "ENTITY  POSITION  VELOCITY  FROZEN  AURA  MANA\n"
              "1       2         3         {}      4     1\n");
    table_options asked;
    asked.component_order = {"Mana", "Velocity"};  // query --fields Mana,Velocity
    EXPECT_EQ(render_human(rows, asked),
              "ENTITY  MANA  VELOCITY  POSITION  FROZEN  AURA\n"
              "1       1     3         2         {}      4\n");
}

TEST(render_human, floats_at_six_significant_digits_also_inside_json_cells) {
    const auto rows = json::parse(R"([{"name":"a","p50_ms":1.0000000000000013,
                                       "gravity":{"x":0.0,"y":-9.810000000000002,"tiny":0.000123456789}}])");
    EXPECT_EQ(render_human(rows),
              "NAME  P50_MS  GRAVITY\n"
              "a     1       {\"x\":0,\"y\":-9.81,\"tiny\":0.000123457}\n");
    table_options exact;
    exact.precision = 0;
    EXPECT_NE(render_human(rows, exact).find("1.0000000000000013"), std::string::npos);
    EXPECT_NE(render_human(rows, exact).find("-9.810000000000002"), std::string::npos);
    table_options three;
    three.precision = 3;
    EXPECT_EQ(render_human(json(3.14159), three), "3.14\n");
    EXPECT_EQ(render_human(json(123456789)), "123456789\n");  // integers are never rounded
}

TEST(render, json_and_yaml_stay_exact) {
    const auto value = json::parse(R"({"x":1.0000000000000013})");
    EXPECT_EQ(render(value, output_format::json_lines), "{\"x\":1.0000000000000013}\n");
    EXPECT_EQ(render(value, output_format::yaml), "---\nx: 1.0000000000000013\n");
    EXPECT_EQ(render(value, output_format::table), "KEY  VALUE\nx    1\n");
}

TEST(float_text, significant_digits_or_exact) {
    EXPECT_EQ(float_text(1.0000000000000013, 6), "1");
    EXPECT_EQ(float_text(2.5, 6), "2.5");
    EXPECT_EQ(float_text(1234567.0, 6), "1.23457e+06");
    EXPECT_EQ(float_text(-0.0, 6), "0");
    EXPECT_EQ(float_text(1.0000000000000013, 0), "1.0000000000000013");
    EXPECT_EQ(float_text(10.0, 0), "10.0");
    // Small numbers are written out at the table's precision, not with an exponent.
    EXPECT_EQ(float_text(2e-05, 6), "0.00002");
    EXPECT_EQ(float_text(-1.23456789e-7, 6), "-0.000000123457");
    EXPECT_EQ(float_text(0.000123456789, 6), "0.000123457");
    EXPECT_EQ(float_text(2e-05, 0), "2e-05");  // exact: as JSON writes it
    EXPECT_EQ(cell_text(json::parse(R"({"x":2e-05})"), 6), R"({"x":0.00002})");
}

TEST(render_human, long_cells_are_cut_unless_wide) {
    const std::string long_text(60, 'x');
    const auto rows = json::array({{{"name", "a"}, {"description", long_text}}});
    EXPECT_EQ(render_human(rows),
              "NAME  DESCRIPTION\n"
              "a     " +
                  std::string(39, 'x') + "…\n");
    table_options wide;
    wide.max_cell_width = 0;
    EXPECT_EQ(render_human(rows, wide),
              "NAME  DESCRIPTION\n"
              "a     " +
                  long_text + "\n");
    // KEY/VALUE rows too; a footer line is never cut.
    const auto object = json::object({{"config", long_text}});
    EXPECT_NE(render_human(object).find(std::string(39, 'x') + "…\n"), std::string::npos);
    const auto listed = json::object({{"entities", json::array({{{"entity", 1}}})}, {"note", long_text}});
    EXPECT_NE(render_human(listed).find("note: " + long_text + "\n"), std::string::npos);
}

TEST(render_human, a_wide_terminal_shows_long_cells_whole) {
    const std::string long_text(60, 'x');
    const auto rows = json::array({{{"name", "a"}, {"description", long_text}}});
    table_options terminal;
    terminal.max_width = 200;  // a wide terminal: no cut at 40 columns
    EXPECT_EQ(render_human(rows, terminal),
              "NAME  DESCRIPTION\n"
              "a     " +
                  long_text + "\n");
    const auto object = json::object({{"config", long_text}});
    EXPECT_NE(render_human(object, terminal).find(long_text + "\n"), std::string::npos);
    terminal.max_width = 30;  // a narrow one still cuts, to its width
    for (const auto& line : {render_human(rows, terminal)}) {
        EXPECT_EQ(line.find(long_text), std::string::npos) << line;
    }
}

TEST(fit_width, cuts_whole_code_points) {
    EXPECT_EQ(fit_width("héllo wörld", 5), "héll…");
    EXPECT_EQ(display_width(fit_width("héllo wörld", 5)), 5U);
    EXPECT_EQ(fit_width("héllo", 5), "héllo");
    EXPECT_EQ(fit_width("héllo wörld", 0), "héllo wörld");
}

TEST(to_yaml, block_style_with_nested_objects_and_lists) {
    const auto value = json::parse(R"({"entities":[{"entity":1,"components":{"Position":{"x":0.5,"y":-2}}},
                                                   {"entity":2,"components":{}}],
                                       "tags":["a",[1,2]],"empty":[],"none":null,"ok":true})");
    EXPECT_EQ(to_yaml(value),
              "---\n"
              "entities:\n"
              "  - entity: 1\n"
              "    components:\n"
              "      Position:\n"
              "        x: 0.5\n"
              "        \"y\": -2\n"  // a plain y is true to YAML 1.1 readers
              "  - entity: 2\n"
              "    components: {}\n"
              "tags:\n"
              "  - a\n"
              "  - - 1\n"
              "    - 2\n"
              "empty: []\n"
              "none: null\n"
              "ok: true\n");
    EXPECT_EQ(to_yaml("pong"), "---\npong\n");
    EXPECT_EQ(to_yaml(json::array()), "---\n[]\n");
    EXPECT_EQ(to_yaml(1e300), "---\n1.0e+300\n");  // YAML 1.1 wants the dot
}

TEST(to_yaml, quotes_strings_that_would_read_as_something_else) {
    for (const char* text : {"",        "yes",  "No",    "off",         "null",
                             "true",    "1.5",  "42",    "-x",          " lead",
                             "trail ",  "a: b", "key:",  "#c",          "Position, Velocity",
                             "!Frozen", "*a",   "&a",    "{}",          "'q'",
                             "@x",      "~",    "0.1.0", "multi\nline", "tab\there",
                             ".inf"}) {
        const std::string yaml = to_yaml(json(text));
        EXPECT_EQ(yaml.substr(4, 1), "\"") << text << " -> " << yaml;
    }
    EXPECT_EQ(to_yaml(json("multi\nline")), "---\n\"multi\\nline\"\n");
    EXPECT_EQ(to_yaml(json(R"(say "hi")")),
              "---\n"
              R"("say \"hi\"")"
              "\n");
    for (const char* text : {"Position", "kill_all_monsters", "/tmp/data", "a:b", "héllo wörld", "x-y z"}) {
        EXPECT_EQ(to_yaml(json(text)), "---\n" + std::string(text) + "\n") << text;
    }
    EXPECT_EQ(to_yaml(json::object({{"yes", 1}})), "---\n\"yes\": 1\n");  // keys too
}

TEST(render_human, array_of_scalars_one_per_line) {
    EXPECT_EQ(render_human(json::parse(R"(["default","arena"])")), "default\narena\n");
    EXPECT_EQ(render_human(json::parse(R"({"worlds":["default","arena"]})")), "default\narena\n");
}

}  // namespace
TEST(fit_table, shrinks_the_widest_cells_first_to_the_terminal_width) {
    table t{{"id", "name", "notes"},
            {{"1", "short", std::string(30, 'n')}, {"2", std::string(12, 'm'), "x"}}};
    fit_table(t, 30);
    const std::string text = format_table(t);
    std::istringstream lines(text);
    for (std::string line; std::getline(lines, line);) {
        EXPECT_LE(display_width(line), 30U) << text;
    }
    EXPECT_EQ(t.rows[0][2].substr(t.rows[0][2].size() - std::string("…").size()), "…") << text;
    EXPECT_EQ(t.rows[1][1], std::string(12, 'm')) << "the narrower column keeps its text while it can";
    table whole{{"a"}, {{"abc"}}};
    fit_table(whole, 0);
    EXPECT_EQ(whole.rows[0][0], "abc");
    fit_table(whole, 80);
    EXPECT_EQ(whole.rows[0][0], "abc");
}

TEST(fit_table, render_human_fits_tables_to_max_width_but_not_when_0) {
    const auto rows = json::parse(R"([{"name":"a","description":")" + std::string(100, 'd') + R"("}])");
    table_options narrow;
    narrow.max_cell_width = 0;
    narrow.max_width = 40;
    std::istringstream lines(render_human(rows, narrow));
    for (std::string line; std::getline(lines, line);) {
        EXPECT_LE(display_width(line), 40U) << line;
    }
    table_options wide;
    wide.max_cell_width = 0;
    EXPECT_NE(render_human(rows, wide).find(std::string(100, 'd')), std::string::npos);
}

TEST(render_info, version_first_bytes_after_connections_and_one_row_per_method) {
    const auto info = json::parse(R"({"version":"0.1.0","uptime_s":3.25,"auth_required":false,
        "connections":{"open":1,"total":4,"max":1024},"bytes":{"in":120,"out":3400},"requests_total":9,
        "methods":{"server.ping":{"calls":3,"errors":0,"total_ms":0.02,"p50_us":4.1,"p99_us":9.5,
                                  "max_us":12.0},
                   "world.step":{"calls":2,"errors":1,"total_ms":30.0,"p50_us":1500.0,"p99_us":2400000.0,
                                 "max_us":2500000.0}},
        "worlds":["default"],"limits":{"max_batch":100},"config":{"port":7777}})");
    const std::string text = render_info(info);
    std::istringstream in(text);
    std::vector<std::string> lines;
    for (std::string line; std::getline(in, line);) lines.push_back(line);
    ASSERT_GE(lines.size(), 4U) << text;
    EXPECT_EQ(lines[0].substr(0, 3), "KEY");
    EXPECT_EQ(lines[1].substr(0, 7), "version") << text;
    const auto at = [&](const std::string& key) { return text.find("\n" + key + " "); };
    EXPECT_LT(at("connections.open"), at("connections.total")) << text;
    EXPECT_LT(at("connections.max"), at("bytes.in")) << text;
    EXPECT_LT(at("bytes.in"), at("bytes.out")) << text;
    EXPECT_LT(at("bytes.out"), at("requests_total")) << text;
    EXPECT_EQ(text.find("total_ms"), std::string::npos) << "no JSON cell of the methods: " << text;
    EXPECT_NE(text.find("METHOD       CALLS  ERRORS  P50    P99    MAX"), std::string::npos) << text;
    EXPECT_NE(text.find("server.ping  3      0       4.1us  9.5us  12us"), std::string::npos) << text;
    EXPECT_NE(text.find("world.step   2      1       1.5ms  2.40s  2.50s"), std::string::npos) << text;
}

TEST(render_human, a_table_too_wide_cuts_text_columns_and_never_a_number) {
    const auto rows = json::array(
        {{{"name", "collision_detection"}, {"p99_ms", 0.123456}}, {{"name", "movement"}, {"p99_ms", 12.5}}});
    table_options narrow;
    narrow.max_width = 16;  // NAME needs 19, P99_MS 8
    const auto text = render_human(rows, narrow);
    EXPECT_NE(text.find("0.123456"), std::string::npos) << text;
    EXPECT_NE(text.find("12.5"), std::string::npos) << text;
    EXPECT_NE(text.find("colli…  0.123456"), std::string::npos) << text;  // NAME gives up the room
}

}  // namespace ecsd::cli
