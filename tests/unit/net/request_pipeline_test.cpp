// The request pipeline without sockets: what every face (TCP lines, HTTP bodies) relies on. Answers
// leave in request order wherever they ran, a batch stops running at the output bound, the depth is
// bounded, and a closed connection's jobs are dropped.
#include "rpc/request_pipeline.hpp"

#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "hosting/hosted_world.hpp"
#include "rpc_harness.hpp"

using namespace ecsd::net;
using nlohmann::json;

namespace {

class RequestPipelineTest : public testing::Test, protected ecsd::net::test::rpc_harness {
  protected:
    RequestPipelineTest() {
        table_.add({"t.echo", "test", object_schema({{"n", {{"type", "integer"}}}}), json::object(),
                    method_flags::read_only, [](method_context& ctx) { return ctx.params; }});
        table_.add({"t.where", "test", object_schema({{"pad", {{"type", "integer"}}}}), json::object(),
                    method_flags::world_bound | method_flags::read_only, [this](method_context& ctx) {
                        ++runs_;
                        return json(ctx.hosted->name() + std::string(ctx.params.value("pad", 0), 'x'));
                    }});
        (void)worlds_.add("w", nullptr);
        (void)worlds_.add("default", nullptr);
    }

    // A pipeline whose resume runs the next jobs, as a face's pump does.
    std::shared_ptr<request_pipeline> make() {
        auto p =
            std::make_shared<request_pipeline>(services_, dispatch_, session_, asio::make_strand(io_),
                                               [this] { request_pipeline::run_jobs(pipeline_.lock(), 0); });
        pipeline_ = p;
        return p;
    }

    static std::string line(int id, const std::string& method, json params = json::object()) {
        return json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", std::move(params)}}.dump();
    }

    // Every finished answer, in the order they leave.
    static std::vector<json> drain(request_pipeline& p) {
        std::vector<json> out;
        while (p.ready()) {
            auto a = p.pop();
            if (a.batch) {
                json all = json::array();
                for (const auto& part : a.parts)
                    if (!part.empty()) all.push_back(json::parse(part));
                out.push_back(std::move(all));
            } else if (!a.text.empty()) {
                out.push_back(json::parse(a.text));
            }
        }
        return out;
    }

    std::weak_ptr<request_pipeline> pipeline_;
    int runs_ = 0;
};

TEST_F(RequestPipelineTest, AnswersLeaveInRequestOrderWhereverTheyRan) {
    auto p = make();
    p->submit(line(1, "t.where", {{"world", "w"}}));
    p->submit(line(2, "t.echo", {{"n", 2}}));
    p->submit(line(3, "t.where"));
    p->submit("{not json");
    EXPECT_FALSE(p->ready());  // the first answer is still on its world: nothing may leave before it
    request_pipeline::run_jobs(p, 0);
    io_.run();
    const auto out = drain(*p);
    ASSERT_EQ(out.size(), 4U);
    EXPECT_EQ(out[0]["id"], 1);
    EXPECT_EQ(out[0]["result"], "w");
    EXPECT_EQ(out[1]["id"], 2);
    EXPECT_EQ(out[2]["result"], "default");
    EXPECT_EQ(out[3]["error"]["data"]["reason"], "parse_error");
    EXPECT_TRUE(p->idle());
    EXPECT_EQ(p->held_bytes(), 0U);
}

TEST_F(RequestPipelineTest, ABatchStopsRunningAtTheOutputBound) {
    config_.max_output_bytes = 1000;
    auto p = make();
    json batch = json::array();
    for (int i = 0; i < 10; ++i)
        batch.push_back({{"jsonrpc", "2.0"}, {"id", i}, {"method", "t.where"}, {"params", {{"pad", 300}}}});
    p->submit(batch.dump());
    request_pipeline::run_jobs(p, 0);
    io_.run();
    const auto out = drain(*p);
    ASSERT_EQ(out.size(), 1U);
    ASSERT_EQ(out[0].size(), 10U);  // a batch leaves whole, every element answered
    int ok = 0;
    int refused = 0;
    for (const auto& a : out[0]) {
        if (a.contains("result")) {
            EXPECT_EQ(refused, 0) << "an element ran after one was refused";
            ++ok;
        } else {
            EXPECT_EQ(a["error"]["data"]["reason"], "too_large");
            EXPECT_EQ(a["error"]["data"]["limit"], 1000);
            ++refused;
        }
    }
    EXPECT_GE(ok, 3);
    EXPECT_LE(ok, 4);
    EXPECT_EQ(runs_, ok);  // the refused elements never ran
}

TEST_F(RequestPipelineTest, TheDepthIsBounded) {
    config_.max_pipeline = 3;
    auto p = make();
    for (int i = 0; i < 3; ++i) {
        EXPECT_TRUE(p->has_room(0));
        p->submit(line(i, "t.where"));
    }
    EXPECT_FALSE(p->has_room(0));  // the face frames no more until answers leave
    request_pipeline::run_jobs(p, 0);
    io_.run();
    EXPECT_EQ(drain(*p).size(), 3U);
    EXPECT_TRUE(p->has_room(0));
    EXPECT_FALSE(p->has_room(config_.max_output_bytes));  // bytes the face still holds count too
}

TEST_F(RequestPipelineTest, AClosedConnectionsJobsAreDropped) {
    auto p = make();
    p->submit(line(1, "t.where"));
    p->submit(line(2, "t.where"));
    request_pipeline::run_jobs(p, 0);
    p->close();  // before the world's strand got to them
    io_.run();
    EXPECT_EQ(runs_, 0);
    EXPECT_FALSE(p->ready());
}

}  // namespace
