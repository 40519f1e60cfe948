// ecsctl watch without sockets: the verb's arguments, the state built from world.watch's answer and its
// notifications, and the frame drawn from that state.

#include "watch.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "errors.hpp"
#include "line_parser.hpp"
#include "shell.hpp"
#include "verb_parser.hpp"

namespace ecsd::cli {
namespace {
using words = std::vector<std::string>;

parsed_words parse(const std::string& line) {
    std::ostringstream help;
    return parse_words(split_words(line), help);
}

request build(const std::string& line, const std::optional<std::string>& world = std::nullopt) {
    const auto p = parse(line);
    EXPECT_NE(p.row, nullptr) << line;
    if (p.row == nullptr) {
        return {};
    }
    auto req = p.row->build(p.input);
    apply_world(req, world);
    return req;
}

// --- arguments -------------------------------------------------------------------------------------------

TEST(watch_args, query_fields_every_and_world) {
    const auto r = build("watch 'Position, Velocity' --fields Position,Velocity --every 5", "arena");
    EXPECT_EQ(r.method, "world.watch");
    EXPECT_EQ(r.params, json::parse(R"({"query":"Position, Velocity","fields":["Position","Velocity"],
                                         "every":5,"world":"arena"})"));
    EXPECT_EQ(build("watch Position").params, json::parse(R"({"query":"Position"})"));
    EXPECT_EQ(build(R"(watch '{"all":["Position"],"none":["Frozen"]}' --fields A --fields B)").params,
              json::parse(R"({"query":{"all":["Position"],"none":["Frozen"]},"fields":["A","B"]})"));
}

TEST(watch_args, count_is_the_clients_own_and_checked) {
    const auto p = parse("watch Position --count 3");
    ASSERT_NE(p.row, nullptr);
    EXPECT_TRUE(p.row->streams);
    EXPECT_EQ(p.input.one("--count"), "3");
    EXPECT_FALSE(p.row->build(p.input).params.contains("count"));  // never sent
    const auto bad = parse("watch Position --count many");
    EXPECT_THROW((void)bad.row->build(bad.input), usage_error);
}

TEST(watch_args, bad_words_are_usage_errors) {
    EXPECT_THROW((void)parse("watch"), usage_error);  // QUERY is required
    const auto zero = parse("watch Position --every 0");
    EXPECT_THROW((void)zero.row->build(zero.input), usage_error);
    const auto negative = parse("watch Position --every -1");
    EXPECT_THROW((void)negative.row->build(negative.input), usage_error);
    const auto bad_json = parse("watch '{\"all\":'");
    EXPECT_THROW((void)bad_json.row->build(bad_json.input), usage_error);
}

TEST(watch_args, the_shell_completes_it_like_other_verbs) {
    EXPECT_EQ(complete({}, "wat", nullptr), (words{"watch"}));
    EXPECT_EQ(complete({"watch", "Position"}, "--", nullptr),
              (words{"--count", "--every", "--fields", "--help"}));
    EXPECT_EQ(complete({"help"}, "wa", nullptr), (words{"watch"}));
    EXPECT_EQ(find_verb("watch")->completes, "components");  // QUERY: component names from the server
}

TEST(watch_args, only_watch_and_monitor_stream) {
    for (const auto& v : verbs()) {
        EXPECT_EQ(v.streams, v.name == "watch" || v.name == "monitor") << v.name;
    }
}

// --- state -----------------------------------------------------------------------------------------------

watch_state started() {
    watch_state s;
    s.start(json::parse(R"({"subscription":7,"tick":10,"entities":[
        {"entity":1,"components":{"Position":{"x":0.0,"y":0.0},"Health":{"hp":10}}},
        {"entity":2,"components":{"Position":{"x":5.0,"y":5.0}}}]})"));
    return s;
}

TEST(watch_state, start_holds_the_answer) {
    const auto s = started();
    EXPECT_EQ(s.subscription(), 7);
    EXPECT_EQ(s.tick(), 10U);
    ASSERT_EQ(s.entities().size(), 2U);
    EXPECT_EQ(s.entities().at(1)["Health"]["hp"], 10);
    EXPECT_EQ(s.notifications(), 0U);
}

TEST(watch_state, changed_merges_only_the_given_components_and_drops_removed_ones) {
    auto s = started();
    s.apply(json::parse(R"({"subscription":7,"tick":11,"entered":[],"left":[],
        "changed":[{"entity":1,"components":{"Position":{"x":1.0,"y":0.0}},"removed":["Health"]}]})"));
    EXPECT_EQ(s.tick(), 11U);
    EXPECT_EQ(s.entities().at(1), json::parse(R"({"Position":{"x":1.0,"y":0.0}})"));
    EXPECT_EQ(s.entities().at(2), json::parse(R"({"Position":{"x":5.0,"y":5.0}})"));
    EXPECT_EQ(s.notifications(), 1U);
}

TEST(watch_state, entered_replaces_and_left_removes) {
    auto s = started();
    s.apply(json::parse(R"({"subscription":7,"tick":12,
        "entered":[{"entity":3,"components":{"Position":{"x":9.0,"y":9.0}}},
                   {"entity":1,"components":{"Position":{"x":2.0,"y":2.0}}}],
        "changed":[],"left":[{"entity":2,"reason":"died"}]})"));
    ASSERT_EQ(s.entities().size(), 2U);
    EXPECT_EQ(s.entities().at(1), json::parse(R"({"Position":{"x":2.0,"y":2.0}})"));  // Health is gone
    EXPECT_TRUE(s.entities().contains(3));
    EXPECT_FALSE(s.entities().contains(2));
}

TEST(watch_state, resync_replaces_everything_and_coalesced_counts_ticks) {
    auto s = started();
    s.apply(json::parse(R"({"subscription":7,"tick":20,"coalesced":4,"entered":[],"changed":[],
        "left":[{"entity":1,"reason":"unmatched"}]})"));
    EXPECT_EQ(s.coalesced(), 4U);
    s.apply(json::parse(R"({"subscription":7,"tick":30,"resync":true,
        "entities":[{"entity":9,"components":{"Position":{"x":1.0,"y":1.0}}}]})"));
    EXPECT_EQ(s.resyncs(), 1U);
    ASSERT_EQ(s.entities().size(), 1U);
    EXPECT_TRUE(s.entities().contains(9));
    EXPECT_EQ(s.tick(), 30U);
    EXPECT_FALSE(s.ended());
}

TEST(watch_state, ended_says_why) {
    auto s = started();
    s.apply(json::parse(R"({"subscription":7,"tick":31,"ended":true,"reason":"world_destroyed"})"));
    EXPECT_TRUE(s.ended());
    EXPECT_EQ(s.end_reason(), "world_destroyed");
    EXPECT_EQ(s.entities().size(), 2U);  // what was last known stays on screen
}

TEST(watch_state, malformed_items_are_skipped) {
    auto s = started();
    s.apply(json::parse(R"({"subscription":7,"tick":32,"entered":[{"entity":-1},{"nope":1},5],
        "changed":[{"entity":"x"}],"left":"all"})"));
    EXPECT_EQ(s.entities().size(), 2U);
    s.apply(json("not an object"));
    EXPECT_EQ(s.notifications(), 1U);
}

// --- frame -----------------------------------------------------------------------------------------------

TEST(watch_frame, compact_values) {
    EXPECT_EQ(compact_value(json::parse(R"({"x":0.6000000000000001,"y":-0.0001})")), "x=0.6 y=0");
    EXPECT_EQ(compact_value(json::parse("12")), "12");
    EXPECT_EQ(compact_value(json::parse("2.5")), "2.5");
    EXPECT_EQ(compact_value(json::parse("{}")), "yes");
    EXPECT_EQ(compact_value(json::parse(R"({"name":"orc","at":{"x":1.0}})")), "name=orc at={x=1}");
    EXPECT_EQ(compact_value(json::parse(R"({"passes":["AI"]})")), "passes=[AI]");
}

TEST(watch_frame, header_columns_and_rows) {
    auto s = started();
    s.apply(json::parse(R"({"subscription":7,"tick":11,"entered":[],"left":[],
        "changed":[{"entity":2,"components":{"Position":{"x":5.5,"y":5.0}}}]})"));
    const auto text = render_watch(s, "arena", {}, {24, 80});
    EXPECT_EQ(text,
              "world arena  tick 11  entities 2  notifications 1  (Ctrl-C to stop)\n"
              "ENTITY  POSITION   HEALTH\n"
              "1       x=0 y=0    hp=10\n"
              "2       x=5.5 y=5\n");
    const auto named = render_watch(s, "arena", {"Health"}, {24, 80});
    EXPECT_NE(named.find("ENTITY  HEALTH\n1       hp=10\n2\n"), std::string::npos) << named;
}

TEST(watch_frame, rows_are_capped_to_the_terminal_and_lines_to_its_width) {
    watch_state s;
    json entities = json::array();
    for (int i = 1; i <= 50; ++i) {
        entities.push_back({{"entity", i}, {"components", {{"Position", {{"x", i}, {"y", 0}}}}}});
    }
    s.start({{"subscription", 1}, {"tick", 0}, {"entities", entities}});
    const auto text = render_watch(s, "default", {}, {10, 30});
    std::vector<std::string> lines;
    std::istringstream in(text);
    for (std::string line; std::getline(in, line);) {
        lines.push_back(line);
        EXPECT_LE(line.size(), 30U) << line;
    }
    ASSERT_EQ(lines.size(), 9U);  // one line short of the screen: it never scrolls
    EXPECT_EQ(lines[1], "ENTITY  POSITION");
    EXPECT_EQ(lines[2], "1       x=1 y=0");
    EXPECT_EQ(lines[7], "6       x=6 y=0");
    EXPECT_EQ(lines[8], "... 44 more (6 of 50 shown)");
}

TEST(watch_frame, ended_shows_the_reason) {
    auto s = started();
    s.apply(json::parse(R"({"subscription":7,"tick":12,"ended":true,"reason":"server_shutdown"})"));
    EXPECT_NE(render_watch(s, "w", {}, {}).find("ended: server_shutdown"), std::string::npos);
}

TEST(monitor, lines_read_like_redis_cli_monitor) {
    const auto line = monitor_line(json::parse(R"({"time":1795468801.25,"connection":5,)"
                                               R"("peer":"127.0.0.1:40122","method":"world.step",)"
                                               R"("params":{"ticks":5}})"));
    EXPECT_EQ(line, R"(1795468801.250000 [5 127.0.0.1:40122] world.step {"ticks":5})");
    EXPECT_EQ(monitor_line(json::parse(R"({"time":1.5,"connection":2,"peer":"p","method":"server.ping"})")),
              "1.500000 [2 p] server.ping");
    EXPECT_EQ(monitor_line(json::parse(R"({"dropped":7})")),
              "(7 requests dropped: this monitor read too slowly)");
}

TEST(monitor, is_a_streaming_verb_with_a_checked_count) {
    const auto* v = find_verb("monitor");
    ASSERT_NE(v, nullptr);
    EXPECT_EQ(v->method, "server.monitor");
    EXPECT_TRUE(v->streams);
    const auto p = parse("monitor --count 3");
    ASSERT_NE(p.row, nullptr);
    EXPECT_EQ(p.row->build(p.input).params, json::object());
    const auto bad = parse("monitor --count x");
    ASSERT_NE(bad.row, nullptr);
    EXPECT_THROW((void)bad.row->build(bad.input), usage_error);
}

}  // namespace
}  // namespace ecsd::cli
