// What one connection may cost the server: answers are computed only as fast as the client reads
// them, a batch's answer is bounded, a request line has a deadline, a full server makes room for
// newcomers by closing stalled clients, and a long world.step never holds a thread or a world.
#include <signal.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <iostream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

using namespace std::chrono_literals;
using clock_type = std::chrono::steady_clock;

/// Peak resident memory of a process in KiB (VmHWM).
long peak_rss_kib(pid_t pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    std::string line;
    while (std::getline(in, line)) {
        if (line.rfind("VmHWM:", 0) == 0) return std::stol(line.substr(6));
    }
    return 0;
}

/// What a connection's answers may add to the server's peak RSS, in KiB: twice the output bound (the
/// answers held, plus the one being computed and the allocator's slack) and a small constant.
/// The answers are never copied whole: a batch's elements leave as they are, and a buffer is freed
/// as soon as the socket has taken it.
long rss_allowance_kib(long bound_mib) {
    return (2 * bound_mib + 8) * 1024 * sanitizer_memory_factor;
}

/// Fills `world` with `n` entities carrying Position and Velocity, so a page of 10000 is ~0.8 MB.
void populate(line_client& c, int n, const std::string& world = "default") {
    json batch = json::array();
    for (int i = 0; i < n; ++i)
        batch.push_back(
            {{"Position", {{"x", i * 0.25}, {"y", -i * 0.5}}}, {"Velocity", {{"x", 1.5}, {"y", -2.25}}}});
    const auto r = c.call("world.spawn_entities", {{"world", world}, {"entities", batch}});
    ASSERT_TRUE(r.contains("result")) << r.dump().substr(0, 300);
}

std::string big_query(int id) {
    return request_line(id, "world.query", {{"query", "Position, Velocity"}, {"limit", 10000}});
}

TEST(Backpressure, AClientThatReadsGetsEveryLargeAnswerWithinTheOutputBound) {
    ecsd_server server({"--max-output-bytes", "2097152"});
    line_client c(server.port());
    populate(c, 5000);
    ASSERT_TRUE(c.call("world.query", {{"query", "Position"}, {"limit", 10000}}).contains("result"));
    const long before = peak_rss_kib(server.pid());

    // 40 answers of ~0.4 MB each, asked for in one write: 16 MB, 8 times what the server may hold.
    std::string burst;
    for (int i = 0; i < 40; ++i) burst += big_query(1000 + i) + "\n";
    ASSERT_TRUE(c.send_raw(burst));
    for (int i = 0; i < 40; ++i) {
        const auto r = c.read_json(std::chrono::seconds(20 * sanitizer_time_factor));
        ASSERT_TRUE(r.is_object()) << "answer " << i << " never came (disconnected?)";
        ASSERT_EQ(r["id"], 1000 + i);
        ASSERT_EQ(r["result"]["entities"].size(), 5000U);
    }
    const long grown = peak_rss_kib(server.pid()) - before;
    std::cout << "[ 2 MiB bound, 40 answers read ] peak RSS grew by " << grown << " KiB\n";
    EXPECT_LT(grown, rss_allowance_kib(2)) << "peak RSS grew by " << grown << " KiB for a 2 MiB output bound";
    EXPECT_EQ(c.call("server.ping")["result"], "pong");
}

TEST(Backpressure, ABatchWhoseAnswerWouldPassTheBoundRunsOnlyWhatFits) {
    ecsd_server server({"--max-output-bytes", "4194304"});
    line_client c(server.port());
    populate(c, 10000);
    ASSERT_TRUE(c.call("world.query", {{"query", "Position"}, {"limit", 10000}}).contains("result"));
    const long before = peak_rss_kib(server.pid());

    json batch = json::array();
    for (int i = 0; i < 100; ++i) batch.push_back(json::parse(big_query(i)));
    // The last element would change the world: past the bound it must not run.
    batch.push_back(json::parse(
        request_line(100, "world.spawn_entity", {{"components", {{"Position", json::object()}}}})));
    ASSERT_TRUE(c.send_json(batch));
    const auto answer = c.read_json(20s);
    ASSERT_TRUE(answer.is_array()) << answer.dump().substr(0, 300);
    ASSERT_EQ(answer.size(), 101U);
    std::size_t results = 0;
    std::size_t refused = 0;
    for (const auto& a : answer) {
        if (a.contains("result")) ++results;
        if (reason_of(a) == "too_large") {
            ++refused;
            EXPECT_EQ(a["error"]["data"]["limit"], 4194304);
        }
    }
    EXPECT_GE(results, 1U);
    EXPECT_LE(results, 8U) << "about 4 MiB of 0.8 MB answers fit, plus the one that crossed the bound";
    EXPECT_EQ(results + refused, 101U);
    EXPECT_EQ(reason_of(answer.back()), "too_large");
    EXPECT_EQ(c.result("world.info")["entities"], 10000) << "the refused spawn must not have run";
    const long grown = peak_rss_kib(server.pid()) - before;
    std::cout << "[ 4 MiB bound, batch of 101 ] peak RSS grew by " << grown << " KiB\n";
    EXPECT_LT(grown, rss_allowance_kib(4))
        << "peak RSS grew by " << grown << " KiB for a 4 MiB output bound (the batch's answer held twice?)";
}

// A batch's elements go out as separate buffers ('[' a ',' b ... ']'), not joined: on the wire it
// is still one line, small and large answers in request order, notifications answering nothing.
TEST(Backpressure, ABatchOfLargeAndSmallAnswersLeavesAsOneLine) {
    ecsd_server server;
    line_client c(server.port());
    populate(c, 3000);
    json batch = json::array();
    batch.push_back(json::parse(request_line(1, "server.ping")));
    batch.push_back(json::parse(big_query(2)));
    batch.push_back(json::parse(notification_line("server.ping")));
    batch.push_back(json::parse(request_line(3, "world.info")));
    batch.push_back(json::parse(big_query(4)));
    batch.push_back(json::parse(big_query(5)));
    batch.push_back(json::parse(request_line(6, "server.ping")));
    ASSERT_TRUE(c.send_json(batch));
    const auto line = c.read_line(std::chrono::seconds(10 * sanitizer_time_factor));
    ASSERT_TRUE(line.has_value());
    ASSERT_GT(line->size(), 3 * 100000U) << "three pages of 3000 entities";
    EXPECT_EQ(line->front(), '[');
    EXPECT_EQ(line->back(), ']');
    const auto answer = json::parse(*line);
    ASSERT_EQ(answer.size(), 6U);
    const int ids[] = {1, 2, 3, 4, 5, 6};
    for (std::size_t i = 0; i < 6; ++i) EXPECT_EQ(answer[i]["id"], ids[i]);
    EXPECT_EQ(answer[0]["result"], "pong");
    EXPECT_EQ(answer[1]["result"]["entities"].size(), 3000U);
    EXPECT_EQ(answer[2]["result"]["entities"], 3000);
    EXPECT_EQ(answer[3]["result"]["entities"].size(), 3000U);
    EXPECT_EQ(answer[4]["result"]["entities"].size(), 3000U);
    EXPECT_EQ(answer[5]["result"], "pong");
    // An all-notification batch answers nothing at all; the next answer follows directly.
    json quiet = json::array({json::parse(notification_line("server.ping"))});
    ASSERT_TRUE(c.send_json(quiet));
    EXPECT_EQ(c.call("server.ping")["result"], "pong");
}

TEST(Backpressure, AClientThatStopsReadingHoldsBoundedMemoryAndIsClosedAfterTheIdleTimeout) {
    server_options opts;
    opts.args = {"--max-output-bytes", "1048576", "--idle-timeout", "3"};
    ecsd_server server(opts);
    {
        line_client setup(server.port());
        populate(setup, 10000);
    }
    const long before = peak_rss_kib(server.pid());
    line_client slow(server.port(), "127.0.0.1", /*receive_buffer=*/4096);
    timeval tv{1, 0};
    ::setsockopt(slow.fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    std::string chunk;
    for (int i = 0; i < 100; ++i) chunk += big_query(i) + "\n";
    bool blocked = false;  // the kernel's socket buffers take a few MB first
    for (int round = 0; round < 5000 && !blocked; ++round) blocked = !slow.send_raw(chunk);
    EXPECT_TRUE(blocked) << "the server must stop reading from a client that does not read";
    const long grown = peak_rss_kib(server.pid()) - before;
    std::cout << "[ 1 MiB bound, client not reading ] peak RSS grew by " << grown << " KiB\n";
    EXPECT_LT(grown, rss_allowance_kib(1)) << "peak RSS grew by " << grown << " KiB for a 1 MiB output bound";
    // Everyone else is served meanwhile, and the world keeps ticking.
    line_client other(server.port());
    const auto t0 = other.result("world.info")["tick"].get<std::uint64_t>();
    std::this_thread::sleep_for(300ms);
    EXPECT_GT(other.result("world.info")["tick"].get<std::uint64_t>(), t0 + 10);
    // With no write progress for --idle-timeout, the stalled reader is closed.
    bool closed = false;
    for (int i = 0; i < 60 && !closed; ++i) {
        std::this_thread::sleep_for(100ms);
        closed = other.result("server.info")["connections"]["open"] == 1;  // only `other` is left
    }
    EXPECT_TRUE(closed) << "the client that stopped reading is still connected";
}

TEST(Backpressure, ADisconnectedClientsQueuedWorkIsDropped) {
    ecsd_server server({"--max-output-bytes", "1048576"});
    line_client setup(server.port());
    populate(setup, 10000);
    {
        line_client gone(server.port());
        std::string burst;
        for (int i = 0; i < 2000; ++i) burst += big_query(i) + "\n";
        ASSERT_TRUE(gone.send_raw(burst));
        std::this_thread::sleep_for(50ms);
    }  // closed without reading
    // SIGTERM exits fast: nothing is left computing answers for the closed connection.
    std::this_thread::sleep_for(200ms);
    const auto status = server.stop(SIGTERM);
    EXPECT_TRUE(status.exited);
    EXPECT_EQ(status.code, 0);
    EXPECT_LT(status.elapsed, 2000ms * sanitizer_time_factor);
}

TEST(Backpressure, AnUnfinishedRequestLineIsCutOffAtTheRequestTimeout) {
    ecsd_server server({"--request-timeout", "0.5"});
    line_client slow(server.port());
    const auto start = clock_type::now();
    ASSERT_TRUE(slow.send_raw("{\"jsonrpc\":\"2.0\","));
    // One byte every 100 ms keeps the idle timer happy but not the request deadline.
    std::optional<std::string> line;
    for (int i = 0; i < 30 && !line; ++i) {
        (void)slow.send_raw(" ");
        line = slow.read_line(100ms);
    }
    ASSERT_TRUE(line.has_value()) << "no answer to a line that never ends";
    const auto r = json::parse(*line);
    EXPECT_EQ(reason_of(r), "timeout");
    EXPECT_EQ(r["error"]["data"]["limit_s"], 0.5);
    EXPECT_GE(clock_type::now() - start, 450ms);
    EXPECT_TRUE(slow.wait_closed(3s));
    // A client that sends whole lines is never cut off, however long it stays.
    line_client steady(server.port());
    for (int i = 0; i < 8; ++i) {
        ASSERT_EQ(steady.call("server.ping")["result"], "pong");
        std::this_thread::sleep_for(100ms);
    }
}

TEST(Backpressure, AtTheConnectionLimitAStalledClientMakesRoomForANewOne) {
    ecsd_server server({"--max-connections", "4", "--request-timeout", "30"});
    line_client good(server.port());
    ASSERT_EQ(good.call("server.ping")["result"], "pong");
    std::vector<std::unique_ptr<line_client>> slow;
    for (int i = 0; i < 3; ++i) {
        slow.push_back(std::make_unique<line_client>(server.port()));
        ASSERT_TRUE(slow.back()->send_raw("{\"jsonrpc\":"));
    }
    // Slowloris: each stalled client dribbles a byte every 100 ms for 1.5 s.
    for (int i = 0; i < 15; ++i) {
        for (auto& s : slow) (void)s->send_raw(" ");
        std::this_thread::sleep_for(100ms);
    }
    // Before: limit_reached. Now the stalled client that began longest ago gives up its place.
    line_client newcomer(server.port());
    const auto r = newcomer.call("server.ping");
    EXPECT_EQ(r["result"], "pong") << r.dump();
    std::size_t evicted = 0;
    for (auto& s : slow) {
        const auto line = s->read_line(2s);
        if (line && reason_of(json::parse(*line)) == "timeout") ++evicted;
    }
    EXPECT_EQ(evicted, 1U);
    EXPECT_EQ(good.call("server.ping")["result"], "pong");  // a client that behaves keeps its place
}

/// Spawns `n` colliding bodies in a paused world so each tick has real work.
void make_crowd(line_client& c, const std::string& world, int n) {
    ASSERT_TRUE(c.result("world.create", {{"world", world}, {"paused", true}}).is_object());
    json batch = json::array();
    for (int i = 0; i < n; ++i) {
        const int row = i / 50;  // rows of 50 bodies, 0.8 apart
        batch.push_back({{"Position", {{"x", (i % 50) * 0.8}, {"y", row * 0.8}}},
                         {"Velocity", {{"x", (i % 7) - 3.0}, {"y", (i % 5) - 2.0}}},
                         {"RigidBody", json::object()},
                         {"Collider", {{"radius", 0.5}}}});
    }
    ASSERT_TRUE(c.call("world.spawn_entities", {{"world", world}, {"entities", batch}}).contains("result"));
}

TEST(Backpressure, LongStepsLeaveTheServerResponsive) {
    ecsd_server server({"--threads", "2"});
    line_client setup(server.port());
    make_crowd(setup, "a", 2000);
    make_crowd(setup, "b", 2000);
    // Measure one tick so the steps below last over a second whatever the build. A crowd's ticks
    // get cheaper as it spreads (fewer contacts), so the first ticks (every body gets its
    // Contacts) are stepped unmeasured and the steps are aimed at 2.5 s of the measured ticks, so
    // they last well over the 500 ms below in any build; aimed from the first ticks, a faster
    // tick took them under it.
    ASSERT_TRUE(setup.result("world.step", {{"world", "a"}, {"ticks", 20}}).is_object());
    const auto t0 = clock_type::now();
    ASSERT_TRUE(setup.result("world.step", {{"world", "a"}, {"ticks", 40}}).is_object());
    const double per_tick = std::chrono::duration<double>(clock_type::now() - t0).count() / 40;
    const int ticks = std::clamp(static_cast<int>(2.5 / per_tick), 200, 100000);

    line_client one(server.port()), two(server.port()), pinger(server.port());
    ASSERT_TRUE(one.send_line(request_line(1, "world.step", {{"world", "a"}, {"ticks", ticks}})));
    ASSERT_TRUE(two.send_line(request_line(2, "world.step", {{"world", "b"}, {"ticks", ticks}})));
    const auto started = clock_type::now();
    std::chrono::duration<double> worst{0};
    std::optional<std::string> answer_one;
    // Both steps hold what used to be both threads; pings must still come back at once.
    while (!answer_one && clock_type::now() - started < 60s) {
        const auto p0 = clock_type::now();
        ASSERT_EQ(pinger.call("server.ping")["result"], "pong");
        worst = std::max<std::chrono::duration<double>>(worst, clock_type::now() - p0);
        answer_one = one.read_line(20ms);
    }
    ASSERT_TRUE(answer_one.has_value());
    const auto step_time = clock_type::now() - started;
    const auto r1 = json::parse(*answer_one);
    const auto r2 = two.read_json(60s);
    EXPECT_EQ(r1["result"]["tick"], 60 + ticks);
    EXPECT_EQ(r2["result"]["tick"], ticks);
    EXPECT_GT(step_time, 500ms) << "the steps were too short to show anything";
    EXPECT_LT(worst, 250ms * sanitizer_time_factor)
        << "server.ping took " << worst.count() << " s while two steps ran";
}

TEST(Backpressure, ASteppedWorldWithWritesBetweenItsSlicesReplaysToTheSameState) {
    const auto dir = std::filesystem::temp_directory_path() / ("ecsd_slices_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    std::string hash;
    std::uint64_t tick = 0;
    {
        ecsd_server server({"--data-dir", dir.string(), "--autosave", "0"});
        line_client setup(server.port());
        make_crowd(setup, "arena", 500);
        line_client stepper(server.port()), writer(server.port());
        ASSERT_TRUE(stepper.send_line(request_line(1, "world.step", {{"world", "arena"}, {"ticks", 3000}})));
        // These land between the step's slices, at whatever tick the step has reached.
        int spawned = 0;
        std::optional<std::string> done;
        while (!done) {
            const auto r = writer.call("world.spawn_entity", {{"world", "arena"},
                                                              {"components",
                                                               {{"Position", {{"x", spawned}, {"y", 40}}},
                                                                {"Velocity", {{"x", 1}, {"y", 0}}},
                                                                {"RigidBody", json::object()},
                                                                {"Collider", {{"radius", 0.5}}}}}});
            ASSERT_TRUE(r.contains("result")) << r.dump();
            ++spawned;
            done = stepper.read_line(5ms);
        }
        EXPECT_EQ(json::parse(*done)["result"]["tick"], 3000);
        const auto h = setup.result("world.hash", {{"world", "arena"}});
        hash = h["hash"].dump();
        tick = h["tick"].get<std::uint64_t>();
        (void)server.stop(SIGKILL);  // no final save: restart replays the journal
    }
    ecsd_server again({"--data-dir", dir.string(), "--autosave", "0"});
    line_client c(again.port());
    const auto h = c.result("world.hash", {{"world", "arena"}});
    EXPECT_EQ(h["hash"].dump(), hash);
    EXPECT_EQ(h["tick"], tick);
    (void)again.stop(SIGTERM);
    std::filesystem::remove_all(dir);
}

}  // namespace
}  // namespace ecsd::test
