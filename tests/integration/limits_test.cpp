// Connection limits: max connections and idle timeout (slow readers: backpressure_test.cpp).
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

}  // namespace
}  // namespace ecsd::test
