// Bad input over a real socket: every malformed message gets a JSON-RPC error and the
// connection stays, except a line over the limit, which is answered and then closed.
#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

class Protocol : public testing::Test {
  protected:
    ecsd_server server_{{"--max-line-bytes", "4096"}};
    line_client c_{server_.port()};

    /// @brief Sends a raw line and returns the one response.
    json send(const std::string& line) {
        EXPECT_TRUE(c_.send_line(line));
        return c_.read_json();
    }
    void expect_alive() { EXPECT_EQ(c_.call("server.ping")["result"], "pong"); }
};

TEST_F(Protocol, MalformedJsonIsAParseErrorAndTheConnectionStays) {
    for (const char* bad :
         {"{", "not json", R"({"jsonrpc":"2.0","id":1,"method":})", "\xff\xfe\xfd", "[1,]"}) {
        const auto r = send(bad);
        EXPECT_EQ(reason_of(r), "parse_error") << bad;
        EXPECT_EQ(r["error"]["code"], -32700);
        EXPECT_TRUE(r["id"].is_null());
    }
    expect_alive();
}

TEST_F(Protocol, InvalidRequestsAreRefused) {
    EXPECT_EQ(reason_of(send(R"({"id":1,"method":"server.ping"})")), "invalid_request");
    EXPECT_EQ(reason_of(send(R"({"jsonrpc":"1.0","id":1,"method":"server.ping"})")), "invalid_request");
    EXPECT_EQ(reason_of(send(R"({"jsonrpc":"2.0","id":1,"method":7})")), "invalid_request");
    EXPECT_EQ(reason_of(send(R"({"jsonrpc":"2.0","id":1,"method":"server.ping","params":"x"})")),
              "invalid_request");
    EXPECT_EQ(reason_of(send(R"("just a string")")), "invalid_request");
    const auto kept = send(R"({"jsonrpc":"2.0","id":"k","method":3})");
    EXPECT_EQ(kept["id"], "k");
    EXPECT_EQ(kept["error"]["code"], -32600);
    expect_alive();
}

TEST_F(Protocol, UnknownMethodAndWrongParams) {
    const auto unknown = send(request_line(5, "world.teleport"));
    EXPECT_EQ(reason_of(unknown), "method_not_found");
    EXPECT_EQ(unknown["error"]["code"], -32601);
    EXPECT_EQ(unknown["id"], 5);
    const auto wrong = send(request_line(6, "world.step", {{"ticks", true}}));
    EXPECT_EQ(reason_of(wrong), "invalid_params");
    EXPECT_EQ(wrong["error"]["code"], -32602);
    EXPECT_EQ(reason_of(send(request_line(7, "world.step", json::array({1})))), "invalid_params");
    EXPECT_EQ(reason_of(send(request_line(8, "server.ping", {{"extra", 1}}))), "invalid_params");
    expect_alive();
}

TEST_F(Protocol, OutOfRangeNumbersAreErrorsAndChangeNothing) {
    ASSERT_TRUE(c_.result("world.create", {{"world", "n"}, {"paused", true}}).is_object());
    const std::string prefix =
        R"({"jsonrpc":"2.0","id":1,"method":"world.step","params":{"world":"n","ticks":)";
    EXPECT_EQ(reason_of(send(prefix + "9223372036854775808}}")), "invalid_params");   // 2^63
    EXPECT_EQ(reason_of(send(prefix + "18446744073709551616}}")), "invalid_params");  // 2^64, a double
    EXPECT_EQ(reason_of(send(prefix + "1.5}}")), "invalid_params");
    EXPECT_EQ(reason_of(send(prefix + "-1}}")), "invalid_params");
    EXPECT_EQ(reason_of(send(prefix + "1e400}}")), "parse_error");  // not representable: JSON text refused
    EXPECT_EQ(c_.result("world.info", {{"world", "n"}})["tick"], 0);
    expect_alive();
}

TEST_F(Protocol, OutOfRangeEntityIds) {
    const std::string prefix =
        R"({"jsonrpc":"2.0","id":1,"method":"world.despawn_entity","params":{"entity":)";
    EXPECT_EQ(reason_of(send(prefix + "9223372036854775808}}")), "invalid_params");
    EXPECT_EQ(reason_of(send(prefix + "9007199254740992}}")), "invalid_params");
    EXPECT_EQ(reason_of(send(prefix + "1.5}}")), "invalid_params");
    EXPECT_EQ(reason_of(send(prefix + "-1}}")), "invalid_params");
    EXPECT_EQ(reason_of(send(prefix + "1e400}}")), "parse_error");
    expect_alive();
}

TEST_F(Protocol, NestingDeeperThan64IsAnErrorButTheConnectionStays) {
    const auto deep = [](int depth) {
        return R"({"jsonrpc":"2.0","id":1,"method":"server.ping","params":{"x":)" + std::string(depth, '[') +
               std::string(depth, ']') + "}}";
    };
    const auto r = send(deep(70));
    EXPECT_EQ(reason_of(r), "invalid_request");
    EXPECT_EQ(r["error"]["data"]["limit"], 64);
    // 62 arrays + params + the request object = 64 levels: allowed (and then refused as params).
    EXPECT_EQ(reason_of(send(deep(62))), "invalid_params");
    EXPECT_EQ(reason_of(send(std::string(4000, '['))), "invalid_request");  // never parsed
    expect_alive();
}

TEST_F(Protocol, LineOverTheLimitIsTooLargeThenClosed) {
    expect_alive();
    ASSERT_TRUE(c_.send_line(R"({"jsonrpc":"2.0","id":1,"method":"server.ping","params":{"pad":")" +
                             std::string(5000, 'x') + "\"}}"));
    const auto r = c_.read_json();
    EXPECT_EQ(reason_of(r), "too_large");
    EXPECT_EQ(r["error"]["data"]["limit"], 4096);
    EXPECT_TRUE(r["id"].is_null());
    EXPECT_TRUE(c_.wait_closed());
    line_client fresh(server_.port());  // the server itself is fine
    EXPECT_EQ(fresh.call("server.ping")["result"], "pong");
}

TEST_F(Protocol, UnterminatedHugeLineIsRefusedWithoutBuffering) {
    // No newline ever: the server must answer once the limit is passed, not wait for the end.
    ASSERT_TRUE(c_.send_raw(std::string(10000, 'x')));
    EXPECT_EQ(reason_of(c_.read_json()), "too_large");
    EXPECT_TRUE(c_.wait_closed());
}

TEST(ProtocolDefaults, DefaultLimitIsOneMebibyte) {
    ecsd_server server;
    line_client c(server.port());
    const std::string pad(1024 * 1024 - 200, 'x');
    EXPECT_EQ(reason_of(c.call("server.ping", {{"pad", pad}})), "invalid_params");  // under 1 MiB: parsed
    ASSERT_TRUE(c.send_line(std::string(1024 * 1024 + 1, ' ')));
    EXPECT_EQ(reason_of(c.read_json()), "too_large");
    EXPECT_TRUE(c.wait_closed());
}

TEST_F(Protocol, NotificationsGetNoResponse) {
    ASSERT_TRUE(c_.send_line(notification_line("server.ping")));
    ASSERT_TRUE(c_.send_line(notification_line("world.step", {{"ticks", 1}})));
    ASSERT_TRUE(c_.send_line(notification_line("no.such.method")));
    ASSERT_TRUE(c_.send_line(request_line("after", "server.ping")));
    const auto r = c_.read_json();
    EXPECT_EQ(r["id"], "after");  // nothing came before it
    EXPECT_FALSE(c_.read_line(std::chrono::milliseconds(100)).has_value());
}

TEST_F(Protocol, NotificationsStillRun) {
    ASSERT_TRUE(c_.result("world.create", {{"world", "quiet"}, {"paused", true}}).is_object());
    ASSERT_TRUE(c_.send_line(notification_line("world.step", {{"world", "quiet"}, {"ticks", 3}})));
    EXPECT_EQ(c_.result("world.info", {{"world", "quiet"}})["tick"], 3);
}

TEST_F(Protocol, CrlfAndBlankLinesAreAccepted) {
    ASSERT_TRUE(c_.send_raw("\r\n\n  \n" + request_line(1, "server.ping") + "\r\n"));
    const auto r = c_.read_json();
    EXPECT_EQ(r["result"], "pong");
    EXPECT_EQ(r["id"], 1);
}

TEST_F(Protocol, StringAndNullIdsAreEchoed) {
    EXPECT_EQ(send(request_line("abc", "server.ping"))["id"], "abc");
    const auto null_id = send(request_line(nullptr, "server.ping"));
    EXPECT_TRUE(null_id["id"].is_null());
    EXPECT_EQ(null_id["result"], "pong");
}

TEST_F(Protocol, ClientHalfCloseStillGetsEveryAnswer) {
    std::string burst;
    for (int i = 0; i < 50; ++i) burst += request_line(i, "world.info") + "\n";
    ASSERT_TRUE(c_.send_raw(burst));
    c_.shutdown_write();
    for (int i = 0; i < 50; ++i) EXPECT_EQ(c_.read_json()["id"], i);
    EXPECT_TRUE(c_.wait_closed());
}

// Issue 21, low: a valid request followed by a NUL byte and garbage used to run (mutations too).
TEST_F(Protocol, ARequestFollowedByANulByteIsAParseErrorAndNothingRuns) {
    const std::string spawn =
        request_line(1, "world.spawn_entity", {{"components", {{"Position", json::object()}}}});
    const auto r = send(spawn + std::string(1, '\0') + "garbage");
    EXPECT_EQ(reason_of(r), "parse_error") << r.dump();
    EXPECT_TRUE(r["id"].is_null());
    EXPECT_EQ(r["error"]["message"],
              "invalid JSON at byte " + std::to_string(spawn.size() + 1) + ": a NUL byte");
    EXPECT_EQ(c_.result("world.info")["entities"], 0) << "nothing on the line ran";
}

// Issue 21, low: parse errors used to carry the JSON library's "[json.exception.parse_error.101]" text.
TEST_F(Protocol, ParseErrorsSayWhereInPlainWords) {
    const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})";
    auto r = send(ping + "}");
    EXPECT_EQ(r["error"]["message"],
              "invalid JSON at byte " + std::to_string(ping.size() + 1) + ": unexpected '}'");
    r = send(R"({"jsonrpc":"2.0","id":1,"method":)");
    EXPECT_EQ(r["error"]["message"], "invalid JSON at byte 34: unexpected end of input");
    for (const char* bad : {"{", "not json", "\xff\xfe", "[1,]", R"({"a":1e400})", R"({"a":"\q"})"}) {
        const auto message = send(bad)["error"]["message"].get<std::string>();
        EXPECT_EQ(message.rfind("invalid JSON", 0), 0U) << message;
        EXPECT_EQ(message.find("json.exception"), std::string::npos) << message;
        EXPECT_EQ(message.find("syntax error"), std::string::npos) << message;
    }
}

// Issue 21, low: an id of 2^64 used to echo as 1.8446744073709552e+19.
TEST_F(Protocol, AnIdPast64BitsOrWithAFractionIsInvalidRequestWithANullId) {
    for (const char* id : {"18446744073709551616", "1.5", "-9223372036854775809", "1e3"}) {
        const std::string line =
            std::string(R"({"jsonrpc":"2.0","id":)") + id + R"(,"method":"world.spawn_entity"})";
        ASSERT_TRUE(c_.send_line(line));
        const auto text = c_.read_line();
        ASSERT_TRUE(text.has_value());
        const auto r = json::parse(*text);
        EXPECT_EQ(reason_of(r), "invalid_request") << *text;
        EXPECT_TRUE(r["id"].is_null()) << *text;
        EXPECT_EQ(text->find("e+"), std::string::npos) << *text;
    }
    EXPECT_EQ(c_.result("world.info")["entities"], 0);
    EXPECT_EQ(send(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"server.ping"})")["id"],
              18446744073709551615ULL);
}

}  // namespace
}  // namespace ecsd::test
