// The HTTP face against what a hostile web page, a guesser or a crowd of silent clients can do
// (issue 40): pages of other sites (CSRF, DNS rebinding, framing) and HTTP aimed at the TCP port,
// a batch's answer past --max-output-bytes, idle connections at --max-connections, an event stream
// whose data looks like its end, and an unauthenticated body past --preauth-line-bytes.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <cctype>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"
#include "http_client.hpp"

namespace ecsd::test {
namespace {

using namespace std::chrono_literals;

/// A request with these headers (each "Name: value"), a Content-Length and the body.
std::string request(const std::string& method, const std::vector<std::string>& headers,
                    const std::string& body = {}) {
    std::string out = method + " / HTTP/1.1\r\n";
    for (const auto& h : headers) out += h + "\r\n";
    if (method == "POST") out += "Content-Length: " + std::to_string(body.size()) + "\r\n";
    return out + "\r\n" + body;
}

const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})";

/// ecsd with its HTTP face on a free port (tried again when another process took the port first).
struct fixture {
    int http = 0;
    std::unique_ptr<ecsd_server> server;
    explicit fixture(const std::vector<std::string>& more = {}, const std::vector<std::string>& env = {}) {
        server_options o;
        o.args = more;
        o.env = env;
        server = start_with_http(o, &http);
        if (server->http_port() != http)
            ADD_FAILURE() << "five ports in a row were taken, or ecsd printed no viewer line";
    }
    [[nodiscard]] std::string host() const { return "Host: 127.0.0.1:" + std::to_string(http); }
    [[nodiscard]] std::string own_origin() const {
        return "Origin: http://127.0.0.1:" + std::to_string(http);
    }
    /// One request on a fresh connection, its response.
    std::optional<response> ask(const std::string& bytes) const {
        http_client c(http);
        if (!c.send(bytes)) return std::nullopt;
        return c.read();
    }
};

bool world_exists(int tcp_port, const std::string& name) {
    line_client tcp(tcp_port);
    const auto worlds = tcp.result("world.list");
    for (const auto& w : worlds["worlds"])
        if ((w.is_string() && w == name) || (w.is_object() && w.value("name", "") == name)) return true;
    return false;
}

std::string create(const std::string& world) {
    return R"({"jsonrpc":"2.0","id":1,"method":"world.create","params":{"world":")" + world + R"("}})";
}

// --- pages of other sites ---------------------------------------------------------------------

TEST(HttpSecurity, APageOfAnotherSiteCannotPostOnlyJsonFromItsOwnPageGoesThrough) {
    fixture f;
    const auto evil = std::string("Origin: http://evil.example");
    // What a cross-site form or a simple fetch sends: refused, and nothing runs.
    for (const auto& type :
         {"text/plain", "application/x-www-form-urlencoded", "multipart/form-data; boundary=x"}) {
        const auto r =
            f.ask(request("POST", {f.host(), evil, std::string("Content-Type: ") + type}, create("csrf")));
        ASSERT_TRUE(r) << type;
        EXPECT_EQ(r->status, 403) << type << ": " << r->body;
        EXPECT_EQ(reason_of(json::parse(r->body)), "unauthorized") << r->body;
    }
    {
        const auto r = f.ask(request("POST", {f.host(), evil}, create("csrf")));  // no Content-Type at all
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 403);
    }
    {
        // JSON would need a preflight, and the preflight is refused, without any CORS header.
        const auto r =
            f.ask(request("POST", {f.host(), evil, "Content-Type: application/json"}, create("csrf")));
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 403);
        const auto pre = f.ask(request("OPTIONS", {f.host(), evil, "Access-Control-Request-Method: POST",
                                                   "Access-Control-Request-Headers: content-type"}));
        ASSERT_TRUE(pre);
        EXPECT_TRUE(pre->status == 403 || pre->status == 405) << pre->status;
        EXPECT_FALSE(pre->has("access-control-allow")) << pre->head;
    }
    {
        const auto r = f.ask(
            request("POST", {f.host(), "Origin: null", "Content-Type: application/json"}, create("csrf")));
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 403) << "a sandboxed page or a file: has the origin null";
    }
    EXPECT_FALSE(world_exists(f.server->port(), "csrf")) << "a refused request runs nothing";

    // The viewer's own requests: JSON, from its own origin (charset allowed).
    for (const auto& type : {"application/json", "application/json; charset=utf-8", "Application/JSON"}) {
        const auto r =
            f.ask(request("POST", {f.host(), f.own_origin(), std::string("Content-Type: ") + type}, ping));
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 200) << type << ": " << r->body;
        EXPECT_EQ(json::parse(r->body)["result"], "pong");
    }
    // Its own origin with a type a form sends: refused too (no page needs it).
    {
        const auto r =
            f.ask(request("POST", {f.host(), f.own_origin(), "Content-Type: text/plain"}, create("own")));
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 403);
    }
    // curl, as the README has it: form-encoded, no Origin. Still served.
    {
        const auto r = f.ask(request("POST",
                                     {f.host(), "User-Agent: curl/7.88.1", "Accept: */*",
                                      "Content-Type: application/x-www-form-urlencoded"},
                                     ping));
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 200) << r->body;
        EXPECT_EQ(json::parse(r->body)["result"], "pong");
    }
    // A refusal whose body was read keeps the connection, as any other answer.
    http_client c(f.http);
    ASSERT_TRUE(c.send(request("POST", {f.host(), evil, "Content-Type: text/plain"}, ping)));
    ASSERT_EQ(c.read()->status, 403);
    ASSERT_TRUE(c.send(request("POST", {f.host(), "Content-Type: application/json"}, ping)));
    const auto again = c.read();
    ASSERT_TRUE(again);
    EXPECT_EQ(again->status, 200);
}

TEST(HttpSecurity, TheHostHeaderMustNameThisServer) {
    fixture f;
    const auto port = std::to_string(f.http);
    // DNS rebinding: evil.example now resolves to 127.0.0.1, and its page is "same-origin".
    for (const auto& method : {"POST", "GET"}) {
        const auto r = f.ask(request(method,
                                     {"Host: evil.example:" + port, "Origin: http://evil.example:" + port,
                                      "Content-Type: application/json"},
                                     method == std::string("POST") ? create("rebound") : ""));
        ASSERT_TRUE(r) << method;
        EXPECT_EQ(r->status, 403) << method;
        const auto plain =
            f.ask(request(method, {"Host: evil.example"}, method == std::string("POST") ? ping : ""));
        ASSERT_TRUE(plain) << method;
        EXPECT_EQ(plain->status, 403) << method;
    }
    EXPECT_FALSE(world_exists(f.server->port(), "rebound"));
    // Its own address and loopback names, with or without the port.
    for (const auto& host : {"127.0.0.1:" + port, std::string("127.0.0.1"), "localhost:" + port,
                             std::string("LOCALHOST"), "[::1]:" + port, "127.0.0.2:" + port}) {
        const auto r = f.ask(request("POST", {"Host: " + host}, ping));
        ASSERT_TRUE(r) << host;
        EXPECT_EQ(r->status, 200) << host;
        const auto page = f.ask(request("GET", {"Host: " + host}));
        ASSERT_TRUE(page) << host;
        EXPECT_EQ(page->status, 200) << host;
    }
    const auto other = f.ask(request("POST", {"Host: 10.1.2.3:" + port}, ping));
    ASSERT_TRUE(other);
    EXPECT_EQ(other->status, 403) << "bound to loopback, a non-loopback address is not this server";
    const auto none =
        f.ask("POST / HTTP/1.0\r\nContent-Length: " + std::to_string(ping.size()) + "\r\n\r\n" + ping);
    ASSERT_TRUE(none);
    EXPECT_EQ(none->status, 200) << "HTTP/1.0 without Host";
    const auto two = f.ask(request("POST", {f.host(), "Host: evil.example"}, ping));
    ASSERT_TRUE(two);
    EXPECT_EQ(two->status, 400) << "two Host headers";
}

TEST(HttpSecurity, AllowedHostsAndOriginsComeFromFlagsAndTheEnvironment) {
    fixture f({"--http-allow-host", "ecsd.example", "--http-allow-host", "game.example:8080",
               "--http-allow-origin", "https://tools.example/"},
              {"ECSD_HTTP_ALLOW_HOST=ignored.example"});  // the flags win over the variable
    const auto json_type = std::string("Content-Type: application/json");
    auto r = f.ask(request("POST", {"Host: ecsd.example:9999", json_type}, ping));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << "an allowed name, any port";
    r = f.ask(
        request("POST", {"Host: game.example:8080", "Origin: http://game.example:8080", json_type}, ping));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << "a name with its port, and the page it served";
    r = f.ask(request("POST", {"Host: game.example:8081", json_type}, ping));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << "a name given with a port allows that port only";
    r = f.ask(request("POST", {"Host: ignored.example", json_type}, ping));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403);
    r = f.ask(request("POST", {f.host(), "Origin: https://tools.example", json_type}, ping));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << "an allowed origin";
    r = f.ask(request("POST", {f.host(), "Origin: https://tools.example", "Content-Type: text/plain"}, ping));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << "even an allowed origin's page must send JSON";
    r = f.ask(request("POST", {f.host(), "Origin: http://tools.example", json_type}, ping));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403) << "another scheme is another origin";
    line_client tcp(f.server->port());
    const auto config = tcp.result("server.info")["config"];
    EXPECT_EQ(config["http-allow-host"], json::array({"ecsd.example", "game.example:8080"})) << config;
    EXPECT_EQ(config["http-allow-origin"], json::array({"https://tools.example/"})) << config;

    fixture g({}, {"ECSD_HTTP_ALLOW_HOST=a.example,b.example", "ECSD_HTTP_ALLOW_ORIGIN=*"});
    for (const auto& host : {"a.example", "b.example:1"}) {
        r = g.ask(request("POST", {std::string("Host: ") + host, "Origin: https://anyone.example", json_type},
                          ping));
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 200) << host;
    }
    fixture any({"--http-allow-host", "*"});
    r = any.ask(request("POST", {"Host: whatever.example", json_type}, ping));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << "* allows any Host";
}

TEST(HttpSecurity, BoundToEveryAddressAnyAddressIsThisServerButNamesAreNot) {
    fixture f({"--host", "0.0.0.0"});
    const auto port = std::to_string(f.http);
    for (const auto& host :
         {"10.1.2.3:" + port, "[fe80::1]:" + port, "localhost:" + port, "127.0.0.1:" + port}) {
        const auto r = f.ask(request("POST", {"Host: " + host}, ping));
        ASSERT_TRUE(r) << host;
        EXPECT_EQ(r->status, 200) << host;
    }
    const auto r = f.ask(request("POST", {"Host: ecsd.internal:" + port}, ping));
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 403);
}

TEST(HttpSecurity, TheViewerCannotBeFramedAndRunsOnlyItsOwnScript) {
    fixture f;
    const auto page = f.ask(request("GET", {f.host()}));
    ASSERT_TRUE(page);
    ASSERT_EQ(page->status, 200);
    EXPECT_TRUE(page->has("x-frame-options: deny")) << page->head;
    EXPECT_TRUE(page->has("x-content-type-options: nosniff")) << page->head;
    const auto low = lower(page->head);
    const auto csp_at = low.find("content-security-policy: ");
    ASSERT_NE(csp_at, std::string::npos) << page->head;
    const auto csp = low.substr(csp_at, low.find("\r\n", csp_at) - csp_at);
    EXPECT_NE(csp.find("frame-ancestors 'none'"), std::string::npos) << csp;
    EXPECT_NE(csp.find("connect-src 'self'"), std::string::npos) << csp;
    const auto nonce_at = csp.find("'nonce-");
    ASSERT_NE(nonce_at, std::string::npos) << csp;
    const auto nonce = csp.substr(nonce_at + 7, csp.find('\'', nonce_at + 7) - nonce_at - 7);
    EXPECT_GE(nonce.size(), 22U);
    EXPECT_NE(page->body.find("<script nonce=\"" + nonce + "\">"), std::string::npos)
        << "the page's one script carries the policy's nonce";
    const auto second = f.ask(request("GET", {f.host()}));
    ASSERT_TRUE(second);
    EXPECT_EQ(second->body.find(nonce), std::string::npos) << "a fresh nonce for every page";
    http_client h(f.http);
    ASSERT_TRUE(h.send(request("HEAD", {f.host()})));
    const auto head = h.read_head();  // (no body follows its Content-Length)
    ASSERT_TRUE(head);
    EXPECT_NE(lower(*head).find("content-security-policy: "), std::string::npos) << *head;
    const auto answer = f.ask(request("POST", {f.host()}, ping));
    ASSERT_TRUE(answer);
    EXPECT_TRUE(answer->has("x-content-type-options: nosniff")) << answer->head;
    EXPECT_TRUE(answer->has("x-frame-options: deny")) << answer->head;
}

TEST(HttpSecurity, TheTcpPortClosesAConnectionThatSpeaksHttp) {
    fixture f;
    const auto body = create("via_tcp") + "\n";
    // What a page's fetch or form aimed at the JSON-RPC port sends: the body line must not run.
    for (const auto& first : {std::string("POST / HTTP/1.1"), std::string("GET / HTTP/1.1"),
                              std::string("Host: 127.0.0.1:7777"), std::string("PUT /x HTTP/1.0")}) {
        line_client tcp(f.server->port());
        ASSERT_TRUE(tcp.send_raw(first +
                                 "\r\nHost: 127.0.0.1\r\nContent-Type: text/plain\r\nContent-Length: " +
                                 std::to_string(body.size()) + "\r\n\r\n" + body));
        EXPECT_FALSE(tcp.read_line(2s).has_value()) << first << ": nothing is answered";
        EXPECT_TRUE(tcp.wait_closed(2s)) << first;
    }
    EXPECT_FALSE(world_exists(f.server->port(), "via_tcp"));
    line_client tcp(f.server->port());  // JSON-RPC is untouched
    EXPECT_EQ(tcp.call("server.ping")["result"], "pong");
}

// --- resources ----------------------------------------------------------------------------------

TEST(HttpSecurity, ABatchFollowsMaxOutputBytesAsOnTcp) {
    fixture f({"--max-output-bytes", "65536"});
    line_client tcp(f.server->port());
    json batch = json::array();
    for (int i = 0; i < 2000; ++i) batch.push_back({{"Position", {{"x", i}, {"y", 0}}}});
    ASSERT_TRUE(tcp.call("world.spawn_entities", {{"entities", batch}}).contains("result"));
    const std::string query =
        R"({"jsonrpc":"2.0","id":ID,"method":"world.query","params":{"query":"Position","limit":10000}})";
    std::string body = "[";
    for (int i = 0; i < 4; ++i) {
        auto q = query;
        q.replace(q.find("ID"), 2, std::to_string(i));
        body += q + ",";
    }
    body +=
        R"({"jsonrpc":"2.0","id":4,"method":"world.spawn_entity","params":{"components":{"Position":{}}}},)";
    body += R"({"jsonrpc":"2.0","method":"world.spawn_entity","params":{"components":{"Position":{}}}}])";
    const auto r = f.ask(request("POST", {f.host(), "Content-Type: application/json"}, body));
    ASSERT_TRUE(r);
    ASSERT_EQ(r->status, 200);
    auto answers = json::parse(r->body);  // (not const: [] on a missing member gives null)
    ASSERT_EQ(answers.size(), 5U) << "the notification answers nothing";
    EXPECT_EQ(answers[0]["result"]["entities"].size(), 2000U) << "the first answer passes the bound";
    for (std::size_t i = 1; i < 5; ++i) {
        EXPECT_EQ(answers[i]["id"], i);
        EXPECT_EQ(reason_of(answers[i]), "too_large") << answers[i];
        EXPECT_EQ(answers[i]["error"]["data"]["limit"], 65536);
    }
    EXPECT_EQ(tcp.result("world.info")["entities"], 2000) << "elements past the bound do not run";
    auto over_tcp = [&] {
        line_client t(f.server->port());
        EXPECT_TRUE(t.send_line(body));
        return t.read_json();
    }();
    ASSERT_EQ(over_tcp.size(), 5U);
    for (std::size_t i = 1; i < 5; ++i)
        EXPECT_EQ(over_tcp[i]["error"]["message"], answers[i]["error"]["message"]) << "TCP's words";
}

TEST(HttpSecurity, SilentConnectionsMakeRoomForANewcomerAtTheLimit) {
    fixture f({"--max-connections", "3"});
    std::vector<std::unique_ptr<http_client>> silent;
    for (int i = 0; i < 3; ++i) silent.push_back(std::make_unique<http_client>(f.http));
    std::this_thread::sleep_for(1300ms);  // silent for over a second
    http_client newcomer(f.http);
    ASSERT_TRUE(newcomer.send(request("POST", {f.host()}, ping)));
    const auto r = newcomer.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << "an idle connection gave its place";
    int closed = 0;
    for (auto& c : silent) closed += c->closed(300ms) ? 1 : 0;
    EXPECT_EQ(closed, 1) << "one place was needed, one connection was closed";
}

TEST(HttpSecurity, AtTheLimitIdleKeepAliveConnectionsGoBeforeUnfinishedRequests) {
    fixture f({"--max-connections", "2"});
    http_client stalled(f.http);  // mid-request since now: the older of the two
    ASSERT_TRUE(stalled.send("POST / HTTP/1.1\r\n" + f.host() + "\r\n"));
    std::this_thread::sleep_for(200ms);
    http_client idle(f.http);  // a keep-alive connection between requests
    ASSERT_TRUE(idle.send(request("POST", {f.host()}, ping)));
    ASSERT_EQ(idle.read()->status, 200);
    std::this_thread::sleep_for(1300ms);
    http_client newcomer(f.http);
    ASSERT_TRUE(newcomer.send(request("POST", {f.host()}, ping)));
    const auto r = newcomer.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_TRUE(idle.closed(1s)) << "the idle connection made room";
    // The unfinished request is still served when it ends.
    ASSERT_TRUE(stalled.send("Content-Length: " + std::to_string(ping.size()) + "\r\n\r\n" + ping));
    const auto late = stalled.read();
    ASSERT_TRUE(late);
    EXPECT_EQ(late->status, 200);
    // Now the newcomer is idle, the stalled one too: the next newcomer is served as well.
    std::this_thread::sleep_for(1300ms);
    http_client third(f.http);
    ASSERT_TRUE(third.send(request("POST", {f.host()}, ping)));
    const auto t = third.read();
    ASSERT_TRUE(t);
    EXPECT_EQ(t->status, 200);
}

TEST(HttpSecurity, WorldDataThatLooksLikeTheEndDoesNotEndAStream) {
    fixture f;
    line_client tcp(f.server->port());
    ASSERT_TRUE(tcp.result("world.create", {{"world", "w"}, {"paused", true}}).is_object());
    ASSERT_TRUE(tcp.result("world.register_component",
                           {{"world", "w"}, {"name", "error"}, {"fields", {{"ended", false}, {"code", 0}}}})
                    .is_object());
    http_client c(f.http);
    ASSERT_TRUE(c.send(request(
        "POST", {f.host()},
        R"({"jsonrpc":"2.0","id":"s","method":"world.watch","params":{"world":"w","query":"error"}})")));
    ASSERT_TRUE(c.read_head());
    ASSERT_TRUE(c.event());
    for (int i = 0; i < 3; ++i) {
        ASSERT_TRUE(tcp.result("world.spawn_entity",
                               {{"world", "w"}, {"components", {{"error", {{"ended", true}, {"code", i}}}}}})
                        .is_object());
        const auto note = c.event();
        ASSERT_TRUE(note) << "notification " << i << ": the stream ended early";
        EXPECT_EQ((*note)["params"]["entered"].size(), 1U) << *note;
    }
    // The world's end is still the stream's end.
    ASSERT_TRUE(tcp.result("world.destroy", {{"world", "w"}}).is_object());
    const auto last = c.event();
    ASSERT_TRUE(last);
    EXPECT_EQ((*last)["params"]["ended"], true);
    EXPECT_TRUE(c.closed());
}

TEST(HttpSecurity, WithATokenABodyPastThePreauthLimitIsNotReadWithoutIt) {
    fixture f({"--token", "s3cret"});
    const auto big = std::string(100000, ' ') + ping;  // 25 times --preauth-line-bytes
    const auto head = "POST / HTTP/1.1\r\n" + f.host() + "\r\nContent-Type: application/json\r\n";
    for (const auto& auth : {std::string(), std::string("Authorization: Bearer nope\r\n")}) {
        http_client c(f.http);
        // Only the headers: the answer must not wait for the body.
        ASSERT_TRUE(c.send(head + auth + "Content-Length: " + std::to_string(big.size()) + "\r\n\r\n"));
        const auto r = c.read(2s);
        ASSERT_TRUE(r) << "no answer before the body";
        EXPECT_EQ(r->status, 401);
        EXPECT_TRUE(r->has("www-authenticate: bearer")) << r->head;
        EXPECT_TRUE(c.closed(2s)) << "the body is never read: the connection closes";
    }
    {
        http_client c(f.http);  // a chunked body has no length to judge: the same
        ASSERT_TRUE(c.send(head + "Transfer-Encoding: chunked\r\n\r\n"));
        const auto r = c.read(2s);
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 401);
    }
    {
        http_client c(f.http);  // a small body is read, and refused, as before
        ASSERT_TRUE(c.send(head + "Content-Length: " + std::to_string(ping.size()) + "\r\n\r\n" + ping));
        const auto r = c.read();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 401);
        ASSERT_TRUE(c.send(head + "Authorization: Bearer s3cret\r\nContent-Length: " +
                           std::to_string(ping.size()) + "\r\n\r\n" + ping));
        const auto ok = c.read();
        ASSERT_TRUE(ok);
        EXPECT_EQ(ok->status, 200) << "the connection stays";
    }
    http_client c(f.http);  // with the token, a large body is read and answered
    ASSERT_TRUE(c.send(head + "Authorization: Bearer s3cret\r\nContent-Length: " +
                       std::to_string(big.size()) + "\r\n\r\n" + big));
    const auto r = c.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(json::parse(r->body)["result"], "pong");
}

}  // namespace
}  // namespace ecsd::test
