// watch_sink without sockets: how queued updates are rendered for each stream format.
#include <algorithm>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <random>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "hosting/watch.hpp"
#include "world/watch_view.hpp"
#include "world/world.hpp"

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

// A watcher whose queue is full keeps the view's diffs (shared, not copied) and, when its
// connection takes again, gets ONE notification merged from them: latest values, an entity that
// entered and left meanwhile never mentioned, the number of ticks merged in "coalesced".
TEST(WatchSink, AWatcherThatFellBehindGetsOneMergedNotification) {
    world::world_settings settings;
    settings.paused = true;
    world::world w(settings);
    const auto a = w.spawn({{"Position", {{"x", 1}, {"y", 1}}}});
    const auto b = w.spawn({{"Position", {{"x", 2}, {"y", 2}}}});
    world::watch_view view(w, json("Position"), std::nullopt, 1);
    std::string state;
    view.rebase(w, state);

    watch_limits limits;
    limits.queue_bytes = 1;  // a second diff finds the queue full
    auto sink = std::make_shared<watch_sink>(limits);
    const auto sub = sink->add(std::weak_ptr<hosted_world>{});
    ASSERT_TRUE(sub.has_value());
    sink->start_next();

    w.mutate_component(a, "Position", "x", 10);
    ASSERT_TRUE(sink->deliver(*sub, view.diff(w)));  // queued: its queue was empty
    w.mutate_component(b, "Position", "y", 20);
    const auto c = w.spawn({{"Position", {{"x", 3}, {"y", 3}}}});
    ASSERT_TRUE(sink->deliver(*sub, view.diff(w)));  // full: it falls behind
    w.despawn(c);
    w.mutate_component(a, "Position", "x", 11);
    const auto last = view.diff(w);
    ASSERT_TRUE(sink->deliver(*sub, last));

    std::string out;
    sink->take(out, 1 << 20);
    ASSERT_EQ(std::count(out.begin(), out.end(), '\n'), 1) << out;
    const auto n = json::parse(out)["params"];
    EXPECT_EQ(n["subscription"], *sub);
    EXPECT_EQ(n["coalesced"], 3);
    EXPECT_EQ(n["tick"], last->tick);
    EXPECT_EQ(n["entered"], json::array()) << "an entity that came and went meanwhile is not mentioned";
    EXPECT_EQ(n["left"], json::array());
    ASSERT_EQ(n["changed"].size(), 2U);
    EXPECT_EQ(n["changed"][0]["entity"], a);
    EXPECT_EQ(n["changed"][0]["components"]["Position"], (json{{"x", 11.0}, {"y", 1.0}}));
    EXPECT_EQ(n["changed"][1]["entity"], b);
    EXPECT_EQ(n["changed"][1]["components"]["Position"], (json{{"x", 2.0}, {"y", 20.0}}));

    // Caught up: the next diff goes out as it is.
    w.mutate_component(b, "Position", "x", 5);
    ASSERT_TRUE(sink->deliver(*sub, view.diff(w)));
    out.clear();
    sink->take(out, 1 << 20);
    const auto next = json::parse(out)["params"];
    EXPECT_FALSE(next.contains("coalesced"));
    EXPECT_EQ(next["changed"][0]["components"]["Position"]["x"], 5.0);
}

TEST(WatchSink, WatchersThatFellBehindTogetherShareOneMergedNotification) {
    world::world_settings settings;
    settings.paused = true;
    world::world w(settings);
    std::vector<world::entity_id> ids;
    for (int i = 0; i < 400; ++i) ids.push_back(w.spawn({{"Position", {{"x", i}, {"y", i}}}}));
    world::watch_view view(w, json("Position"), std::nullopt, 1);
    std::string state;
    view.rebase(w, state);

    watch_limits limits;
    limits.queue_bytes = 1;  // a second diff finds the queue full
    std::vector<std::shared_ptr<watch_sink>> sinks;
    std::vector<std::uint64_t> subs;
    for (int i = 0; i < 3; ++i) {
        sinks.push_back(std::make_shared<watch_sink>(limits));
        const auto sub = sinks.back()->add(std::weak_ptr<hosted_world>{});
        ASSERT_TRUE(sub.has_value());
        subs.push_back(*sub);
        sinks.back()->start_next();
    }
    const auto held_before = held_diffs::process().bytes();
    const auto diffs_before = held_diffs::process().diffs();
    std::size_t backlog_bytes = 0;
    for (int round = 0; round < 3; ++round) {
        for (const auto e : ids)
            w.mutate_component(e, "Position", "x", 1000 * (round + 1) + static_cast<double>(e));
        const auto d = view.diff(w);
        backlog_bytes += d->bytes();
        for (std::size_t i = 0; i < sinks.size(); ++i) ASSERT_TRUE(sinks[i]->deliver(subs[i], d));
    }
    // The second diff found each queue full: all three wait as one backlog in each sink. The
    // server-wide output bound counts them once, each sink's weight in full.
    EXPECT_EQ(held_diffs::process().bytes() - held_before, backlog_bytes);
    EXPECT_EQ(held_diffs::process().diffs() - diffs_before, 3U);
    for (const auto& sink : sinks) {
        EXPECT_EQ(sink->held().backlogs, backlog_bytes);
        EXPECT_EQ(sink->held().queued, 0U) << "the diff that was queued moved into the backlog";
    }
    std::vector<const std::string*> bodies;
    std::vector<json> notes;
    std::vector<watch_bytes> taken(sinks.size());  // all held at once, so no address is reused
    for (std::size_t i = 0; i < sinks.size(); ++i) {
        auto& caught_up = taken[i];
        sinks[i]->take(caught_up, 1 << 20);
        for (const auto& p : caught_up.pieces())
            if (p.shared) bodies.push_back(p.shared.get());
        std::string text;
        caught_up.append_to(text);
        auto n = json::parse(text)["params"];
        EXPECT_EQ(n["coalesced"], 3);
        n.erase("subscription");
        notes.push_back(std::move(n));
    }
    EXPECT_EQ(held_diffs::process().bytes(), held_before) << "caught up: nothing is held";
    for (const auto& sink : sinks) {
        EXPECT_EQ(sink->held().backlogs, 0U);
        EXPECT_EQ(sink->held().queued, 0U);
    }
    ASSERT_EQ(bodies.size(), 3U) << "a body this large is shared in the gathered write";
    EXPECT_EQ(bodies[0], bodies[1]) << "the merge was done once, for all three";
    EXPECT_EQ(bodies[1], bodies[2]);
    EXPECT_EQ(notes[0], notes[1]);
    EXPECT_EQ(notes[1], notes[2]);
    ASSERT_EQ(notes[0]["changed"].size(), ids.size());
    EXPECT_EQ(notes[0]["changed"][0]["components"]["Position"]["x"], 3000.0 + static_cast<double>(ids[0]));
}

// A paused world with one entity at (1, 1), and a view of its Position based on it.
struct one_entity_view {
    static world::world_settings paused() {
        world::world_settings settings;
        settings.paused = true;
        return settings;
    }
    world::world w{paused()};
    world::entity_id a = w.spawn({{"Position", {{"x", 1}, {"y", 1}}}});
    world::watch_view view{w, json("Position"), std::nullopt, 1};
    one_entity_view() {
        std::string state;
        view.rebase(w, state);
    }
};

// A world's publish wakes its subscribers' connections together once it has delivered to all of
// them, not one post per delivery; a sink gone meanwhile is skipped.
TEST(WatchSink, WakesWithinAWakeBatchArePostedWhenItEnds) {
    one_entity_view f;
    int woken = 0;
    auto sink = std::make_shared<watch_sink>(watch_limits{});
    sink->set_wake([&] { ++woken; });
    const auto sub = sink->add(std::weak_ptr<hosted_world>{});
    ASSERT_TRUE(sub.has_value());
    sink->start_next();
    auto gone = std::make_shared<watch_sink>(watch_limits{});
    gone->set_wake([&] { ADD_FAILURE() << "a sink that is gone is not woken"; });
    const auto gone_sub = gone->add(std::weak_ptr<hosted_world>{});
    ASSERT_TRUE(gone_sub.has_value());
    std::string out;
    sink->take(out, 1 << 20);  // its connection has taken what there was: the next delivery wakes it
    woken = 0;
    {
        const watch_sink::wake_batch wakes;
        f.w.mutate_component(f.a, "Position", "x", 2);
        const auto d = f.view.diff(f.w);
        ASSERT_TRUE(sink->deliver(*sub, d));
        ASSERT_TRUE(gone->deliver(*gone_sub, d));
        EXPECT_EQ(woken, 0) << "held until the batch ends";
        gone.reset();
    }
    EXPECT_EQ(woken, 1);
    sink->take(out, 1 << 20);
    EXPECT_EQ(json::parse(out)["params"]["changed"][0]["components"]["Position"]["x"], 2.0);

    // Without a batch, a delivery wakes at once.
    f.w.mutate_component(f.a, "Position", "x", 3);
    ASSERT_TRUE(sink->deliver(*sub, f.view.diff(f.w)));
    EXPECT_EQ(woken, 2);
}

// Given a handoff (hosted_world: asio::defer on the world's thread), a batch hands all its wakes to
// one function when it ends, and they are made only when that function runs: the tick is over by
// then. A sink closed in between is not woken.
TEST(WatchSink, ABatchWithAHandoffWakesWhenTheHandedFunctionRuns) {
    one_entity_view f;
    int woken = 0;
    auto sink = std::make_shared<watch_sink>(watch_limits{});
    sink->set_wake([&] { ++woken; });
    const auto sub = sink->add(std::weak_ptr<hosted_world>{});
    ASSERT_TRUE(sub.has_value());
    sink->start_next();
    auto closed = std::make_shared<watch_sink>(watch_limits{});
    closed->set_wake([] {});  // start_next wakes it at once (no batch yet)
    const auto closed_sub = closed->add(std::weak_ptr<hosted_world>{});
    ASSERT_TRUE(closed_sub.has_value());
    closed->start_next();
    std::string out;
    sink->take(out, 1 << 20);
    closed->take(out, 1 << 20);
    closed->set_wake([&] { ADD_FAILURE() << "a sink closed before the wakes run is not woken"; });
    woken = 0;
    std::vector<std::function<void()>> handed;
    const watch_sink::handoff to = [&](std::function<void()> fn) { handed.push_back(std::move(fn)); };
    {
        const watch_sink::wake_batch wakes(&to);
        f.w.mutate_component(f.a, "Position", "x", 2);
        const auto d = f.view.diff(f.w);
        ASSERT_TRUE(sink->deliver(*sub, d));
        ASSERT_TRUE(closed->deliver(*closed_sub, d));
    }
    EXPECT_EQ(woken, 0) << "nothing is woken until the handed function runs";
    ASSERT_EQ(handed.size(), 1U) << "one function for the whole batch";
    closed->close();
    handed.front()();
    EXPECT_EQ(woken, 1);
    sink->take(out, 1 << 20);
    EXPECT_EQ(json::parse(out)["params"]["changed"][0]["components"]["Position"]["x"], 2.0);
}

// Past its bound (bytes, and at least min_backlog diffs) a backlog is dropped, and the world is
// asked for the whole state again (here no world is there to ask: nothing is sent).
TEST(WatchSink, ABacklogPastItsBoundIsDroppedForAResync) {
    one_entity_view f;
    watch_limits limits;
    limits.queue_bytes = 1;
    limits.pending_bytes = 1;
    limits.min_backlog = 2;
    auto sink = std::make_shared<watch_sink>(limits);
    const auto sub = sink->add(std::weak_ptr<hosted_world>{});
    ASSERT_TRUE(sub.has_value());
    sink->start_next();
    for (int i = 0; i < 4; ++i) {
        f.w.mutate_component(f.a, "Position", "x", 100 + i);
        ASSERT_TRUE(sink->deliver(*sub, f.view.diff(f.w)));
    }
    std::string out;
    sink->take(out, 1 << 20);
    EXPECT_EQ(out, "") << "a subscriber past its bound waits for its resync, it gets no merged diff";
    EXPECT_EQ(sink->size(), 1U);
}

// A subscriber behind for a long time: its backlog folds into one diff whenever it passes a
// quarter of the bound, and what it finally gets, applied to what it had, is the world's state.
TEST(WatchSink, AFoldedBacklogStaysExactThroughEntersLeavesAndReturns) {
    world::world_settings settings;
    settings.paused = true;
    world::world w(settings);
    std::vector<world::entity_id> ids;
    for (int i = 0; i < 20; ++i) ids.push_back(w.spawn({{"Position", {{"x", i}, {"y", 0}}}}));
    world::watch_view view(w, json("Position"), std::nullopt, 1);
    std::string state;
    view.rebase(w, state);
    std::map<std::uint64_t, json> client;
    for (const auto& e : json::parse(state)) client[e["entity"].get<std::uint64_t>()] = e["components"];

    watch_limits limits;
    limits.queue_bytes = 1;
    limits.pending_bytes = 64 * 1024;  // folds every 16 KiB of backlog
    limits.min_backlog = 2;
    auto sink = std::make_shared<watch_sink>(limits);
    const auto sub = sink->add(std::weak_ptr<hosted_world>{});
    ASSERT_TRUE(sub.has_value());
    sink->start_next();

    std::mt19937 rng(3);
    int delivered = 0;
    for (int step = 0; step < 400; ++step) {
        const auto e = ids[rng() % ids.size()];
        const bool has =
            w.registry().alive(e) && w.registry().has(e, w.registry().component_by_name("Position"));
        switch (rng() % 4) {
            case 0:  // leaves (unmatched), or comes back
                if (has)
                    w.remove_components(e, {"Position"});
                else if (w.registry().alive(e))
                    w.insert_components(e, {{"Position", {{"x", step}, {"y", 1}}}});
                break;
            case 1:  // dies; a newcomer takes a place in the list
                if (w.registry().alive(e)) w.despawn(e);
                ids[rng() % ids.size()] = w.spawn({{"Position", {{"x", -step}, {"y", 2}}}});
                break;
            default:
                if (has) w.mutate_component(e, "Position", "x", step * 1.5);
                break;
        }
        if (auto d = view.diff(w)) {
            ASSERT_TRUE(sink->deliver(*sub, d));
            ++delivered;
        }
    }
    std::string out;
    sink->take(out, 64 << 20);
    std::istringstream lines(out);
    std::string line;
    std::uint64_t coalesced = 0;
    int notifications = 0;
    while (std::getline(lines, line)) {
        const auto n = json::parse(line)["params"];
        ++notifications;
        coalesced += n.value("coalesced", std::uint64_t{0});
        for (const auto& x : n["entered"]) client[x["entity"].get<std::uint64_t>()] = x["components"];
        for (const auto& x : n["changed"]) {
            auto& c = client.at(x["entity"].get<std::uint64_t>());
            for (const auto& [k, v] : x["components"].items()) c[k] = v;
            for (const auto& r : x.value("removed", json::array())) c.erase(r.get<std::string>());
        }
        for (const auto& x : n["left"]) client.erase(x["entity"].get<std::uint64_t>());
    }
    // Its second diff found the first still queued: both went to its backlog with all the rest.
    EXPECT_EQ(notifications, 1);
    EXPECT_EQ(coalesced, static_cast<std::uint64_t>(delivered));
    std::map<std::uint64_t, json> now;
    const auto query = w.query(json("Position"), std::nullopt, 10000, 0);
    for (const auto& e : query["entities"]) now[e["entity"].get<std::uint64_t>()] = e["components"];
    EXPECT_EQ(client, now);
}

// An entity the client holds leaves and comes back while the client is behind, the backlog is
// folded, and then it leaves again: the client must hear that it left (the fold remembers that
// the client may hold it; an entity new to the client would cancel out instead).
TEST(WatchSink, AFoldRemembersThatTheClientMayHoldAnEntityThatCameBack) {
    world::world_settings settings;
    settings.paused = true;
    world::world w(settings);
    const auto a = w.spawn({{"Position", {{"x", 1}, {"y", 1}}}});
    const auto b = w.spawn({{"Position", {{"x", 2}, {"y", 2}}}});
    world::watch_view view(w, json("Position"), std::nullopt, 1);
    std::string state;
    view.rebase(w, state);
    watch_limits limits;
    limits.queue_bytes = 1;
    limits.pending_bytes = 4096;  // folds past 1 KiB of backlog: every few diffs here
    limits.min_backlog = 1;
    auto sink = std::make_shared<watch_sink>(limits);
    const auto sub = sink->add(std::weak_ptr<hosted_world>{});
    ASSERT_TRUE(sub.has_value());
    sink->start_next();
    const auto publish = [&] { ASSERT_TRUE(sink->deliver(*sub, view.diff(w))); };
    w.mutate_component(b, "Position", "x", 3);
    publish();
    w.remove_components(a, {"Position"});
    publish();
    w.insert_components(a, {{"Position", {{"x", 5}, {"y", 5}}}});
    publish();
    for (int i = 0; i < 20; ++i) {
        w.mutate_component(b, "Position", "x", 10 + i);
        publish();
    }
    w.remove_components(a, {"Position"});
    publish();
    std::string out;
    sink->take(out, 1 << 20);
    const auto n = json::parse(out)["params"];
    EXPECT_EQ(n["coalesced"], 24);
    ASSERT_EQ(n["left"].size(), 1U) << n.dump();
    EXPECT_EQ(n["left"][0]["entity"], a);
    EXPECT_EQ(n["left"][0]["reason"], "unmatched");
}

}  // namespace
}  // namespace ecsd::net
