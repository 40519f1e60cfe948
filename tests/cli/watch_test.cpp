// ecsctl watch against a real ecsd with ticking worlds: JSON lines in a pipe with --count, Ctrl-C on a
// pipe and on a terminal, the live table, the interactive shell, and the error exits.

#include <signal.h>

#include <atomic>
#include <memory>
#include <sstream>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ecsd_server.hpp"
#include "line_client.hpp"
#include "process.hpp"

namespace ecsd::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

/// @brief One ecsd for the suite with two weightless worlds, each holding one entity moving along x:
///        `fast` ticks at 20 Hz, `slow` at 2 Hz (quiet long enough for a terminal test to type).
class ecsctl_watch : public ::testing::Test {
  protected:
    static void SetUpTestSuite() {
        try {
            server_options options;
            options.log_path = "/dev/null";
            ecsd_ = std::make_unique<ecsd_server>(options);
            for (const auto& [world, hz] : {std::pair{"fast", "20"}, std::pair{"slow", "2"}}) {
                setup({"world", "create", world, "--tick-hz", hz, "--gravity", "0"});
                const auto spawned = setup(
                    {"--world", world, "spawn", R"(Position={"x":0,"y":0})", R"(Velocity={"x":1,"y":0})"});
                mover_ = std::to_string(spawned.at("entity").get<std::uint64_t>());
            }
        } catch (const std::exception& e) {
            start_error_ = e.what();
        }
    }
    static void TearDownTestSuite() { ecsd_.reset(); }

    void SetUp() override {
        ASSERT_NE(ecsd_, nullptr) << "ecsd did not start: " << start_error_;
        ASSERT_TRUE(start_error_.empty()) << start_error_;
    }

    static std::vector<std::string> command(std::vector<std::string> args) {
        args.insert(args.begin(), {ecsctl_path(), "--port", std::to_string(ecsd_->port())});
        return args;
    }

    static json setup(const std::vector<std::string>& args) {
        const auto r = run(command(args));
        if (r.exit_code != 0) {
            throw std::runtime_error("ecsctl failed: " + r.err);
        }
        return json::parse(r.out);
    }

    static std::unique_ptr<ecsd_server> ecsd_;  // NOLINT(readability-identifier-naming)
    static std::string start_error_;            // NOLINT(readability-identifier-naming)
    static std::string mover_;                  // NOLINT(readability-identifier-naming): same id in both
};

std::unique_ptr<ecsd_server> ecsctl_watch::ecsd_;
std::string ecsctl_watch::start_error_;
std::string ecsctl_watch::mover_;

TEST_F(ecsctl_watch, piped_prints_the_answer_then_count_notifications_and_exits_0) {
    const auto r = run(command({"--world", "fast", "watch", "Position", "--count", "3"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 4U) << r.out;
    const auto& answer = lines[0];
    ASSERT_TRUE(answer.contains("subscription")) << answer;
    ASSERT_EQ(answer["entities"].size(), 1U) << answer;
    EXPECT_EQ(std::to_string(answer["entities"][0]["entity"].get<std::uint64_t>()), mover_);
    auto tick = answer["tick"].get<std::uint64_t>();
    double x = answer["entities"][0]["components"]["Position"]["x"].get<double>();
    for (std::size_t i = 1; i < lines.size(); ++i) {
        const auto& note = lines[i];
        EXPECT_EQ(note["subscription"], answer["subscription"]) << note;
        EXPECT_GT(note["tick"].get<std::uint64_t>(), tick) << note;
        tick = note["tick"].get<std::uint64_t>();
        ASSERT_EQ(note["changed"].size(), 1U) << note;  // the mover moves every tick
        const double now = note["changed"][0]["components"]["Position"]["x"].get<double>();
        EXPECT_GT(now, x) << note;
        x = now;
    }
}

TEST_F(ecsctl_watch, fields_and_every_reach_the_server) {
    const auto r = run(command({"-w", "fast", "watch", "Position", "--fields", "Position,Velocity", "--every",
                                "2", "--count", "2"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 3U) << r.out;
    EXPECT_EQ(lines[0]["entities"][0]["components"]["Velocity"], json::parse(R"({"x":1.0,"y":0.0})"));
    // Velocity never changes, so the notifications carry Position only, every second tick.
    EXPECT_EQ(lines[1]["changed"][0]["components"].size(), 1U) << lines[1];
    EXPECT_GE(lines[2]["tick"].get<std::uint64_t>(), lines[1]["tick"].get<std::uint64_t>() + 2) << r.out;
}

TEST_F(ecsctl_watch, count_0_prints_only_the_current_state) {
    const auto r = run(command({"-w", "fast", "watch", "Position", "--count", "0"}));
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_EQ(json_lines(r.out).size(), 1U) << r.out;
}

TEST_F(ecsctl_watch, unknown_component_exits_1_with_the_reason) {
    const auto r = run(command({"-w", "fast", "watch", "Position, NoSuchThing", "--count", "1"}));
    EXPECT_EQ(r.exit_code, 1);
    EXPECT_TRUE(r.out.empty()) << r.out;
    EXPECT_TRUE(contains(r.err, "ecsctl: no_such_component")) << r.err;
}

TEST_F(ecsctl_watch, usage_errors_exit_2_and_unreachable_server_3) {
    EXPECT_EQ(run(command({"watch", "Position", "--every", "0"})).exit_code, 2);
    EXPECT_EQ(run(command({"watch"})).exit_code, 2);
    EXPECT_EQ(run({ecsctl_path(), "--port", "1", "watch", "Position"}).exit_code, 3);
    const auto assigned = run(command({}), "$w = watch Position --count 1\n");
    EXPECT_EQ(assigned.exit_code, 2);
    EXPECT_TRUE(contains(assigned.err, "cannot be assigned")) << assigned.err;
}

TEST_F(ecsctl_watch, sigint_on_a_pipe_unsubscribes_and_exits_0) {
    const auto r = run_and_signal(command({"-w", "fast", "watch", "Position"}), 3, SIGINT);
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_GE(json_lines(r.out).size(), 3U);
}

TEST_F(ecsctl_watch, sigint_sends_world_unwatch_for_its_subscription) {
    // A second client sees, through server.monitor, what ecsctl sends on Ctrl-C: world.unwatch
    // with the subscription its answer named, before the connection closes.
    line_client monitor(ecsd_->port());
    ASSERT_EQ(monitor.result("server.monitor"), json::parse(R"({"monitoring":true})"));
    const auto r = run_and_signal(command({"-w", "fast", "watch", "Position"}), 3, SIGINT);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto lines = json_lines(r.out);
    ASSERT_FALSE(lines.empty()) << r.out;
    const auto subscription = lines[0].at("subscription");
    bool watched = false;
    bool unwatched = false;
    for (json line = monitor.read_json(2s); !line.is_null() && !unwatched; line = monitor.read_json(2s)) {
        const auto& p = line["params"];
        if (p.value("method", "") == "world.watch") watched = true;
        if (p.value("method", "") == "world.unwatch") {
            EXPECT_TRUE(watched) << line;
            EXPECT_EQ(p["params"]["subscription"], subscription) << line;
            unwatched = true;
        }
    }
    EXPECT_TRUE(unwatched) << "ecsctl exited on SIGINT without world.unwatch";
}

TEST_F(ecsctl_watch, script_lines_after_a_watch_share_the_connection) {
    const auto r = run(command({"-w", "fast"}), "watch Position --count 2\nping\n");
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 4U) << r.out;
    EXPECT_EQ(lines[3], "pong");  // no notification leaks into the next command's output
}

TEST_F(ecsctl_watch, terminal_shows_a_table_redrawn_in_place) {
    const auto r = run_on_terminal(command({"-w", "fast", "watch", "Position", "--count", "3"}), "");
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "world fast  tick ")) << r.out;
    EXPECT_TRUE(contains(r.out, "notifications 3")) << r.out;
    EXPECT_TRUE(contains(r.out, "ENTITY")) << r.out;
    EXPECT_TRUE(contains(r.out, "POSITION")) << r.out;
    EXPECT_TRUE(contains(r.out, mover_ + "  x=")) << r.out;
    EXPECT_TRUE(contains(r.out, "\x1b[H")) << r.out;     // cursor home: each frame over the last
    EXPECT_TRUE(contains(r.out, "\x1b[?25h")) << r.out;  // the cursor is back at the end
}

TEST_F(ecsctl_watch, ctrl_c_on_a_terminal_exits_0) {
    // The 2 Hz world leaves the terminal quiet long enough for the helper to type Ctrl-C.
    const auto r = run_on_terminal(command({"-w", "slow", "watch", "Position"}), "\x03");
    EXPECT_FALSE(r.timed_out) << r.out;
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "world slow  tick ")) << r.out;
}

TEST_F(ecsctl_watch, shell_runs_watch_then_returns_to_the_prompt) {
    const auto r = run_on_terminal(command({"-w", "fast"}), "watch Position --count 2\nping\nexit\n",
                                   {{"ECSCTL_HISTORY", "/dev/null"}});
    EXPECT_EQ(r.exit_code, 0) << r.out;
    const auto frame = r.out.find("notifications 2");
    ASSERT_NE(frame, std::string::npos) << r.out;
    EXPECT_NE(r.out.find("pong", frame), std::string::npos) << r.out;  // the shell went on
}

/// @brief Runs `monitor` (through `start`) while a plain TCP connection (no child process: pipes made
///        meanwhile could leak into the monitor's child) pings the server, until the monitor ends.
template <typename Start>
run_result while_pinging(int port, Start start) {
    std::atomic<bool> done{false};
    run_result result;
    std::thread monitor([&] {
        result = start();
        done = true;
    });
    line_client pinger(port);
    for (int i = 0; i < 2000 && !done; ++i) {
        (void)pinger.call("server.ping");
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
    monitor.join();
    return result;
}

TEST_F(ecsctl_watch, monitor_prints_each_request_of_other_connections_as_a_json_line) {
    const auto r = while_pinging(ecsd_->port(), [] { return run(command({"monitor", "--count", "2"})); });
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 2U) << r.out;
    for (const auto& line : lines) {
        EXPECT_EQ(line["method"], "server.ping") << line;
        EXPECT_TRUE(line["connection"].is_number_unsigned()) << line;
        EXPECT_TRUE(line["peer"].is_string()) << line;
        EXPECT_TRUE(line["time"].is_number()) << line;
    }
}

TEST_F(ecsctl_watch, monitor_stops_on_ctrl_c_with_exit_0) {
    const auto r =
        while_pinging(ecsd_->port(), [] { return run_and_signal(command({"monitor"}), 2, SIGINT); });
    EXPECT_FALSE(r.timed_out);
    EXPECT_EQ(r.exit_code, 0) << r.err;
    EXPECT_TRUE(r.err.empty()) << r.err;
    EXPECT_GE(json_lines(r.out).size(), 2U) << r.out;
}

TEST_F(ecsctl_watch, monitor_on_a_terminal_prints_readable_lines) {
    const auto r = while_pinging(ecsd_->port(), [] {
        return run_on_terminal(command({"monitor", "--count", "1"}), "");
    });
    EXPECT_EQ(r.exit_code, 0) << r.out;
    EXPECT_TRUE(contains(r.out, "Ctrl-C to stop")) << r.out;
    EXPECT_TRUE(contains(r.out, " [")) << r.out;
    EXPECT_TRUE(contains(r.out, "127.0.0.1:")) << r.out;
    EXPECT_TRUE(contains(r.out, "] server.ping")) << r.out;
}

TEST_F(ecsctl_watch, script_lines_after_a_monitor_share_the_connection) {
    const auto r = while_pinging(ecsd_->port(), [] { return run(command({}), "monitor --count 1\nping\n"); });
    EXPECT_EQ(r.exit_code, 0) << r.err;
    const auto lines = json_lines(r.out);
    ASSERT_EQ(lines.size(), 2U) << r.out;
    EXPECT_EQ(lines[0]["method"], "server.ping");
    EXPECT_EQ(lines[1], "pong");  // the feed was stopped: no request line leaks into the next output
}

}  // namespace
}  // namespace ecsd::test
