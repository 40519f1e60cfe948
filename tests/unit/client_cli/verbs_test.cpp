#include "verbs.hpp"

#include <sstream>

#include <gtest/gtest.h>

#include "errors.hpp"
#include "line_parser.hpp"
#include "lua_verbs.hpp"
#include "output.hpp"
#include "verb_parser.hpp"

namespace ecsd::cli {
namespace {
using words = std::vector<std::string>;

/// @brief The request a script line builds, as {method, params}.
request build(const std::string& line, const std::optional<std::string>& world = std::nullopt) {
    std::ostringstream help;
    const auto parsed = parse_words(split_words(line), help);
    EXPECT_NE(parsed.row, nullptr) << line;
    if (parsed.row == nullptr) {
        return {};
    }
    auto req = parsed.row->build(parsed.input);
    apply_world(req, world);
    return req;
}

// ecsctl system define / spell define name the file, as a compiler does, where the server names
// the script.
TEST(verbs, lua_define_errors_name_the_file_line_and_column) {
    EXPECT_EQ(located_in_file("chase: syntax error at line 3, column 17: unexpected symbol near '='", "chase",
                              "ai/chase.lua"),
              "ai/chase.lua:3:17: syntax error: unexpected symbol near '='");
    EXPECT_EQ(
        located_in_file("chase: syntax error at line 3, column 17: syntax error near '=='", "chase", "c.lua"),
        "c.lua:3:17: syntax error near '=='");
    EXPECT_EQ(located_in_file("chase: chase:2: attempt to index a nil value (local 'x')", "chase", "c.lua"),
              "c.lua:2: attempt to index a nil value (local 'x')");
    EXPECT_EQ(located_in_file("chase: the chunk must return a function, got nil", "chase", "c.lua"),
              "c.lua: the chunk must return a function, got nil");
    EXPECT_EQ(located_in_file("too many scripts in this world (64)", "chase", "c.lua"),
              "c.lua: too many scripts in this world (64)");
    // A name that merely starts the same is not the script's.
    EXPECT_EQ(located_in_file("chase: chaser:2: x", "chase", "c.lua"), "c.lua: chaser:2: x");
}

TEST(verbs, spawn_sends_components_with_defaults_for_bare_names) {
    const auto r = build(R"(spawn Position='{"x":0,"y":10}' RigidBody Collider='{"radius":0.5}')");
    EXPECT_EQ(r.method, "world.spawn_entity");
    EXPECT_EQ(r.params, json::parse(R"({"components":{"Position":{"x":0,"y":10},"RigidBody":{},
                                         "Collider":{"radius":0.5}}})"));
}

TEST(verbs, spawn_count_uses_spawn_entities) {
    const auto r = build("spawn --count 2 Position Frozen");
    EXPECT_EQ(r.method, "world.spawn_entities");
    EXPECT_EQ(r.params,
              json::parse(R"({"entities":[{"Position":{},"Frozen":{}},{"Position":{},"Frozen":{}}]})"));
    std::ostringstream help;
    const auto p = parse_words(split_words("spawn --count 0 Position"), help);
    EXPECT_THROW((void)p.row->build(p.input), usage_error);
}

TEST(verbs, entity_verbs) {
    EXPECT_EQ(build("get 4294967296").params, json::parse(R"({"entity":4294967296})"));
    EXPECT_EQ(build("get 7 Position Velocity").params,
              json::parse(R"({"entity":7,"components":["Position","Velocity"]})"));
    EXPECT_EQ(build("insert 7 Frozen Velocity='{\"x\":1}'").params,
              json::parse(R"({"entity":7,"components":{"Frozen":{},"Velocity":{"x":1}}})"));
    EXPECT_EQ(build("remove 7 Velocity Frozen").params,
              json::parse(R"({"entity":7,"components":["Velocity","Frozen"]})"));
    EXPECT_EQ(build("despawn 7").method, "world.despawn_entity");
    const auto many = build("despawn 7 8");
    EXPECT_EQ(many.method, "world.despawn_entities");
    EXPECT_EQ(many.params["entities"], (json{7, 8}));
    EXPECT_EQ(build("mutate 7 Position y 2.5").params,
              json::parse(R"({"entity":7,"component":"Position","path":"y","value":2.5})"));
}

TEST(verbs, query_text_or_json_with_fields_and_paging) {
    const auto r =
        build("query 'Position, Velocity, !Frozen' --fields Position --fields Velocity --limit 20");
    EXPECT_EQ(r.method, "world.query");
    EXPECT_EQ(r.params,
              json::parse(R"({"query":"Position, Velocity, !Frozen","fields":["Position","Velocity"],
                                         "limit":20})"));
    EXPECT_EQ(build("query --fields Position --limit 2 Position").params,
              json::parse(R"({"query":"Position","fields":["Position"],"limit":2})"));
    EXPECT_EQ(build(R"(query '{"all":["Position"]}' --offset 5)").params,
              json::parse(R"({"query":{"all":["Position"]},"offset":5})"));
}

TEST(verbs, world_group_and_world_option) {
    EXPECT_EQ(build("world create arena --tick-hz 30 --paused").params,
              json::parse(R"({"world":"arena","tick_hz":30,"paused":true})"));
    EXPECT_EQ(build("world create big --threads 2").params, json::parse(R"({"world":"big","threads":2})"));
    EXPECT_EQ(build("world destroy arena", "other").params, json::parse(R"({"world":"arena"})"));
    EXPECT_EQ(build("step 60", "arena").params, json::parse(R"({"ticks":60,"world":"arena"})"));
    EXPECT_EQ(build("step").params, json::parse(R"({"ticks":1})"));
    EXPECT_EQ(build("worlds", "arena").params, json::object());  // world.list takes no world
    EXPECT_EQ(build("ping", "arena").params, json::object());    // server.* neither
}

TEST(verbs, systems_spells_prefabs) {
    EXPECT_EQ(build("system-entities physics --limit 3").params,
              json::parse(R"({"system":"physics","limit":3})"));
    EXPECT_EQ(build("cast 1 kill_all_monsters").params,
              json::parse(R"({"caster":1,"spell":"kill_all_monsters"})"));
    EXPECT_EQ(build("cast 1 freeze 2").params, json::parse(R"({"caster":1,"spell":"freeze","target":2})"));
    EXPECT_EQ(build("prefab define tree Static Position='{\"x\":1}'").params,
              json::parse(R"({"name":"tree","components":{"Static":{},"Position":{"x":1}}})"));
    EXPECT_EQ(build("cast 1 heal --amount 25").params,
              json::parse(R"({"caster":1,"spell":"heal","amount":25})"));
    EXPECT_EQ(build("register Mana points=0 regen=0.5").params,
              json::parse(R"({"name":"Mana","fields":{"points":0,"regen":0.5}})"));
    EXPECT_EQ(build(R"(register Vector2 '{"x":0,"y":0}')").params,
              json::parse(R"({"name":"Vector2","fields":{"x":0,"y":0}})"));
    EXPECT_EQ(build("register Marker").params, json::parse(R"({"name":"Marker","fields":{}})"));
    EXPECT_EQ(build("prefab list").method, "world.list_prefabs");
    EXPECT_EQ(build("save", "arena").params, json::parse(R"({"world":"arena"})"));
    EXPECT_EQ(build("load").method, "world.load");
    EXPECT_EQ(build("prefab spawn tree --count 3").params, json::parse(R"({"name":"tree","count":3})"));
}

TEST(verbs, call_is_raw) {
    const auto r = build(R"(call world.query '{"query":"Position"}')");
    EXPECT_EQ(r.method, "world.query");
    EXPECT_EQ(r.params, json::parse(R"({"query":"Position"})"));
    EXPECT_TRUE(build("call server.ping").params.is_null());
    EXPECT_EQ(build("call world.info", "arena").params, json::parse(R"({"world":"arena"})"));
}

TEST(verbs, an_entity_is_an_id_or_a_name) {
    std::ostringstream help;
    const auto request_of = [&](const char* line) {
        const auto p = parse_words(split_words(line), help);
        return p.row->build(p.input);
    };
    EXPECT_EQ(request_of("get hero").params["entity"], "hero");
    EXPECT_EQ(request_of("get 4294967296").params["entity"], 4294967296ULL);
    EXPECT_EQ(request_of("cast hero freeze orc").params["target"], "orc");
    EXPECT_EQ(request_of("despawn 4294967296 orc").params["entities"], json({4294967296ULL, "orc"}));
    EXPECT_EQ(request_of("spawn --name hero Player").params["components"]["Name"], json({{"name", "hero"}}));
    EXPECT_THROW((void)request_of("spawn --name twin --count 2 Player"), usage_error) << "names are unique";
}

TEST(verbs, usage_errors) {
    std::ostringstream help;
    for (const char* bad : {"frobnicate", "get", "get -1", "get 12abc", "get 1 Position={}", "remove 1",
                            "step -1", "step x", "query", "world", "world create", "call", "call m '{'",
                            "call m 5", "spawn Position={", "cast 1", "get 1 --nope"}) {
        EXPECT_THROW(
            {
                const auto p = parse_words(split_words(bad), help);
                ASSERT_NE(p.row, nullptr);
                (void)p.row->build(p.input);
            },
            usage_error)
            << bad;
    }
}

TEST(verbs, help_prints_examples_and_method) {
    std::ostringstream help;
    const auto p = parse_words({"spawn", "--help"}, help);
    EXPECT_EQ(p.row, nullptr);
    EXPECT_NE(help.str().find("world.spawn_entity"), std::string::npos);
    EXPECT_NE(help.str().find("Examples:"), std::string::npos);
    EXPECT_NE(help_text("world create").find("--tick-hz"), std::string::npos);
    EXPECT_TRUE(help_text("nope").empty());
}

TEST(verbs, query_help_explains_the_whole_query_language) {
    const std::string help = help_text("query");
    for (const char* part : {"Health.hp < 50", "AI.kind == \"boss\"", "?Health", "optional", "near(x, y, r)",
                             "near(NAME, r)", "died", "!Frozen", "Health|Shield", "changed(NAME)"}) {
        EXPECT_NE(help.find(part), std::string::npos) << part << " missing from:\n" << help;
    }
    // The object form's keys, every one the server takes (server/world/world_json.cpp).
    const auto object = help.find("object form");
    ASSERT_NE(object, std::string::npos) << help;
    for (const char* key :
         {"all", "any", "none", "optional", "added", "changed", "removed", "died", "near", "where"}) {
        EXPECT_NE(help.find(key, object), std::string::npos) << key;
    }
    EXPECT_LT(help.find("object form"), help.find("Calls world.query.")) << help;
    EXPECT_NE(help_text("watch").find("Health.hp < 50"), std::string::npos);
}

TEST(verbs, components_table_view_shortens_field_lists) {
    const auto* v = find_verb("components");
    ASSERT_NE(v, nullptr);
    ASSERT_TRUE(static_cast<bool>(v->table_view));
    const auto shown = v->table_view(json::parse(R"({"components":[{"name":"Position","fields":[
        {"name":"x","type":"number","default":0.0},{"name":"y","type":"number","default":0.0}]},
        {"name":"Frozen","fields":[]}]})"));
    EXPECT_EQ(shown["components"][0]["fields"], "x:number=0.0, y:number=0.0");
    EXPECT_EQ(shown["components"][1]["fields"], "");
}

TEST(verbs, describe_calls_describe_entity) {
    const auto r = build("describe 4294967296", "arena");
    EXPECT_EQ(r.method, "world.describe_entity");
    EXPECT_EQ(r.params, json::parse(R"({"entity":4294967296,"world":"arena"})"));
}

TEST(verbs, describe_table_lists_components_then_systems_then_changes) {
    const auto* v = find_verb("describe");
    ASSERT_NE(v, nullptr);
    ASSERT_TRUE(static_cast<bool>(v->table_view));
    // As the server sends it: members sorted.
    const auto result =
        json::parse(R"({"changes":{"added":["Frozen"],"changed":["Position","Velocity"],"removed":[]},
        "components":{"Frozen":{},"Position":{"x":1.0000000000000013,"y":0.0},"Velocity":{"x":1.0,"y":0.0}},
        "entity":4294967296,"systems":["movement","collision_detection"]})");
    EXPECT_EQ(render_human(v->table_view(result)),
              "COMPONENT  VALUE\n"
              "Position   {\"x\":1,\"y\":0}\n"
              "Velocity   {\"x\":1,\"y\":0}\n"
              "Frozen     {}\n"
              "entity: 4294967296\n"
              "systems: movement, collision_detection\n"
              "added this tick: Frozen\n"
              "changed this tick: Position, Velocity\n");
    const auto quiet = json::parse(R"({"changes":{"added":[],"changed":[],"removed":[]},"components":{},
        "entity":7,"systems":[]})");
    EXPECT_EQ(render_human(v->table_view(quiet)),
              "(no components)\n"
              "entity: 7\n"
              "systems: none\n"
              "changed this tick: nothing\n");
}

TEST(verbs, requested_columns_are_the_fields_in_the_order_given) {
    EXPECT_EQ(requested_columns(build("query 'Position, Velocity' --fields Velocity --fields Position")),
              (std::vector<std::string>{"Velocity", "Position"}));
    EXPECT_EQ(requested_columns(build(R"(call world.query '{"query":"Health","fields":["Health","AI"]}')")),
              (std::vector<std::string>{"Health", "AI"}));
    EXPECT_TRUE(requested_columns(build("query Position")).empty());
    EXPECT_TRUE(requested_columns(build("call server.ping")).empty());  // no params at all
}

TEST(verbs, unknown_verbs_get_one_message_with_a_suggestion) {
    EXPECT_EQ(unknown_verb(words{"spwan", "Position"}),
              "unknown verb 'spwan'; did you mean 'spawn'? (help lists them)");
    EXPECT_EQ(unknown_verb(words{"frobnicate"}), "unknown verb 'frobnicate' (help lists them)");
    EXPECT_EQ(unknown_verb(words{"world", "creat", "arena"}),
              "unknown verb 'world creat'; did you mean 'world create'? (help world lists them)");
    EXPECT_EQ(unknown_verb(words{"prefab", "zzz"}), "unknown verb 'prefab zzz' (help prefab lists them)");
    EXPECT_EQ(unknown_verb(words{"spawn", "x"}), std::nullopt);
    EXPECT_EQ(unknown_verb(words{"world", "create"}), std::nullopt);
    EXPECT_EQ(unknown_verb(words{"world"}), std::nullopt);  // a bare group: CLI11 says a verb is missing
    EXPECT_EQ(unknown_verb(words{"--json"}), std::nullopt);
    std::ostringstream help;
    try {
        (void)parse_words({"spwan"}, help);
        FAIL() << "no exception";
    } catch (const usage_error& e) {
        EXPECT_EQ(std::string(e.what()), "unknown verb 'spwan'; did you mean 'spawn'? (help lists them)");
    }
}

TEST(verbs, a_group_help_shows_its_own_verbs_and_examples) {
    const auto world = help_text("world");
    EXPECT_NE(world.find("create"), std::string::npos) << world;
    EXPECT_NE(world.find("ecsctl world create arena"), std::string::npos) << world;
    EXPECT_EQ(world.find("ecsctl prefab"), std::string::npos) << world;
    const auto prefab = help_text("prefab");
    EXPECT_NE(prefab.find("ecsctl prefab spawn tree"), std::string::npos) << prefab;
    EXPECT_EQ(prefab.find("ecsctl world"), std::string::npos) << prefab;
}

TEST(verbs, completed_arguments_name_a_list) {
    for (const auto& v : verbs()) {
        for (const auto& arg : v.args) {
            if (arg.completion != word_kind::none) {
                EXPECT_FALSE(arg.list.empty() && v.completes.empty()) << v.name << " " << arg.name;
            }
        }
        for (const auto& o : v.options) {
            if (o.completion != word_kind::none) {
                EXPECT_FALSE(v.completes.empty()) << v.name << " " << o.name;
            }
        }
    }
}

TEST(verbs, every_verb_has_a_summary_an_example_and_a_method) {
    for (const auto& v : verbs()) {
        EXPECT_FALSE(v.summary.empty()) << v.name;
        EXPECT_FALSE(v.examples.empty()) << v.name;
        EXPECT_TRUE(!v.method.empty() || static_cast<bool>(v.method_for)) << v.name;  // `call`: its METHOD
        EXPECT_EQ(find_verb(v.name), &v);
    }
}

}  // namespace
}  // namespace ecsd::cli
