// server.* and rpc.discover against the real ecsd.
#include <gtest/gtest.h>

#include <unistd.h>

#include <filesystem>

#include <set>

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
    const auto data_dir = std::filesystem::temp_directory_path() / ("ecsd_info_" + std::to_string(::getpid()));
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
    for (const char* expected : {"rpc.discover", "server.ping", "server.info", "server.auth", "world.create",
                                 "world.destroy", "world.list", "world.info", "world.pause", "world.resume",
                                 "world.step", "world.hash"}) {
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
