// world.watch over a real socket: the initial state plus every notification, applied in order,
// always equals world.query; slow watchers are coalesced; subscriptions end as documented.
#include <sys/socket.h>

#include <csignal>
#include <iostream>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

using namespace std::chrono_literals;

/// What a watcher knows: entity -> components, built from the answer and the notifications.
struct watch_state {
    std::map<std::uint64_t, json> entities;
    std::uint64_t tick = 0;
    std::size_t notifications = 0;
    std::size_t coalesced = 0;
    std::size_t resyncs = 0;

    void reset(const json& list) {
        entities.clear();
        for (const auto& e : list) entities[e["entity"].get<std::uint64_t>()] = e["components"];
    }
    /// Applies one notification's params; false when it is not for `sub`.
    void apply(const json& p) {
        ++notifications;
        tick = p["tick"].get<std::uint64_t>();
        if (p.contains("coalesced")) ++coalesced;
        if (p.value("resync", false)) {
            ++resyncs;
            reset(p["entities"]);
            return;
        }
        for (const auto& e : p["entered"]) entities[e["entity"].get<std::uint64_t>()] = e["components"];
        for (const auto& e : p["changed"]) {
            auto& mine = entities.at(e["entity"].get<std::uint64_t>());
            for (const auto& [k, v] : e["components"].items()) mine[k] = v;
            if (e.contains("removed"))
                for (const auto& r : e["removed"]) mine.erase(r.get<std::string>());
        }
        for (const auto& e : p["left"]) entities.erase(e["entity"].get<std::uint64_t>());
    }
};

/// One subscription of the exactness test: what it watches and what it has applied.
struct watcher_of {
    std::string query;
    json fields;
    int every = 1;
    std::uint64_t sub = 0;
    watch_state state;
};

/// Reads lines until the response with `id`, applying every notification on the way to the
/// subscription it is for.
json read_until(line_client& c, std::uint64_t id, std::vector<watcher_of*> subs) {
    for (;;) {
        const auto line = c.read_json(10s);
        if (!line.is_object()) return line;
        if (line.value("method", "") == "world.watch") {
            for (auto* w : subs)
                if (line["params"]["subscription"] == w->sub) w->state.apply(line["params"]);
            continue;
        }
        if (line["id"] == id) return line;
    }
}

json read_until(line_client& c, std::uint64_t id, watch_state& state, std::uint64_t sub) {
    watcher_of one;
    one.sub = sub;
    std::swap(one.state, state);
    auto r = read_until(c, id, std::vector<watcher_of*>{&one});
    std::swap(one.state, state);
    return r;
}

json query_now(line_client& c, std::uint64_t id, const std::string& world, const json& q, const json& fields,
               watch_state& state, std::uint64_t sub) {
    EXPECT_TRUE(c.send_line(request_line(
        id, "world.query", {{"world", world}, {"query", q}, {"fields", fields}, {"limit", 10000}})));
    return read_until(c, id, state, sub);
}

void expect_same(const watch_state& state, const json& query_result, const std::string& what, int step) {
    std::map<std::uint64_t, json> want;
    for (const auto& e : query_result["entities"]) want[e["entity"].get<std::uint64_t>()] = e["components"];
    ASSERT_EQ(state.entities.size(), want.size()) << what << " after step " << step;
    for (const auto& [id, comps] : want) {
        const auto it = state.entities.find(id);
        ASSERT_NE(it, state.entities.end()) << what << ": entity " << id << " missing after step " << step;
        ASSERT_EQ(it->second, comps) << what << ": entity " << id << " after step " << step;
    }
}

/// Opens each watcher's subscription on `c` (all of them in `all`, for the notifications read on
/// the way), keeping its initial state.
void subscribe_each(line_client& c, const std::string& world, std::vector<watcher_of>& watchers,
                    std::vector<watcher_of*>& all, std::uint64_t& next_id) {
    for (auto& w : watchers) {
        all.push_back(&w);
        const auto id = next_id++;
        ASSERT_TRUE(c.send_line(
            request_line(id, "world.watch",
                         {{"world", world}, {"query", w.query}, {"fields", w.fields}, {"every", w.every}})));
        const auto answer = read_until(c, id, all);
        ASSERT_TRUE(answer.contains("result")) << answer.dump();
        w.sub = answer["result"]["subscription"].get<std::uint64_t>();
        w.state.reset(answer["result"]["entities"]);
    }
}

/// Each watcher's applied state against world.query at the same tick, asked on the watcher's
/// connection (the answers come in order, after every notification published before them).
void expect_each_is_the_query(line_client& c, const std::string& world, std::vector<watcher_of>& watchers,
                              const std::vector<watcher_of*>& all, std::uint64_t& next_id, int step) {
    for (auto& w : watchers) {
        const auto id = next_id++;
        ASSERT_TRUE(c.send_line(
            request_line(id, "world.query",
                         {{"world", world}, {"query", w.query}, {"fields", w.fields}, {"limit", 10000}})));
        const auto now = read_until(c, id, all);
        ASSERT_TRUE(now.contains("result")) << now.dump();
        expect_same(w.state, now["result"], w.query + " every " + std::to_string(w.every), step);
        if (::testing::Test::HasFatalFailure()) return;
    }
}

TEST(Watch, AppliedNotificationsEqualTheQueryAtEveryStepOfARandomWorld) {
    ecsd_server server;
    line_client driver(server.port());
    // Reads of 61 bytes split every notification across reads. (A 2 KiB SO_RCVBUF did too, but its
    // window fell below the server's segment size now and then, and TCP then waited on the persist
    // timer with backoff: the test once took 522 s.)
    line_client watcher(server.port());
    watcher.set_read_chunk(61);
    ASSERT_TRUE(driver.result("world.create", {{"world", "r"}, {"paused", true}}).is_object());
    const json fields = {"Position", "Velocity", "Health", "Frozen"};
    const std::string q = "Position, Health|Velocity, !Ghost";
    // Four subscriptions on one connection: the plain one, the same view every 3rd tick, an
    // area of interest that entities move into and out of, and a change filter.
    std::vector<watcher_of> watchers = {
        {q, fields, 1, 0, {}},
        {q, fields, 3, 0, {}},
        {"Position, near(0, 20, 12)", json{"Position", "Velocity"}, 1, 0, {}},
        {"Position, changed(Position)", json{"Position"}, 1, 0, {}},
    };
    std::vector<watcher_of*> all;
    std::uint64_t next_id = 100;
    subscribe_each(watcher, "r", watchers, all, next_id);
    if (::testing::Test::HasFatalFailure()) return;

    std::mt19937 rng(12345);
    std::vector<std::uint64_t> alive;
    const auto pick = [&]() {
        return alive[std::uniform_int_distribution<std::size_t>(0, alive.size() - 1)(rng)];
    };
    const auto coin = [&](int n) { return std::uniform_int_distribution<int>(0, n - 1)(rng); };
    std::uint64_t ticks = 0;
    int step = 0;
    for (; step < 300 || ticks < 320; ++step) {
        ASSERT_LT(step, 2000) << "the world did not reach 320 ticks";
        const int op = alive.size() < 5 ? 0 : coin(10);
        json r;
        if (op <= 1) {
            json comps = {{"Position", {{"x", coin(40) - 20}, {"y", coin(40)}}}};
            if (coin(2)) comps["Velocity"] = {{"x", coin(7) - 3}, {"y", coin(3)}};
            if (coin(2)) comps["Health"] = {{"hp", 10 + coin(90)}};
            if (coin(3) == 0) comps["RigidBody"] = json::object();
            if (coin(3) == 0) comps["Collider"] = {{"radius", 0.5}};
            if (coin(4) == 0) comps["AI"] = json::object();
            r = driver.call("world.spawn_entity", {{"world", "r"}, {"components", comps}});
            if (r.contains("result")) alive.push_back(r["result"]["entity"].get<std::uint64_t>());
        } else if (op == 2) {
            const auto e = pick();
            r = driver.call("world.despawn_entity", {{"world", "r"}, {"entity", e}});
        } else if (op == 3) {
            r = driver.call("world.insert_components",
                            {{"world", "r"},
                             {"entity", pick()},
                             {"components", {{coin(2) ? "Ghost" : "Health", json::object()}}}});
        } else if (op == 4) {
            r = driver.call(
                "world.remove_components",
                {{"world", "r"}, {"entity", pick()}, {"components", {coin(2) ? "Velocity" : "Ghost"}}});
        } else if (op == 5) {
            r = driver.call("world.mutate_components", {{"world", "r"},
                                                        {"entity", pick()},
                                                        {"component", "Position"},
                                                        {"path", "x"},
                                                        {"value", coin(50)}});
        } else if (op == 6) {
            const char* spells[] = {"freeze", "ghost", "kill_all_monsters"};
            r = driver.call(
                "world.cast_spell",
                {{"world", "r"}, {"caster", pick()}, {"spell", spells[coin(3)]}, {"target", pick()}});
        } else {
            r = driver.call("world.step", {{"world", "r"}, {"ticks", 1 + coin(3)}});
        }
        ASSERT_TRUE(r.is_object()) << "no answer at step " << step;
        // Keep the driver's list of the living honest (spells and despawns kill).
        if (step % 10 == 0 || op == 2 || op == 6 || op >= 7) {
            const auto everyone =
                driver.result("world.query", {{"world", "r"}, {"query", "*"}, {"limit", 10000}});
            alive.clear();
            for (const auto& e : everyone["entities"]) alive.push_back(e["entity"].get<std::uint64_t>());
            ticks = driver.result("world.info", {{"world", "r"}})["tick"].get<std::uint64_t>();
        }
        expect_each_is_the_query(watcher, "r", watchers, all, next_id, step);
        if (::testing::Test::HasFatalFailure()) return;
    }
    EXPECT_GE(ticks, 320U);
    EXPECT_GT(watchers[0].state.notifications, 100U);
    EXPECT_GT(watchers[1].state.notifications, 30U);
    EXPECT_GT(watchers[2].state.notifications, 30U);
    EXPECT_GT(watchers[3].state.notifications, 30U);
    std::cout << "[ exactness ] " << step << " steps, " << ticks << " ticks; notifications:";
    for (const auto& w : watchers) std::cout << " " << w.state.notifications;
    std::cout << "\n";
}

/// A watcher of 2000 moving entities reads nothing while the world runs 200 ticks, then catches
/// up. Returns what it applied, checked against world.query.
watch_state stall_and_catch_up(const std::string& max_output) {
    ecsd_server server({"--max-output-bytes", max_output});
    line_client driver(server.port());
    line_client watcher(server.port(), "127.0.0.1", /*receive_buffer=*/4096);
    EXPECT_TRUE(driver.result("world.create", {{"world", "m"}, {"paused", true}}).is_object());
    json batch = json::array();
    for (int i = 0; i < 2000; ++i)
        batch.push_back({{"Position", {{"x", i}, {"y", 0}}}, {"Velocity", {{"x", 1}, {"y", 0}}}});
    EXPECT_TRUE(
        driver.call("world.spawn_entities", {{"world", "m"}, {"entities", batch}}).contains("result"));
    EXPECT_TRUE(
        watcher.send_line(request_line(1, "world.watch", {{"world", "m"}, {"query", "Position, Velocity"}})));
    watch_state state;
    const auto answer = read_until(watcher, 1, state, 0);
    const auto sub = answer["result"]["subscription"].get<std::uint64_t>();
    state.reset(answer["result"]["entities"]);
    // 200 ticks of 2000 changed entities (~130 KB each) while the watcher reads nothing.
    const auto t0 = std::chrono::steady_clock::now();
    for (int i = 0; i < 20; ++i)
        EXPECT_TRUE(driver.result("world.step", {{"world", "m"}, {"ticks", 10}}).is_object());
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 20s * sanitizer_time_factor)
        << "a stalled watcher must not slow the world";
    EXPECT_EQ(driver.call("server.ping")["result"], "pong");
    const auto now = query_now(watcher, 2, "m", "Position, Velocity", {"Position", "Velocity"}, state, sub);
    // Every notification published before the query arrives before its answer, the catch-up (or
    // the resync) included, however far behind the watcher was.
    EXPECT_EQ(state.tick, 200U) << "the answer overtook notifications published before it";
    EXPECT_TRUE(watcher.read_json(300ms).is_null()) << "nothing more is owed for a paused world";
    EXPECT_LT(state.notifications, 200U)
        << "a watcher that falls behind gets merged notifications, not a backlog";
    expect_same(state, now["result"], "Position, Velocity", 0);
    return state;
}

TEST(Watch, AWatcherThatFallsBehindGetsCoalescedNotificationsAndStaysExact) {
    const auto state = stall_and_catch_up("1048576");
    EXPECT_GE(state.coalesced, 1U) << "a watcher that fell behind must get a coalesced notification";
}

TEST(Watch, AWatcherTooFarBehindToRememberGetsTheWholeStateAgain) {
    const auto state = stall_and_catch_up("262144");
    EXPECT_GE(state.resyncs, 1U) << "past the pending bound the subscription must be resynced";
}

TEST(Watch, NearFollowsAMovingEntityAndEntitiesOutOfRangeLeaveUnmatched) {
    ecsd_server server;
    line_client c(server.port());
    ASSERT_TRUE(
        c.result("world.create", {{"world", "n"}, {"paused", true}, {"gravity", {{"x", 0}, {"y", 0}}}})
            .is_object());
    const auto hero =
        c.result("world.spawn_entity",
                 {{"world", "n"},
                  {"components",
                   {{"Position", {{"x", 0}, {"y", 0}}}, {"Velocity", {{"x", 60}, {"y", 0}}}}}})["entity"];
    const auto rock =
        c.result("world.spawn_entity",
                 {{"world", "n"}, {"components", {{"Position", {{"x", 2}, {"y", 0}}}}}})["entity"];
    const auto far =
        c.result("world.spawn_entity",
                 {{"world", "n"}, {"components", {{"Position", {{"x", 30}, {"y", 0}}}}}})["entity"];
    const auto w = c.result("world.watch", {{"world", "n"}, {"query", "near(" + hero.dump() + ", 5)"}});
    std::set<std::uint64_t> seen;
    for (const auto& e : w["entities"]) seen.insert(e["entity"].get<std::uint64_t>());
    EXPECT_EQ(seen, (std::set<std::uint64_t>{hero.get<std::uint64_t>(), rock.get<std::uint64_t>()}));
    // 60 m/s for 30 ticks at 60 Hz: the hero moves 30 m, leaves the rock behind and reaches `far`.
    watch_state state;
    state.reset(w["entities"]);
    ASSERT_TRUE(c.send_line(request_line(50, "world.step", {{"world", "n"}, {"ticks", 30}})));
    std::size_t left = 0;
    for (int i = 0; i < 40; ++i) {
        const auto line = c.read_json(2s);
        ASSERT_TRUE(line.is_object());
        if (line.contains("id")) break;  // the step's answer comes after its ticks' notifications
        state.apply(line["params"]);
        for (const auto& l : line["params"]["left"]) {
            EXPECT_EQ(l["entity"], rock);
            EXPECT_EQ(l["reason"], "unmatched");
            ++left;
        }
    }
    EXPECT_EQ(left, 1U);
    EXPECT_EQ(state.entities.count(rock.get<std::uint64_t>()), 0U);
    EXPECT_EQ(state.entities.count(far.get<std::uint64_t>()), 1U);
    // The same filter in world.query, as text and as an object.
    EXPECT_EQ(c.result("world.query", {{"world", "n"}, {"query", "near(30, 0, 1)"}})["total"], 2);
    EXPECT_EQ(c.result("world.query",
                       {{"world", "n"}, {"query", {{"near", {{"x", 2}, {"y", 0}, {"r", 1}}}}}})["total"],
              1);
    EXPECT_EQ(reason_of(c.call("world.query", {{"world", "n"}, {"query", "near(1, 2)x"}})), "invalid_params");
    EXPECT_EQ(reason_of(c.call("world.query", {{"world", "n"}, {"query", "near(0, 0, -1)"}})),
              "invalid_params");
}

// Interest management: many distinct near() watches, each following its own moving entity, are
// answered from one grid of the world's positions (issue 46). Tick by tick, while watchers and
// the watched move, spawn, die and cross every edge, each must hold exactly what world.query with
// the same near() returns.
TEST(Watch, MovingNearWatchesEachHoldWhatTheQueryReturnsTickByTick) {
    ecsd_server server;
    line_client driver(server.port());
    line_client watcher(server.port());
    // Bounds turn the movers back so that they keep crossing each other's ranges.
    ASSERT_TRUE(driver
                    .result("world.create",
                            {{"world", "g"},
                             {"paused", true},
                             {"gravity", {{"x", 0}, {"y", 0}}},
                             {"bounds", {{"left", -30}, {"right", 30}, {"bottom", -30}, {"top", 30}}}})
                    .is_object());
    std::mt19937 rng(46);
    const auto uniform = [&](double a, double b) {
        return std::uniform_real_distribution<double>(a, b)(rng);
    };
    const auto mover = [&]() {
        return json{{"Position", {{"x", uniform(-30, 30)}, {"y", uniform(-30, 30)}}},
                    {"Velocity", {{"x", uniform(-20, 20)}, {"y", uniform(-20, 20)}}}};
    };
    json batch = json::array();
    for (int i = 0; i < 400; ++i)
        batch.push_back(i % 5 == 0 ? json{{"Position", {{"x", uniform(-30, 30)}, {"y", 0}}}} : mover());
    const auto spawned = driver.result("world.spawn_entities", {{"world", "g"}, {"entities", batch}});
    std::vector<std::uint64_t> movers;
    for (std::size_t i = 0; i < spawned["entities"].size(); ++i)
        if (i % 5 != 0) movers.push_back(spawned["entities"][i].get<std::uint64_t>());
    std::vector<watcher_of> watchers;
    const double radii[] = {4, 7.5, 12};
    for (int i = 0; i < 9; ++i) {
        const auto r = radii[i % 3];
        watchers.push_back({"near(" + std::to_string(movers[static_cast<std::size_t>(i) * 7]) + ", " +
                                std::to_string(r) + ")",
                            json{"Position", "Velocity"},
                            1,
                            0,
                            {}});
    }
    watchers.push_back({"Velocity, near(5, -5, 9)", json{"Position"}, 1, 0, {}});
    watchers.push_back({"Position, Velocity", json{"Position"}, 1, 0, {}});  // no near(): as before
    std::vector<watcher_of*> all;
    std::uint64_t next_id = 100;
    subscribe_each(watcher, "g", watchers, all, next_id);
    if (::testing::Test::HasFatalFailure()) return;
    for (int tick = 1; tick <= 90; ++tick) {
        if (tick % 10 == 0) {  // some die, some are born where the watchers are
            const auto victim = movers[static_cast<std::size_t>(tick) * 3 % movers.size()];
            ASSERT_TRUE(
                driver.call("world.despawn_entity", {{"world", "g"}, {"entity", victim}}).is_object());
            json more = json::array();
            for (int i = 0; i < 5; ++i) more.push_back(mover());
            ASSERT_TRUE(
                driver.call("world.spawn_entities", {{"world", "g"}, {"entities", more}}).contains("result"));
        }
        if (tick == 60) {  // one far away: the grid spans a huge, sparse rectangle from here on
            ASSERT_TRUE(driver
                            .call("world.spawn_entity",
                                  {{"world", "g"}, {"components", {{"Position", {{"x", 9e6}, {"y", -9e6}}}}}})
                            .contains("result"));
        }
        ASSERT_TRUE(driver.result("world.step", {{"world", "g"}, {"ticks", 1}}).is_object());
        expect_each_is_the_query(watcher, "g", watchers, all, next_id, tick);
        if (::testing::Test::HasFatalFailure()) return;
    }
    std::size_t notifications = 0;
    for (const auto& w : watchers) notifications += w.state.notifications;
    // Each watcher saw its neighbourhood change (the test would prove nothing about still views).
    for (std::size_t i = 0; i + 1 < watchers.size(); ++i)
        EXPECT_GT(watchers[i].state.notifications, 30U) << watchers[i].query;
    EXPECT_GT(notifications, 600U);
}

TEST(Watch, UnwatchTwiceWatchBeforeAuthAndTheSubscriptionLimit) {
    ecsd_server server({"--token", "s3cret", "--max-watches", "2"});
    line_client c(server.port());
    EXPECT_EQ(reason_of(c.call("world.watch", {{"query", "Position"}})), "unauthorized");
    ASSERT_EQ(c.call("server.auth", {{"token", "s3cret"}})["result"]["authenticated"], true);
    const auto a = c.result("world.watch", {{"query", "Position"}});
    const auto b = c.result("world.watch", {{"query", "Velocity"}, {"every", 5}});
    EXPECT_NE(a["subscription"], b["subscription"]);
    const auto third = c.call("world.watch", {{"query", "Health"}});
    EXPECT_EQ(reason_of(third), "limit_reached");
    EXPECT_EQ(third["error"]["data"]["limit"], 2);
    EXPECT_EQ(c.result("world.unwatch", {{"subscription", a["subscription"]}})["ended"], true);
    const auto again = c.call("world.unwatch", {{"subscription", a["subscription"]}});
    EXPECT_EQ(reason_of(again), "no_such_subscription");
    EXPECT_TRUE(c.result("world.watch", {{"query", "Health"}}).contains("subscription"))
        << "unwatch frees a place";
    EXPECT_EQ(reason_of(c.call("world.watch", {{"query", "Nope"}})), "no_such_component");
    EXPECT_EQ(reason_of(c.call("world.watch", {{"query", "Position"}, {"every", 0}})), "invalid_params");
}

TEST(Watch, DestroyingTheWorldEndsItsSubscriptions) {
    ecsd_server server;
    line_client c(server.port());
    ASSERT_TRUE(c.result("world.create", {{"world", "gone"}}).is_object());
    const auto w = c.result("world.watch", {{"world", "gone"}, {"query", "*"}});
    ASSERT_TRUE(c.send_line(request_line(9, "world.destroy", {{"world", "gone"}})));
    bool ended = false;
    bool answered = false;
    for (int i = 0; i < 100 && !(ended && answered); ++i) {
        const auto line = c.read_json(2s);
        ASSERT_TRUE(line.is_object());
        if (line.value("id", json()) == 9) answered = true;
        if (line.value("method", "") == "world.watch" && line["params"].value("ended", false)) {
            EXPECT_FALSE(answered) << "the last notification comes before the answer";
            EXPECT_EQ(line["params"]["subscription"], w["subscription"]);
            EXPECT_EQ(line["params"]["reason"], "world_destroyed");
            ended = true;
        }
    }
    EXPECT_TRUE(ended);
    EXPECT_TRUE(answered);
    EXPECT_EQ(reason_of(c.call("world.unwatch", {{"world", "default"}, {"subscription", w["subscription"]}})),
              "no_such_subscription");
    EXPECT_EQ(c.call("server.ping")["result"], "pong");
}

// CI caught a shutdown that closed a connection before the server_shutdown end of its watch
// reached it: connections drained while the worlds' strands had yet to queue the ends. Now every
// world queues them before any connection drains. Several worlds and clients make the race wide.
TEST(Watch, EveryWatchHearsServerShutdownBeforeItsConnectionCloses) {
    constexpr int worlds = 8;
    constexpr std::size_t clients_per_round = 6;
    const auto world_name = [](int k) { return k == 0 ? std::string("default") : "w" + std::to_string(k); };
    for (int round = 0; round < 4; ++round) {
        ecsd_server server({"--threads", "8"});  // more threads than cores: drains and ends interleave
        std::vector<std::unique_ptr<line_client>> clients;
        std::vector<std::set<std::string>> open(clients_per_round);
        while (clients.size() < clients_per_round)
            clients.push_back(std::make_unique<line_client>(server.port()));
        for (int k = 1; k < worlds; ++k)
            ASSERT_TRUE(clients[0]->result("world.create", {{"world", world_name(k)}}).is_object());
        for (std::size_t c = 0; c < clients.size(); ++c)
            for (int k = 0; k < worlds; ++k)
                open[c].insert(
                    clients[c]
                        ->result("world.watch", {{"world", world_name(k)}, {"query", "*"}})["subscription"]
                        .dump());
        const auto status = server.stop(SIGTERM);
        EXPECT_TRUE(status.exited) << "round " << round;
        for (std::size_t c = 0; c < clients.size(); ++c) {
            for (json line = clients[c]->read_json(2s); line.is_object(); line = clients[c]->read_json(2s)) {
                if (line.value("method", "") != "world.watch" || !line["params"].value("ended", false))
                    continue;
                EXPECT_EQ(line["params"]["reason"], "server_shutdown");
                open[c].erase(line["params"]["subscription"].dump());
            }
            EXPECT_TRUE(open[c].empty()) << "round " << round << ", client " << c << ": " << open[c].size()
                                         << " watches closed without their end";
        }
    }
}

// Issue 44: world.unwatch answered no_such_subscription for any watch outside `default` unless
// the world was named again. A subscription id is unique on its connection across worlds and
// names the subscription by itself.
TEST(Watch, UnwatchNeedsOnlyTheSubscriptionWhicheverWorldItFollows) {
    ecsd_server server;
    line_client c(server.port());
    ASSERT_TRUE(c.result("world.create", {{"world", "arena"}, {"paused", true}}).is_object());
    const auto here = c.result("world.watch", {{"query", "Position"}});
    const auto there = c.result("world.watch", {{"world", "arena"}, {"query", "Position"}});
    EXPECT_NE(here["subscription"], there["subscription"]) << "ids are unique across worlds";
    EXPECT_EQ(c.result("world.unwatch", {{"subscription", there["subscription"]}})["ended"], true);
    // Nothing of it follows: a spawn in arena notifies no one; one in default still notifies.
    ASSERT_TRUE(
        c.result("world.spawn_entity", {{"world", "arena"}, {"components", {{"Position", json::object()}}}})
            .is_object());
    ASSERT_TRUE(c.send_line(request_line(49, "world.step", {{"world", "arena"}, {"ticks", 1}})));
    ASSERT_TRUE(c.send_line(
        request_line(50, "world.spawn_entity", {{"components", {{"Position", json::object()}}}})));
    json note;
    for (int i = 0; i < 10 && !note.is_object(); ++i) {
        const auto line = c.read_json(2s);
        ASSERT_TRUE(line.is_object());
        if (line.value("method", "") != "world.watch") continue;
        EXPECT_NE(line["params"]["subscription"], there["subscription"])
            << "unwatched, yet notified: " << line;
        if (line["params"]["subscription"] == here["subscription"]) note = line;
    }
    ASSERT_TRUE(note.is_object()) << "the other world's watch still notifies";
    EXPECT_EQ(reason_of(c.call("world.unwatch", {{"subscription", there["subscription"]}})),
              "no_such_subscription");
    // Naming the world is still accepted.
    EXPECT_EQ(
        c.result("world.unwatch", {{"world", "default"}, {"subscription", here["subscription"]}})["ended"],
        true);
}

TEST(Watch, AHeapAtRestCostsItsWatchersNothing) {
    // The newcomer's report: twelve touching bodies that settled 15 s earlier sent 708 Position
    // changes in 120 ticks. Asleep (the rest system), they send none.
    ecsd_server server;
    line_client c(server.port());
    ASSERT_TRUE(c.result("world.create", {{"world", "heap"},
                                          {"paused", true},
                                          {"bounds", {{"bottom", 0}, {"left", -2}, {"right", 2}}}})
                    .is_object());
    json bodies = json::array();
    for (int i = 0; i < 12; ++i)
        bodies.push_back({{"Position", {{"x", -1.5 + 0.27 * i}, {"y", 1 + 0.9 * i}}},
                          {"RigidBody", {{"restitution", 0.3}}},
                          {"Collider", {{"radius", 0.45}}},
                          {"AI", json::object()}});
    ASSERT_TRUE(c.result("world.spawn_entities", {{"world", "heap"}, {"entities", bodies}}).is_object());
    ASSERT_TRUE(c.result("world.step", {{"world", "heap"}, {"ticks", 15 * 60}}).is_object());
    const auto w = c.result("world.watch", {{"world", "heap"}, {"query", "Position"}});
    ASSERT_EQ(w["entities"].size(), 12u);
    for (int i = 0; i < 120; ++i)
        ASSERT_TRUE(c.send_line(request_line(100 + i, "world.step", {{"world", "heap"}, {"ticks", 1}})));
    int answered = 0, changes = 0;
    while (answered < 120) {
        const auto line = c.read_json(5s);
        ASSERT_TRUE(line.is_object());
        if (line.contains("id")) {
            ++answered;
        } else if (line.value("method", "") == "world.watch") {
            changes += static_cast<int>(line["params"].value("changed", json::array()).size());
        }
    }
    EXPECT_EQ(changes, 0);
    EXPECT_EQ(c.result("world.query", {{"world", "heap"}, {"query", "Resting.seconds >= 0.5"}})["total"], 12);
    EXPECT_EQ(c.result("world.query", {{"world", "heap"}, {"query", "AI, Contacts"}})["total"], 12)
        << "each touches another or nothing: a heap touches";
}

TEST(Watch, AWatcherThatDisconnectsMidStreamCostsNothingAfterwards) {
    ecsd_server server;
    line_client setup(server.port());
    json batch = json::array();
    for (int i = 0; i < 1000; ++i)
        batch.push_back({{"Position", {{"x", i}, {"y", 0}}}, {"Velocity", {{"x", 1}, {"y", 0}}}});
    ASSERT_TRUE(setup.call("world.spawn_entities", {{"entities", batch}}).contains("result"));
    {
        line_client w(server.port());
        ASSERT_TRUE(w.result("world.watch", {{"query", "Position, Velocity"}}).contains("subscription"));
        const auto first = w.read_json(2s);  // the default world ticks at 60 Hz: diffs flow
        ASSERT_EQ(first.value("method", ""), "world.watch");
    }  // gone mid-stream
    std::this_thread::sleep_for(300ms);
    line_client other(server.port());
    const auto w2 = other.result("world.watch", {{"query", "Position, Velocity"}});
    EXPECT_EQ(w2["entities"].size(), 1000U);
    const auto next = other.read_json(2s);
    EXPECT_EQ(next["params"]["subscription"], w2["subscription"]);
    EXPECT_EQ(next["params"]["changed"].size(), 1000U);
    EXPECT_EQ(setup.result("server.info")["connections"]["open"], 2);
}

TEST(Watch, BrpPlusWatchMethodsAnswerAgainWithTheSameIdWhenTheEntityChanges) {
    ecsd_server server;
    line_client c(server.port());
    ASSERT_TRUE(c.result("world.create", {{"world", "b"}, {"paused", true}}).is_object());
    const auto e = c.result(
        "world.spawn_entity",
        {{"world", "b"},
         {"components", {{"Position", {{"x", 0}, {"y", 0}}}, {"Velocity", {{"x", 6}, {"y", 0}}}}}})["entity"];
    ASSERT_TRUE(c.send_line(request_line("g", "world.get_components+watch",
                                         {{"world", "b"}, {"entity", e}, {"components", {"Position"}}})));
    const auto first = c.read_json();
    EXPECT_EQ(first["result"]["components"]["Position"]["x"], 0.0);
    EXPECT_EQ(first["result"]["removed"], json::array());
    ASSERT_TRUE(
        c.send_line(request_line("l", "world.list_components+watch", {{"world", "b"}, {"entity", e}})));
    EXPECT_EQ(c.read_json()["result"]["added"], json({"Position", "Velocity"}));
    // A tick moves it: one more answer to "g"; the names did not change: nothing for "l".
    ASSERT_TRUE(c.send_line(request_line(3, "world.step", {{"world", "b"}})));
    const auto moved = c.read_json();
    EXPECT_EQ(moved["id"], "g");
    EXPECT_GT(moved["result"]["components"]["Position"]["x"].get<double>(), 0.0);
    EXPECT_EQ(c.read_json()["id"], 3);
    // Removing Velocity: "l" hears of it; Position is unchanged: "g" does not.
    ASSERT_TRUE(c.send_line(request_line(4, "world.remove_components",
                                         {{"world", "b"}, {"entity", e}, {"components", {"Velocity"}}})));
    const auto names = c.read_json();
    EXPECT_EQ(names["id"], "l");
    EXPECT_EQ(names["result"]["removed"], json({"Velocity"}));
    EXPECT_EQ(c.read_json()["id"], 4);
    // Despawned: both streams end with no_such_entity.
    ASSERT_TRUE(c.send_line(request_line(5, "world.despawn_entity", {{"world", "b"}, {"entity", e}})));
    std::set<std::string> ended;
    for (int i = 0; i < 3; ++i) {
        const auto line = c.read_json();
        if (line["id"].is_string()) {
            EXPECT_EQ(reason_of(line), "no_such_entity");
            ended.insert(line["id"].get<std::string>());
        }
    }
    EXPECT_EQ(ended, (std::set<std::string>{"g", "l"}));
    EXPECT_EQ(reason_of(c.call("world.get_components+watch", {{"world", "b"}, {"entity", e}})),
              "no_such_entity");
}

}  // namespace
}  // namespace ecsd::test
