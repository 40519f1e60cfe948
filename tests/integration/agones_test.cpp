// ecsd as an Agones GameServer (docs/scaling.md): the SDK calls ecsd makes, in order, against a
// stand-in sidecar that checks each request against the SDK's REST description
// (tests/support/agones_sidecar.hpp). Ready once listening with the worlds loaded; Health while every
// world's tick loop runs; labels for worlds and connections; on SIGTERM the save, then Shutdown. A
// sidecar that is absent, failing or silent never stalls the server.
#include <arpa/inet.h>
#include <netinet/in.h>
#include <signal.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <filesystem>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "agones_sidecar.hpp"
#include "helpers.hpp"

namespace ecsd::test {
namespace {

using namespace std::chrono_literals;
namespace fs = std::filesystem;

/// @brief A fresh folder under the temp directory, removed at the end of the test.
struct temp_dir {
    fs::path path;
    explicit temp_dir(const std::string& tag)
        : path(fs::temp_directory_path() / ("ecsd_agones_" + tag + "_" + std::to_string(::getpid()))) {
        fs::remove_all(path);
        fs::create_directories(path);
    }
    ~temp_dir() {
        std::error_code ignored;
        fs::remove_all(path, ignored);
    }
    temp_dir(const temp_dir&) = delete;
    temp_dir& operator=(const temp_dir&) = delete;
};

/// @brief ecsd's arguments to talk to `sidecar`, pinging Health every 0.2 s.
std::vector<std::string> agones_args(const agones_sidecar& sidecar) {
    return {"--agones-port", std::to_string(sidecar.port()), "--agones-health", "0.2"};
}

/// @brief The times of the Health pings the sidecar accepted.
std::vector<std::chrono::steady_clock::time_point> health_times(const agones_sidecar& sidecar) {
    std::vector<std::chrono::steady_clock::time_point> out;
    for (const auto& c : sidecar.calls())
        if (c.operation == "Health" && c.status == 200) out.push_back(c.at);
    return out;
}

/// @brief Every call the sidecar rejected, one line each (empty when it accepted them all).
std::string rejected(const agones_sidecar& sidecar) {
    std::string out;
    for (const auto& c : sidecar.calls())
        if (c.status != 200)
            out += c.method + " " + c.path + " -> " + std::to_string(c.status) + " " + c.rejection + "\n";
    return out;
}

std::string joined(const std::vector<std::string>& lines) {
    std::string out;
    for (const auto& l : lines) out += l + "\n";
    return out;
}

/// @brief A port nothing listens on, held for the test: bound with SO_REUSEADDR and never listened
/// on, so a connection to it is refused and no other process's bind to port 0 is handed it (tests
/// run side by side), while a sidecar that binds it with SO_REUSEADDR later may still listen there.
class reserved_port {
  public:
    reserved_port() : fd_(::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0)) {
        const int one = 1;
        ::setsockopt(fd_, SOL_SOCKET, SO_REUSEADDR, &one, sizeof one);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        if (::bind(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0)
            throw std::runtime_error("cannot bind a port to reserve");
        socklen_t len = sizeof addr;
        ::getsockname(fd_, reinterpret_cast<sockaddr*>(&addr), &len);
        port_ = ntohs(addr.sin_port);
    }
    reserved_port(const reserved_port&) = delete;
    reserved_port& operator=(const reserved_port&) = delete;
    ~reserved_port() { ::close(fd_); }
    [[nodiscard]] int port() const noexcept { return port_; }

  private:
    int fd_;
    int port_ = 0;
};

TEST(Agones, ReadyComesOnceItListensWithItsWorldsLoadedThenHealthPingsFollow) {
    temp_dir data("ready");
    {  // a world saved by an earlier run, to be loaded at start-up
        ecsd_server before({"--data-dir", data.path.string()});
        line_client c(before.port());
        ASSERT_TRUE(c.result("world.create", {{"world", "arena"}}).is_object());
        ASSERT_TRUE(c.result("world.spawn_entity",
                             {{"world", "arena"}, {"components", {{"Position", json::object()}}}})
                        .is_object());
        ASSERT_EQ(before.stop(SIGTERM).code, 0);
    }

    agones_sidecar sidecar;
    std::atomic<int> ecsd_port{0};
    json seen_at_ready;  // what a client saw while the sidecar held Ready unanswered
    sidecar.on("Ready", [&] {
        // ecsd prints its port before Ready can go out; the test may not have read it yet.
        if (!agones_sidecar::wait_for([&] { return ecsd_port.load() != 0; }, 3s)) return;
        try {
            line_client c(ecsd_port.load());
            seen_at_ready = {{"worlds", c.result("world.list")["worlds"]},
                             {"arena", c.result("world.info", {{"world", "arena"}})["entities"]}};
        } catch (const std::exception& e) {
            seen_at_ready = {{"connect_failed", e.what()}};
        }
    });
    // Agones sets AGONES_SDK_HTTP_PORT in the container: that alone turns the SDK on.
    server_options o;
    o.args = {"--data-dir", data.path.string(), "--agones-health", "0.2"};
    o.env = {"AGONES_SDK_HTTP_PORT=" + std::to_string(sidecar.port())};
    ecsd_server server(o);
    ecsd_port = server.port();

    ASSERT_TRUE(agones_sidecar::wait_for([&] { return sidecar.count("Ready") == 1; }, 5s))
        << rejected(sidecar);
    EXPECT_FALSE(seen_at_ready.contains("connect_failed")) << seen_at_ready;
    EXPECT_EQ(seen_at_ready["arena"], 1) << "Ready before the saved world was loaded: " << seen_at_ready;
    const auto& worlds = seen_at_ready["worlds"];
    EXPECT_NE(std::find(worlds.begin(), worlds.end(), "arena"), worlds.end()) << seen_at_ready;

    // Health every 0.2 s: six pings within 3 s, none more than a second apart.
    ASSERT_TRUE(agones_sidecar::wait_for([&] { return health_times(sidecar).size() >= 6; }, 3s))
        << joined(sidecar.operations());
    const auto pings = health_times(sidecar);
    for (std::size_t i = 1; i < pings.size(); ++i)
        EXPECT_LT(pings[i] - pings[i - 1], 1s * sanitizer_time_factor) << "ping " << i;

    EXPECT_EQ(sidecar.count("Ready"), 1U) << "Ready is sent once";
    EXPECT_EQ(sidecar.count("Shutdown"), 0U);
    EXPECT_EQ(rejected(sidecar), "");
    EXPECT_TRUE(sidecar.violations().empty()) << joined(sidecar.violations());
}

TEST(Agones, AStuckWorldStopsHealthUntilItTicksAgainWhileOtherWorldsServe) {
    agones_sidecar sidecar;
    auto args = agones_args(sidecar);
    args.insert(args.end(), {"--enable-debug", "--threads", "2"});  // one thread sleeps, one serves
    ecsd_server server(args);
    line_client c(server.port());
    ASSERT_TRUE(c.result("world.create", {{"world", "jammed"}}).is_object());
    ASSERT_TRUE(agones_sidecar::wait_for([&] { return health_times(sidecar).size() >= 3; }, 3s));

    // debug.sleep holds the world's strand, as a runaway system would: its tick loop stops.
    constexpr auto stall = 4s;
    line_client jam(server.port());
    ASSERT_TRUE(jam.send_json({{"jsonrpc", "2.0"},
                               {"id", 1},
                               {"method", "debug.sleep"},
                               {"params", {{"world", "jammed"}, {"seconds", 4}}}}));
    const auto t0 = std::chrono::steady_clock::now();
    // The other world ticks and answers meanwhile.
    std::this_thread::sleep_for(2500ms);
    const auto tick_before = c.result("world.info")["tick"].get<std::uint64_t>();
    std::this_thread::sleep_for(200ms);
    EXPECT_GT(c.result("world.info")["tick"].get<std::uint64_t>(), tick_before)
        << "the default world stalled too";
    const auto answer = jam.read_json(10s);
    const auto t1 = std::chrono::steady_clock::now();
    ASSERT_TRUE(answer.contains("result")) << answer;
    ASSERT_GE(t1 - t0, stall);

    // No ping from 2 s into the stall (the stall limit at a 0.2 s period) until the world woke up.
    // The sleep began after t0 and at most 4 s before t1, and ended 4 s or more after t0: pings are
    // withheld at the latest 2.2 s after it began (one period past the limit), so from t1 - 1.8 s.
    const auto quiet_from = t1 - 1500ms;
    const auto quiet_until = t0 + stall - 100ms;
    for (const auto& at : health_times(sidecar)) {
        EXPECT_FALSE(at > quiet_from && at < quiet_until)
            << "a Health ping " << std::chrono::duration_cast<std::chrono::milliseconds>(at - t0).count()
            << " ms into a 4 s stall";
    }
    // ... and pings resume once it ticks again.
    const auto count_at_wake = health_times(sidecar).size();
    EXPECT_TRUE(
        agones_sidecar::wait_for([&] { return health_times(sidecar).size() >= count_at_wake + 3; }, 3s))
        << "Health did not resume";
    EXPECT_EQ(rejected(sidecar), "");
    EXPECT_TRUE(sidecar.violations().empty()) << joined(sidecar.violations());
}

TEST(Agones, DebugSleepIsRefusedWithoutEnableDebug) {
    ecsd_server server;
    line_client c(server.port());
    const auto t0 = std::chrono::steady_clock::now();
    EXPECT_EQ(reason_of(c.call("debug.sleep", {{"seconds", 3}})), "unauthorized");
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 1s);
}

TEST(Agones, LabelsReportWorldsAndConnectionsAndFollowChangesAtMostOnceASecond) {
    agones_sidecar sidecar;
    ecsd_server server(agones_args(sidecar));
    const auto labels_are = [&](const std::string& worlds, const std::string& connections) {
        return agones_sidecar::wait_for(
            [&] {
                const auto l = sidecar.labels();
                return l.contains("ecsd-worlds") && l.at("ecsd-worlds") == worlds &&
                       l.contains("ecsd-connections") && l.at("ecsd-connections") == connections;
            },
            4s);
    };
    const auto shown = [&] { return json(sidecar.labels()).dump(); };
    EXPECT_TRUE(labels_are("1", "0")) << shown();
    {
        line_client a(server.port());
        line_client b(server.port());
        ASSERT_TRUE(a.result("world.create", {{"world", "one"}}).is_object());
        ASSERT_TRUE(b.result("world.create", {{"world", "two"}}).is_object());
        EXPECT_TRUE(labels_are("3", "2")) << shown();
        ASSERT_TRUE(a.result("world.destroy", {{"world", "one"}}).is_object());
        EXPECT_TRUE(labels_are("2", "2")) << shown();
    }
    EXPECT_TRUE(labels_are("2", "0")) << shown();

    // Connections that come and go 40 times in a second: the label follows at most once a second.
    const auto label_calls = [&] {
        std::size_t n = 0;
        for (const auto& c : sidecar.calls()) n += c.operation == "SetLabel" ? 1 : 0;
        return n;
    };
    const auto before = label_calls();
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 40; ++i) {
        line_client churn(server.port());
        EXPECT_EQ(churn.call("server.ping")["result"], "pong");
        std::this_thread::sleep_for(25ms);
    }
    const auto seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
    EXPECT_LE(static_cast<double>(label_calls() - before), seconds + 2)
        << "label updates in " << seconds << " s";
    EXPECT_TRUE(labels_are("2", "0")) << shown();

    EXPECT_EQ(rejected(sidecar), "");
    EXPECT_TRUE(sidecar.violations().empty()) << joined(sidecar.violations());
    for (const auto& [key, value] : sidecar.labels()) {
        EXPECT_TRUE(agones_sidecar::is_qualified_name(key)) << key;
        EXPECT_TRUE(agones_sidecar::is_valid_label_value(value)) << value;
    }
}

TEST(Agones, SigtermSavesEveryWorldThenCallsShutdownLast) {
    temp_dir data("sigterm");
    agones_sidecar sidecar;
    json at_shutdown;  // the snapshot as it is on disk when Shutdown arrives
    sidecar.on("Shutdown", [&] {
        std::ifstream in(data.path / "keep.snapshot.json");
        const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
        at_shutdown = json::parse(text, nullptr, /*allow_exceptions=*/false);
    });
    {
        auto args = agones_args(sidecar);
        args.insert(args.end(),
                    {"--data-dir", data.path.string(), "--autosave", "0", "--snapshot-format", "json"});
        ecsd_server server(args);
        ASSERT_TRUE(agones_sidecar::wait_for([&] { return sidecar.count("Ready") == 1; }, 5s));
        line_client c(server.port());
        ASSERT_TRUE(c.result("world.create", {{"world", "keep"}}).is_object());  // saved empty now
        for (int i = 0; i < 3; ++i) {
            ASSERT_TRUE(c.result("world.spawn_entity",
                                 {{"world", "keep"}, {"components", {{"Position", json::object()}}}})
                            .is_object());
        }
        ASSERT_TRUE(agones_sidecar::wait_for([&] { return sidecar.count("Health") >= 2; }, 3s));
        const auto st = server.stop(SIGTERM);
        EXPECT_TRUE(st.exited);
        EXPECT_EQ(st.code, 0);
        EXPECT_LT(st.elapsed, 2000ms * sanitizer_time_factor);
    }
    ASSERT_EQ(sidecar.count("Shutdown"), 1U) << joined(sidecar.operations());
    EXPECT_EQ(sidecar.operations().back(), "Shutdown")
        << "a call after Shutdown: " << joined(sidecar.operations());
    ASSERT_TRUE(at_shutdown.is_object()) << "no snapshot of 'keep' when Shutdown came";
    EXPECT_EQ(at_shutdown["entities"].size(), 3U) << "Shutdown before the final save";

    ecsd_server again({"--data-dir", data.path.string()});
    line_client c(again.port());
    EXPECT_EQ(c.result("world.info", {{"world", "keep"}})["entities"], 3);
    EXPECT_EQ(rejected(sidecar), "");
    EXPECT_TRUE(sidecar.violations().empty()) << joined(sidecar.violations());
}

TEST(Agones, WithoutASidecarEcsdServesAndSendsReadyOnceOneAppears) {
    const reserved_port reserved;
    const int port = reserved.port();
    ecsd_server server({"--agones-port", std::to_string(port), "--agones-health", "0.2"});
    line_client c(server.port());
    EXPECT_EQ(c.call("server.ping")["result"], "pong");
    ASSERT_TRUE(c.result("world.create", {{"world", "lonely"}}).is_object());
    const auto tick = c.result("world.info")["tick"].get<std::uint64_t>();
    std::this_thread::sleep_for(600ms);
    EXPECT_GT(c.result("world.info")["tick"].get<std::uint64_t>(), tick) << "the world stopped ticking";
    EXPECT_TRUE(server.running());

    // Ready is retried with backoff (at most 8 s apart): a sidecar that starts late still gets it.
    agones_sidecar late(port);
    EXPECT_TRUE(agones_sidecar::wait_for([&] { return late.count("Ready") == 1; }, 10s))
        << joined(late.operations());
    EXPECT_TRUE(agones_sidecar::wait_for([&] { return late.count("Health") >= 2; }, 3s));
    EXPECT_TRUE(late.violations().empty()) << joined(late.violations());
}

TEST(Agones, AFailingSidecarGetsReadyAgainUntilItAccepts) {
    agones_sidecar sidecar;
    sidecar.fail_with(503);
    ecsd_server server(agones_args(sidecar));
    const auto ready_tries = [&] {
        std::size_t n = 0;
        for (const auto& c : sidecar.calls()) n += c.operation == "Ready" ? 1 : 0;
        return n;
    };
    EXPECT_TRUE(agones_sidecar::wait_for([&] { return ready_tries() >= 3; }, 4s)) << ready_tries();
    EXPECT_EQ(sidecar.count("Ready"), 0U);
    line_client c(server.port());
    EXPECT_EQ(c.call("server.ping")["result"], "pong");
    sidecar.fail_with(0);
    EXPECT_TRUE(agones_sidecar::wait_for([&] { return sidecar.count("Ready") == 1; }, 10s));
}

TEST(Agones, ASidecarThatNeverAnswersStallsNeitherServingNorShutdown) {
    agones_sidecar sidecar;
    sidecar.hang(true);
    ecsd_server server(agones_args(sidecar));
    line_client c(server.port());
    ASSERT_TRUE(agones_sidecar::wait_for([&] { return !sidecar.calls().empty(); }, 3s));
    const auto tick = c.result("world.info")["tick"].get<std::uint64_t>();
    std::this_thread::sleep_for(500ms);
    EXPECT_GT(c.result("world.info")["tick"].get<std::uint64_t>(), tick);
    EXPECT_EQ(c.call("server.ping")["result"], "pong");
    const auto st = server.stop(SIGTERM);
    EXPECT_TRUE(st.exited);
    EXPECT_EQ(st.code, 0);
    // Shutdown waits at most 1 s for the sidecar.
    EXPECT_LT(st.elapsed, 2500ms * sanitizer_time_factor);
    std::size_t shutdowns = 0;
    for (const auto& call : sidecar.calls()) shutdowns += call.operation == "Shutdown" ? 1 : 0;
    EXPECT_EQ(shutdowns, 1U) << "Shutdown was still sent";
}

/// @brief Sends raw bytes to the stand-in and returns the status of its answer.
int raw_status(int port, const std::string& request) {
    line_client c(port);
    if (!c.send_raw(request)) return -1;
    const auto line = c.read_line(2s);
    if (!line || line->size() < 12) return -1;
    return std::stoi(line->substr(9, 3));
}

std::string http(const std::string& method, const std::string& path, const std::string& body,
                 const std::string& content_type = "application/json") {
    return method + " " + path + " HTTP/1.1\r\nHost: localhost\r\nContent-Type: " + content_type +
           "\r\nContent-Length: " + std::to_string(body.size()) + "\r\nConnection: close\r\n\r\n" + body;
}

// The stand-in must reject what the real sidecar rejects, or the tests above prove nothing.
TEST(Agones, TheStandInRejectsWhatTheRealSidecarRejects) {
    agones_sidecar sidecar;
    const int p = sidecar.port();
    EXPECT_EQ(raw_status(p, http("POST", "/ready", "{}")), 200);
    EXPECT_EQ(raw_status(p, http("POST", "/readyz", "{}")), 404);
    EXPECT_EQ(raw_status(p, http("GET", "/ready", "")), 405);
    EXPECT_EQ(raw_status(p, http("POST", "/metadata/label", R"({"key":"a","value":"b"})")), 405);
    EXPECT_EQ(raw_status(p, http("POST", "/health", "{not json")), 400);
    EXPECT_EQ(raw_status(p, http("POST", "/health", "[1]")), 400);
    EXPECT_EQ(raw_status(p, http("PUT", "/metadata/label", R"({"key":"worlds","value":3})")), 400);
    EXPECT_EQ(raw_status(p, http("PUT", "/metadata/label", R"({"key":"worlds","value":"3 worlds"})")), 400);
    EXPECT_EQ(raw_status(p, http("PUT", "/metadata/label", R"({"key":"worlds","value":"-3"})")), 400);
    EXPECT_EQ(raw_status(p, http("PUT", "/metadata/label", R"({"key":"a/b/c","value":"3"})")), 400);
    EXPECT_EQ(raw_status(p, http("PUT", "/metadata/label", R"({"key":"","value":"3"})")), 400);
    EXPECT_EQ(raw_status(p, http("PUT", "/metadata/label", R"({"key":"ecsd-worlds","value":"3"})")), 200);
    EXPECT_EQ(raw_status(p, "POST /ready HTTP/1.1\r\nContent-Length: 2\r\nConnection: close\r\n\r\n{}"), 400)
        << "no Host header";
    EXPECT_TRUE(sidecar.violations().empty()) << joined(sidecar.violations());
    // What the real one lets pass but the description does not allow is a violation.
    EXPECT_EQ(raw_status(p, http("POST", "/health", "", "text/plain")), 200);
    EXPECT_EQ(raw_status(p, http("POST", "/health", R"({"extra":1})")), 200);
    EXPECT_EQ(sidecar.violations().size(), 3U) << joined(sidecar.violations());
    EXPECT_EQ(sidecar.labels().at("ecsd-worlds"), "3");
    EXPECT_EQ(sidecar.operations(), (std::vector<std::string>{"Ready", "SetLabel", "Health", "Health"}));
}

}  // namespace
}  // namespace ecsd::test
