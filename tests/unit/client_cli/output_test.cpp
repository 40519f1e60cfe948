#include "output.hpp"

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
    EXPECT_EQ(render_human(json::parse(R"({"version":"0.1.0","uptime":3,"limits":{"max":1,"deep":{"a":1}},
                                           "worlds":["default","arena"]})")),
              "KEY          VALUE\n"
              "version      0.1.0\n"
              "uptime       3\n"
              "limits.max   1\n"
              "limits.deep  {\"a\":1}\n"
              "worlds       default, arena\n");
}

TEST(render_human, array_of_objects_as_table_with_union_of_keys) {
    EXPECT_EQ(render_human(json::parse(R"([{"name":"a","n":1},{"name":"bb","extra":true}])")),
              "NAME  N  EXTRA\n"
              "a     1\n"
              "bb       true\n");
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

TEST(render_human, components_object_one_row_per_component) {
    const auto result = json::parse(R"({"entity":5,"components":{"Frozen":{},"Position":{"x":1}}})");
    EXPECT_EQ(render_human(result),
              "COMPONENT  VALUE\n"
              "Frozen     {}\n"
              "Position   {\"x\":1}\n"
              "entity: 5\n");
}

TEST(render_human, array_of_scalars_one_per_line) {
    EXPECT_EQ(render_human(json::parse(R"(["default","arena"])")), "default\narena\n");
    EXPECT_EQ(render_human(json::parse(R"({"worlds":["default","arena"]})")), "default\narena\n");
}

}  // namespace
}  // namespace ecsd::cli
