// world.create/destroy/list/info/pause/resume/step/hash against the real ecsd.
#include <gtest/gtest.h>

#include <thread>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

class WorldMethods : public testing::Test {
protected:
    ecsd_server server_;
    line_client c_{server_.port()};
};

TEST_F(WorldMethods, DefaultWorldExistsAndTicks) {
    const auto first = c_.result("world.info");
    EXPECT_EQ(first["world"], "default");
    EXPECT_EQ(first["paused"], false);
    EXPECT_EQ(first["tick_hz"], 60.0);
    EXPECT_EQ(first["entities"], 0);
    EXPECT_TRUE(first.contains("overruns"));
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto later = c_.result("world.info", {{"world", "default"}});
    EXPECT_GT(later["tick"].get<std::uint64_t>(), first["tick"].get<std::uint64_t>());
}

TEST_F(WorldMethods, CreateListInfoDestroy) {
    const auto created = c_.result("world.create", {{"world", "arena"}, {"tick_hz", 20}, {"gravity", {{"x", 1}, {"y", -2}}}});
    EXPECT_EQ(created["world"], "arena");
    EXPECT_EQ(created["tick_hz"], 20.0);
    EXPECT_EQ(created["gravity"]["x"], 1.0);
    EXPECT_EQ(c_.result("world.list")["worlds"], json({"arena", "default"}));
    EXPECT_EQ(c_.result("world.info", {{"world", "arena"}})["tick_hz"], 20.0);
    EXPECT_EQ(c_.result("world.create", {{"world", "g"}, {"gravity", -3.5}})["gravity"]["y"], -3.5);
    EXPECT_EQ(c_.result("world.destroy", {{"world", "arena"}})["destroyed"], "arena");
    EXPECT_EQ(c_.result("world.list")["worlds"], json({"default", "g"}));
    EXPECT_EQ(reason_of(c_.call("world.info", {{"world", "arena"}})), "no_such_world");
}

TEST_F(WorldMethods, ErrorsNameTheirReason) {
    ASSERT_TRUE(c_.result("world.create", {{"world", "w"}}).is_object());
    const auto again = c_.call("world.create", {{"world", "w"}});
    EXPECT_EQ(reason_of(again), "world_exists");
    EXPECT_EQ(again["error"]["code"], -32002);
    EXPECT_EQ(reason_of(c_.call("world.destroy", {{"world", "nope"}})), "no_such_world");
    EXPECT_EQ(reason_of(c_.call("world.pause", {{"world", "nope"}})), "no_such_world");
    EXPECT_EQ(reason_of(c_.call("world.create", {{"world", "x"}, {"tick_hz", 0}})), "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.create", {{"world", "x"}, {"tick_hz", 5000}})), "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.create", {{"world", ""}})), "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.create")), "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.step", {{"ticks", "3"}})), "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.info", {{"world", 5}})), "invalid_params");
    EXPECT_EQ(c_.result("world.list")["worlds"], json({"default", "w"}));  // nothing else was created
}

TEST_F(WorldMethods, LimitOnWorldCount) {
    ecsd_server small({"--max-worlds", "2"});
    line_client c(small.port());
    ASSERT_TRUE(c.result("world.create", {{"world", "second"}}).is_object());
    EXPECT_EQ(reason_of(c.call("world.create", {{"world", "third"}})), "limit_reached");
}

TEST_F(WorldMethods, PausedWorldStandsStillAndStepRunsTicks) {
    ASSERT_TRUE(c_.result("world.create", {{"world", "p"}, {"paused", true}}).is_object());
    const auto before = c_.result("world.info", {{"world", "p"}});
    EXPECT_EQ(before["paused"], true);
    EXPECT_EQ(before["tick"], 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(c_.result("world.info", {{"world", "p"}})["tick"], 0);
    EXPECT_EQ(c_.result("world.step", {{"world", "p"}, {"ticks", 7}})["tick"], 7);
    EXPECT_EQ(c_.result("world.step", {{"world", "p"}})["tick"], 8);
    const auto resumed = c_.result("world.resume", {{"world", "p"}});
    EXPECT_EQ(resumed["paused"], false);
    std::this_thread::sleep_for(std::chrono::milliseconds(150));
    const auto paused = c_.result("world.pause", {{"world", "p"}});
    EXPECT_EQ(paused["paused"], true);
    const auto t = paused["tick"].get<std::uint64_t>();
    EXPECT_GT(t, 8U);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    EXPECT_EQ(c_.result("world.info", {{"world", "p"}})["tick"], t);
}

TEST_F(WorldMethods, HashIsDeterministicAcrossWorlds) {
    for (const char* name : {"a", "b"}) {
        ASSERT_TRUE(c_.result("world.create", {{"world", name}, {"paused", true}}).is_object());
        ASSERT_EQ(c_.result("world.step", {{"world", name}, {"ticks", 30}})["tick"], 30);
    }
    const auto a = c_.result("world.hash", {{"world", "a"}});
    const auto b = c_.result("world.hash", {{"world", "b"}});
    EXPECT_EQ(a["tick"], 30);
    ASSERT_TRUE(a["hash"].is_string());
    EXPECT_EQ(a["hash"].get<std::string>().size(), 16U);
    EXPECT_EQ(a["hash"], b["hash"]);
}

}  // namespace
}  // namespace ecsd::test
