// watch_sink without sockets: how queued updates are rendered for each stream format.
#include <memory>
#include <string>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hosting/watch.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

std::shared_ptr<watch_sink> sink_with_brp_stream(watch_sink::format f, std::uint64_t& sub) {
    auto sink = std::make_shared<watch_sink>(watch_limits{});
    const auto id = sink->add(std::weak_ptr<hosted_world>{}, f);
    EXPECT_TRUE(id.has_value());
    sub = id.value_or(0);
    sink->bind_next("7");
    sink->start_next();  // its first answer went out
    return sink;
}

TEST(WatchSink, ABrpComponentsStreamThatIsResyncedSendsTheCurrentValue) {
    std::uint64_t sub = 0;
    auto sink = sink_with_brp_stream(watch_sink::format::brp_components, sub);
    ASSERT_TRUE(
        sink->deliver_state(sub, 5, R"([{"entity":4294967296,"components":{"Position":{"x":1,"y":2}}}])"));
    std::string out;
    sink->take(out, 1 << 20);
    ASSERT_FALSE(out.empty()) << "a resynced BRP stream must send the value it has now";
    const auto r = json::parse(out);
    EXPECT_EQ(r["id"], 7);
    EXPECT_EQ(r["result"]["components"]["Position"], (json{{"x", 1}, {"y", 2}}));
    EXPECT_EQ(r["result"]["removed"], json::array());
    EXPECT_EQ(sink->size(), 1U);  // the stream goes on
}

TEST(WatchSink, ABrpNamesStreamThatIsResyncedSendsTheCurrentNames) {
    std::uint64_t sub = 0;
    auto sink = sink_with_brp_stream(watch_sink::format::brp_names, sub);
    ASSERT_TRUE(sink->deliver_state(sub, 5, R"([{"entity":1,"components":{"Health":{"hp":3},"Name":"a"}}])"));
    std::string out;
    sink->take(out, 1 << 20);
    const auto r = json::parse(out);
    EXPECT_EQ(r["id"], 7);
    EXPECT_EQ(r["result"]["added"], (json{"Health", "Name"}));
}

TEST(WatchSink, ABrpStreamResyncedAfterItsEntityLeftEndsWithAnError) {
    std::uint64_t sub = 0;
    auto sink = sink_with_brp_stream(watch_sink::format::brp_components, sub);
    ASSERT_TRUE(sink->deliver_state(sub, 5, "[]"));
    std::string out;
    sink->take(out, 1 << 20);
    const auto r = json::parse(out);
    EXPECT_EQ(r["id"], 7);
    EXPECT_TRUE(r.contains("error"));
    EXPECT_EQ(sink->size(), 0U);
}

}  // namespace
}  // namespace ecsd::net
