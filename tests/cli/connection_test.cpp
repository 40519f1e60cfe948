// Connection options, their environment fallbacks, and exit codes 1 and 3, against a fake line server
// (silence, hanging up and garbage are what a healthy ecsd never does) or no server at all.

#include <chrono>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "fake_server.hpp"
#include "process.hpp"

namespace ecsd::test {
namespace {

using json = nlohmann::json;

run_result ecsctl(std::vector<std::string> args, const std::map<std::string, std::string>& env = {}) {
    args.insert(args.begin(), ecsctl_path());
    return run(args, {}, env);
}

/// @brief Answers every request with `result`, echoing its id.
std::string answer(const std::string& line, const json& result) {
    const auto request = json::parse(line);
    return json{{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}}.dump() + "\n";
}

TEST(ecsctl_connection, unreachable_server_exits_3_with_a_message) {
    const auto r = ecsctl({"--port", std::to_string(closed_port()), "ping"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "cannot connect to 127.0.0.1:")) << r.err;
    EXPECT_TRUE(r.out.empty());
}

TEST(ecsctl_connection, port_and_host_come_from_the_environment) {
    const auto r =
        ecsctl({"ping"}, {{"ECSD_HOST", "127.0.0.1"}, {"ECSD_PORT", std::to_string(closed_port())}});
    EXPECT_EQ(r.exit_code, 3) << r.err;
    fake_server server([](const std::string& line) { return answer(line, "pong"); });
    const auto ok =
        ecsctl({"ping"}, {{"ECSD_HOST", "127.0.0.1"}, {"ECSD_PORT", std::to_string(server.port())}});
    EXPECT_EQ(ok.exit_code, 0) << ok.err;
    EXPECT_EQ(ok.out, "\"pong\"\n");
}

TEST(ecsctl_connection, silent_server_times_out_with_exit_3) {
    fake_server server([](const std::string&) { return std::string{}; });
    const auto start = std::chrono::steady_clock::now();
    const auto r = ecsctl({"--port", std::to_string(server.port()), "--timeout", "0.3", "ping"});
    const auto took = std::chrono::steady_clock::now() - start;
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "timed out")) << r.err;
    EXPECT_LT(took, std::chrono::seconds(5));

    const auto from_env =
        ecsctl({"--port", std::to_string(server.port()), "ping"}, {{"ECSCTL_TIMEOUT", "0.2"}});
    EXPECT_EQ(from_env.exit_code, 3);
    EXPECT_TRUE(contains(from_env.err, "timed out")) << from_env.err;
}

TEST(ecsctl_connection, server_hanging_up_exits_3) {
    fake_server server([](const std::string&) { return std::string{}; }, /*hang_up=*/true);
    const auto r = ecsctl({"--port", std::to_string(server.port()), "ping"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_FALSE(r.err.empty());
}

TEST(ecsctl_connection, garbage_answer_exits_3) {
    fake_server server([](const std::string&) { return std::string("this is not json\n"); });
    const auto r = ecsctl({"--port", std::to_string(server.port()), "ping"});
    EXPECT_EQ(r.exit_code, 3);
    EXPECT_TRUE(contains(r.err, "malformed response")) << r.err;
}

TEST(ecsctl_connection, error_answer_exits_1_with_the_reason_on_stderr) {
    fake_server server([](const std::string& line) {
        const auto request = json::parse(line);
        return json{{"jsonrpc", "2.0"},
                    {"id", request["id"]},
                    {"error",
                     {{"code", -32003},
                      {"message", "no entity 42"},
                      {"data", {{"reason", "no_such_entity"}}}}}}
                   .dump() +
               "\n";
    });
    const auto r = ecsctl({"--port", std::to_string(server.port()), "get", "42"});
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(contains(r.err, "no_such_entity")) << r.err;
    EXPECT_TRUE(contains(r.err, "no entity 42")) << r.err;
}

TEST(ecsctl_connection, token_is_sent_with_server_auth_first_and_world_is_added) {
    fake_server server([](const std::string& line) { return answer(line, json::object()); });
    const auto r = ecsctl({"--port", std::to_string(server.port()), "step", "3"},
                          {{"ECSD_TOKEN", "s3cret"}, {"ECSD_WORLD", "arena"}});
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto lines = server.lines();
    ASSERT_EQ(lines.size(), 2U);
    const auto auth = json::parse(lines[0]);
    EXPECT_EQ(auth["method"], "server.auth");
    EXPECT_EQ(auth["params"], json({{"token", "s3cret"}}));
    const auto step = json::parse(lines[1]);
    EXPECT_EQ(step["method"], "world.step");
    EXPECT_EQ(step["params"], json({{"ticks", 3}, {"world", "arena"}}));
    EXPECT_EQ(step["jsonrpc"], "2.0");
}

}  // namespace
}  // namespace ecsd::test
