// Lua systems and spells over the socket (issue 42): define, list, hot reload, remove; a runaway
// script is stopped while the world keeps its rate; --read-only refuses definitions; a restart
// (snapshot) and a crash (journal replay) bring the scripts back with the same state hash.
#include <csignal>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

namespace fs = std::filesystem;

const char* const regen =
    "return function(w)\n"
    "  for e in w:each() do\n"
    "    e.Health.hp = math.min(e.Health.hp + 1, e.Health.max)\n"
    "  end\n"
    "end\n";

json system_row(line_client& c, const std::string& name, const std::string& world = "default") {
    const auto listed = c.result("world.list_systems", {{"world", world}});  // kept: the loop reads into it
    for (const auto& s : listed["systems"])
        if (s["name"] == name) return s;
    return nullptr;
}

TEST(ScriptMethods, DefineListReloadAndRemoveOverTheSocket) {
    ecsd_server server;
    line_client c(server.port());
    (void)c.result("world.pause");
    const auto e =
        c.result("world.spawn_entity", {{"components", {{"Health", {{"hp", 10}, {"max", 100}}}}}})["entity"];
    const auto defined =
        c.result("world.define_system",
                 {{"name", "regen"}, {"query", "Health"}, {"phase", "simulation"}, {"source", regen}});
    EXPECT_EQ(defined["replaced"], false);
    (void)c.result("world.step", {{"ticks", 5}});
    EXPECT_EQ(c.result("world.get_components", {{"entity", e}})["components"]["Health"]["hp"], 15.0);
    const auto row = system_row(c, "regen");
    ASSERT_TRUE(row.is_object());
    EXPECT_EQ(row["signature"], "Health");
    EXPECT_EQ(row["members"], 1);
    EXPECT_EQ(row["runs"], 5);
    EXPECT_TRUE(row.contains("p99_ms"));

    // Hot reload: the new source from the next tick on.
    EXPECT_EQ(
        c.result("world.define_system",
                 {{"name", "regen"},
                  {"query", "Health"},
                  {"phase", "simulation"},
                  {"source", "return function(w) for e in w:each() do e.Health.hp = 1 end end"}})["replaced"],
        true);
    (void)c.result("world.step", {{"ticks", 1}});
    EXPECT_EQ(c.result("world.get_components", {{"entity", e}})["components"]["Health"]["hp"], 1.0);

    // A syntax error names its line and column and changes nothing.
    const auto bad = c.call("world.define_system", {{"name", "regen"},
                                                    {"query", "Health"},
                                                    {"phase", "simulation"},
                                                    {"source", "return function(w)\n  for e in do\nend"}});
    EXPECT_EQ(reason_of(bad), "invalid_params");
    EXPECT_NE(bad["error"]["message"].get<std::string>().find("line 2, column"), std::string::npos) << bad;
    (void)c.result("world.step", {{"ticks", 1}});
    EXPECT_EQ(c.result("world.get_components", {{"entity", e}})["components"]["Health"]["hp"], 1.0);

    // disable / enable / run_system work on it as on a built-in; remove takes it out.
    (void)c.result("world.disable_system", {{"system", "regen"}});
    EXPECT_EQ(system_row(c, "regen")["enabled"], false);
    (void)c.result("world.run_system", {{"system", "regen"}});
    (void)c.result("world.remove_system", {{"name", "regen"}});
    EXPECT_TRUE(system_row(c, "regen").is_null());
    EXPECT_EQ(reason_of(c.call("world.remove_system", {{"name", "regen"}})), "no_such_system");
    EXPECT_EQ(reason_of(c.call("world.remove_system", {{"name", "movement"}})), "invalid_value");

    // A Lua spell is cast and listed like a built-in.
    (void)c.result("world.define_spell",
                   {{"name", "smite"},
                    {"source", "return function(w, c, t, amount) t.Health.hp = t.Health.hp - amount end"}});
    (void)c.result("world.cast_spell", {{"caster", e}, {"spell", "smite"}, {"amount", 0.5}});
    (void)c.result("world.step", {{"ticks", 1}});
    EXPECT_EQ(c.result("world.get_components", {{"entity", e}})["components"]["Health"]["hp"], 0.5);
    bool listed = false;
    const auto spells = c.result("world.list_spells");
    for (const auto& s : spells["spells"]) listed = listed || s["name"] == "smite";
    EXPECT_TRUE(listed);

    // world.remove_spell takes it out; built-in spells stay.
    EXPECT_EQ(c.result("world.remove_spell", {{"name", "smite"}})["removed"], true);
    EXPECT_EQ(reason_of(c.call("world.cast_spell", {{"caster", e}, {"spell", "smite"}})), "no_such_spell");
    EXPECT_EQ(reason_of(c.call("world.remove_spell", {{"name", "smite"}})), "no_such_spell");
    EXPECT_EQ(reason_of(c.call("world.remove_spell", {{"name", "freeze"}})), "invalid_value");
}

TEST(ScriptMethods, ARunawayScriptIsStoppedAndTheWorldKeepsItsRate) {
    ecsd_server server;
    line_client c(server.port());
    (void)c.result("world.spawn_entity", {{"components", {{"Health", json::object()}}}});
    const auto before = c.result("world.info");
    (void)c.result("world.define_system", {{"name", "spin"},
                                           {"query", "Health"},
                                           {"phase", "simulation"},
                                           {"source", "return function(w) while true do end end"}});
    std::this_thread::sleep_for(std::chrono::milliseconds(1000));
    const auto row = system_row(c, "spin");
    EXPECT_EQ(row["enabled"], false);
    EXPECT_NE(row["error"].get<std::string>().find("instruction budget"), std::string::npos) << row;
    const auto after = c.result("world.info");
    // The world fell behind by no whole tick: the clock skipped none while the script was stopped.
    EXPECT_EQ(after["skipped_ticks"], before["skipped_ticks"]);
    EXPECT_GE(after["tick"].get<std::uint64_t>() - before["tick"].get<std::uint64_t>(), 50U);
    EXPECT_EQ(c.result("server.ping"), "pong");
}

TEST(ScriptMethods, AReadOnlyServerRefusesDefinitions) {
    ecsd_server server({"--read-only"});
    line_client c(server.port());
    EXPECT_EQ(reason_of(c.call(
                  "world.define_system",
                  {{"name", "regen"}, {"query", "Health"}, {"phase", "simulation"}, {"source", regen}})),
              "unauthorized");
    EXPECT_EQ(reason_of(c.call("world.define_spell", {{"name", "s"}, {"source", "return function() end"}})),
              "unauthorized");
    EXPECT_EQ(reason_of(c.call("world.remove_system", {{"name", "regen"}})), "unauthorized");
}

TEST(ScriptMethods, LimitsAreFlags) {
    ecsd_server server({"--max-scripts", "1", "--max-script-bytes", "100"});
    line_client c(server.port());
    (void)c.result("world.define_spell", {{"name", "a"}, {"source", "return function() end"}});
    EXPECT_EQ(reason_of(c.call("world.define_spell", {{"name", "b"}, {"source", "return function() end"}})),
              "limit_reached");
    EXPECT_EQ(reason_of(c.call("world.define_spell", {{"name", "a"}, {"source", std::string(101, ' ')}})),
              "limit_reached");
}

class ScriptPersistence : public testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("ecsd_script_it_" + std::to_string(::getpid()) + "_" +
                                            testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::vector<std::string> args() const {
        return {"--data-dir", dir_.string(), "--appendfsync", "always", "--autosave", "0"};
    }
    static void setup_world(line_client& c, const std::string& world = "default") {
        (void)c.result("world.pause", {{"world", world}});
        for (int i = 0; i < 30; ++i)
            (void)c.result("world.spawn_entity", {{"world", world},
                                                  {"components",
                                                   {{"Position", {{"x", i}, {"y", 0}}},
                                                    {"Velocity", {{"x", 1}, {"y", 0}}},
                                                    {"Health", {{"hp", i}, {"max", 100}}}}}});
        (void)c.result("world.define_system", {{"world", world},
                                               {"name", "regen"},
                                               {"query", "Health"},
                                               {"phase", "post"},
                                               {"order", 2},
                                               {"source", regen}});
        (void)c.result("world.define_system",
                       {{"world", world},
                        {"name", "churn"},
                        {"query", "Health, Position"},
                        {"phase", "simulation"},
                        {"source",
                         "return function(w)\n"
                         "  for e in w:each() do\n"
                         "    if e.Health.hp > 40 and w:random(3) == 1 then w:despawn(e) end\n"
                         "    e.Position.y = e.Position.y + w:random()\n"
                         "  end\n"
                         "  w:spawn{Position = {x = w:random(10), y = 0}, Health = {hp = 1}}\n"
                         "end\n"}});
    }
    fs::path dir_;
};

TEST_F(ScriptPersistence, RestartAndJournalReplayResumeScriptsWithTheSameHash) {
    // The reference: one server, 30 ticks straight.
    std::string reference;
    {
        ecsd_server server;
        line_client c(server.port());
        setup_world(c);
        (void)c.result("world.step", {{"ticks", 30}});
        reference = c.result("world.hash")["hash"];
    }
    std::string hash;
    {
        ecsd_server server(args());
        line_client c(server.port());
        setup_world(c);
        (void)c.result("world.step", {{"ticks", 10}});
        hash = c.result("world.hash")["hash"];
        server.stop(SIGKILL);  // no snapshot: the journal alone brings it back
    }
    {
        ecsd_server server(args());
        line_client c(server.port());
        EXPECT_EQ(c.result("world.hash")["hash"], hash) << "after a journal replay";
        EXPECT_TRUE(system_row(c, "churn").is_object());
        (void)c.result("world.step", {{"ticks", 10}});
        hash = c.result("world.hash")["hash"];
        EXPECT_EQ(server.stop(SIGTERM).code, 0);  // a snapshot now
    }
    {
        ecsd_server server(args());
        line_client c(server.port());
        EXPECT_EQ(c.result("world.hash")["hash"], hash) << "after a restart from the snapshot";
        EXPECT_EQ(system_row(c, "regen")["phase_order"], 2);
        (void)c.result("world.step", {{"ticks", 10}});
        EXPECT_EQ(c.result("world.hash")["hash"], reference);
    }
}

// A world moved to another server (world.export, world.import there) brings its scripts along, and
// the two copies, stepped alike, go on to the same state hash: the scripts run the same there.
TEST_F(ScriptPersistence, AMovedWorldResumesItsScriptsWithTheSameHash) {
    ecsd_server from;
    ecsd_server to;
    line_client a(from.port());
    line_client b(to.port());
    (void)a.result("world.create", {{"world", "arena"}, {"paused", true}});
    setup_world(a, "arena");
    (void)a.result("world.define_spell", {{"world", "arena"},
                                          {"name", "smite"},
                                          {"source",
                                           "return function(w, caster, target, amount)\n"
                                           "  if target then target.Health.hp = 0 end\n"
                                           "end\n"}});
    (void)a.result("world.step", {{"world", "arena"}, {"ticks", 10}});
    std::string text;
    auto r = a.result("world.export", {{"world", "arena"}, {"max_bytes", 4096}});
    for (;;) {
        text += r["data"].get<std::string>();
        if (r["done"].get<bool>()) break;
        r = a.result(
            "world.export",
            {{"world", "arena"}, {"export", r["export"]}, {"offset", text.size()}, {"max_bytes", 4096}});
    }
    ASSERT_TRUE(
        b.result("world.import", {{"world", "arena"}, {"data", text}, {"final", true}, {"paused", true}})
            .is_object());
    const auto at_move = a.result("world.hash", {{"world", "arena"}})["hash"];
    EXPECT_EQ(b.result("world.hash", {{"world", "arena"}})["hash"], at_move);
    EXPECT_TRUE(system_row(b, "churn", "arena").is_object());
    EXPECT_EQ(system_row(b, "regen", "arena")["phase_order"], 2);
    bool listed = false;
    const auto spells = b.result("world.list_spells", {{"world", "arena"}});  // kept: the loop reads into it
    for (const auto& s : spells["spells"]) listed = listed || s["name"] == "smite";
    EXPECT_TRUE(listed) << "the Lua spell came along";
    for (auto* c : {&a, &b}) {
        const auto first = c->result("world.query", {{"world", "arena"}, {"query", "Health"}, {"limit", 1}});
        const auto id = first["entities"][0]["entity"];
        (void)c->result("world.cast_spell",
                        {{"world", "arena"}, {"caster", id}, {"spell", "smite"}, {"target", id}});
        (void)c->result("world.step", {{"world", "arena"}, {"ticks", 10}});
    }
    const auto after = a.result("world.hash", {{"world", "arena"}})["hash"];
    EXPECT_NE(after, at_move) << "the scripts ran";
    EXPECT_EQ(b.result("world.hash", {{"world", "arena"}})["hash"], after);
}

}  // namespace
}  // namespace ecsd::test
