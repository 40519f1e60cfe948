// Connection limits: max connections, idle timeout, slow readers cut off with bounded memory.
#include <gtest/gtest.h>
#include <sys/socket.h>
#include <sys/time.h>

#include <thread>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

using namespace std::chrono_literals;

TEST(Limits, ConnectionOverTheLimitGetsOneErrorLineAndIsClosed) {
    ecsd_server server({"--max-connections", "2"});
    line_client a(server.port()), b(server.port());
    ASSERT_EQ(a.call("server.ping")["result"], "pong");
    ASSERT_EQ(b.call("server.ping")["result"], "pong");
    line_client refused(server.port());
    const auto r = refused.read_json();
    EXPECT_EQ(reason_of(r), "limit_reached");
    EXPECT_EQ(r["error"]["data"]["limit"], 2);
    EXPECT_TRUE(refused.wait_closed());
    EXPECT_EQ(a.call("server.ping")["result"], "pong");  // the others are untouched
    {
        line_client gone(server.port());  // also refused; closes at once
        (void)gone.read_json();
    }
    // When one leaves, a newcomer is served (the close is noticed asynchronously: retry briefly).
    b.shutdown_write();
    ASSERT_TRUE(b.wait_closed());
    bool served = false;
    for (int attempt = 0; attempt < 50 && !served; ++attempt) {
        line_client next(server.port());
        served = next.call("server.ping")["result"] == "pong";
        if (!served) std::this_thread::sleep_for(20ms);
    }
    EXPECT_TRUE(served);
}

TEST(Limits, IdleConnectionsTimeOutBusyOnesStay) {
    ecsd_server server({"--idle-timeout", "0.3"});
    line_client idle(server.port());
    line_client busy(server.port());
    const auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < 8; ++i) {
        ASSERT_EQ(busy.call("server.ping")["result"], "pong");
        std::this_thread::sleep_for(100ms);
    }
    EXPECT_TRUE(idle.wait_closed(2s));
    EXPECT_GE(std::chrono::steady_clock::now() - start, 250ms);
    EXPECT_EQ(busy.call("server.ping")["result"], "pong");  // 800 ms old but never idle 300 ms
}

TEST(Limits, SlowReaderIsDisconnectedAndMemoryStaysBounded) {
    ecsd_server server({"--max-output-bytes", "262144"});
    const long rss_before = server.rss_kib();
    line_client slow(server.port(), "127.0.0.1", /*receive_buffer=*/4096);
    timeval tv{5, 0};
    ::setsockopt(slow.fd(), SOL_SOCKET, SO_SNDTIMEO, &tv, sizeof tv);
    std::string chunk;
    for (int i = 0; i < 100; ++i) chunk += request_line(i, "rpc.discover") + "\n";  // large responses
    bool broken = false;
    for (int round = 0; round < 2000 && !broken; ++round) broken = !slow.send_raw(chunk);
    EXPECT_TRUE(broken || slow.wait_closed(5s)) << "a client that never reads must be cut off";
    const long rss_after = server.rss_kib();
    EXPECT_LT(rss_after - rss_before, 16 * 1024) << "server memory grew from " << rss_before << " to " << rss_after << " KiB";
    line_client fresh(server.port());
    EXPECT_EQ(fresh.call("server.ping")["result"], "pong");
}

}  // namespace
}  // namespace ecsd::test
