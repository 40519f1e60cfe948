// Token authentication: nothing but server.auth before it, small line cap, constant-time
// compare, token never logged.
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

constexpr const char* token = "correct-horse-battery-staple";

TEST(Auth, EverythingButAuthIsUnauthorizedAndChangesNothing) {
    ecsd_server server({"--token", token});
    line_client c(server.port());
    const auto ping = c.call("server.ping");
    EXPECT_EQ(reason_of(ping), "unauthorized");
    EXPECT_EQ(ping["error"]["code"], -32010);
    EXPECT_EQ(reason_of(c.call("world.create", {{"world", "sneaky"}})), "unauthorized");
    EXPECT_EQ(reason_of(c.call("no.such.method")), "unauthorized");
    EXPECT_EQ(reason_of(c.call("rpc.discover")), "unauthorized");
    EXPECT_EQ(reason_of(c.call("server.auth", {{"token", "wrong"}})), "unauthorized");
    EXPECT_EQ(reason_of(c.call("server.auth", {{"token", std::string(token) + "x"}})), "unauthorized");
    EXPECT_EQ(reason_of(c.call("server.ping")), "unauthorized");
    EXPECT_EQ(c.result("server.auth", {{"token", token}})["authenticated"], true);
    EXPECT_EQ(c.call("server.ping")["result"], "pong");
    EXPECT_EQ(c.result("world.list")["worlds"], json({"default"}));  // "sneaky" was never created
    line_client other(server.port());                                // authentication is per connection
    EXPECT_EQ(reason_of(other.call("server.ping")), "unauthorized");
}

TEST(Auth, TokenFromEnvironment) {
    server_options o;
    o.env = {std::string("ECSD_TOKEN=") + token};
    ecsd_server server(o);
    line_client c(server.port());
    EXPECT_EQ(reason_of(c.call("server.ping")), "unauthorized");
    EXPECT_EQ(c.result("server.auth", {{"token", token}})["authenticated"], true);
}

TEST(Auth, LinesBeforeAuthAreCappedSmall) {
    ecsd_server server({"--token", token});
    line_client c(server.port());
    ASSERT_TRUE(c.send_line(request_line(1, "server.auth", {{"token", std::string(5000, 'x')}})));
    EXPECT_EQ(reason_of(c.read_json()), "too_large");
    EXPECT_TRUE(c.wait_closed());
    line_client ok(server.port());
    ASSERT_EQ(ok.result("server.auth", {{"token", token}})["authenticated"], true);
    // After auth the normal 1 MiB limit applies.
    EXPECT_EQ(reason_of(ok.call("server.ping", {{"pad", std::string(100000, 'x')}})), "invalid_params");
}

TEST(Auth, PipelinedAuthAppliesToTheRequestsAfterIt) {
    ecsd_server server({"--token", token});
    line_client c(server.port());
    ASSERT_TRUE(c.send_raw(request_line(1, "server.ping") + "\n" +
                           request_line(2, "server.auth", {{"token", token}}) + "\n" +
                           request_line(3, "server.ping") + "\n"));
    EXPECT_EQ(reason_of(c.read_json()), "unauthorized");
    EXPECT_EQ(c.read_json()["result"]["authenticated"], true);
    EXPECT_EQ(c.read_json()["result"], "pong");
}

TEST(Auth, TokenIsNeverLogged) {
    const auto log =
        std::filesystem::temp_directory_path() / ("ecsd_auth_log_" + std::to_string(::getpid()) + ".txt");
    {
        server_options o;
        o.args = {"--token", token};
        o.log_path = log.string();
        o.log_level = "trace";
        ecsd_server server(o);
        line_client c(server.port());
        (void)c.call("server.auth", {{"token", "wrong-guess"}});
        (void)c.call("server.auth", {{"token", token}});
        (void)c.call("server.info");
        (void)c.call("server.ping");
    }
    std::ifstream in(log);
    std::stringstream text;
    text << in.rdbuf();
    std::filesystem::remove(log);
    EXPECT_NE(text.str().find("unauthorized"), std::string::npos) << "the failed auth is logged";
    EXPECT_EQ(text.str().find(token), std::string::npos) << text.str();
}

}  // namespace
}  // namespace ecsd::test

namespace ecsd::test {
namespace {

// Issue 21, low: 23,911 token guesses per second used to be possible.
TEST(Auth, WrongTokensAreRateLimitedPerConnectionAndPerAddress) {
    ecsd_server server({"--token", "s3cret"});
    {
        line_client c(server.port());
        for (int i = 0; i < 3; ++i)
            EXPECT_EQ(reason_of(c.call("server.auth", {{"token", "guess"}})), "unauthorized");
        EXPECT_TRUE(c.wait_closed(std::chrono::seconds(2))) << "three wrong tokens close the connection";
    }
    line_client d(server.port());
    EXPECT_EQ(reason_of(d.call("server.auth", {{"token", "guess"}})), "unauthorized");
    const auto fifth = d.call("server.auth", {{"token", "guess"}});
    EXPECT_EQ(reason_of(fifth), "rate_limited") << fifth.dump();
    EXPECT_GT(fifth["error"]["data"]["retry_after"].get<double>(), 0.5);
    line_client e(server.port());
    const auto locked = e.call("server.auth", {{"token", "s3cret"}});
    EXPECT_EQ(reason_of(locked), "rate_limited") << "even the right token waits out the lockout";
    std::this_thread::sleep_for(std::chrono::milliseconds(1100));
    EXPECT_EQ(e.call("server.auth", {{"token", "s3cret"}})["result"]["authenticated"], true);
    EXPECT_EQ(e.call("server.ping")["result"], "pong");
}

}  // namespace
}  // namespace ecsd::test
