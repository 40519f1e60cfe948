// Actions (issue 43): game logic in Lua that clients call with world.call_action, as their identity.
// A player moves its own avatar through an action that checks an Owner component and cannot move
// another's; an action that raises changes nothing; budgets stop a runaway one; --action-rate holds
// a player back; the journal replays calls as the same caller; only players (and admins) call them.
#include <csignal>
#include <filesystem>
#include <thread>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

namespace fs = std::filesystem;

// The ownership pattern of docs/scripting.md: an Owner component names the identity, and the
// action checks it against its caller.
const char* const move_source =
    "return function(w, caller, args)\n"
    "  local e = w:get(args.entity)\n"
    "  if not e then error('no such avatar') end\n"
    "  if not e.Owner or e.Owner.identity ~= caller then error('not your avatar') end\n"
    "  e.Position.x = e.Position.x + args.dx\n"
    "  e.Position.y = e.Position.y + args.dy\n"
    "  return {x = e.Position.x, y = e.Position.y}\n"
    "end\n";

/// A --tokens file with an admin, two players and an observer, removed with the test.
struct identities : temp_file {
    identities()
        : temp_file("ecsd_action_tokens", hash_token("admin-secret") + " ops admin\n" +
                                              hash_token("alice-secret") + " alice player\n" +
                                              hash_token("bob-secret") + " bob player\n" +
                                              hash_token("watch-secret") + " watcher observer\n") {}
};

void authenticate(line_client& c, const std::string& token) {
    ASSERT_TRUE(c.call("server.auth", {{"token", token}}).contains("result")) << token;
}

/// Two avatars, one each for alice and bob, and the move action; answers their ids.
std::pair<json, json> setup_game(line_client& admin) {
    (void)admin.result("world.pause");
    (void)admin.result("world.register_component", {{"name", "Owner"}, {"fields", {{"identity", ""}}}});
    const auto a = admin.result(
        "world.spawn_entity",
        {{"components", {{"Position", {{"x", 0}, {"y", 0}}}, {"Owner", {{"identity", "alice"}}}}}})["entity"];
    const auto b = admin.result(
        "world.spawn_entity",
        {{"components", {{"Position", {{"x", 10}, {"y", 0}}}, {"Owner", {{"identity", "bob"}}}}}})["entity"];
    EXPECT_EQ(admin.result("world.define_action", {{"name", "move"}, {"source", move_source}})["replaced"],
              false);
    return {a, b};
}

json position(line_client& c, const json& e) {
    return c.result("world.get_components",
                    {{"entity", e}, {"components", {"Position"}}})["components"]["Position"];
}

TEST(Actions, APlayerMovesItsOwnAvatarAndNotAnothers) {
    const identities ids;
    ecsd_server server({"--tokens", ids.path.string()});
    line_client admin(server.port());
    authenticate(admin, "admin-secret");
    const auto [a, b] = setup_game(admin);
    line_client alice(server.port());
    authenticate(alice, "alice-secret");

    const auto moved = alice.result("world.call_action",
                                    {{"name", "move"}, {"args", {{"entity", a}, {"dx", 2}, {"dy", 3}}}});
    EXPECT_EQ(moved, json({{"x", 2.0}, {"y", 3.0}}));
    EXPECT_EQ(position(admin, a), json({{"x", 2.0}, {"y", 3.0}}));

    const auto hash = admin.result("world.hash")["hash"];
    const auto refused =
        alice.call("world.call_action", {{"name", "move"}, {"args", {{"entity", b}, {"dx", 5}, {"dy", 0}}}});
    EXPECT_EQ(reason_of(refused), "action_failed") << refused.dump();
    EXPECT_NE(refused["error"]["message"].get<std::string>().find("not your avatar"), std::string::npos)
        << refused.dump();
    EXPECT_EQ(position(admin, b), json({{"x", 10.0}, {"y", 0.0}}));
    EXPECT_EQ(admin.result("world.hash")["hash"], hash) << "a refused action changed the world";

    // The caller is the server's to say: a client cannot name one.
    EXPECT_EQ(reason_of(alice.call(
                  "world.call_action",
                  {{"name", "move"}, {"caller", "bob"}, {"args", {{"entity", b}, {"dx", 1}, {"dy", 0}}}})),
              "invalid_params");
    // Players call actions, not raw writes or definitions; observers call neither.
    EXPECT_EQ(reason_of(alice.call("world.mutate_components",
                                   {{"entity", b}, {"component", "Position"}, {"path", "x"}, {"value", 0}})),
              "unauthorized");
    EXPECT_EQ(reason_of(alice.call("world.define_action", {{"name", "cheat"}, {"source", move_source}})),
              "unauthorized");
    line_client watcher(server.port());
    authenticate(watcher, "watch-secret");
    EXPECT_EQ(reason_of(watcher.call("world.call_action",
                                     {{"name", "move"}, {"args", {{"entity", a}, {"dx", 1}, {"dy", 0}}}})),
              "unauthorized");
    EXPECT_EQ(reason_of(alice.call("world.call_action", {{"name", "fly"}})), "no_such_action");

    const auto listed = admin.result("world.list_actions")["actions"];
    ASSERT_EQ(listed.size(), 1U);
    EXPECT_EQ(listed[0]["name"], "move");
    EXPECT_EQ(listed[0]["calls"], 1);
    EXPECT_EQ(listed[0]["failures"], 1);
    EXPECT_NE(listed[0]["last_error"].get<std::string>().find("not your avatar"), std::string::npos);
}

TEST(Actions, AFailedActionLeavesNothingAndARunawayIsStopped) {
    ecsd_server server({"--script-instructions", "100000"});
    line_client c(server.port());
    (void)c.result("world.pause");
    const auto e =
        c.result("world.spawn_entity", {{"components", {{"Health", {{"hp", 10}, {"max", 100}}}}}})["entity"];
    // Writes a field, spawns an entity, then raises: none of it stays.
    (void)c.result("world.define_action", {{"name", "half"},
                                           {"source",
                                            "return function(w, caller, args)\n"
                                            "  local e = w:get(args.entity)\n"
                                            "  e.Health.hp = 0\n"
                                            "  w:spawn{Position = {x = 1, y = 1}}\n"
                                            "  error('changed my mind')\n"
                                            "end\n"}});
    const auto before = c.result("world.hash")["hash"];
    const auto count = c.result("world.info")["entities"];
    const auto r = c.call("world.call_action", {{"name", "half"}, {"args", {{"entity", e}}}});
    EXPECT_EQ(reason_of(r), "action_failed");
    EXPECT_NE(r["error"]["message"].get<std::string>().find("changed my mind"), std::string::npos)
        << r.dump();
    EXPECT_EQ(c.result("world.hash")["hash"], before);
    EXPECT_EQ(c.result("world.info")["entities"], count);

    (void)c.result("world.define_action",
                   {{"name", "spin"}, {"source", "return function(w) while true do end end"}});
    const auto spun = c.call("world.call_action", {{"name", "spin"}});
    EXPECT_EQ(reason_of(spun), "action_failed");
    EXPECT_NE(spun["error"]["message"].get<std::string>().find("instruction"), std::string::npos)
        << spun.dump();
    (void)c.result("world.resume");
    const auto t0 = c.result("world.info")["tick"].get<std::uint64_t>();
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    EXPECT_GT(c.result("world.info")["tick"].get<std::uint64_t>(), t0 + 5) << "the world stopped ticking";
    // The answer is what the action returns: nil is null, a list a list.
    (void)c.result("world.define_action",
                   {{"name", "echo"}, {"source", "return function(w, caller, args) return args end"}});
    EXPECT_EQ(c.result("world.call_action", {{"name", "echo"}, {"args", {1, "two", {{"three", 3}}}}}),
              json({1, "two", {{"three", 3}}}));
    EXPECT_EQ(c.result("world.call_action", {{"name", "echo"}}), nullptr);
    EXPECT_EQ(c.result("world.define_action",
                       {{"name", "echo"}, {"source", "return function() return 'v2' end"}})["replaced"],
              true);
    EXPECT_EQ(c.result("world.call_action", {{"name", "echo"}}), "v2");
    EXPECT_EQ(c.result("world.remove_action", {{"name", "echo"}})["removed"], true);
    EXPECT_EQ(reason_of(c.call("world.call_action", {{"name", "echo"}})), "no_such_action");
    EXPECT_EQ(reason_of(c.call("world.define_action", {{"name", "bad"}, {"source", "return function( end"}})),
              "invalid_params");
}

TEST(Actions, APlayerFasterThanTheActionRateIsRateLimited) {
    const identities ids;
    ecsd_server server({"--tokens", ids.path.string(), "--action-rate", "5"});
    line_client admin(server.port());
    authenticate(admin, "admin-secret");
    const auto [a, b] = setup_game(admin);
    line_client alice(server.port());
    authenticate(alice, "alice-secret");
    int ok = 0;
    int limited = 0;
    for (int i = 0; i < 20; ++i) {
        const auto r = alice.call("world.call_action",
                                  {{"name", "move"}, {"args", {{"entity", a}, {"dx", 1}, {"dy", 0}}}});
        if (r.contains("result")) {
            ++ok;
        } else {
            EXPECT_EQ(reason_of(r), "rate_limited") << r.dump();
            EXPECT_GT(r["error"]["data"]["retry_after"].get<double>(), 0.0);
            ++limited;
        }
    }
    EXPECT_GE(ok, 5);
    EXPECT_LE(ok, 7);  // a burst of one second's worth, and what refilled meanwhile
    EXPECT_GT(limited, 10);
    // A refused call did not run: the avatar moved once per call that answered.
    EXPECT_EQ(position(admin, a)["x"], static_cast<double>(ok));
    // Each identity has its own allowance; the admin has none to keep.
    line_client bob(server.port());
    authenticate(bob, "bob-secret");
    EXPECT_TRUE(
        bob.call("world.call_action", {{"name", "move"}, {"args", {{"entity", b}, {"dx", 1}, {"dy", 0}}}})
            .contains("result"));
    for (int i = 0; i < 20; ++i)
        EXPECT_EQ(reason_of(admin.call("world.call_action",
                                       {{"name", "move"}, {"args", {{"entity", a}, {"dx", 0}, {"dy", 0}}}})),
                  "action_failed");  // the admin owns no avatar, but is never rate_limited
}

class ActionPersistence : public ::testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("ecsd_action_" + std::to_string(::getpid()) + "_" +
                                            ::testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::vector<std::string> args() const {
        return {"--tokens",      ids_.path.string(), "--data-dir", dir_.string(),
                "--appendfsync", "always",           "--autosave", "0"};
    }
    identities ids_;
    fs::path dir_;
};

// The journal replays each call as its caller: after a crash, the avatars are where the calls left
// them, and the world's hash is the same.
TEST_F(ActionPersistence, TheJournalReplaysCallsAsTheirCaller) {
    std::string hash;
    json a;
    json b;
    {
        ecsd_server server(args());
        line_client admin(server.port());
        authenticate(admin, "admin-secret");
        std::tie(a, b) = setup_game(admin);
        line_client alice(server.port());
        authenticate(alice, "alice-secret");
        line_client bob(server.port());
        authenticate(bob, "bob-secret");
        for (int i = 0; i < 3; ++i) {
            (void)alice.result("world.call_action",
                               {{"name", "move"}, {"args", {{"entity", a}, {"dx", 1}, {"dy", 0}}}});
            (void)bob.result("world.call_action",
                             {{"name", "move"}, {"args", {{"entity", b}, {"dx", 0}, {"dy", 1}}}});
        }
        hash = admin.result("world.hash")["hash"];
        server.stop(SIGKILL);  // no snapshot: the journal alone brings it back
    }
    ecsd_server server(args());
    line_client admin(server.port());
    authenticate(admin, "admin-secret");
    EXPECT_EQ(admin.result("world.hash")["hash"], hash) << "after a journal replay";
    EXPECT_EQ(position(admin, a), json({{"x", 3.0}, {"y", 0.0}}));
    EXPECT_EQ(position(admin, b), json({{"x", 10.0}, {"y", 3.0}}));
    EXPECT_EQ(admin.result("world.list_actions")["actions"][0]["name"], "move");
    EXPECT_EQ(server.stop(SIGTERM).code, 0);  // a snapshot now: the action is in it
    ecsd_server again(args());
    line_client alice(again.port());
    authenticate(alice, "alice-secret");
    EXPECT_EQ(alice.result("world.call_action",
                           {{"name", "move"}, {"args", {{"entity", a}, {"dx", 1}, {"dy", 1}}}}),
              json({{"x", 4.0}, {"y", 1.0}}));
}

}  // namespace
}  // namespace ecsd::test
