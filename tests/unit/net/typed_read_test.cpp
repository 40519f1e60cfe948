// world.get_components' params read typed (protocol::entity_read, method_flags::entity_read): every
// line answers byte for byte what it answers with its params read as a tree, successes and errors
// alike, and the typed way is taken for the lines of its shape.
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <spdlog/spdlog.h>

#include "ecsd/protocol/jsonrpc.hpp"
#include "hosting/hosted_world.hpp"
#include "methods/methods.hpp"
#include "rpc/job_runner.hpp"
#include "rpc_harness.hpp"
#include "world/components.hpp"
#include "world/world.hpp"

using namespace ecsd::net;
namespace p = ecsd::protocol;

namespace {

class TypedReadTest : public testing::Test, protected ecsd::net::test::rpc_harness {
  protected:
    TypedReadTest() {
        spdlog::set_level(spdlog::level::err);  // each error answer is a log line
        register_all_methods(table_);
        ecsd::world::world_settings s;
        s.name = "default";
        s.paused = true;
        auto w = std::make_shared<ecsd::world::world>(s);
        auto& reg = w->registry();
        hero_ = reg.create();
        reg.emplace<ecsd::world::Position>(hero_, {1.5, -2.0});
        reg.emplace<ecsd::world::Health>(hero_, {90, 100});
        reg.emplace<ecsd::world::Name>(hero_, {"Hero"});
        gone_ = reg.create();
        reg.destroy(gone_);
        (void)worlds_.add("default", std::move(w));
    }

    struct answer {
        std::string text;
        bool typed = false;  // the parser read the params typed
    };
    // One line through the parser (typed or as a tree), the dispatcher and the world job.
    answer run(const std::string& line, bool typed) {
        p::parse_limits limits;
        if (typed) limits.entity_read_method = table_.entity_read_method();
        auto parsed = p::parse_line(line, limits);
        answer out;
        for (auto& m : parsed.messages) {
            auto& req = std::get<p::request>(m);
            out.typed = out.typed || req.read.has_value();
            auto prepared = dispatch_.prepare(std::move(req), session_);
            if (prepared.job) {
                const auto result = dispatch_.run(*prepared.job);
                out.text += dispatcher::finish(*prepared.job, result).value_or("");
            } else {
                out.text += prepared.response.value_or("");
            }
        }
        return out;
    }
    static std::string get(const std::string& params) {
        return R"({"jsonrpc":"2.0","id":3,"method":"world.get_components","params":)" + params + "}";
    }

    ecsd::ecs::entity_id hero_ = 0, gone_ = 0;
};

TEST_F(TypedReadTest, TheMethodTableNamesGetComponents) {
    EXPECT_EQ(table_.entity_read_method(), "world.get_components");
}

TEST_F(TypedReadTest, EveryGetAnswersAsItsTreeReadingDoes) {
    const auto hero = std::to_string(hero_), gone = std::to_string(gone_);
    std::string many_names;  // 1024 names of 64 bytes
    for (std::size_t i = 0; i < p::entity_read::max_names; ++i)
        many_names += (i ? ",\"" : "\"") + std::string(p::entity_read::max_name_bytes, 'C') + "\"";
    struct line {
        std::string params;
        bool typed;
    };
    const std::vector<line> lines = {
        {R"({"entity":)" + hero + "}", true},
        {R"({"entity":)" + hero + R"(,"world":"default"})", true},
        {R"({"entity":)" + hero + R"(,"components":["Health","Position"]})", true},
        {R"({"entity":)" + hero + R"(,"components":[]})", true},
        {R"({"components":["Position"],"entity":)" + hero + "}", true},
        {R"({"entity":)" + hero + R"(,"components":["Velocity"]})", true},  // no_such_component
        {R"({"entity":)" + hero + R"(,"components":["Nope"]})", true},      // unknown name
        {R"({"entity":)" + gone + "}", true},                               // destroyed
        {R"({"entity":12345678})", true},                                   // never was
        {R"({"entity":0})", true},
        {R"({"entity":)" + hero + R"(,"world":"elsewhere"})", true},  // no_such_world
        {R"({"entity":)" + hero + R"(,"world":"../etc"})", true},     // no file name
        {R"({"entity":)" + hero + R"(,"world":".hidden"})", true},
        // The typed reading's bounds, each at its edge: the schema must let all of them through,
        // or the tree's answer (invalid_params) would differ from the typed one.
        {R"({"entity":9007199254740991})", true},
        {R"({"entity":1,"world":")" + std::string(64, 'w') + R"("})", true},
        {R"({"entity":)" + hero + R"(,"components":[)" + many_names + "]}", true},
        {R"({"entity":"Hero"})", false},
        {R"({"entity":"Nobody"})", false},
        {R"({"entity":"12"})", false},
        {R"({"entity":-1})", false},
        {R"({"entity":1.5})", false},
        {R"({"entity":9007199254740992})", false},
        {R"({"entity":)" + hero + R"(,"extra":1})", false},
        {R"({"entity":)" + hero + R"(,"components":"Position"})", false},
        {R"({"entity":)" + hero + R"(,"world":""})", false},
        {R"({})", false},
        {R"([1])", false},
    };
    for (const auto& l : lines) {
        const auto text = get(l.params);
        const auto typed = run(text, true);
        const auto tree = run(text, false);
        EXPECT_EQ(typed.typed, l.typed) << l.params;
        EXPECT_FALSE(tree.typed) << l.params;
        EXPECT_EQ(typed.text, tree.text) << l.params;
        EXPECT_FALSE(typed.text.empty()) << l.params;
    }
    // The first line's answer is the hero's components, so the comparison compares something.
    const auto first = nlohmann::json::parse(run(get(lines.front().params), true).text);
    EXPECT_EQ(first["result"]["entity"], hero_);
    EXPECT_EQ(first["result"]["components"]["Health"]["hp"], 90);
    EXPECT_EQ(first["result"]["components"]["Name"]["name"], "Hero");
    // A batch mixes both readings and answers as one.
    const auto batch = "[" + get(lines[0].params) + "," + get(R"({"entity":"Hero"})") + "]";
    EXPECT_EQ(run(batch, true).text, run(batch, false).text);
}

TEST_F(TypedReadTest, TheSlowLogShowsATypedReadsParamsAsSent) {
    // Every request is slow to a threshold of 0; the job runs as the pipeline runs it.
    server_config cfg;
    cfg.slowlog_us = 0;
    server_services services{cfg, table_, worlds_};
    dispatcher d{services};
    p::parse_limits limits;
    limits.entity_read_method = table_.entity_read_method();
    auto parsed = p::parse_line(
        get(R"({"entity":)" + std::to_string(hero_) + R"(,"components":["Position"]})"), limits);
    auto& req = std::get<p::request>(parsed.messages.front());
    ASSERT_TRUE(req.read.has_value());
    auto prepared = d.prepare(std::move(req), session_);
    ASSERT_TRUE(prepared.job.has_value());
    job_runner runner;
    auto now = job_runner::clock::now();
    ASSERT_TRUE(runner.next(d, *prepared.job, now).has_value());
    const auto log = services.slowlog.to_json(10);
    ASSERT_EQ(log["entries"].size(), 1U);
    EXPECT_EQ(log["entries"][0]["method"], "world.get_components");
    EXPECT_EQ(nlohmann::json::parse(log["entries"][0]["params"].get<std::string>()),
              (nlohmann::json{{"entity", hero_}, {"components", nlohmann::json::array({"Position"})}}));
}

TEST(MethodTableEntityRead, IsForOneWorldReadOnly) {
    method_table t;
    const auto handler = [](method_context&) { return nlohmann::json(nullptr); };
    EXPECT_THROW(t.add({"t.w",
                        "",
                        object_schema(),
                        {},
                        method_flags::mutating | method_flags::world_bound | method_flags::entity_read,
                        handler}),
                 std::invalid_argument);
    EXPECT_THROW(
        t.add({"t.r", "", object_schema(), {}, method_flags::read_only | method_flags::entity_read, handler}),
        std::invalid_argument);  // not world_bound
    const auto read = method_flags::read_only | method_flags::world_bound | method_flags::entity_read;
    t.add({"t.a", "", object_schema(), {}, read, handler});
    EXPECT_EQ(t.entity_read_method(), "t.a");
    EXPECT_THROW(t.add({"t.b", "", object_schema(), {}, read, handler}), std::invalid_argument);
}

}  // namespace
