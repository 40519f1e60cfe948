// SIGTERM/SIGINT: stop accepting, answer what is in flight, exit 0 within 2 seconds. SIGHUP: a
// warning line, and the server keeps serving.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <fstream>
#include <iterator>
#include <sstream>
#include <string>
#include <thread>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

using namespace std::chrono_literals;

TEST(Signals, SigtermWithOpenConnectionsExitsZeroWithinTwoSeconds) {
    ecsd_server server;
    line_client idle(server.port());
    line_client other(server.port());
    ASSERT_EQ(other.call("server.ping")["result"], "pong");
    const auto st = server.stop(SIGTERM);
    EXPECT_TRUE(st.exited);
    EXPECT_EQ(st.code, 0);
    EXPECT_LT(st.elapsed, 2000ms);
    EXPECT_TRUE(idle.wait_closed(1s));
}

TEST(Signals, SigintExitsZero) {
    ecsd_server server;
    const auto st = server.stop(SIGINT);
    EXPECT_TRUE(st.exited);
    EXPECT_EQ(st.code, 0);
    EXPECT_LT(st.elapsed, 2000ms);
}

TEST(Signals, RequestsInFlightAreAnsweredBeforeExit) {
    ecsd_server server;
    line_client c(server.port());
    ASSERT_TRUE(c.result("world.create", {{"world", "slow"}, {"paused", true}}).is_object());
    // The burst is queued on the world strand when the signal lands. Each step is small so that the
    // whole queue (99 x 40 ticks) fits in the 1.5 s shutdown grace even under ASan on a loaded
    // 2-core CI machine; 300 ticks per step overran it there once.
    std::string burst;
    constexpr int n = 100;
    for (int i = 0; i < n; ++i)
        burst += request_line(i, "world.step", {{"world", "slow"}, {"ticks", 40}}) + "\n";
    ASSERT_TRUE(c.send_raw(burst));
    ASSERT_EQ(c.read_json()["id"], 0);
    ::kill(server.pid(), SIGTERM);
    int answered = 1;
    while (auto line = c.read_line(3s)) {
        EXPECT_EQ(json::parse(*line)["id"], answered);
        ++answered;
    }
    EXPECT_EQ(answered, n);
    // It is already leaving on the first SIGTERM: wait for it without a second one. (A second
    // SIGTERM that lands after its signal handlers are gone, during ASan's leak check at exit,
    // killed it once and read as a failed exit.)
    const auto st = server.stop(0);
    EXPECT_TRUE(st.exited);
    EXPECT_EQ(st.code, 0);
}

TEST(Signals, NewConnectionsAreRefusedDuringShutdown) {
    ecsd_server server;
    const int port = server.port();
    (void)server.stop(SIGTERM);
    EXPECT_THROW(line_client late(port), std::runtime_error);
}

}  // namespace
}  // namespace ecsd::test

namespace ecsd::test {
namespace {

// Issue 21, low: SIGHUP used to kill ecsd without a log line or a final snapshot. It is logged at
// warn level and ignored (as Redis does with no log file to reopen); the server keeps serving.
TEST(Signals, SighupIsLoggedAndIgnored) {
    const auto log =
        std::filesystem::temp_directory_path() / ("ecsd_sighup_log_" + std::to_string(::getpid()) + ".txt");
    const auto log_text = [&] {
        std::ifstream in(log);
        return std::string(std::istreambuf_iterator<char>(in), std::istreambuf_iterator<char>());
    };
    {
        server_options o;
        o.log_path = log.string();
        ecsd_server server(o);
        line_client c(server.port());
        ASSERT_TRUE(
            c.result("world.spawn_entity", {{"components", {{"Position", json::object()}}}}).is_object());
        EXPECT_EQ(log_text().find("SIGHUP"), std::string::npos) << log_text();
        ASSERT_EQ(::kill(server.pid(), SIGHUP), 0);
        bool logged = false;
        for (int i = 0; i < 150 && !logged; ++i) {
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
            std::istringstream lines(log_text());
            for (std::string line; std::getline(lines, line);)  // e.g. "<time> warning SIGHUP: ignored (...)"
                logged = logged || (line.find(" warning SIGHUP: ignored") != std::string::npos);
        }
        EXPECT_TRUE(logged) << "no warning line for SIGHUP in the log:\n" << log_text();
        EXPECT_TRUE(server.running());
        // The same connection and new ones are served, and the world is as it was.
        EXPECT_EQ(c.call("server.ping")["result"], "pong");
        EXPECT_EQ(c.result("world.info")["entities"], 1);
        line_client newcomer(server.port());
        EXPECT_TRUE(newcomer.result("world.spawn_entity", {{"components", {{"Position", json::object()}}}})
                        .is_object());
        EXPECT_EQ(newcomer.result("world.info")["entities"], 2);
        const auto st = server.stop(SIGTERM);
        EXPECT_TRUE(st.exited);
        EXPECT_EQ(st.code, 0);
    }
    std::filesystem::remove(log);
}

}  // namespace
}  // namespace ecsd::test
