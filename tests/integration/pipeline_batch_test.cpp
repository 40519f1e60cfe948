// Pipelining and batches: many requests in one write, answered in request order even when they
// go to different worlds' strands; batches answered as arrays.
#include <set>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

class Pipeline : public testing::Test {
  protected:
    void SetUp() override {
        ASSERT_TRUE(c_.result("world.create", {{"world", "w1"}}).is_object());
        ASSERT_TRUE(c_.result("world.create", {{"world", "w2"}, {"paused", true}}).is_object());
    }
    ecsd_server server_;
    line_client c_{server_.port()};
};

TEST_F(Pipeline, ManyRequestsInOneWriteAnswerInOrder) {
    constexpr int n = 3000;
    std::string burst;
    const char* worlds[] = {"default", "w1", "w2"};
    for (int i = 0; i < n; ++i) {
        switch (i % 4) {
            case 0:
                burst += request_line(i, "server.ping");
                break;  // runs inline on the connection
            case 1:
                burst += request_line(i, "world.info", {{"world", worlds[i % 3]}});
                break;
            case 2:
                burst += request_line(i, "world.step", {{"world", "w2"}});
                break;
            default:
                burst += request_line(i, "world.hash", {{"world", worlds[(i / 4) % 3]}});
                break;
        }
        burst += '\n';
    }
    ASSERT_TRUE(c_.send_raw(burst));  // one write
    std::uint64_t last_step = 0;
    for (int i = 0; i < n; ++i) {
        const auto r = c_.read_json();
        ASSERT_EQ(r["id"], i) << r.dump();
        ASSERT_TRUE(r.contains("result")) << r.dump();
        if (i % 4 == 2) {
            // Requests to one world run in order too: w2's tick counts up by one per step.
            const auto tick = r["result"]["tick"].get<std::uint64_t>();
            EXPECT_EQ(tick, last_step + 1);
            last_step = tick;
        }
    }
}

TEST_F(Pipeline, ManyConnectionsAtOnceEachInOrder) {
    std::vector<std::unique_ptr<line_client>> clients;
    for (int k = 0; k < 8; ++k) clients.push_back(std::make_unique<line_client>(server_.port()));
    for (int k = 0; k < 8; ++k) {
        std::string burst;
        for (int i = 0; i < 200; ++i) {
            burst += request_line(i, i % 2 ? "world.info" : "server.ping",
                                  i % 2 ? json{{"world", k % 2 ? "w1" : "w2"}} : json()) +
                     "\n";
        }
        ASSERT_TRUE(clients[static_cast<std::size_t>(k)]->send_raw(burst));
    }
    for (auto& c : clients) {
        for (int i = 0; i < 200; ++i) ASSERT_EQ(c->read_json()["id"], i);
    }
}

TEST_F(Pipeline, BatchAnswersAnArrayInOrder) {
    json batch = json::array();
    batch.push_back({{"jsonrpc", "2.0"}, {"id", 1}, {"method", "server.ping"}});
    batch.push_back({{"jsonrpc", "2.0"}, {"id", 2}, {"method", "world.info"}, {"params", {{"world", "w1"}}}});
    batch.push_back(
        {{"jsonrpc", "2.0"}, {"method", "world.step"}, {"params", {{"world", "w2"}}}});  // notification
    batch.push_back({{"jsonrpc", "2.0"}, {"id", 3}, {"method", "world.step"}, {"params", {{"world", "w2"}}}});
    batch.push_back(42);
    batch.push_back({{"jsonrpc", "2.0"}, {"id", 4}, {"method", "nope"}});
    batch.push_back(
        {{"jsonrpc", "2.0"}, {"id", 5}, {"method", "world.info"}, {"params", {{"world", "gone"}}}});
    ASSERT_TRUE(c_.send_json(batch));
    const auto r = c_.read_json();
    ASSERT_TRUE(r.is_array()) << r.dump();
    ASSERT_EQ(r.size(), 6U);  // the notification answers nothing
    EXPECT_EQ(r[0]["result"], "pong");
    EXPECT_EQ(r[1]["result"]["world"], "w1");
    EXPECT_EQ(r[2]["id"], 3);
    EXPECT_EQ(r[2]["result"]["tick"], 2);  // the notification's step ran first
    EXPECT_EQ(reason_of(r[3]), "invalid_request");
    EXPECT_TRUE(r[3]["id"].is_null());
    EXPECT_EQ(reason_of(r[4]), "method_not_found");
    EXPECT_EQ(reason_of(r[5]), "no_such_world");
}

TEST_F(Pipeline, BatchOfNotificationsAnswersNothing) {
    ASSERT_TRUE(c_.send_line(
        R"([{"jsonrpc":"2.0","method":"server.ping"},{"jsonrpc":"2.0","method":"world.info"}])"));
    ASSERT_TRUE(c_.send_line(request_line("next", "server.ping")));
    EXPECT_EQ(c_.read_json()["id"], "next");
}

TEST_F(Pipeline, EmptyBatchIsOneInvalidRequest) {
    ASSERT_TRUE(c_.send_line("[]"));
    const auto r = c_.read_json();
    ASSERT_TRUE(r.is_object());
    EXPECT_EQ(reason_of(r), "invalid_request");
}

TEST_F(Pipeline, BatchesAndSinglesInterleaveInOrder) {
    std::string burst;
    for (int i = 0; i < 100; ++i) {
        if (i % 2) {
            burst += "[" + request_line(i, "world.info", {{"world", "w1"}}) + "," +
                     request_line(i, "server.ping") + "]\n";
        } else {
            burst += request_line(i, "world.hash", {{"world", "w2"}}) + "\n";
        }
    }
    ASSERT_TRUE(c_.send_raw(burst));
    for (int i = 0; i < 100; ++i) {
        const auto r = c_.read_json();
        if (i % 2) {
            ASSERT_TRUE(r.is_array());
            EXPECT_EQ(r[0]["id"], i);
            EXPECT_EQ(r[1]["result"], "pong");
        } else {
            EXPECT_EQ(r["id"], i);
        }
    }
}

TEST(PipelineLimits, BatchSizeIsLimited) {
    ecsd_server server({"--max-batch", "3"});
    line_client c(server.port());
    json batch = json::array();
    for (int i = 0; i < 4; ++i) batch.push_back({{"jsonrpc", "2.0"}, {"id", i}, {"method", "server.ping"}});
    ASSERT_TRUE(c.send_json(batch));
    EXPECT_EQ(reason_of(c.read_json()), "limit_reached");
    EXPECT_EQ(c.call("server.ping")["result"], "pong");
}

}  // namespace
}  // namespace ecsd::test
