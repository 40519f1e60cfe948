// The WebSocket face (issue 43): GET /ws on the HTTP port upgrades (RFC 6455), and the connection
// is then served as a TCP one is: one JSON-RPC text per message, answers and watch notifications
// as text messages, the same limits, auth and roles. Pages of other origins cannot open one.
#include <string>

#include <gtest/gtest.h>

#include "helpers.hpp"
#include "ws_client.hpp"

namespace ecsd::test {
namespace {

std::unique_ptr<ecsd_server> start(std::vector<std::string> args, int* http) {
    server_options o;
    o.args = std::move(args);
    return start_with_http(o, http);
}

TEST(WebSocket, RequestsBatchesAndWatchNotificationsAreMessages) {
    int http = 0;
    auto server = start({"--demo"}, &http);
    ws_client ws(http);
    ASSERT_TRUE(ws.upgraded()) << ws.head();
    // RFC 6455's example: this key's accept value.
    EXPECT_NE(ws.head().find("Sec-WebSocket-Accept: s3pPLMBiTxaQ9kYGzzhZRbK+xOo="), std::string::npos)
        << ws.head();
    EXPECT_EQ(ws.call("server.ping")["result"], "pong");

    ws.send_text(
        R"([{"jsonrpc":"2.0","id":"a","method":"server.ping"},{"jsonrpc":"2.0","id":"b","method":"world.list"}])");
    const auto batch = ws.read_json();
    ASSERT_TRUE(batch.is_array()) << batch.dump();
    ASSERT_EQ(batch.size(), 2U);
    EXPECT_EQ(batch[0]["result"], "pong");
    EXPECT_EQ(batch[1]["result"]["worlds"], json({"default"}));

    // A message in three fragments is one request.
    ws.send_frame(R"({"jsonrpc":"2.0",)", 1, false);
    ws.send_frame(R"("id":7,"method":)", 0, false);
    ws.send_frame(R"("server.ping"})", 0, true);
    EXPECT_EQ(ws.read_json()["id"], 7);

    // A watch: its answer, then one message per notification, each a whole JSON text.
    const auto watched = ws.call("world.watch", {{"query", "Position"}});
    ASSERT_TRUE(watched.contains("result")) << watched.dump();
    const auto sub = watched["result"]["subscription"];
    for (int i = 0; i < 3; ++i) {
        const auto n = ws.read_json();
        ASSERT_TRUE(n.is_object()) << "notification " << i;
        EXPECT_EQ(n["method"], "world.watch");
        EXPECT_EQ(n["params"]["subscription"], sub);
        EXPECT_TRUE(n["params"].contains("changed"));
    }
    // A ping is answered with a pong of the same payload, between the notifications.
    ws.send_frame("are you there", 9);
    bool ponged = false;
    for (int i = 0; i < 200 && !ponged; ++i) {
        const auto m = ws.read();
        ASSERT_TRUE(m.has_value());
        if (m->opcode == 10) {
            EXPECT_EQ(m->payload, "are you there");
            ponged = true;
        }
    }
    EXPECT_TRUE(ponged);
    // A close is answered with a close, then the server closes.
    ws.send_frame(std::string("\x03\xe8", 2), 8);
    bool closed = false;
    for (int i = 0; i < 200 && !closed; ++i) {
        const auto m = ws.read();
        ASSERT_TRUE(m.has_value());
        if (m->opcode == 8) {
            EXPECT_EQ(m->close_code(), 1000);
            closed = true;
        }
    }
    EXPECT_TRUE(closed);
    EXPECT_TRUE(ws.closed());
}

TEST(WebSocket, AuthAndRolesAreTheTcpPortsOwn) {
    const temp_file tokens("ecsd_ws_tokens", hash_token("alice-secret") + " alice player\n" +
                                                 hash_token("ops-secret") + " ops admin\n");
    int http = 0;
    auto server = start({"--tokens", tokens.path.string()}, &http);

    // No token on the upgrade (a browser cannot send one): server.auth comes first, as on TCP.
    ws_client ws(http);
    ASSERT_TRUE(ws.upgraded()) << ws.head();
    EXPECT_EQ(reason_of(ws.call("server.ping")), "unauthorized");
    const auto auth = ws.call("server.auth", {{"token", "alice-secret"}});
    EXPECT_EQ(auth["result"]["identity"], "alice") << auth.dump();
    EXPECT_EQ(ws.call("server.ping")["result"], "pong");
    const auto refused = ws.call("world.create", {{"world", "mine"}});
    EXPECT_EQ(reason_of(refused), "unauthorized");
    EXPECT_EQ(refused["error"]["data"]["role"], "player");

    // Before server.auth a message is held to --preauth-line-bytes: a longer one is too_large, then close.
    ws_client big(http);
    ASSERT_TRUE(big.upgraded());
    big.send_text(R"({"jsonrpc":"2.0","id":1,"method":"server.auth","params":{"token":")" +
                  std::string(5000, 'x') + "\"}}");
    EXPECT_EQ(reason_of(big.read_json()), "too_large");
    const auto close = big.read();
    ASSERT_TRUE(close.has_value());
    EXPECT_EQ(close->opcode, 8);
    EXPECT_EQ(close->close_code(), 1009);

    // A token in the Authorization header (Node, scripts) is checked on the upgrade.
    ws_client bearer(http, "Authorization: Bearer ops-secret\r\n");
    ASSERT_TRUE(bearer.upgraded()) << bearer.head();
    EXPECT_EQ(bearer.call("world.create", {{"world", "mine"}})["result"]["world"], "mine");
    ws_client wrong(http, "Authorization: Bearer nope\r\n");
    EXPECT_EQ(wrong.status(), 401);
    EXPECT_FALSE(wrong.upgraded());
}

TEST(WebSocket, PagesOfOtherOriginsAndBrokenHandshakesAreRefused) {
    int http = 0;
    auto server = start({}, &http);
    ws_client evil(http, "Origin: http://evil.example\r\n");
    EXPECT_EQ(evil.status(), 403) << evil.head();
    ws_client own(http, "Origin: http://127.0.0.1:" + std::to_string(http) + "\r\n");
    EXPECT_TRUE(own.upgraded()) << own.head();
    EXPECT_EQ(own.call("server.ping")["result"], "pong");

    // Not an upgrade at all, another version, a key that is not 16 bytes of base64.
    http_client plain(http);
    ASSERT_TRUE(plain.send("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
    const auto r = plain.read();
    ASSERT_TRUE(r.has_value());
    EXPECT_EQ(r->status, 426);
    http_client v8(http);
    ASSERT_TRUE(
        v8.send("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                "Sec-WebSocket-Key: dGhlIHNhbXBsZSBub25jZQ==\r\nSec-WebSocket-Version: 8\r\n\r\n"));
    const auto r8 = v8.read();
    ASSERT_TRUE(r8.has_value());
    EXPECT_EQ(r8->status, 426);
    EXPECT_TRUE(r8->has("Sec-WebSocket-Version: 13"));
    http_client badkey(http);
    ASSERT_TRUE(
        badkey.send("GET /ws HTTP/1.1\r\nHost: 127.0.0.1\r\nUpgrade: websocket\r\nConnection: Upgrade\r\n"
                    "Sec-WebSocket-Key: short\r\nSec-WebSocket-Version: 13\r\n\r\n"));
    const auto rk = badkey.read();
    ASSERT_TRUE(rk.has_value());
    EXPECT_EQ(rk->status, 400);
}

TEST(WebSocket, FramesThatBreakTheRfcCloseTheConnectionWithTheirCode) {
    int http = 0;
    auto server = start({"--max-line-bytes", "1000"}, &http);
    const auto close_code_after = [&](const std::string& payload, int opcode, bool masked) {
        ws_client ws(http);
        EXPECT_TRUE(ws.upgraded());
        ws.send_frame(payload, opcode, true, masked);
        for (int i = 0; i < 5; ++i) {
            const auto m = ws.read();
            if (!m) return -1;
            if (m->opcode == 8) {
                EXPECT_TRUE(ws.closed());
                return m->close_code();
            }
        }
        return -2;
    };
    EXPECT_EQ(close_code_after("{}", 1, false), 1002);                   // unmasked
    EXPECT_EQ(close_code_after("\x01\x02", 2, true), 1003);              // binary
    EXPECT_EQ(close_code_after("{}", 0, true), 1002);                    // a continuation of nothing
    EXPECT_EQ(close_code_after(std::string(2000, ' '), 1, true), 1009);  // over --max-line-bytes
    // The server is fine afterwards.
    ws_client ws(http);
    EXPECT_EQ(ws.call("server.ping")["result"], "pong");
    // Invalid JSON is an answer, not a closed connection.
    ws.send_text("{nope");
    EXPECT_EQ(reason_of(ws.read_json()), "parse_error");
    EXPECT_EQ(ws.call("server.ping")["result"], "pong");
}

TEST(WebSocket, AnUpgradeAtTheConnectionLimitIsRefused) {
    int http = 0;
    auto server = start({"--max-connections", "1"}, &http);
    ws_client first(http);
    ASSERT_TRUE(first.upgraded());
    EXPECT_EQ(first.call("server.ping")["result"], "pong");
    ws_client second(http);
    EXPECT_EQ(second.status(), 503) << second.head();
    EXPECT_EQ(first.call("server.ping")["result"], "pong");
}

}  // namespace
}  // namespace ecsd::test
