// Bounds that hold for the server as a whole, not per connection: the watch views the worlds diff
// (--max-watch-views, --max-watch-views-total; watchers that never read stop costing the tick)
// and the output held unsent for all connections together (--max-output-total).
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"
#include "http_client.hpp"

namespace ecsd::test {
namespace {

using namespace std::chrono_literals;

/// Movers (Position + Velocity: every one changes every tick), `columns` to a row.
void spawn_movers(line_client& c, const std::string& world, int n, int columns = 100) {
    json batch = json::array();
    for (int i = 0; i < n; ++i)
        batch.push_back(
            {{"Position", {{"x", i % columns}, {"y", i / columns}}}, {"Velocity", {{"x", 1}, {"y", 0}}}});
    const auto r = c.call("world.spawn_entities", {{"world", world}, {"entities", batch}});
    ASSERT_TRUE(r.contains("result")) << r.dump();
}

/// A view of its own for each `x`.
std::string near_query(int x) {
    return "near(" + std::to_string(x) + ", 15, 6)";
}

/// world.info's "watches" of `world` (null when it has none).
json watch_figures(line_client& c, const std::string& world) {
    return c.result("world.info", {{"world", world}}).value("watches", json());
}

/// Polls until world.info's watches.views is `n` (closes give views back asynchronously).
bool views_become(line_client& c, const std::string& world, std::size_t n) {
    for (int i = 0; i < 200; ++i) {
        const auto f = watch_figures(c, world);
        if (f.is_object() && f["views"] == n) return true;
        std::this_thread::sleep_for(10ms);
    }
    return false;
}

TEST(Overload, DistinctWatchViewsAreCappedPerWorldAndPerServer) {
    ecsd_server server({"--max-watch-views", "3", "--max-watch-views-total", "4"});
    line_client driver(server.port());
    ASSERT_TRUE(driver.result("world.create", {{"world", "w2"}, {"paused", true}}).is_object());
    {
        line_client a(server.port());
        std::vector<std::uint64_t> subs;
        for (int k = 0; k < 3; ++k)
            subs.push_back(a.result("world.watch", {{"query", near_query(k)}})["subscription"]);
        // A fourth distinct view in the world is refused; the same view again costs nothing.
        const auto fourth = a.call("world.watch", {{"query", near_query(3)}});
        EXPECT_EQ(reason_of(fourth), "limit_reached") << fourth.dump();
        EXPECT_EQ(fourth["error"]["data"]["limit"], 3);
        EXPECT_TRUE(a.result("world.watch", {{"query", near_query(0)}}).contains("subscription"));
        const auto f = watch_figures(a, "default");
        EXPECT_EQ(f["views"], 3) << f.dump();
        EXPECT_EQ(f["subscribers"], 4) << f.dump();
        // The server holds 4 in all: one more in w2, then none anywhere.
        EXPECT_TRUE(
            a.result("world.watch", {{"world", "w2"}, {"query", near_query(0)}}).contains("subscription"));
        const auto fifth = a.call("world.watch", {{"world", "w2"}, {"query", near_query(1)}});
        EXPECT_EQ(reason_of(fifth), "limit_reached") << fifth.dump();
        EXPECT_EQ(fifth["error"]["data"]["limit"], 4);
        // A view given up makes room; a refused watch held nothing.
        EXPECT_TRUE(a.result("world.unwatch", {{"subscription", subs[2]}}).is_object());
        EXPECT_TRUE(
            a.result("world.watch", {{"world", "w2"}, {"query", near_query(1)}}).contains("subscription"));
        EXPECT_EQ(watch_figures(a, "w2")["views"], 2);
    }
    // A closed connection gives its views back.
    EXPECT_TRUE(views_become(driver, "default", 0));
    EXPECT_TRUE(views_become(driver, "w2", 0));
    line_client b(server.port());
    for (int k = 0; k < 3; ++k)
        EXPECT_TRUE(b.result("world.watch", {{"query", near_query(10 + k)}}).contains("subscription"));
    EXPECT_TRUE(b.result("world.watch", {{"world", "w2"}, {"query", "Position"}}).contains("subscription"));
}

/// What a watcher knows: entity -> components.
struct known {
    std::map<std::uint64_t, json> entities;
    int resyncs = 0;
    void apply(const json& p) {
        if (p.value("resync", false)) {
            ++resyncs;
            entities.clear();
            for (const auto& e : p["entities"]) entities[e["entity"].get<std::uint64_t>()] = e["components"];
            return;
        }
        for (const auto& e : p["entered"]) entities[e["entity"].get<std::uint64_t>()] = e["components"];
        for (const auto& e : p["changed"])
            for (const auto& [k, v] : e["components"].items())
                entities[e["entity"].get<std::uint64_t>()][k] = v;
        for (const auto& e : p["left"]) entities.erase(e["entity"].get<std::uint64_t>());
    }
};

TEST(Overload, WatchersThatNeverReadStopCostingTheTickAndResyncWhenTheyRead) {
    ecsd_server server({"--max-output-bytes", "65536"});
    line_client driver(server.port());
    ASSERT_TRUE(driver.result("world.create", {{"world", "m"}, {"paused", true}}).is_object());
    spawn_movers(driver, "m", 3000);
    // 2 connections x 16 distinct near() views, reading nothing after their answers.
    constexpr int per = 16;
    std::vector<std::unique_ptr<line_client>> watchers;
    std::vector<std::uint64_t> subs;  // the first watcher's
    std::map<std::uint64_t, known> state;
    for (int w = 0; w < 2; ++w) {
        watchers.push_back(
            std::make_unique<line_client>(server.port(), "127.0.0.1", /*receive_buffer=*/4096));
        for (int k = 0; k < per; ++k) {
            const auto r = watchers.back()->result(
                "world.watch", {{"world", "m"}, {"query", near_query(3 * (w * per + k))}});
            if (w > 0) continue;
            subs.push_back(r["subscription"].get<std::uint64_t>());
            state[subs.back()].apply({{"resync", true}, {"entities", r["entities"]}});
            state[subs.back()].resyncs = 0;
        }
    }
    ASSERT_TRUE(views_become(driver, "m", 2 * per));
    // Every view changes every tick. Behind for more than 256 ticks, a subscriber is dropped from
    // its view's diffs until it reads again. Where diffs are slow (ThreadSanitizer), the tick's
    // budget puts some of them off and the views fall behind later: up to 2000 ticks are stepped.
    json f;
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(driver.result("world.step", {{"world", "m"}, {"ticks", 50}}).is_object());
        if (i >= 7 && watch_figures(driver, "m")["stalled"] == 2 * per) break;
    }
    ASSERT_TRUE(driver.result("world.step", {{"world", "m"}, {"ticks", 1}}).is_object());
    f = watch_figures(driver, "m");
    EXPECT_EQ(f["stalled"], 2 * per) << "views nobody reads must not be diffed: " << f.dump();
    const auto info = driver.result("world.info", {{"world", "m"}});
    EXPECT_LT(info["last_tick_total_ms"].get<double>(), 5.0 * sanitizer_time_factor)
        << "stalled watchers must not slow the tick: " << info.dump();

    // The first watcher reads: each of its subscriptions gets the whole state again, exact.
    auto& reader = *watchers[0];
    ASSERT_TRUE(reader.send_line(
        request_line(100, "world.query", {{"world", "m"}, {"query", near_query(0)}, {"limit", 10000}})));
    json answer;
    for (;;) {
        const auto line = reader.read_json(10s);
        ASSERT_TRUE(line.is_object()) << "the reader got nothing";
        if (line.value("method", "") != "world.watch") {
            answer = line["result"];
            break;
        }
        state[line["params"]["subscription"].get<std::uint64_t>()].apply(line["params"]);
    }
    for (const auto s : subs) EXPECT_EQ(state[s].resyncs, 1) << "subscription " << s;
    const auto& mine = state[subs[0]].entities;
    ASSERT_EQ(mine.size(), answer["entities"].size());
    for (const auto& e : answer["entities"]) {
        const auto it = mine.find(e["entity"].get<std::uint64_t>());
        ASSERT_NE(it, mine.end());
        EXPECT_EQ(it->second, e["components"]);
    }
    // Its views are diffed again; the other watcher's stay stalled.
    ASSERT_TRUE(driver.result("world.step", {{"world", "m"}, {"ticks", 1}}).is_object());
    f = watch_figures(driver, "m");
    EXPECT_EQ(f["stalled"], per) << f.dump();
}

/// The tick of a notification line (TCP, or an event stream's "data:" line); 0 for any other line.
std::uint64_t tick_of(const std::string& line) {
    if (line.find("\"world.watch\"") == std::string::npos) return 0;
    const auto at = line.find("\"tick\":");
    return at == std::string::npos ? 0 : std::stoull(line.substr(at + 7, 24));
}

TEST(Overload, ASlowReaderHearsRecentTicksNotOnesQueuedSecondsAgo) {
    // 3,000 movers make about 270 KB of diff a tick (16 MB/s at 60 Hz); each reader takes one line
    // every 200 ms (about 1.3 MB/s). What waits for a slow reader is a window (the server's, plus
    // the kernel's unsent queue, held small), the rest is merged into the next notification: so
    // what it reads is about a second old. Before the window, the server filled the connection's
    // output to --max-output-bytes (16 MiB, seconds of diffs), and the lag grew as it read.
    int http = 0;
    auto server = start_with_http({}, &http);
    ASSERT_EQ(server->http_port(), http);
    line_client driver(server->port());
    ASSERT_TRUE(driver.result("world.create", {{"world", "s"}, {"gravity", 0}}).is_object());
    spawn_movers(driver, "s", 3000);
    const std::string body =
        request_line(1, "world.watch", {{"world", "s"}, {"query", "Position, Velocity"}});
    line_client tcp(server->port(), "127.0.0.1", /*receive_buffer=*/65536);
    ASSERT_TRUE(tcp.send_line(body));
    line_client sse(http, "127.0.0.1", /*receive_buffer=*/65536);
    ASSERT_TRUE(sse.send_raw(post(body, "Accept: text/event-stream\r\n")));
    std::uint64_t heard_tcp = 0;
    std::uint64_t heard_sse = 0;
    const auto read_one = [](line_client& c, std::uint64_t& heard) {
        for (int lines = 0; lines < 8; ++lines) {  // an event stream's headers and blank lines
            const auto line = c.read_line(5s * sanitizer_time_factor);
            if (!line) return false;
            if (const auto t = tick_of(*line); t > 0) {
                heard = std::max(heard, t);
                return true;
            }
        }
        return true;
    };
    const auto until = std::chrono::steady_clock::now() + 4s;
    while (std::chrono::steady_clock::now() < until) {
        ASSERT_TRUE(read_one(tcp, heard_tcp)) << "the TCP watcher was closed";
        ASSERT_TRUE(read_one(sse, heard_sse)) << "the event stream was closed";
        std::this_thread::sleep_for(200ms);
    }
    const auto now = driver.result("world.info", {{"world", "s"}})["tick"].get<std::uint64_t>();
    ASSERT_GT(now, 60U) << "the world ticks";
    EXPECT_LT(now - heard_tcp, 120U) << "at tick " << now << " the TCP reader last heard of " << heard_tcp;
    EXPECT_LT(now - heard_sse, 120U) << "at tick " << now << " the event stream last heard of " << heard_sse;
}

TEST(Overload, PastTheServerWideOutputBoundTheStalledReadersAreDroppedAndTheReaderStays) {
    // One connection may hold 64 MiB unsent, all of them together 8 MiB: the stalled readers pass
    // that within a second, and the reader that keeps up has room for a few ticks of diffs on a
    // slow (sanitized, loaded) server before it would be the slowest left.
    constexpr std::size_t total = std::size_t{8} << 20;
    int http = 0;
    server_options options;
    options.args = {"--max-output-bytes", "67108864", "--max-output-total", std::to_string(total)};
    auto server = start_with_http(options, &http);
    ASSERT_EQ(server->http_port(), http);
    line_client driver(server->port());
    ASSERT_TRUE(driver.result("world.create", {{"world", "o"}, {"tick_hz", 20}}).is_object());
    // About 100 KB of diff a tick for each watcher. (At 200 KB, a TSan server under a parallel
    // ctest once fell far enough behind the reader that keeps up to drop it as the slowest.)
    spawn_movers(driver, "o", 1500);
    const std::string watch =
        request_line(1, "world.watch", {{"world", "o"}, {"query", "Position, Velocity"}});

    // A watcher that reads everything, on a thread of its own.
    line_client good(server->port());
    ASSERT_TRUE(good.send_line(watch));
    std::atomic<bool> stop{false};
    std::atomic<int> heard{0};
    std::atomic<bool> good_closed{false};
    std::thread reading([&] {
        while (!stop) {
            const auto line = good.read_line(200ms);
            if (line) {
                ++heard;
            } else if (good.wait_closed(1ms)) {
                good_closed = true;
                return;
            }
        }
    });

    // Readers that read nothing: three event streams and two TCP watchers.
    std::vector<std::unique_ptr<line_client>> stalled;
    for (int i = 0; i < 3; ++i) {
        stalled.push_back(std::make_unique<line_client>(http, "127.0.0.1", /*receive_buffer=*/4096));
        ASSERT_TRUE(stalled.back()->send_raw(post(watch)));
    }
    for (int i = 0; i < 2; ++i) {
        stalled.push_back(
            std::make_unique<line_client>(server->port(), "127.0.0.1", /*receive_buffer=*/4096));
        ASSERT_TRUE(stalled.back()->send_line(watch));
    }
    // Alone, each would be dropped only at 64 MiB owed (minutes at this rate) or after --idle-timeout.
    // How soon they pass the total bound depends on how much the kernel's socket buffers absorb
    // first and how fast a loaded (sanitized) server ticks, so the server's count is polled up to
    // a generous deadline. Not the sockets: seeing a close means reading what was sent, and a
    // stalled reader that is read is a stalled reader no more (and is then never dropped).
    // A dropped reader's bytes leave the count when its connection has closed, a moment after
    // `dropped` counts it (under TSan, long enough for one poll to see both): so the poll also
    // waits for the count to be back under the bound.
    const auto deadline = std::chrono::steady_clock::now() + 20s * sanitizer_time_factor;
    json out = driver.result("server.info")["output"];
    while ((out["dropped"].get<int>() < 5 || out["unsent"].get<std::size_t>() > total) &&
           std::chrono::steady_clock::now() < deadline) {
        std::this_thread::sleep_for(100ms);
        out = driver.result("server.info")["output"];
    }
    EXPECT_GE(out["dropped"].get<int>(), 5) << out.dump();
    EXPECT_LE(out["unsent"].get<std::size_t>(), total) << out.dump();
    for (auto& s : stalled) EXPECT_TRUE(s->wait_closed(5s)) << "a stalled reader past the total bound stays";
    const int before = heard.load();
    std::this_thread::sleep_for(500ms);
    stop = true;
    reading.join();
    EXPECT_FALSE(good_closed) << "the reader that keeps up must stay";
    EXPECT_GT(heard.load(), before) << "and keep hearing";
}

}  // namespace
}  // namespace ecsd::test
