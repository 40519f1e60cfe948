// ecsctl against a real ecsd on a free port: every verb, both output formats, exit codes, script mode
// with variables and a failing line, and the interactive shell on a pseudo-terminal.

#include <filesystem>
#include <fstream>
#include <memory>
#include <set>
#include <sstream>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ecsd_server.hpp"
#include "process.hpp"

namespace ecsd::test {
namespace {

using json = nlohmann::json;

/// @brief A real ecsd (tests/support) whose log is dropped.
std::unique_ptr<ecsd_server> start_ecsd(std::vector<std::string> args = {}) {
    server_options options;
    options.args = std::move(args);
    options.log_path = "/dev/null";
    return std::make_unique<ecsd_server>(options);
}

class ecsctl_server : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        try {
            ecsd_ = start_ecsd();
        } catch (const std::exception& e) {
            start_error_ = e.what();
        }
    }
    static void TearDownTestSuite() { ecsd_.reset(); }

    void SetUp() override { ASSERT_NE(ecsd_, nullptr) << "ecsd did not start: " << start_error_; }

    /// @brief Runs ecsctl against the suite's server; stdin is a pipe, so output defaults to JSON.
    static run_result ecsctl(std::vector<std::string> args, const std::string& input = {},
                             const std::map<std::string, std::string>& env = {}) {
        args.insert(args.begin(), {ecsctl_path(), "--port", std::to_string(ecsd_->port())});
        return run(args, input, env);
    }

    /// @brief Runs a verb that must succeed and returns its one JSON result.
    static json ok(const std::vector<std::string>& args) {
        const auto r = ecsctl(args);
        EXPECT_EQ(r.exit_code, 0) << args[0] << ": " << r.err;
        const auto values = json_lines(r.out);
        EXPECT_EQ(values.size(), 1U) << r.out;
        return values.empty() ? json() : values.front();
    }

    static std::unique_ptr<ecsd_server> ecsd_;  // NOLINT(readability-identifier-naming)
    static std::string start_error_;            // NOLINT(readability-identifier-naming)
};

std::unique_ptr<ecsd_server> ecsctl_server::ecsd_;
std::string ecsctl_server::start_error_;

// --- server.* and output formats ------------------------------------------------------------------------

TEST_F(ecsctl_server, ping_prints_pong_as_json_or_text_and_exits_0) {
    EXPECT_EQ(ok({"ping"}), "pong");
    const auto table = ecsctl({"-o", "table", "ping"});
    EXPECT_EQ(table.exit_code, 0);
    EXPECT_EQ(table.out, "pong\n");
    const auto flag_after_verb = ecsctl({"ping", "--json"});
    EXPECT_EQ(flag_after_verb.out, "\"pong\"\n");
}

TEST_F(ecsctl_server, info_as_json_object_and_as_key_value_table) {
    const auto info = ok({"info"});
    ASSERT_TRUE(info.is_object());
    EXPECT_TRUE(info.contains("version"));
    const auto table = ecsctl({"info", "--output", "table"});
    EXPECT_EQ(table.exit_code, 0);
    EXPECT_TRUE(table.out.starts_with("KEY")) << table.out;
    EXPECT_TRUE(contains(table.out, "version")) << table.out;
}

TEST_F(ecsctl_server, methods_lists_the_discovered_methods) {
    const auto rows = ok({"methods"});
    ASSERT_TRUE(rows.is_array());
    std::set<std::string> names;
    for (const auto& row : rows) {
        names.insert(row.value("name", ""));
    }
    EXPECT_TRUE(names.contains("server.ping"));
    EXPECT_TRUE(names.contains("rpc.discover"));
    const auto table = ecsctl({"-o", "table", "methods"});
    EXPECT_TRUE(table.out.starts_with("NAME")) << table.out;
    EXPECT_TRUE(contains(table.out, "server.ping"));
}

TEST_F(ecsctl_server, call_any_method_raw) {
    EXPECT_EQ(ok({"call", "server.ping"}), "pong");
    EXPECT_EQ(ok({"call", "server.ping", "{}"}), "pong");
    const auto doc = ok({"call", "rpc.discover"});
    EXPECT_TRUE(doc.contains("openrpc"));
}

TEST_F(ecsctl_server, server_error_exits_1_with_reason_on_stderr) {
    const auto r = ecsctl({"call", "no.such.method"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(contains(r.err, "method_not_found")) << r.err;
}

TEST(ecsctl_auth, token_from_flag_or_environment) {
    const auto server = start_ecsd({"--token", "s3cret"});
    const std::string port = std::to_string(server->port());
    const auto without = run({ecsctl_path(), "--port", port, "ping"});
    EXPECT_EQ(without.exit_code, 1);
    EXPECT_TRUE(contains(without.err, "unauthorized")) << without.err;
    const auto wrong = run({ecsctl_path(), "--port", port, "--token", "nope", "ping"});
    EXPECT_EQ(wrong.exit_code, 1);
    EXPECT_TRUE(contains(wrong.err, "unauthorized")) << wrong.err;
    const auto with_flag = run({ecsctl_path(), "--port", port, "--token", "s3cret", "ping"});
    EXPECT_EQ(with_flag.exit_code, 0) << with_flag.err;
    EXPECT_EQ(with_flag.out, "\"pong\"\n");
    const auto with_env = run({ecsctl_path(), "--port", port, "ping"}, {}, {{"ECSD_TOKEN", "s3cret"}});
    EXPECT_EQ(with_env.exit_code, 0) << with_env.err;
}

// --- script mode ----------------------------------------------------------------------------------------

TEST_F(ecsctl_server, script_on_stdin_prints_one_json_value_per_result) {
    const auto r = ecsctl({}, "# a comment\n\nping\n  call server.ping   # trailing comment\n");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "\"pong\"\n\"pong\"\n");
}

TEST_F(ecsctl_server, script_stops_at_first_failing_line_with_its_number) {
    const auto r = ecsctl({}, "ping\n# two\ncall no.such.method\nping\n");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.out, "\"pong\"\n");
    EXPECT_TRUE(contains(r.err, "<stdin>:3: method_not_found")) << r.err;
}

TEST_F(ecsctl_server, script_builds_an_arena_with_a_repeat_block_and_checks_it_with_expect) {
    const std::string script = R"(world create loop_arena --paused --bounds '{"bottom":0}'
use loop_arena
$hero = spawn Position='{"x":0,"y":1}' Player Health
repeat 20 {
  spawn Position='{"x":$i,"y":10}' RigidBody Collider='{"radius":0.4}' Health AI
}
$before = query 'Health, AI' --limit 1
expect ${before.total} == 20
step 120
$low = query 'AI' --limit 100
expect ${low.entities.0.components.Position.y} < 10
expect ${low.entities.19.components.Position.y} < 10
repeat 3 expect $i < 3
cast $hero kill_all_monsters
step 1
$after = query 'Health, AI' --limit 1
expect ${after.total} == 0
assert ${after.total} != 1
world destroy loop_arena
)";
    const auto r = ecsctl({}, script);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
}

TEST_F(ecsctl_server, a_failed_expect_stops_the_script_with_file_line_and_exit_1) {
    const auto r = ecsctl({}, "$p = ping\nrepeat 2 {\n  expect $i < 1\n}\necho never\n");
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_EQ(r.err, "<stdin>:3: expectation failed: expected 1 < 1\n");
    EXPECT_FALSE(contains(r.out, "never")) << r.out;
    const auto unclosed = ecsctl({}, "repeat 2 {\nping\n");
    EXPECT_EQ(unclosed.exit_code, 2);
    EXPECT_TRUE(contains(unclosed.err, "<stdin>:1: repeat block without its closing } line")) << unclosed.err;
    const auto stray = ecsctl({}, "ping\n}\n");
    EXPECT_EQ(stray.exit_code, 2);
    EXPECT_TRUE(contains(stray.err, "<stdin>:2: } without a repeat N { before it")) << stray.err;
}

TEST_F(ecsctl_server, script_lays_out_a_row_with_arithmetic_in_variables) {
    const std::string script = R"(world create row_arena --paused
use row_arena
repeat 5 {
  $x = ($i - 2) * 0.8
  spawn Position='{"x":$x,"y":1}'
}
$n = 2 * 3 + 1
echo n=$n
$q = query Position --limit 10
expect ${q.total} == 5
expect ${q.entities.0.components.Position.x} == -1.6
expect ${q.entities.4.components.Position.x} == 1.6
$last = ${q.entities.4.components.Position.x} / 0.8
expect $last == 2
world destroy row_arena
)";
    const auto r = ecsctl({}, script);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.err, "");
    EXPECT_TRUE(contains(r.out, "n=7\n")) << r.out;
    const auto bad = ecsctl({}, "$s = ping\n$x = $s * 2\n");
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "<stdin>:2: arithmetic: $s holds 'pong', not a number")) << bad.err;
}

TEST_F(ecsctl_server, a_misspelt_component_gets_a_did_you_mean_as_a_verb_does) {
    const auto r = ecsctl({"spawn", "Postion"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "no_such_component")) << r.err;
    EXPECT_TRUE(contains(r.err, "did you mean 'Position'?")) << r.err;
    const auto script = ecsctl({}, R"(spawn Position Velcity='{"x":1}')"
                                   "\n");
    EXPECT_EQ(script.exit_code, 1);
    EXPECT_TRUE(contains(script.err, "did you mean 'Velocity'?")) << script.err;
    const auto far = ecsctl({"spawn", "Zzzzzzzz"});  // nothing close: no suggestion
    EXPECT_EQ(far.exit_code, 1);
    EXPECT_FALSE(contains(far.err, "did you mean")) << far.err;
}

TEST_F(ecsctl_server, repeat_on_one_line_counts_i_from_zero) {
    const auto r = ecsctl({}, "repeat 3 echo n=$i\nrepeat 0 echo none\n");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(r.out, "n=0\nn=1\nn=2\n");
    EXPECT_EQ(ecsctl({}, "repeat x echo n\n").exit_code, 2);
}

TEST(ecsctl_idle, a_command_after_the_servers_idle_timeout_reconnects_and_is_carried_out) {
    const auto server = start_ecsd({"--idle-timeout", "1"});
    const auto r = run({ecsctl_path(), "--port", std::to_string(server->port())},
                       "world create idle --paused\nuse idle\nsleep 1.6\n"
                       "spawn Position\n$n = query Position\nexpect ${n.total} == 1\n");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.err, "had closed the idle connection; reconnected")) << r.err;
    EXPECT_TRUE(contains(r.out, "\"entity\"")) << r.out;
}

TEST_F(ecsctl_server, script_keep_going_runs_every_line_and_exits_with_first_failure) {
    const auto r = ecsctl({"--keep-going"}, "ping\nget -1\ncall no.such.method\nping\n");
    EXPECT_EQ(r.exit_code, 2);  // line 2's usage error came first
    EXPECT_EQ(r.out, "\"pong\"\n\"pong\"\n");
    EXPECT_TRUE(contains(r.err, "<stdin>:2:")) << r.err;
    EXPECT_TRUE(contains(r.err, "<stdin>:3:")) << r.err;
}

TEST_F(ecsctl_server, script_file_variables_and_local_commands) {
    const auto path =
        std::filesystem::temp_directory_path() / ("ecsctl_test_" + std::to_string(getpid()) + ".ecs");
    {
        std::ofstream file(path);
        file << "$p = ping\n"
                "echo got $p and ${p}!\n"
                "$i = info\n"
                "echo version ${i.version}\n"
                "echo cost 5$$\n"
                "get $undefined\n"
                "ping\n";
    }
    const auto r = ecsctl({"-f", path.string()});
    std::filesystem::remove(path);
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(r.out.starts_with("got pong and pong!\nversion ")) << r.out;
    EXPECT_TRUE(contains(r.out, "cost 5$\n")) << r.out;
    EXPECT_TRUE(contains(r.err, path.string() + ":6: undefined variable $undefined")) << r.err;
}

TEST_F(ecsctl_server, script_usage_error_line) {
    const auto r = ecsctl({}, "ping\nfrobnicate 1 2\n");
    EXPECT_EQ(r.exit_code, 2);
    EXPECT_TRUE(contains(r.err, "<stdin>:2: unknown verb 'frobnicate'")) << r.err;
}

TEST_F(ecsctl_server, script_against_unreachable_server_exits_3) {
    const auto r = run({ecsctl_path(), "--port", "1"}, "ping\nping\n");
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "<stdin>:1: cannot connect")) << r.err;
}

// --- interactive shell ----------------------------------------------------------------------------------

TEST_F(ecsctl_server, shell_on_a_terminal_keeps_history_and_completes_verbs) {
    const auto home = std::filesystem::temp_directory_path() / ("ecsctl_home_" + std::to_string(getpid()));
    std::filesystem::create_directories(home);
    const auto r = run_on_terminal({ecsctl_path(), "--port", std::to_string(ecsd_->port())},
                                   "ping\nhel\t\n$x = ping\necho [$x]\nexit\n", {{"HOME", home.string()}});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "127.0.0.1:" + std::to_string(ecsd_->port()) + "> ")) << r.out;  // the prompt
    EXPECT_TRUE(contains(r.out, "pong")) << r.out;
    EXPECT_TRUE(contains(r.out, "Local commands")) << r.out;  // `hel<TAB>` completed to `help`
    EXPECT_TRUE(contains(r.out, "$x = \"pong\"")) << r.out;
    EXPECT_TRUE(contains(r.out, "[pong]")) << r.out;
    std::ifstream history(home / ".ecsctl_history");
    std::stringstream saved;
    saved << history.rdbuf();
    EXPECT_TRUE(contains(saved.str(), "ping")) << saved.str();
    std::filesystem::remove_all(home);
}

// --- worlds, entities, components, systems, spells, prefabs ------------------------------------------

TEST_F(ecsctl_server, entity_lifecycle_spawn_get_insert_remove_despawn) {
    const auto spawned = ok({"spawn", R"(Position={"x":0,"y":10})", R"(Velocity={"x":1,"y":0})"});
    ASSERT_TRUE(spawned.contains("entity")) << spawned;
    const std::string id = std::to_string(spawned["entity"].get<std::uint64_t>());
    const auto got = ok({"get", id});
    EXPECT_TRUE(contains(got.dump(), "Position")) << got;
    EXPECT_TRUE(contains(got.dump(), "Velocity")) << got;

    (void)ok({"insert", id, R"(Velocity={"x":0,"y":-1})"});
    EXPECT_TRUE(contains(ok({"get", id, "Velocity"}).dump(), "-1")) << "insert replaced Velocity";

    (void)ok({"remove", id, "Velocity"});
    EXPECT_FALSE(contains(ok({"get", id}).dump(), "Velocity"));

    (void)ok({"despawn", id});
    const auto gone = ecsctl({"get", id});
    EXPECT_EQ(gone.exit_code, 1);
    EXPECT_TRUE(contains(gone.err, "no_such_entity")) << gone.err;
}

TEST_F(ecsctl_server, despawn_several_ids_at_once) {
    const std::string a = std::to_string(ok({"spawn", "Position"})["entity"].get<std::uint64_t>());
    const std::string b = std::to_string(ok({"spawn", "Position"})["entity"].get<std::uint64_t>());
    EXPECT_EQ(ok({"despawn", a, b})["despawned"], 2);
    const auto again = ecsctl({"despawn", a, b});
    EXPECT_EQ(again.exit_code, 1);
    EXPECT_TRUE(contains(again.err, "no_such_entity")) << again.err;
}

TEST_F(ecsctl_server, script_spawn_into_variable_then_get) {
    const auto r = ecsctl({}, "$e = spawn Position='{\"x\":3,\"y\":4}'\nget $e\necho id=$e\n");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto lines = json_lines(r.out.substr(0, r.out.find("id=")));
    ASSERT_EQ(lines.size(), 1U) << r.out;
    EXPECT_TRUE(contains(lines[0].dump(), "Position")) << r.out;
    EXPECT_TRUE(contains(r.out, "id=")) << r.out;
}

TEST_F(ecsctl_server, query_with_fields_and_limit_as_json_and_table) {
    for (int i = 0; i < 3; ++i) {
        (void)ok({"spawn", R"(Position={"x":1,"y":2})", "Velocity={}"});
    }
    const auto result = ok({"query", "Position, Velocity", "--fields", "Position", "--limit", "2"});
    EXPECT_TRUE(contains(result.dump(), "Position")) << result;
    const auto table = ecsctl({"-o", "table", "query", "Position, Velocity", "--limit", "2"});
    EXPECT_EQ(table.exit_code, 0) << table.err;
    EXPECT_TRUE(contains(table.out, "ENTITY")) << table.out;
}

TEST_F(ecsctl_server, world_verbs) {
    const std::string name = "cli_" + std::to_string(getpid());
    const auto created = ok({"world", "create", name, "--paused", "--tick-hz", "30"});
    EXPECT_EQ(created.value("paused", false), true) << created;
    EXPECT_TRUE(contains(ok({"worlds"}).dump(), name));
    const auto table = ecsctl({"-o", "table", "worlds"});
    EXPECT_TRUE(contains(table.out, "default\n")) << table.out;
    EXPECT_TRUE(contains(table.out, name + "\n")) << table.out;
    const auto again = ecsctl({"world", "create", name});
    EXPECT_EQ(again.exit_code, 1);
    EXPECT_TRUE(contains(again.err, "world_exists")) << again.err;

    EXPECT_EQ(ok({"world", "info", name}).value("tick", -1), 0);
    EXPECT_EQ(ok({"--world", name, "step", "5"}).value("tick", -1), 5);
    EXPECT_EQ(ok({"--world", name, "step"}).value("tick", -1), 6);
    const auto info =
        ecsctl({"world", "info"}, {}, {{"ECSD_WORLD", name}});  // the world from the environment
    EXPECT_EQ(json::parse(info.out).value("world", ""), name) << info.out << info.err;
    const auto hash = ok({"--world", name, "hash"});
    EXPECT_TRUE(hash.contains("hash")) << hash;
    EXPECT_EQ(ok({"--world", name, "hash"}), hash) << "a paused world keeps its hash";
    EXPECT_EQ(ok({"--world", name, "resume"}).value("paused", true), false);
    EXPECT_EQ(ok({"--world", name, "pause"}).value("paused", false), true);
    const auto info_table = ecsctl({"-o", "table", "world", "info", name});
    EXPECT_TRUE(contains(info_table.out, "tick_hz")) << info_table.out;

    (void)ok({"world", "destroy", name});
    const auto missing = ecsctl({"--world", name, "step"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_TRUE(contains(missing.err, "no_such_world")) << missing.err;
}

TEST_F(ecsctl_server, script_with_world_variables_and_use) {
    const std::string name = "script_" + std::to_string(getpid());
    const auto r = ecsctl({}, "world create " + name +
                                  " --paused\n"
                                  "use " +
                                  name +
                                  "\n"
                                  "$t = step 3\n"
                                  "echo tick ${t.tick}\n"
                                  "$w = worlds\n"
                                  "echo ${w.worlds}\n"
                                  "world destroy " +
                                  name + "\n");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(contains(r.out, "tick 3\n")) << r.out;
    EXPECT_TRUE(contains(r.out, "\"" + name + "\"")) << r.out;
}

TEST_F(ecsctl_server, entity_verbs_mutate_components_and_tables) {
    const std::string w = "ent_" + std::to_string(getpid());
    (void)ok({"world", "create", w, "--paused"});
    const auto id = std::to_string(
        ok({"-w", w, "spawn", R"(Position={"x":1,"y":2})", "Frozen"})["entity"].get<std::uint64_t>());
    const auto mutated = ok({"-w", w, "mutate", id, "Position", "y", "25.5"});
    EXPECT_EQ(ok({"-w", w, "get", id, "Position"})["components"]["Position"]["y"], 25.5) << mutated;
    const auto names = ok({"-w", w, "components", id});
    EXPECT_TRUE(contains(names.dump(), "Frozen")) << names;

    const auto table = ecsctl({"-w", w, "-o", "table", "get", id});
    EXPECT_EQ(table.exit_code, 0) << table.err;
    EXPECT_TRUE(table.out.starts_with("COMPONENT  VALUE\nPosition")) << table.out;
    EXPECT_TRUE(contains(table.out, "entity: " + id)) << table.out;

    const auto bad_component = ecsctl({"-w", w, "insert", id, "NoSuchThing"});
    EXPECT_EQ(bad_component.exit_code, 1);
    EXPECT_TRUE(contains(bad_component.err, "no_such_component")) << bad_component.err;

    const auto query = ok({"-w", w, "query", R"({"all":["Position"],"none":["Velocity"]})"});
    EXPECT_EQ(query.value("total", 0), 1) << query;
    (void)ok({"world", "destroy", w});
}

TEST_F(ecsctl_server, component_types_and_registration) {
    const std::string w = "cmp_" + std::to_string(getpid());
    (void)ok({"world", "create", w, "--paused"});
    EXPECT_TRUE(contains(ok({"-w", w, "components"}).dump(), "Position"));
    const auto table = ecsctl({"-w", w, "-o", "table", "components"});
    EXPECT_TRUE(table.out.starts_with("NAME")) << table.out;
    EXPECT_TRUE(contains(table.out, "x:number=0")) << table.out;  // the table shortens field lists

    (void)ok({"-w", w, "register", "Mana", "points=0", "regen=0.5"});
    const auto id = ok({"-w", w, "spawn", "Mana"})["entity"].get<std::uint64_t>();
    const auto mana = ok({"-w", w, "get", std::to_string(id), "Mana"});
    EXPECT_EQ(mana["components"]["Mana"]["regen"], 0.5) << mana;
    (void)ok({"world", "destroy", w});
}

TEST_F(ecsctl_server, systems_and_their_entities) {
    const std::string w = "sys_" + std::to_string(getpid());
    (void)ok({"world", "create", w, "--paused"});
    (void)ok({"-w", w, "spawn", R"(Position={"x":0,"y":0})", R"(Velocity={"x":1,"y":0})"});
    const auto systems = ok({"-w", w, "systems"});
    EXPECT_TRUE(contains(systems.dump(), "movement")) << systems;
    const auto table = ecsctl({"-w", w, "-o", "table", "systems"});
    EXPECT_TRUE(table.out.starts_with("ORDER  NAME")) << table.out;  // the pipeline order, then the name

    EXPECT_TRUE(contains(ok({"-w", w, "system-entities", "movement", "--limit", "5"}).dump(), "4294967296"));
    (void)ok({"-w", w, "disable-system", "movement"});
    (void)ok({"-w", w, "step", "10"});
    EXPECT_EQ(ok({"-w", w, "get", "4294967296", "Position"})["components"]["Position"]["x"], 0.0);
    (void)ok({"-w", w, "enable-system", "movement"});
    (void)ok({"-w", w, "run-system", "movement"});
    EXPECT_GT(ok({"-w", w, "get", "4294967296", "Position"})["components"]["Position"]["x"].get<double>(),
              0.0);

    const auto missing = ecsctl({"-w", w, "system-entities", "no_such"});
    EXPECT_EQ(missing.exit_code, 1);
    EXPECT_TRUE(contains(missing.err, "no_such_system")) << missing.err;
    (void)ok({"world", "destroy", w});
}

TEST_F(ecsctl_server, spells_cast_from_a_script) {
    const std::string w = "spl_" + std::to_string(getpid());
    const auto r = ecsctl(
        {"-w", w}, "world create " + w +
                       " --paused\n"
                       "$hero = spawn Position='{\"x\":0,\"y\":0}' Health Player\n"
                       "$orc = spawn Position='{\"x\":2,\"y\":0}' Velocity='{\"x\":-1,\"y\":0}' Health AI\n"
                       "spells\n"
                       "cast $hero freeze $orc\n"
                       "step 2\n"
                       "get $orc\n"
                       "cast $hero kill_all_monsters\n"
                       "step\n"
                       "get $orc\n"
                       "world destroy " +
                       w + "\n");
    EXPECT_EQ(r.exit_code, 1);  // the last get fails: the orc is gone
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 7U) << r.out;
    // world create, spells, cast, step, get, cast, step
    EXPECT_TRUE(contains(lines[1].dump(), "kill_all_monsters")) << lines[1];
    EXPECT_TRUE(lines[2].contains("takes_effect_at_tick")) << lines[2];
    EXPECT_TRUE(lines[4]["components"].contains("Frozen")) << lines[4];
    EXPECT_FALSE(lines[4]["components"].contains("Velocity")) << lines[4];
    EXPECT_TRUE(contains(r.err, "<stdin>:10: no_such_entity")) << r.err;
    (void)ecsctl({"world", "destroy", w});
}

// Issue 42: Lua systems and spells from files. A system regenerates health each tick, a replaced
// definition takes over (hot reload), a syntax error names the file, line and column and changes
// nothing, `system rm` takes it out, and a Lua spell is cast like a built-in one.
TEST_F(ecsctl_server, lua_systems_and_spells_from_files) {
    const std::string w = "lua_" + std::to_string(getpid());
    const auto dir = std::filesystem::temp_directory_path() / ("ecsctl_lua_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    const auto write = [&](const std::string& name, const std::string& text) {
        std::ofstream(dir / name) << text;
        return (dir / name).string();
    };
    const auto regen = write("regen.lua",
                             "return function(w)\n  for e in w:each() do\n"
                             "    e.Health.hp = math.min(e.Health.hp + 1, e.Health.max)\n  end\nend\n");
    const auto faster = write("faster.lua",
                              "return function(w)\n  for e in w:each() do\n"
                              "    e.Health.hp = math.min(e.Health.hp + 10, e.Health.max)\n  end\nend\n");
    const auto bad = write("bad.lua", "return function(w)\n  for e in w:each() do\n    e.Health.hp = = 1\n");
    const auto smite =
        write("smite.lua",
              "return function(w, caster, target, amount)\n"
              "  target.Health = {hp = target.Health.hp - amount, max = target.Health.max}\nend\n");
    ASSERT_EQ(ecsctl({"world", "create", w, "--paused"}).exit_code, 0);
    const std::string id = std::to_string(
        ok({"-w", w, "spawn", R"(Health={"hp":50,"max":100})"})["entity"].get<std::uint64_t>());
    const auto hp = [&] { return ok({"-w", w, "get", id})["components"]["Health"]["hp"].get<double>(); };

    const auto defined = ok({"-w", w, "system", "define", "regen", "--query", "Health", "--file", regen});
    EXPECT_EQ(defined["replaced"], false) << defined;
    (void)ok({"-w", w, "step", "3"});
    EXPECT_EQ(hp(), 53.0);
    EXPECT_EQ(ok({"-w", w, "system", "define", "regen", "--query", "Health", "--file", faster})["replaced"],
              true);
    (void)ok({"-w", w, "step"});
    EXPECT_EQ(hp(), 63.0);

    const auto r = ecsctl({"-w", w, "system", "define", "broken", "--query", "Health", "--file", bad});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, bad + ":3:")) << r.err;
    EXPECT_TRUE(contains(r.err, "syntax error")) << r.err;
    EXPECT_FALSE(contains(ok({"-w", w, "systems"}).dump(), "broken"));
    const auto missing = ecsctl({"-w", w, "system", "define", "regen", "--query", "Health"});
    EXPECT_EQ(missing.exit_code, 2);
    EXPECT_TRUE(contains(missing.err, "--file")) << missing.err;

    EXPECT_EQ(ok({"-w", w, "system", "rm", "regen"})["removed"], true);
    (void)ok({"-w", w, "step"});
    EXPECT_EQ(hp(), 63.0);
    EXPECT_EQ(ecsctl({"-w", w, "system", "rm", "regen"}).exit_code, 1);

    (void)ok({"-w", w, "spell", "define", "smite", "--file", smite});
    EXPECT_TRUE(contains(ok({"-w", w, "spells"}).dump(), "smite"));
    (void)ok({"-w", w, "cast", id, "smite", "--amount", "13"});
    (void)ok({"-w", w, "step"});
    EXPECT_EQ(hp(), 50.0);
    (void)ecsctl({"world", "destroy", w});
    std::filesystem::remove_all(dir);
}

TEST_F(ecsctl_server, prefabs_define_and_spawn) {
    const std::string w = "pre_" + std::to_string(getpid());
    const auto r = ecsctl({"-w", w}, "world create " + w +
                                         " --paused\n"
                                         "prefab define tree Position Collider='{\"radius\":1}'\n"
                                         "$trees = prefab spawn tree --count 3 Position='{\"x\":5}'\n"
                                         "get ${trees.entities.2} Position Collider\n"
                                         "prefab spawn nothing\n");
    EXPECT_EQ(r.exit_code, 1);
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 3U) << r.out;  // world create, prefab define, get
    EXPECT_EQ(lines[2]["components"]["Position"]["x"], 5.0) << lines[2];
    EXPECT_EQ(lines[2]["components"]["Collider"]["radius"], 1.0) << lines[2];
    EXPECT_TRUE(contains(r.err, "<stdin>:5: no_such_prefab")) << r.err;
    (void)ecsctl({"world", "destroy", w});
}

TEST_F(ecsctl_server, spawn_count_and_prefab_list) {
    const std::string w = "many_" + std::to_string(getpid());
    (void)ok({"world", "create", w, "--paused"});
    const auto many = ok({"-w", w, "spawn", "--count", "5", R"(Position={"x":1})", "Frozen"});
    ASSERT_EQ(many["entities"].size(), 5U) << many;
    EXPECT_EQ(ok({"-w", w, "query", "Position, Frozen"}).value("total", 0), 5);
    (void)ok({"-w", w, "prefab", "define", "rock", "Position"});
    const auto table = ecsctl({"-w", w, "-o", "table", "prefab", "list"});
    EXPECT_EQ(table.exit_code, 0) << table.err;
    EXPECT_TRUE(table.out.starts_with("NAME")) << table.out;
    EXPECT_TRUE(contains(table.out, "rock")) << table.out;
    (void)ok({"world", "destroy", w});
}

TEST_F(ecsctl_server, save_without_data_dir_is_a_server_error) {
    const auto r = ecsctl({"save"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(contains(r.err, "invalid_params")) << r.err;
}

TEST(ecsctl_persistence, save_and_load_with_a_data_dir) {
    const auto dir = std::filesystem::temp_directory_path() / ("ecsctl_data_" + std::to_string(getpid()));
    std::filesystem::create_directories(dir);
    {
        const auto server = start_ecsd({"--data-dir", dir.string()});
        const std::string port = std::to_string(server->port());
        // load replays snapshot + journal: the world comes back exactly as acknowledged.
        const auto r =
            run({ecsctl_path(), "--port", port},
                "pause\n$e = spawn Position='{\"x\":7,\"y\":0}'\nsave\nmutate $e Position x 8\nhash\n"
                "load\nhash\nget $e Position\n");
        EXPECT_EQ(r.exit_code, 0) << r.err;
        const auto lines = json_lines(r.out);
        ASSERT_EQ(lines.size(), 7U) << r.out;  // pause, save, mutate, hash, load, hash, get
        EXPECT_TRUE(lines[1].contains("path")) << lines[1];
        EXPECT_EQ(lines[3]["hash"], lines[5]["hash"]) << r.out;
        EXPECT_EQ(lines[6]["components"]["Position"]["x"], 8.0) << lines[6];
    }
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ecsd::test
