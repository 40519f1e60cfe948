#include "shell.hpp"

#include <stdexcept>

#include <gtest/gtest.h>

namespace ecsd::cli {
namespace {

using words = std::vector<std::string>;

/// @brief A server that knows a few names, counting how often it is asked for the worlds.
struct fake_lists {
    words worlds{"default", "arena"};
    int world_calls = 0;

    completion_source source(std::chrono::steady_clock::duration max_age = std::chrono::hours(1)) {
        return completion_source(
            [this](const std::string& method, const json&) -> json {
                if (method == "world.list_components") {
                    return json::parse(R"({"components":[{"name":"Position"},{"name":"Velocity"},
                        {"name":"Frozen"},{"name":"Health"},{"name":"Player"}]})");
                }
                if (method == "world.list") {
                    ++world_calls;
                    return {{"worlds", worlds}};
                }
                if (method == "world.list_prefabs") {
                    return json::parse(R"({"prefabs":[{"name":"tree","components":{}}]})");
                }
                if (method == "world.list_systems") {
                    return json::parse(R"({"systems":[{"name":"movement"},{"name":"gravity"}]})");
                }
                throw std::runtime_error("no such method");
            },
            max_age);
    }
};

TEST(complete, first_word_is_a_verb_group_or_local_command) {
    EXPECT_EQ(complete({}, "sp", nullptr), (words{"spawn", "spell", "spells"}));
    EXPECT_EQ(complete({}, "wor", nullptr), (words{"world", "worlds"}));
    EXPECT_EQ(complete({}, "ex", nullptr), (words{"exit", "expect", "export"}));
    EXPECT_EQ(complete({}, "desc", nullptr), (words{"describe"}));
}

TEST(complete, group_members_and_options) {
    EXPECT_EQ(complete({"world"}, "", nullptr), (words{"create", "destroy", "info", "move"}));
    EXPECT_EQ(complete({"query", "Position"}, "--l", nullptr), (words{"--limit"}));
    EXPECT_EQ(complete({"help"}, "desp", nullptr), (words{"despawn"}));
}

TEST(complete_line, component_names_inside_query_text) {
    fake_lists server;
    auto source = server.source();
    const auto after_comma = complete_line("query 'Position, Vel", &source);
    EXPECT_EQ(after_comma.candidates, (words{"Velocity"}));
    EXPECT_FALSE(after_comma.append_space);  // the quote is still open: the query goes on
    EXPECT_EQ(complete_line("query 'Pos", &source).candidates, (words{"'Position"}));
    EXPECT_EQ(complete_line("query 'Position, !Fr", &source).candidates, (words{"!Frozen"}));
    EXPECT_EQ(complete_line("query 'Position,?He", &source).candidates, (words{"'Position,?Health"}));
    EXPECT_EQ(complete_line("watch \"Position, Velocity, !Pl", &source).candidates, (words{"!Player"}));
    EXPECT_EQ(complete_line(R"(query '{"all":["Pos)", &source).candidates, (words{R"('{"all":["Position)"}));
    EXPECT_EQ(complete_line("query 'near(0, 0, 5), (Po", &source).candidates, (words{"(Position"}));
    const auto unquoted = complete_line("query Position|Vel", &source);
    EXPECT_EQ(unquoted.candidates, (words{"Position|Velocity"}));
    EXPECT_TRUE(unquoted.append_space);
    EXPECT_TRUE(complete_line("query 'Position'", &source).candidates.empty());  // after the closing quote
}

TEST(complete_line, name_before_json_gets_no_blank) {
    fake_lists server;
    auto source = server.source();
    const auto spawn = complete_line("spawn Pos", &source);
    EXPECT_EQ(spawn.candidates, (words{"Position"}));
    EXPECT_FALSE(spawn.append_space);  // Pos<Tab>= gives Position=
    EXPECT_FALSE(complete_line("insert 7 Vel", &source).append_space);
    EXPECT_EQ(complete_line("prefab define tree Fr", &source).candidates, (words{"Frozen"}));
    EXPECT_TRUE(complete_line("spawn Position={\"x", &source).candidates.empty());  // inside the JSON
    EXPECT_TRUE(complete_line("spawn Position='{\"x\": 1, ", &source).candidates.empty());
    const auto get = complete_line("get 7 Pos", &source);  // bare names: a blank follows
    EXPECT_EQ(get.candidates, (words{"Position"}));
    EXPECT_TRUE(get.append_space);
}

TEST(complete_line, each_argument_completes_its_own_kind) {
    fake_lists server;
    auto source = server.source();
    EXPECT_TRUE(complete_line("insert Pos", &source).candidates.empty());  // the ID comes first
    EXPECT_EQ(complete_line("prefab spawn t", &source).candidates, (words{"tree"}));
    EXPECT_EQ(complete_line("prefab spawn tree --count 3 Vel", &source).candidates, (words{"Velocity"}));
    EXPECT_EQ(complete_line("enable-system mo", &source).candidates, (words{"movement"}));
    EXPECT_EQ(complete_line("world destroy ar", &source).candidates, (words{"arena"}));
    EXPECT_TRUE(complete_line("world create ar", &source).candidates.empty());  // a new name
    EXPECT_EQ(complete_line("query Position --fields Position,Vel", &source).candidates,
              (words{"Position,Velocity"}));
    EXPECT_EQ(complete_line("$e = spawn Health Pl", &source).candidates, (words{"Player"}));
    EXPECT_EQ(complete_line("repeat 3 spawn Pl", &source).candidates, (words{"Player"}));
    EXPECT_EQ(complete_line("use a", &source).candidates, (words{"arena"}));
}

TEST(completion_source, world_names_are_asked_again_so_new_worlds_complete) {
    fake_lists server;
    auto fresh = server.source(std::chrono::seconds(0));
    EXPECT_EQ(complete_line("use ", &fresh).candidates, (words{"arena", "default"}));
    server.worlds.emplace_back("lab");  // `world create lab` meanwhile
    EXPECT_EQ(complete_line("use ", &fresh).candidates, (words{"arena", "default", "lab"}));
    EXPECT_EQ(server.world_calls, 2);

    auto kept = server.source(std::chrono::hours(1));
    (void)complete_line("use ", &kept);
    (void)complete_line("world info ", &kept);
    EXPECT_EQ(server.world_calls, 3);  // within max_age one answer serves both
    server.worlds.emplace_back("box");
    kept.forget();  // what the shell does after each command
    EXPECT_EQ(complete_line("use b", &kept).candidates, (words{"box"}));
    EXPECT_EQ(server.world_calls, 4);
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
