// The HTTP face over real sockets: JSON-RPC answered as on TCP, status codes, limits, keep-alive,
// auth, and world.watch as Server-Sent Events.
#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

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

/// ecsd with its HTTP face on a free port (start_with_http: again on another if it was taken).
struct http_fixture {
    int http = 0;
    std::unique_ptr<ecsd_server> owned;
    ecsd_server& server;
    explicit http_fixture(const std::vector<std::string>& more = {}) : owned(start(more)), server(*owned) {
        EXPECT_EQ(server.http_port(), http)
            << "five ports in a row were taken, or ecsd printed no viewer line";
    }

  private:
    std::unique_ptr<ecsd_server> start(const std::vector<std::string>& more) {
        server_options o;
        o.args = more;
        return start_with_http(o, &http);
    }
};

TEST(Http, PostAnswersJsonRpcExactlyAsTheTcpPortDoes) {
    http_fixture f;
    http_client c(f.http);
    ASSERT_TRUE(c.send(post(R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})")));
    auto r = c.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200);
    EXPECT_NE(r->head.find("Content-Type: application/json"), std::string::npos);
    EXPECT_EQ(json::parse(r->body), json::parse(R"({"jsonrpc":"2.0","id":1,"result":"pong"})"));
    // A batch, a world-bound method, an error: the same answers as TCP gives.
    line_client tcp(f.server.port());
    const std::string batch =
        R"([{"jsonrpc":"2.0","id":2,"method":"world.spawn_entity","params":{"components":{"Position":{}}}},)"
        R"({"jsonrpc":"2.0","id":3,"method":"world.nope"}])";
    ASSERT_TRUE(c.send(post(batch)));
    r = c.read();
    ASSERT_TRUE(r);
    const auto answer = json::parse(r->body);
    ASSERT_EQ(answer.size(), 2U);
    EXPECT_TRUE(answer[0]["result"].contains("entity"));
    EXPECT_EQ(reason_of(answer[1]), "method_not_found");
    EXPECT_EQ(tcp.result("world.info")["entities"], 1) << "the HTTP spawn is in the same world";
    // A notification alone: 204, no body; then the connection is still usable (keep-alive).
    ASSERT_TRUE(c.send(post(R"({"jsonrpc":"2.0","method":"server.ping"})")));
    r = c.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 204);
    ASSERT_TRUE(c.send(post(R"({"jsonrpc":"2.0","id":4,"method":"server.ping"})")));
    EXPECT_EQ(c.read()->status, 200);
}

// Issue 42 over HTTP: a Lua system defined by a POST runs in the tick the TCP port sees, its
// syntax errors answer as on TCP, and a token-less POST to a --token server defines nothing.
TEST(Http, LuaSystemsAreDefinedOverHttpAsOverTcp) {
    http_fixture f({"--token", "s3cret"});
    line_client tcp(f.server.port());
    ASSERT_EQ(tcp.result("server.auth", {{"token", "s3cret"}})["authenticated"], true);
    (void)tcp.result("world.pause");
    const auto e = tcp.result("world.spawn_entity",
                              {{"components", {{"Health", {{"hp", 50}, {"max", 100}}}}}})["entity"];
    const json define{
        {"jsonrpc", "2.0"},
        {"id", 1},
        {"method", "world.define_system"},
        {"params",
         {{"name", "regen"},
          {"query", "Health"},
          {"phase", "simulation"},
          {"source", "return function(w)\n  for e in w:each() do e.Health.hp = e.Health.hp + 1 end\nend"}}}};
    http_client anonymous(f.http);
    ASSERT_TRUE(anonymous.send(post(define.dump())));
    auto r = anonymous.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401);
    http_client c(f.http);
    ASSERT_TRUE(c.send(post(define.dump(), "Authorization: Bearer s3cret\r\n")));
    r = c.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(json::parse(r->body)["result"]["replaced"], false) << r->body;
    (void)tcp.result("world.step", {{"ticks", 2}});
    EXPECT_EQ(tcp.result("world.get_components", {{"entity", e}})["components"]["Health"]["hp"], 52.0);
    json bad = define;
    bad["params"]["name"] = "bad";
    bad["params"]["source"] = "return function(w)\n  x = = 1\nend";
    ASSERT_TRUE(c.send(post(bad.dump(), "Authorization: Bearer s3cret\r\n")));
    r = c.read();
    ASSERT_TRUE(r);
    const auto answer = json::parse(r->body);
    EXPECT_EQ(reason_of(answer), "invalid_params");
    EXPECT_NE(answer["error"]["message"].get<std::string>().find("line 2"), std::string::npos) << r->body;
}

TEST(Http, PipelinedRequestsAreAnsweredInOrderOnOneConnection) {
    http_fixture f;
    http_client c(f.http);
    std::string many;
    for (int i = 0; i < 50; ++i)
        many += post(R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":"world.info"})");
    ASSERT_TRUE(c.send(many));
    for (int i = 0; i < 50; ++i) {
        const auto r = c.read();
        ASSERT_TRUE(r) << "response " << i;
        EXPECT_EQ(json::parse(r->body)["id"], i);
    }
}

TEST(Http, StatusCodesForWhatIsNotJsonRpc) {
    http_fixture f({"--max-line-bytes", "1000"});
    {
        http_client c(f.http);
        ASSERT_TRUE(c.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
        const auto r = c.read();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 200);
        EXPECT_NE(r->body.find("<canvas"), std::string::npos) << "the viewer page";
        ASSERT_TRUE(c.send("GET /nowhere HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
        EXPECT_EQ(c.read()->status, 404);
        ASSERT_TRUE(c.send("DELETE / HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"));
        const auto d = c.read();
        EXPECT_EQ(d->status, 405);
        EXPECT_NE(d->head.find("Allow: GET, HEAD, POST"), std::string::npos);
        ASSERT_TRUE(c.send(post("not json")));
        const auto bad = c.read();
        EXPECT_EQ(bad->status, 200);
        EXPECT_EQ(reason_of(json::parse(bad->body)), "parse_error");
    }
    {
        http_client c(f.http);
        ASSERT_TRUE(c.send("BLAH\r\n\r\n"));
        const auto r = c.read();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 400);
        EXPECT_TRUE(c.closed());
    }
    {
        http_client c(f.http);
        ASSERT_TRUE(c.send(post(std::string(2000, ' '))));
        const auto r = c.read();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 413);
        EXPECT_TRUE(c.closed());
    }
    {
        http_client c(f.http);
        ASSERT_TRUE(
            c.send("GET / HTTP/1.1\r\nHost: 127.0.0.1\r\nX-Big: " + std::string(20000, 'a') + "\r\n\r\n"));
        const auto r = c.read();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 431);
    }
    line_client tcp(f.server.port());
    EXPECT_EQ(tcp.call("server.ping")["result"], "pong");
}

TEST(Http, ABearerTokenIsRequiredWhenOneIsSet) {
    http_fixture f({"--token", "s3cret"});
    http_client c(f.http);
    ASSERT_TRUE(c.send(post(R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})")));
    auto r = c.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 401);
    EXPECT_NE(r->head.find("WWW-Authenticate: Bearer"), std::string::npos);
    ASSERT_TRUE(c.send(
        post(R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})", "Authorization: Bearer wrong\r\n")));
    EXPECT_EQ(c.read()->status, 401);
    ASSERT_TRUE(c.send(
        post(R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})", "Authorization: Bearer s3cret\r\n")));
    r = c.read();
    EXPECT_EQ(r->status, 200);
    EXPECT_EQ(json::parse(r->body)["result"], "pong");
}

// Issue 21, low: wrong Bearer tokens count toward the same lockouts as server.auth's, so HTTP is no
// faster way to guess the token.
TEST(Http, WrongBearerTokensAreRateLimitedLikeServerAuth) {
    http_fixture f({"--token", "s3cret"});
    const auto ping = [](const std::string& token) {
        return post(R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})",
                    "Authorization: Bearer " + token + "\r\n");
    };
    {
        http_client c(f.http);
        for (int i = 0; i < 3; ++i) {
            ASSERT_TRUE(c.send(ping("guess")));
            const auto r = c.read();
            ASSERT_TRUE(r);
            EXPECT_EQ(r->status, 401);
        }
        EXPECT_TRUE(c.closed(2s)) << "three wrong tokens close the connection";
    }
    http_client d(f.http);
    ASSERT_TRUE(d.send(ping("guess")));
    EXPECT_EQ(d.read()->status, 401);
    ASSERT_TRUE(d.send(ping("guess")));  // the fifth from this address
    auto r = d.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 429);
    EXPECT_NE(r->head.find("Retry-After: 1"), std::string::npos) << r->head;
    const auto body = json::parse(r->body);
    EXPECT_EQ(reason_of(body), "rate_limited");
    EXPECT_GT(body["error"]["data"]["retry_after"].get<double>(), 0.5);
    line_client tcp(f.server.port());
    const auto guess = tcp.call("server.auth", {{"token", "guess"}});
    EXPECT_EQ(reason_of(guess), "rate_limited") << "one limiter for TCP and HTTP: " << guess.dump();
    EXPECT_TRUE(tcp.wait_closed(2s)) << "a wrong token during a lockout closes the connection";
    // Issue 40, 13: the right token is never locked out (it used to get 429 here).
    http_client e(f.http);
    ASSERT_TRUE(e.send(ping("s3cret")));
    r = e.read();
    ASSERT_TRUE(r);
    EXPECT_EQ(r->status, 200) << "the right token passes during the lockout";
    EXPECT_EQ(json::parse(r->body)["result"], "pong");
}

TEST(Http, SlowHeadersAreCutOffByTheRequestTimeout) {
    http_fixture f({"--request-timeout", "1"});
    http_client c(f.http);
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(c.send("GET / HTTP/1.1\r\n"));
    std::optional<response> r;
    for (int i = 0; i < 40 && !r; ++i) {
        (void)c.send("X");  // one byte at a time never finishes a header
        r = c.read(100ms);
    }
    ASSERT_TRUE(r) << "a request that never ends must be answered and closed";
    EXPECT_EQ(r->status, 408);
    EXPECT_GE(std::chrono::steady_clock::now() - start, 900ms);
}

TEST(Http, WatchIsAnEventStreamOfTheAnswerThenNotifications) {
    http_fixture f;
    line_client tcp(f.server.port());
    ASSERT_TRUE(tcp.result("world.create", {{"world", "s"}, {"paused", true}}).is_object());
    http_client c(f.http);
    ASSERT_TRUE(c.send(post(
        R"({"jsonrpc":"2.0","id":"w","method":"world.watch","params":{"world":"s","query":"Position"}})")));
    const auto head = c.read_head();
    ASSERT_TRUE(head);
    EXPECT_NE(head->find("Content-Type: text/event-stream"), std::string::npos);
    const auto first = c.event();
    ASSERT_TRUE(first);
    EXPECT_EQ((*first)["id"], "w");
    EXPECT_EQ((*first)["result"]["entities"], json::array());
    const auto e =
        tcp.result("world.spawn_entity",
                   {{"world", "s"}, {"components", {{"Position", {{"x", 1}, {"y", 2}}}}}})["entity"];
    const auto note = c.event();
    ASSERT_TRUE(note);
    EXPECT_EQ((*note)["method"], "world.watch");
    EXPECT_EQ((*note)["params"]["entered"][0]["entity"], e);
    // The world goes away: a last event, and the stream ends.
    ASSERT_TRUE(tcp.result("world.destroy", {{"world", "s"}}).is_object());
    const auto last = c.event();
    ASSERT_TRUE(last);
    EXPECT_EQ((*last)["params"]["ended"], true);
    EXPECT_TRUE(c.closed());
}

TEST(Http, AnEventStreamReaderThatStopsReadingIsBoundedAndDropped) {
    http_fixture f({"--max-output-bytes", "262144", "--idle-timeout", "2"});
    line_client tcp(f.server.port());
    json batch = json::array();
    for (int i = 0; i < 3000; ++i)
        batch.push_back({{"Position", {{"x", i}, {"y", 0}}}, {"Velocity", {{"x", 1}, {"y", 0}}}});
    ASSERT_TRUE(tcp.call("world.spawn_entities", {{"entities", batch}}).contains("result"));
    const long before = f.server.rss_kib();
    {
        line_client raw(f.http, "127.0.0.1", /*receive_buffer=*/4096);
        ASSERT_TRUE(raw.send_raw(post(
            R"({"jsonrpc":"2.0","id":1,"method":"world.watch","params":{"query":"Position, Velocity"}})")));
        std::this_thread::sleep_for(4s);  // 240 ticks of 3000 changes the reader never reads
        EXPECT_LT(f.server.rss_kib() - before, 48 * 1024 * sanitizer_memory_factor)
            << "an unread event stream must not grow the server";
        line_client other(f.server.port());  // (tcp idled out meanwhile: --idle-timeout 2)
        EXPECT_EQ(other.call("server.ping")["result"], "pong");
        EXPECT_TRUE(raw.wait_closed(3s)) << "no write progress for --idle-timeout: dropped";
    }
}

TEST(Http, AStalledEventStreamIsDroppedAtTheOutputBoundNotAfterTheIdleTimeout) {
    http_fixture f({"--max-output-bytes", "262144"});  // --idle-timeout stays 300 s
    line_client tcp(f.server.port());
    json batch = json::array();
    for (int i = 0; i < 3000; ++i)
        batch.push_back({{"Position", {{"x", i}, {"y", 0}}}, {"Velocity", {{"x", 1}, {"y", 0}}}});
    ASSERT_TRUE(tcp.call("world.spawn_entities", {{"entities", batch}}).contains("result"));
    line_client raw(f.http, "127.0.0.1", /*receive_buffer=*/4096);
    const auto start = std::chrono::steady_clock::now();
    ASSERT_TRUE(raw.send_raw(
        post(R"({"jsonrpc":"2.0","id":1,"method":"world.watch","params":{"query":"Position, Velocity"}})")));
    std::this_thread::sleep_for(3s);  // reads nothing: the server's socket buffer fills, then nothing moves
    // (wait_closed reads, so it reads what the kernel holds and then sees the end, well before 300 s.)
    EXPECT_TRUE(raw.wait_closed(10s)) << "a reader owing --max-output-bytes with no progress is dropped";
    EXPECT_LT(std::chrono::steady_clock::now() - start, 13s);
    EXPECT_EQ(tcp.call("server.ping")["result"], "pong");
}

TEST(Http, WatchesInsideABatchEndRightAfterTheAnswer) {
    // They are answered as plain JSON, with no stream to carry notifications: they must not stay
    // subscribed (and count against --max-watches) for the life of the keep-alive connection.
    http_fixture f({"--max-watches", "2"});
    line_client tcp(f.server.port());
    ASSERT_TRUE(tcp.result("world.create", {{"world", "b"}, {"paused", true}}).is_object());
    http_client c(f.http);
    const std::string watch = R"({"jsonrpc":"2.0","id":ID,"method":"world.watch",)"
                              R"("params":{"world":"b","query":"Position"}})";
    const auto with_id = [&](int id) {
        auto w = watch;
        w.replace(w.find("ID"), 2, std::to_string(id));
        return w;
    };
    for (int round = 0; round < 3; ++round) {  // more watches in all than --max-watches allows at once
        ASSERT_TRUE(c.send(post("[" + with_id(1) + "," + with_id(2) + "]")));
        const auto r = c.read();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 200);
        const auto answers = json::parse(r->body);
        ASSERT_EQ(answers.size(), 2U) << r->body;
        for (const auto& a : answers) EXPECT_TRUE(a["result"].contains("subscription")) << a;
    }
    // A batch's watch cannot be unwatched: it is over already.
    ASSERT_TRUE(
        c.send(post(R"({"jsonrpc":"2.0","id":3,"method":"world.unwatch","params":{"subscription":1}})")));
    const auto unwatched = c.read();
    ASSERT_TRUE(unwatched);
    EXPECT_TRUE(json::parse(unwatched->body).contains("error")) << unwatched->body;
    // The same connection may still open a stream: nothing of the batches counts any more.
    ASSERT_TRUE(c.send(post(with_id(4))));
    ASSERT_TRUE(c.read_head());
    const auto first = c.event();
    ASSERT_TRUE(first);
    EXPECT_TRUE((*first)["result"].contains("subscription")) << *first;
    ASSERT_TRUE(
        tcp.result("world.spawn_entity", {{"world", "b"}, {"components", {{"Position", json::object()}}}})
            .is_object());
    const auto note = c.event();
    ASSERT_TRUE(note);
    EXPECT_EQ((*note)["params"]["subscription"], (*first)["result"]["subscription"]);
    EXPECT_EQ((*note)["params"]["entered"].size(), 1U);
    EXPECT_FALSE(c.event(300ms)) << "only the stream's own subscription notifies";
}

TEST(Http, BrpGetComponentsWatchIsAnEventStreamOfResponsesWithTheRequestsId) {
    http_fixture f;
    line_client tcp(f.server.port());
    ASSERT_TRUE(tcp.result("world.create", {{"world", "brp"}, {"paused", true}}).is_object());
    const auto e =
        tcp.result("world.spawn_entity",
                   {{"world", "brp"}, {"components", {{"Position", {{"x", 1}, {"y", 2}}}}}})["entity"];
    http_client c(f.http);
    ASSERT_TRUE(c.send(post(json{{"jsonrpc", "2.0"},
                                 {"id", "g"},
                                 {"method", "world.get_components+watch"},
                                 {"params", {{"world", "brp"}, {"entity", e}, {"components", {"Position"}}}}}
                                .dump())));
    const auto head = c.read_head();
    ASSERT_TRUE(head);
    EXPECT_NE(head->find("Content-Type: text/event-stream"), std::string::npos);
    const auto first = c.event();
    ASSERT_TRUE(first);
    EXPECT_EQ((*first)["id"], "g");
    EXPECT_EQ((*first)["result"]["components"]["Position"]["x"], 1.0);
    ASSERT_TRUE(
        tcp.result("world.mutate_components",
                   {{"world", "brp"}, {"entity", e}, {"component", "Position"}, {"path", "x"}, {"value", 9}})
            .is_object());
    const auto update = c.event();
    ASSERT_TRUE(update);
    EXPECT_EQ((*update)["id"], "g");
    EXPECT_EQ((*update)["result"]["components"]["Position"]["x"], 9.0);
    // The entity goes: a closing error with the same id, and the stream ends.
    ASSERT_TRUE(tcp.result("world.despawn_entity", {{"world", "brp"}, {"entity", e}}).is_object());
    const auto last = c.event();
    ASSERT_TRUE(last);
    EXPECT_EQ((*last)["id"], "g");
    EXPECT_TRUE(last->contains("error")) << *last;
    EXPECT_TRUE(c.closed());
}

TEST(Http, TheConnectionLimitAnswers503AndFreesAPlaceOnClose) {
    http_fixture f({"--max-connections", "2"});
    auto a = std::make_unique<http_client>(f.http);
    http_client b(f.http);
    for (http_client* c : {a.get(), &b}) {  // both accepted and served
        ASSERT_TRUE(c->send(post(R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})")));
        const auto r = c->read();
        ASSERT_TRUE(r);
        EXPECT_EQ(r->status, 200);
    }
    http_client third(f.http);
    const auto refused = third.read();
    ASSERT_TRUE(refused);
    EXPECT_EQ(refused->status, 503);
    EXPECT_TRUE(third.closed());
    line_client tcp(f.server.port());  // TCP connections are counted apart
    EXPECT_EQ(tcp.call("server.ping")["result"], "pong");
    a.reset();  // a place opens
    bool served = false;
    for (int i = 0; i < 50 && !served; ++i) {
        std::this_thread::sleep_for(50ms);
        http_client again(f.http);
        if (!again.send(post(R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})"))) continue;
        const auto r = again.read(1s);
        served = r && r->status == 200;
    }
    EXPECT_TRUE(served);
}

TEST(Http, WatchIsAllowedUnderReadOnlyWhileASpawnIsRefused) {
    http_fixture f({"--read-only"});
    http_client c(f.http);
    ASSERT_TRUE(c.send(post(R"({"jsonrpc":"2.0","id":1,"method":"world.spawn_entity",)"
                            R"("params":{"components":{"Position":{}}}})")));
    const auto spawn = c.read();
    ASSERT_TRUE(spawn);
    const auto refused = json::parse(spawn->body);
    ASSERT_TRUE(refused.contains("error")) << spawn->body;
    EXPECT_EQ(refused["error"]["code"], -32010) << spawn->body;  // unauthorized
    ASSERT_TRUE(
        c.send(post(R"({"jsonrpc":"2.0","id":2,"method":"world.watch","params":{"query":"Position"}})")));
    const auto head = c.read_head();
    ASSERT_TRUE(head);
    EXPECT_NE(head->find("text/event-stream"), std::string::npos);
    const auto first = c.event();
    ASSERT_TRUE(first);
    EXPECT_TRUE((*first)["result"].contains("subscription")) << *first;
    line_client tcp(f.server.port());
    const auto over_tcp = tcp.call("world.watch", {{"query", "Position"}});
    EXPECT_TRUE(over_tcp["result"].contains("subscription")) << over_tcp;
}

TEST(Http, AnEventStreamKeepsFlowingAfterALargeWrite) {
    // A first answer over 256 KiB used to leave a stale write position behind: the stream then
    // believed gigabytes were owed and sent nothing more.
    http_fixture f;
    line_client tcp(f.server.port());
    ASSERT_TRUE(tcp.result("world.create", {{"world", "big"}, {"paused", true}}).is_object());
    json batch = json::array();
    for (int i = 0; i < 6000; ++i) batch.push_back({{"Position", {{"x", i}, {"y", 0}}}});
    ASSERT_TRUE(tcp.call("world.spawn_entities", {{"world", "big"}, {"entities", batch}}).contains("result"));
    http_client c(f.http);
    ASSERT_TRUE(c.send(post(
        R"({"jsonrpc":"2.0","id":1,"method":"world.watch","params":{"world":"big","query":"Position"}})")));
    ASSERT_TRUE(c.read_head());
    const auto first = c.event();
    ASSERT_TRUE(first);
    ASSERT_EQ((*first)["result"]["entities"].size(), 6000U);
    ASSERT_TRUE(
        tcp.result("world.spawn_entity", {{"world", "big"}, {"components", {{"Position", json::object()}}}})
            .is_object());
    const auto next = c.event();
    ASSERT_TRUE(next) << "the stream stalled after a large write";
    EXPECT_EQ((*next)["params"]["entered"].size(), 1U);
}

TEST(Http, FiveHundredEventStreamsAtOnce) {
    http_fixture f;
    line_client tcp(f.server.port());
    ASSERT_TRUE(tcp.result("world.create", {{"world", "many"}, {"paused", true}}).is_object());
    std::vector<std::unique_ptr<http_client>> readers;
    for (int i = 0; i < 500; ++i) {
        readers.push_back(std::make_unique<http_client>(f.http));
        ASSERT_TRUE(readers.back()->send(post(R"({"jsonrpc":"2.0","id":1,"method":"world.watch",)"
                                              R"("params":{"world":"many","query":"Position"}})")));
    }
    for (auto& r : readers) {
        ASSERT_TRUE(r->read_head());
        ASSERT_TRUE(r->event());
    }
    ASSERT_TRUE(
        tcp.result("world.spawn_entity", {{"world", "many"}, {"components", {{"Position", json::object()}}}})
            .is_object());
    std::size_t told = 0;
    for (auto& r : readers) {
        const auto e = r->event();
        if (e && (*e)["params"]["entered"].size() == 1) ++told;
    }
    EXPECT_EQ(told, 500U);
}

}  // namespace
}  // namespace ecsd::test
