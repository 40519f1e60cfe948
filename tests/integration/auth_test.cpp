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
    EXPECT_EQ(reason_of(d.call("server.auth", {{"token", "s3cret"}})), "rate_limited")
        << "a connection that sent a wrong token waits out the lockout, even with the right one";
    line_client g(server.port());
    EXPECT_EQ(reason_of(g.call("server.auth", {{"token", "guess"}})), "rate_limited");
    EXPECT_TRUE(g.wait_closed(std::chrono::seconds(2))) << "one wrong guess per connection in a lockout";
    // Issue 40, 13: five wrong tokens from an address used to lock the right one out too.
    line_client e(server.port());
    EXPECT_EQ(e.call("server.auth", {{"token", "s3cret"}})["result"]["authenticated"], true)
        << "the right token is never locked out";
    EXPECT_EQ(e.call("server.ping")["result"], "pong");
}

// Issue 40, 13: 800 guesses from 200 addresses (127.0.0.2 to 127.0.0.201), four each, drew no
// rate_limited: the limit counts every address's wrong tokens together too.
TEST(Auth, WrongTokensFromManyAddressesAreLimitedTogether) {
    ecsd_server server({"--token", "s3cret"});
    int limited = 0;
    int tries = 0;
    for (int a = 2; a < 40 && limited == 0; ++a) {
        const std::string from = "127.0.0." + std::to_string(a);
        line_client c(server.port(), "127.0.0.1", 0, from);
        for (int i = 0; i < 2 && limited == 0; ++i) {
            ++tries;
            if (reason_of(c.call("server.auth", {{"token", "guess"}})) == "rate_limited") ++limited;
        }
    }
    EXPECT_EQ(limited, 1) << "no lockout after " << tries << " wrong tokens from " << tries / 2
                          << " addresses";
    EXPECT_LE(tries, 50) << "auth_limiter::server_free_failures";
    line_client right(server.port(), "127.0.0.1", 0, "127.0.0.250");
    EXPECT_EQ(right.call("server.auth", {{"token", "s3cret"}})["result"]["authenticated"], true);
}

// Issue 40, 12: with --slowlog-us 0 every request went to server.slowlog, server.auth's token with it.
TEST(Auth, NoTokenReachesTheSlowlogOrMonitors) {
    ecsd_server server({"--token", "s3cret", "--slowlog-us", "0"});
    line_client admin(server.port());
    ASSERT_EQ(admin.result("server.auth", {{"token", "s3cret"}})["authenticated"], true);
    ASSERT_TRUE(admin.send_line(request_line(1, "server.monitor")));
    ASSERT_TRUE(admin.read_json().contains("result"));
    line_client other(server.port());
    (void)other.call("server.auth", {{"token", "another-clients-guess"}});
    (void)other.call("server.auth", json::array({"positional-guess"}));
    (void)other.call("server.auth", {{"token", "s3cret"}});
    std::string seen;
    for (int i = 0; i < 3; ++i) seen += admin.read_json().dump();
    const auto slowlog = admin.result("server.slowlog", {{"count", 100}}).dump();
    for (const auto& text : {seen, slowlog}) {
        EXPECT_NE(text.find("server.auth"), std::string::npos) << text;
        for (const auto* secret : {"s3cret", "another-clients-guess", "positional-guess"})
            EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in " << text;
    }
}

}  // namespace
}  // namespace ecsd::test
