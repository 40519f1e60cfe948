// server.* and rpc.discover against the real ecsd.
#include <unistd.h>

#include <filesystem>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

TEST(ServerMethods, PingAnswersPong) {
    ecsd_server server;
    line_client c(server.port());
    const auto r = c.call("server.ping");
    EXPECT_EQ(r["jsonrpc"], "2.0");
    EXPECT_EQ(r["id"], 1);
    EXPECT_EQ(r["result"], "pong");
}

TEST(ServerMethods, InfoReportsVersionConnectionsWorldsLimitsAndConfig) {
    // A data folder of its own: ecsd loads every world saved in it.
    const auto data_dir =
        std::filesystem::temp_directory_path() / ("ecsd_info_" + std::to_string(::getpid()));
    std::filesystem::remove_all(data_dir);
    ecsd_server server({"--max-connections", "77", "--data-dir", data_dir.string(), "--token", "tok"});
    line_client c(server.port());
    ASSERT_EQ(c.result("server.auth", {{"token", "tok"}})["authenticated"], true);
    line_client other(server.port());
    ASSERT_EQ(reason_of(other.call("server.ping")), "unauthorized");  // accepted and counted by now
    const auto info = c.result("server.info");
    EXPECT_FALSE(info["version"].get<std::string>().empty());
    EXPECT_GE(info["uptime_s"].get<double>(), 0.0);
    EXPECT_EQ(info["connections"]["open"], 2);
    EXPECT_EQ(info["connections"]["max"], 77);
    EXPECT_EQ(info["worlds"], json({"default"}));
    EXPECT_EQ(info["limits"]["max_line_bytes"], 1024 * 1024);
    EXPECT_EQ(info["limits"]["max_nesting_depth"], 64);
    EXPECT_EQ(info["limits"]["idle_timeout_s"], 300.0);
    EXPECT_EQ(info["config"]["data-dir"], data_dir.string());
    std::filesystem::remove_all(data_dir);
    EXPECT_EQ(info["config"]["max-connections"], 77);
    EXPECT_EQ(info["config"]["host"], "127.0.0.1");
    EXPECT_EQ(info["config"]["token"], "set");  // echoed as set, never the value
    EXPECT_EQ(info.dump().find("tok\""), std::string::npos);
    EXPECT_EQ(info["auth_required"], true);
}

TEST(ServerMethods, InfoCountsEachMethodWithLatencyBytesAndWorldMemory) {
    ecsd_server server;
    line_client c(server.port());
    for (int i = 0; i < 5; ++i)
        ASSERT_TRUE(
            c.result("world.spawn_entity", {{"components", {{"Position", json::object()}}}}).is_object());
    EXPECT_EQ(reason_of(c.call("world.get_components", {{"entity", 999}})), "no_such_entity");
    const auto info = c.result("server.info");
    const auto& spawn = info["methods"]["world.spawn_entity"];
    EXPECT_EQ(spawn["calls"], 5);
    EXPECT_EQ(spawn["errors"], 0);
    EXPECT_GT(spawn["p50_us"].get<double>(), 0);
    EXPECT_GE(spawn["p99_us"].get<double>(), spawn["p50_us"].get<double>());
    EXPECT_GE(spawn["max_us"].get<double>(), spawn["p99_us"].get<double>() / 1.2);
    EXPECT_EQ(info["methods"]["world.get_components"]["errors"], 1);
    EXPECT_FALSE(info["methods"].contains("world.query")) << "only methods called so far";
    EXPECT_GT(info["bytes"]["in"].get<long>(), 300);
    EXPECT_GT(info["bytes"]["out"].get<long>(), 200);
    EXPECT_GT(info["memory"]["rss_bytes"].get<long>(), 1 << 20);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));  // a tick or more of the default world
    const auto later = c.result("server.info")["memory"]["worlds"]["default"];
    EXPECT_EQ(later["entities"], 5);
    EXPECT_GT(later["registry_bytes"].get<long>(), 0);
}

TEST(ServerMethods, SlowlogKeepsTheSlowestRecentRequestsNewestFirst) {
    ecsd_server server({"--slowlog-us", "0", "--slowlog-len", "3"});  // every request is "slow"
    line_client c(server.port());
    ASSERT_EQ(c.result("server.ping"), "pong");
    ASSERT_TRUE(c.result("world.create", {{"world", "s"}, {"paused", true}}).is_object());
    ASSERT_TRUE(c.result("world.step", {{"world", "s"}, {"ticks", 3}}).is_object());
    ASSERT_TRUE(c.result("world.info", {{"world", "s"}}).is_object());
    const auto log = c.result("server.slowlog", {{"count", 10}, {"reset", true}});
    EXPECT_EQ(log["len"], 3) << "--slowlog-len 3";
    ASSERT_EQ(log["entries"].size(), 3u);
    EXPECT_EQ(log["entries"][0]["method"], "world.info");
    EXPECT_EQ(log["entries"][1]["method"], "world.step");
    EXPECT_EQ(log["entries"][1]["params"], R"({"ticks":3,"world":"s"})");
    EXPECT_GT(log["entries"][1]["id"].get<int>(), log["entries"][2]["id"].get<int>());
    EXPECT_GE(log["entries"][0]["duration_us"].get<double>(), 0);
    EXPECT_EQ(c.result("server.slowlog")["entries"].size(), 1u)
        << "reset emptied it; this call's own entry comes later";
    ecsd_server quiet;  // the default threshold, 10 ms: a ping never gets there
    line_client q(quiet.port());
    ASSERT_EQ(q.result("server.ping"), "pong");
    EXPECT_EQ(q.result("server.slowlog")["len"], 0);
}

TEST(ServerMethods, MonitorStreamsEveryOtherConnectionsRequestsWithTokensHidden) {
    ecsd_server server({"--token", "sesame"});
    line_client mon(server.port());
    ASSERT_EQ(mon.result("server.auth", {{"token", "sesame"}})["authenticated"], true);
    ASSERT_EQ(mon.result("server.monitor")["monitoring"], true);
    line_client other(server.port());
    ASSERT_EQ(other.result("server.auth", {{"token", "sesame"}})["authenticated"], true);
    ASSERT_TRUE(
        other.result("world.spawn_entity", {{"components", {{"Position", json::object()}}}}).is_object());
    std::vector<json> seen;
    for (int i = 0; i < 2; ++i) seen.push_back(mon.read_json(std::chrono::seconds(2)));
    ASSERT_EQ(seen[0].value("method", ""), "server.monitor") << seen[0];
    EXPECT_EQ(seen[0]["params"]["method"], "server.auth");
    EXPECT_EQ(seen[0]["params"]["params"], "(hidden)");  // a secret method's params, whole
    EXPECT_EQ(seen[1]["params"]["method"], "world.spawn_entity");
    EXPECT_EQ(seen[1]["params"]["params"]["components"]["Position"], json::object());
    EXPECT_NE(seen[1]["params"]["connection"], 0);
    // {stop: true} ends the feed: the next request of the other connection is not shown.
    const auto stopped = mon.call("server.monitor", {{"stop", true}});
    EXPECT_EQ(stopped["result"]["monitoring"], false) << stopped;
    ASSERT_EQ(other.result("server.ping"), "pong");
    EXPECT_TRUE(mon.read_json(std::chrono::milliseconds(300)).is_null());
}

TEST(ServerMethods, AuthWithoutATokenConfiguredSucceeds) {
    ecsd_server server;
    line_client c(server.port());
    EXPECT_EQ(c.result("server.auth", {{"token", "anything"}})["authenticated"], true);
    EXPECT_EQ(reason_of(c.call("server.auth")), "invalid_params");
}

TEST(ServerMethods, DiscoverDescribesEveryMethodTheServerAnswers) {
    ecsd_server server;
    line_client c(server.port());
    const auto doc = c.result("rpc.discover");
    EXPECT_EQ(doc["openrpc"].get<std::string>().substr(0, 2), "1.");
    std::set<std::string> names;
    for (const auto& m : doc["methods"]) {
        names.insert(m["name"].get<std::string>());
        EXPECT_TRUE(m.contains("params")) << m["name"];
        EXPECT_TRUE(m["result"].contains("schema")) << m["name"];
    }
    for (const char* expected :
         {"rpc.discover", "server.ping", "server.info", "server.auth", "world.create", "world.destroy",
          "world.list", "world.info", "world.pause", "world.resume", "world.step", "world.hash"}) {
        EXPECT_TRUE(names.contains(expected)) << expected;
    }
    // Every listed method exists: none answers method_not_found (params may be wrong: fine).
    for (const auto& name : names) {
        EXPECT_NE(reason_of(c.call(name, {{"world", "no-such-world-here"}})), "method_not_found") << name;
    }
    EXPECT_EQ(doc["components"]["errors"]["too_large"]["code"], -32011);
}

TEST(ServerMethods, DiscoverParamsMatchWhatTheDispatcherEnforces) {
    ecsd_server server;
    line_client c(server.port());
    const auto doc = c.result("rpc.discover");
    for (const auto& m : doc["methods"]) {
        if (m["name"] != "world.step") continue;
        bool saw_ticks = false;
        for (const auto& p : m["params"]) {
            if (p["name"] != "ticks") continue;
            saw_ticks = true;
            EXPECT_EQ(p["schema"]["minimum"], 1);
        }
        EXPECT_TRUE(saw_ticks);
    }
    EXPECT_EQ(reason_of(c.call("world.step", {{"ticks", 0}})), "invalid_params");
}

}  // namespace
}  // namespace ecsd::test
