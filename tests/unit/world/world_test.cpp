#include "world/world.hpp"

#include <algorithm>
#include <cmath>
#include <fstream>
#include <iterator>
#include <limits>
#include <random>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "world/collision.hpp"
#include "world/position_grid.hpp"

using namespace ecsd::world;
using ecsd::ecs::ecs_error;
using ecsd::ecs::json;

namespace {
world_settings paused_world(double hz = 60) {
    world_settings s;
    s.tick_hz = hz;
    s.paused = true;
    return s;
}

std::string reason_of(const std::function<void()>& f) {
    try {
        f();
    } catch (const ecs_error& e) {
        return std::string(e.reason_name());
    }
    return "no error";
}
}  // namespace

TEST(Physics, FallingBodyLandsWhereSemiImplicitEulerSays) {
    world w(paused_world());
    const auto e = w.spawn({{"Position", {{"x", 0}, {"y", 100}}},
                            {"Velocity", {{"x", 2}, {"y", 0}}},
                            {"RigidBody", json::object()}});
    const int n = 120;
    w.step(n);
    // v_k = k*g*dt, p_n = p0 + sum_{k=1..n} v_k*dt = p0 + g*dt^2*n(n+1)/2
    const double dt = 1.0 / 60, g = -9.81;
    const auto p = w.registry().get<Position>(e);
    EXPECT_NEAR(p.y, 100 + g * dt * dt * n * (n + 1) / 2, 1e-9);
    EXPECT_NEAR(p.x, 2.0 * dt * n, 1e-9);
    EXPECT_NEAR(w.registry().get<Velocity>(e).y, g * dt * n, 1e-9);
}

TEST(Physics, MoverWithoutRigidBodyIgnoresGravity) {
    world w(paused_world());
    const auto e = w.spawn({{"Position", json::object()}, {"Velocity", {{"x", 1}, {"y", 1}}}});
    w.step(60);
    EXPECT_NEAR(w.registry().get<Position>(e).y, 1.0, 1e-9);
    EXPECT_NEAR(w.registry().get<Velocity>(e).y, 1.0, 1e-12);
}

TEST(Components, AnEntitysComponentsAreWrittenInNameOrderHoweverManyItHas) {
    // Run-time components registered out of name order, more of them than the writer keeps on
    // its stack (16): the text lists every component once, keys sorted as json::dump() sorts them.
    world w(paused_world());
    std::vector<std::string> names;
    std::mt19937 rng(3);
    for (int i = 0; i < 24; ++i)
        names.push_back("c" + std::to_string(rng() % 1000) + "_" + std::to_string(i));
    for (const auto& n : names) w.register_component(n, {{"v", 1}});
    for (const std::size_t count : {std::size_t{3}, std::size_t{16}, std::size_t{17}, names.size()}) {
        json components{{"Position", json::object()}, {"Health", json::object()}};
        for (std::size_t i = 0; i < count; ++i) components[names[i]] = {{"v", static_cast<int>(i)}};
        const auto e = w.spawn(components);
        std::string text;
        {
            ecsd::ecs::json_text out(text);
            w.write_components(e, std::nullopt, out);
        }
        const auto ordered = nlohmann::ordered_json::parse(text);
        std::vector<std::string> keys;
        for (const auto& [key, value] : ordered.items()) keys.push_back(key);
        std::vector<std::string> want;
        for (const auto& [key, value] : components.items()) want.push_back(key);  // a map: sorted
        EXPECT_EQ(keys, want) << text;
        const auto parsed = json::parse(text);
        for (std::size_t i = 0; i < count; ++i) EXPECT_EQ(parsed[names[i]]["v"], static_cast<double>(i));
    }
}

TEST(Physics, GravityScaleAndWorldGravity) {
    world_settings s = paused_world();
    s.gravity_y = -2;
    world w(s);
    const auto e = w.spawn({{"Position", json::object()},
                            {"Velocity", json::object()},
                            {"RigidBody", {{"gravity_scale", 0.5}}}});
    w.step(60);
    EXPECT_NEAR(w.registry().get<Velocity>(e).y, -1.0, 1e-9);
}

TEST(Physics, ARigidBodyWithoutAVelocityGetsOneAndFalls) {
    world w(paused_world());
    const auto e = w.spawn({{"Position", {{"x", 0}, {"y", 10}}}, {"RigidBody", json::object()}});
    EXPECT_EQ(w.get_components(e, std::nullopt)["Velocity"], (json{{"x", 0.0}, {"y", 0.0}}));
    w.step(60);
    EXPECT_LT(w.registry().get<Position>(e).y, 10 - 4.5) << "one second of -9.81 m/s^2 from rest";
    // Inserted later, the same: the body it makes can fall.
    const auto later = w.spawn({{"Position", {{"x", 0}, {"y", 10}}}});
    w.insert_components(later, {{"RigidBody", json::object()}});
    EXPECT_TRUE(w.registry().has<Velocity>(later));
    // A frozen body stays frozen: the freeze spell took its Velocity on purpose.
    const auto frozen =
        w.spawn({{"Position", json::object()}, {"Frozen", json::object()}, {"RigidBody", json::object()}});
    EXPECT_FALSE(w.registry().has<Velocity>(frozen));
}

TEST(Physics, AnImmovableBodyOfMassZeroFeelsNoGravity) {
    world w(paused_world());
    const auto e = w.spawn({{"Position", {{"x", 0}, {"y", 10}}},
                            {"RigidBody", {{"mass", 0}}},
                            {"Velocity", {{"x", 1}, {"y", 0}}}});
    w.step(60);
    EXPECT_DOUBLE_EQ(w.registry().get<Position>(e).y, 10) << "mass 0 does not fall";
    EXPECT_NEAR(w.registry().get<Position>(e).x, 1, 1e-9) << "but it still moves with its velocity";
}

TEST(Bounds, BodiesFallOntoTheGroundAndComeToRest) {
    world_settings s = paused_world();
    s.bounds.bottom = 0;
    world w(s);
    const auto ball = w.spawn({{"Position", {{"x", 0}, {"y", 10}}},
                               {"RigidBody", {{"restitution", 0.5}}},
                               {"Collider", {{"radius", 0.5}}}});
    const auto point = w.spawn({{"Position", {{"x", 3}, {"y", 10}}}, {"RigidBody", {{"restitution", 0}}}});
    double highest_after_bounce = 0;
    bool bounced = false;
    for (int i = 0; i < 600; ++i) {
        w.step(1);
        const auto& p = w.registry().get<Position>(ball);
        EXPECT_GE(p.y, 0.5 - 1e-12) << "the circle never sinks into the ground (tick " << i << ")";
        if (w.registry().get<Velocity>(ball).y > 0) bounced = true;
        if (bounced) highest_after_bounce = std::max(highest_after_bounce, p.y);
    }
    EXPECT_TRUE(bounced) << "restitution 0.5 bounces";
    EXPECT_LT(highest_after_bounce, 10 * 0.5) << "a bounce keeps restitution^2 of the height";
    EXPECT_DOUBLE_EQ(w.registry().get<Position>(ball).y, 0.5) << "at rest on the ground after 10 s";
    EXPECT_DOUBLE_EQ(w.registry().get<Velocity>(ball).y, 0);
    EXPECT_DOUBLE_EQ(w.registry().get<Position>(point).y, 0)
        << "without a Collider the point itself rests on it";
}

TEST(Bounds, WallsBounceMoversBackWithoutARigidBodyLosingNothing) {
    world_settings s = paused_world();
    s.bounds.left = -5;
    s.bounds.right = 5;
    world w(s);
    const auto e = w.spawn({{"Position", {{"x", 4}, {"y", 0}}}, {"Velocity", {{"x", 6}, {"y", 0}}}});
    w.step(30);  // half a second: 3 m right, it meets the wall at 5 after 1 m
    EXPECT_LE(w.registry().get<Position>(e).x, 5);
    EXPECT_DOUBLE_EQ(w.registry().get<Velocity>(e).x, -6) << "restitution 1 without a RigidBody";
    w.step(600);
    EXPECT_GE(w.registry().get<Position>(e).x, -5);
    EXPECT_LE(w.registry().get<Position>(e).x, 5);
    EXPECT_DOUBLE_EQ(std::fabs(w.registry().get<Velocity>(e).x), 6);
}

TEST(Bounds, SettingsAreCheckedAndShownInInfo) {
    world_settings s = paused_world();
    s.bounds.left = 5;
    s.bounds.right = -5;
    EXPECT_EQ(reason_of([&] { world w(s); }), "invalid_value");
    EXPECT_EQ(reason_of([] { (void)world_bounds::from_json({{"floor", 0}}); }), "invalid_params");
    EXPECT_EQ(reason_of([] { (void)world_bounds::from_json({{"bottom", "0"}}); }), "invalid_value");
    EXPECT_EQ(reason_of([] { (void)world_bounds::from_json({{"bottom", 1e16}}); }), "invalid_value");
    const auto b = world_bounds::from_json({{"bottom", 0}, {"top", nullptr}});
    ASSERT_TRUE(b.bottom);
    EXPECT_FALSE(b.top);
    world_settings ok = paused_world();
    ok.bounds = b;
    world w(ok);
    EXPECT_EQ(w.info()["bounds"],
              (json{{"left", nullptr}, {"right", nullptr}, {"bottom", 0.0}, {"top", nullptr}}));
}

TEST(Collision, OverlappingCirclesGetContactsAndAreSeparated) {
    world w(paused_world());
    const auto a = w.spawn({{"Position", {{"x", 0}, {"y", 0}}},
                            {"Velocity", {{"x", 1}, {"y", 0}}},
                            {"RigidBody", {{"gravity_scale", 0}, {"restitution", 1}}},
                            {"Collider", {{"radius", 1}}}});
    const auto b = w.spawn({{"Position", {{"x", 1.5}, {"y", 0}}},
                            {"Velocity", {{"x", -1}, {"y", 0}}},
                            {"RigidBody", {{"gravity_scale", 0}, {"restitution", 1}}},
                            {"Collider", {{"radius", 1}}}});
    const auto far = w.spawn({{"Position", {{"x", 50}, {"y", 0}}}, {"Collider", {{"radius", 1}}}});
    w.step(1);
    auto& reg = w.registry();
    ASSERT_TRUE(reg.has<Contacts>(a));
    EXPECT_EQ(reg.get<Contacts>(a).entities, (std::vector<ecsd::ecs::entity_ref>{{b}}));
    EXPECT_EQ(reg.get<Contacts>(b).entities, (std::vector<ecsd::ecs::entity_ref>{{a}}));
    EXPECT_FALSE(reg.has<Contacts>(far));
    // Elastic, equal masses: velocities swap; the overlap past the 5 mm slop shrinks by 0.4 a tick.
    EXPECT_NEAR(reg.get<Velocity>(a).x, -1, 1e-9);
    EXPECT_NEAR(reg.get<Velocity>(b).x, 1, 1e-9);
    const double depth = 2 - (1.5 - 2.0 / 60);  // after one tick of moving towards each other
    EXPECT_NEAR(reg.get<Position>(b).x - reg.get<Position>(a).x, 2 - depth + 0.4 * (depth - 0.005), 1e-9);
    w.step(30);
    EXPECT_GT(reg.get<Position>(b).x - reg.get<Position>(a).x, 2.5) << "apart, moving away";
}

TEST(Collision, ContactsThatDidNotChangeAreNotAWrite) {
    // Detection keeps Contacts current every tick, but writes (stamps) a list only when it
    // changed: changed(Contacts) names the bodies whose contacts changed in the last tick.
    world w(paused_world());
    const auto a = w.spawn({{"Position", {{"x", 0}, {"y", 0}}}, {"Collider", {{"radius", 1}}}});
    const auto b = w.spawn({{"Position", {{"x", 1.5}, {"y", 0}}}, {"Collider", {{"radius", 1}}}});
    const auto changed = [&] {
        std::vector<json> ids;
        const json found = w.query("changed(Contacts)", std::nullopt, 10, 0);
        for (const auto& e : found["entities"]) ids.push_back(e["entity"]);
        return ids;
    };
    w.step(1);
    EXPECT_EQ(changed(), (std::vector<json>{a, b}));  // added
    w.step(1);
    EXPECT_EQ(changed(), std::vector<json>{});  // the same two lists: no write
    EXPECT_EQ(w.registry().get<Contacts>(a).entities, (std::vector<ecsd::ecs::entity_ref>{{b}}));
    w.registry().get<Position>(b).x = 5;  // apart: both lose Contacts, and that is a change
    w.step(1);
    EXPECT_EQ(changed(), (std::vector<json>{a, b}));
    EXPECT_FALSE(w.registry().has<Contacts>(a)) << "Contacts only while touching";
    EXPECT_EQ(w.query("removed(Contacts)", std::nullopt, 10, 0)["total"], 2);
    w.step(1);
    EXPECT_EQ(changed(), std::vector<json>{});
}

TEST(Collision, OnlyEntitiesTouchingSomethingHaveContacts) {
    world w(paused_world());
    const json still = {{"gravity_scale", 0}};
    const auto a =
        w.spawn({{"Position", {{"x", 0}, {"y", 0}}}, {"Collider", json::object()}, {"AI", json::object()}});
    (void)w.spawn(
        {{"Position", {{"x", 0.5}, {"y", 0}}}, {"Collider", json::object()}, {"AI", json::object()}});
    const auto loner = w.spawn({{"Position", {{"x", 1.2}, {"y", 0}}},
                                {"Velocity", {{"x", 3}}},
                                {"RigidBody", still},
                                {"Collider", json::object()},
                                {"AI", json::object()}});
    const auto touching = [&] { return w.query("AI, Contacts", std::nullopt, 10, 0)["total"].get<int>(); };
    w.step(1);
    EXPECT_EQ(touching(), 3);
    w.step(60);  // the loner leaves
    EXPECT_GT(w.registry().get<Position>(loner).x, 3);
    EXPECT_EQ(touching(), 2) << "the loner touches nothing now";
    EXPECT_FALSE(w.registry().has<Contacts>(loner));
    w.registry().get<Position>(a).x = -20;
    w.step(1);
    EXPECT_EQ(touching(), 0);
}

namespace {
// Twelve balls dropped in a box: a heap that settles on the ground and against the walls.
world_settings box_world() {
    world_settings s = paused_world();
    s.bounds.bottom = 0;
    s.bounds.left = -2;
    s.bounds.right = 2;
    return s;
}
std::vector<entity_id> drop_heap(world& w) {
    std::vector<entity_id> balls;
    for (int i = 0; i < 12; ++i)
        balls.push_back(w.spawn({{"Position", {{"x", -1.5 + 0.27 * i}, {"y", 1 + 0.9 * i}}},
                                 {"RigidBody", {{"restitution", 0.3}}},
                                 {"Collider", {{"radius", 0.45}}}}));
    return balls;
}
std::vector<Position> positions_of(world& w, const std::vector<entity_id>& ids) {
    std::vector<Position> out;
    for (const auto e : ids) out.push_back(w.registry().get<Position>(e));
    return out;
}
bool same_places(const std::vector<Position>& a, const std::vector<Position>& b) {
    return std::equal(a.begin(), a.end(), b.begin(), b.end(),
                      [](const Position& p, const Position& q) { return p.x == q.x && p.y == q.y; });
}
}  // namespace

TEST(Rest, ASettledHeapSleepsAndWritesNothing) {
    world w(box_world());
    const auto balls = drop_heap(w);
    w.step(15 * 60);  // 15 s: long settled
    for (const auto e : balls) {
        ASSERT_TRUE(w.registry().has<Resting>(e))
            << "every ball of the heap rests: " << w.get_components(e, std::nullopt).dump();
        EXPECT_TRUE(rest_system::asleep(w.registry().get<Resting>(e)));
        EXPECT_EQ(w.registry().get<Velocity>(e).x, 0);
        EXPECT_EQ(w.registry().get<Velocity>(e).y, 0);
    }
    // What a watcher compares: the values. Not one moves by a rounding error in 120 ticks.
    const auto before = positions_of(w, balls);
    int moved = 0;
    for (int i = 0; i < 120; ++i) {
        w.step(1);
        moved += same_places(before, positions_of(w, balls)) ? 0 : 1;
    }
    EXPECT_EQ(moved, 0) << "ticks in which the heap at rest moved";
    EXPECT_EQ(w.query("Resting.seconds >= 0.5", std::nullopt, 100, 0)["total"], 12);
}

TEST(Rest, AFastBodyWakesTheHeapAndASleeperWithoutSupportFalls) {
    world w(box_world());
    const auto balls = drop_heap(w);
    w.step(15 * 60);
    ASSERT_EQ(w.query("Resting.seconds >= 0.5", std::nullopt, 100, 0)["total"], 12);
    const auto before = positions_of(w, balls);
    (void)w.spawn({{"Position", {{"x", 0}, {"y", 12}}},
                   {"Velocity", {{"x", 0}, {"y", -15}}},
                   {"RigidBody", json::object()},
                   {"Collider", {{"radius", 0.45}}}});
    w.step(60);
    EXPECT_FALSE(same_places(before, positions_of(w, balls))) << "the heap was hit and moved";
    w.step(20 * 60);
    EXPECT_EQ(w.query("Resting.seconds >= 0.5", std::nullopt, 100, 0)["total"], 13) << "and settles again";

    // Lifted into the air by a client, a sleeper is held up by nothing: it wakes and falls.
    auto& reg = w.registry();
    const auto top = *std::max_element(balls.begin(), balls.end(), [&](entity_id a, entity_id b) {
        return reg.get<Position>(a).y < reg.get<Position>(b).y;
    });
    reg.get<Position>(top).y += 3;
    const double lifted = reg.get<Position>(top).y;
    w.step(10);
    EXPECT_LT(reg.get<Position>(top).y, lifted);
}

TEST(Rest, ABodyOnAnImmovableLedgeSleepsAndFallsWhenTheLedgeGoes) {
    world w(paused_world());  // no bounds: only the ledge holds it up
    const auto ledge = w.spawn({{"Position", {{"x", 0}, {"y", 0}}}, {"Collider", {{"radius", 1}}}});
    const auto box = w.spawn({{"Position", {{"x", 0}, {"y", 1.6}}},
                              {"RigidBody", {{"restitution", 0}}},
                              {"Collider", {{"radius", 0.5}}}});
    w.step(5 * 60);
    auto& reg = w.registry();
    ASSERT_TRUE(reg.has<Resting>(box));
    EXPECT_TRUE(rest_system::asleep(reg.get<Resting>(box)));
    const auto resting_at = reg.get<Position>(box);
    w.step(60);
    EXPECT_EQ(reg.get<Position>(box).y, resting_at.y) << "asleep: not moved by a rounding error";
    w.despawn(ledge);
    w.step(30);
    EXPECT_FALSE(reg.has<Resting>(box));
    EXPECT_LT(reg.get<Position>(box).y, resting_at.y - 0.5) << "its support gone, it falls";
}

TEST(Rest, AClientsVelocityWakesASleeperAndTinyVelocitiesBecomeZero) {
    world_settings s = paused_world();
    s.gravity_y = 0;
    world w(s);
    const auto drifter =
        w.spawn({{"Position", json::object()}, {"Velocity", {{"x", 1e-9}}}, {"RigidBody", json::object()}});
    const auto mover = w.spawn({{"Position", {{"x", 5}, {"y", 0}}}, {"Velocity", {{"x", 1e-9}}}});
    w.step(1);
    auto& reg = w.registry();
    EXPECT_EQ(reg.get<Velocity>(drifter).x, 0) << "slower than 1e-6 m/s is standing still";
    EXPECT_EQ(reg.get<Velocity>(mover).x, 1e-9) << "a mover without a RigidBody is left alone";
    w.step(60);
    ASSERT_TRUE(reg.has<Resting>(drifter));
    EXPECT_TRUE(rest_system::asleep(reg.get<Resting>(drifter)));
    reg.get<Velocity>(drifter).x = 2;  // as world.mutate_components writes it
    w.step(30);
    EXPECT_NEAR(reg.get<Position>(drifter).x, 1, 1e-9);
    EXPECT_FALSE(reg.has<Resting>(drifter));
}

TEST(Collision, LayerAndMaskMustMatchBothWays) {
    world w(paused_world());
    const auto a =
        w.spawn({{"Position", json::object()}, {"Collider", {{"radius", 1}, {"layer", 1}, {"mask", 2}}}});
    const auto b =
        w.spawn({{"Position", json::object()}, {"Collider", {{"radius", 1}, {"layer", 4}, {"mask", 1}}}});
    w.step(1);
    EXPECT_FALSE(w.registry().has<Contacts>(a));
    EXPECT_FALSE(w.registry().has<Contacts>(b));
}

TEST(Collision, BroadphaseFindsEveryTouchingPairOfAGrid) {
    world w(paused_world());
    // 20x20 circles of radius 0.5, 0.9 apart: each touches its 4 (edge: fewer) neighbours.
    for (int i = 0; i < 20; ++i)
        for (int j = 0; j < 20; ++j)
            w.spawn({{"Position", {{"x", i * 0.9}, {"y", j * 0.9}}}, {"Collider", {{"radius", 0.5}}}});
    w.run_system("collision_detection");
    std::size_t links = 0;
    w.registry().each<const Contacts>(
        [&](ecsd::ecs::entity_id, const Contacts& c) { links += c.entities.size(); });
    EXPECT_EQ(links, 2u * (2 * 20 * 19));  // 760 undirected pairs, seen from both ends
}

// Every body's Contacts against a check of every pair, for bodies of mixed radii and layers packed
// close (a dense grid, searched by runs of cells, edges included) and spread thin (hashed cells).
TEST(Collision, BroadphaseFindsWhatCheckingEveryPairFinds) {
    for (const double side : {24.0, 40000.0}) {
        SCOPED_TRACE("side " + std::to_string(side));
        world w(paused_world());
        std::mt19937 rng(7);
        std::uniform_real_distribution<double> at(0, side), radius(0.05, 1.0);
        std::uniform_int_distribution<std::uint32_t> bits(0, 7);
        struct body {
            ecsd::ecs::entity_id id;
            double x, y, r;
            std::uint32_t layer, mask;
        };
        std::vector<body> bodies;
        for (int k = 0; k < 700; ++k) {
            // Spread thin, bodies come in small clumps, or nothing would touch.
            const double x = side > 100 && k % 4 != 0 ? bodies.back().x + radius(rng) : at(rng);
            const double y = side > 100 && k % 4 != 0 ? bodies.back().y + radius(rng) : at(rng);
            body b{0, x, y, radius(rng), 1u << (bits(rng) % 3), bits(rng) | 1u};
            b.id = w.spawn({{"Position", {{"x", b.x}, {"y", b.y}}},
                            {"Collider", {{"radius", b.r}, {"layer", b.layer}, {"mask", b.mask}}}});
            bodies.push_back(b);
        }
        w.run_system("collision_detection");
        EXPECT_EQ(w.state<collision_detection_system>().banded, side < 100);
        std::size_t touching = 0;
        for (const auto& a : bodies) {
            std::set<ecsd::ecs::entity_id> expected, found;
            for (const auto& b : bodies) {
                const double dx = b.x - a.x, dy = b.y - a.y, rr = (a.r + b.r) * (1 + 1e-9) + 1e-9;
                if (b.id != a.id && (a.layer & b.mask) && (b.layer & a.mask) && dx * dx + dy * dy < rr * rr)
                    expected.insert(b.id);
            }
            if (const auto* c = w.registry().try_get<Contacts>(a.id))
                for (const auto& e : c->entities) found.insert(e.id);
            EXPECT_EQ(found, expected) << "entity " << a.id;
            touching += expected.size();
        }
        EXPECT_GT(touching, 300u);  // the check has pairs to find
    }
}

TEST(Ghost, PassesThroughExactlyTheNamedKindsAndExpiresOnTime) {
    world w(paused_world(10));
    auto& reg = w.registry();
    const auto ghost = w.spawn({{"Position", json::object()},
                                {"Collider", {{"radius", 1}}},
                                {"Ghost", {{"passes", {"AI"}}, {"remaining", 0.5}}}});
    const auto monster =
        w.spawn({{"Position", {{"x", 0.5}}}, {"Collider", {{"radius", 1}}}, {"AI", json::object()}});
    const auto wall = w.spawn({{"Position", {{"x", -0.5}}}, {"Collider", {{"radius", 1}}}});
    w.step(1);
    EXPECT_EQ(reg.get<Contacts>(ghost).entities, (std::vector<ecsd::ecs::entity_ref>{{wall}}));
    EXPECT_EQ(reg.get<Contacts>(monster).entities, (std::vector<ecsd::ecs::entity_ref>{{wall}}));
    w.step(3);
    EXPECT_TRUE(reg.has<Ghost>(ghost));  // 0.5 s at 10 Hz: 4 ticks gone, 1 left
    w.step(1);
    EXPECT_FALSE(reg.has<Ghost>(ghost));
    w.step(1);
    auto both = reg.get<Contacts>(ghost).entities;
    std::sort(both.begin(), both.end(), [](auto a, auto b) { return a.id < b.id; });
    EXPECT_EQ(both, (std::vector<ecsd::ecs::entity_ref>{{monster}, {wall}}));
}

TEST(Spells, KillAllMonstersDestroysEverythingWithHealthAndAI) {
    world w(paused_world());
    const auto hero = w.spawn({{"Health", json::object()}, {"Player", json::object()}});
    const auto orc = w.spawn({{"Health", json::object()}, {"AI", json::object()}});
    const auto statue = w.spawn({{"AI", json::object()}});
    EXPECT_EQ(w.cast_spell(hero, "kill_all_monsters", 0, 0), 1u);
    w.step(1);
    EXPECT_FALSE(w.registry().alive(orc));
    EXPECT_TRUE(w.registry().alive(statue));
    EXPECT_TRUE(w.registry().alive(hero));
    EXPECT_FALSE(w.registry().has<MagicInput>(hero));
}

TEST(Spells, FreezeRemovesVelocityAndThawRestoresIt) {
    world w(paused_world());
    const auto mage = w.spawn({{"Player", json::object()}});
    const auto enemy = w.spawn({{"Position", json::object()}, {"Velocity", {{"x", 3}}}});
    w.cast_spell(mage, "freeze", enemy, 0);
    w.step(1);
    EXPECT_FALSE(w.registry().has<Velocity>(enemy));
    EXPECT_TRUE(w.registry().has<Frozen>(enemy));
    const double x = w.registry().get<Position>(enemy).x;
    w.step(10);
    EXPECT_EQ(w.registry().get<Position>(enemy).x, x);  // frozen: does not move
    w.cast_spell(mage, "thaw", enemy, 0);
    w.step(1);
    EXPECT_TRUE(w.registry().has<Velocity>(enemy));
    EXPECT_FALSE(w.registry().has<Frozen>(enemy));
}

TEST(Spells, GhostAndHeal) {
    world w(paused_world());
    const auto hero = w.spawn({{"Health", {{"hp", 10}, {"max", 50}}}});
    w.cast_spell(hero, "heal", 0, 15);
    w.step(1);
    EXPECT_EQ(w.registry().get<Health>(hero).hp, 25);
    w.cast_spell(hero, "ghost", 0, 2);
    EXPECT_EQ(reason_of([&] { w.cast_spell(hero, "heal", 0, 0); }),
              "limit_reached");  // one spell per caster per tick
    w.step(1);
    ASSERT_TRUE(w.registry().has<Ghost>(hero));
    EXPECT_EQ(w.registry().get<Ghost>(hero).remaining, 2.0 - 1.0 / 60);
    EXPECT_EQ(w.registry().get<Health>(hero).hp, 25);
    w.cast_spell(hero, "heal", 0, 0);
    w.step(1);
    EXPECT_EQ(w.registry().get<Health>(hero).hp, 50);
}

TEST(Spells, UnknownSpellIsReportedNotIgnored) {
    world w(paused_world());
    const auto hero = w.spawn({{"Player", json::object()}});
    EXPECT_EQ(reason_of([&] { w.cast_spell(hero, "fireball", 0, 0); }), "no_such_spell");
    // Written directly as a component, it is reported when the spells system reads it.
    w.insert_components(hero, {{"MagicInput", {{"spell", "fireball"}}}});
    w.step(1);
    const auto failures = w.info()["spell_failures"];
    ASSERT_EQ(failures.size(), 1u);
    EXPECT_EQ(failures[0]["spell"], "fireball");
    EXPECT_FALSE(w.registry().has<MagicInput>(hero));
}

TEST(Spells, SpellRunAsASystemOutsideTheLoop) {
    world w(paused_world());
    const auto hero = w.spawn({{"Player", json::object()}});
    w.spawn({{"Health", json::object()}, {"AI", json::object()}});
    w.cast_spell(hero, "kill_all_monsters", 0, 0);
    w.run_system("spells");
    EXPECT_EQ(w.tick(), 0u);
    EXPECT_EQ(w.registry().size(), 1u);
}

TEST(Lifetime, DestroysAtZero) {
    world w(paused_world(10));
    const auto e = w.spawn({{"Lifetime", {{"remaining", 1}}}});
    w.step(9);
    EXPECT_TRUE(w.registry().alive(e));
    w.step(1);
    EXPECT_FALSE(w.registry().alive(e));
}

TEST(Determinism, TwoWorldsFedTheSameCommandsHashTheSameEveryTick) {
    world a(paused_world()), b(paused_world());
    for (world* w : {&a, &b}) {
        for (int i = 0; i < 200; ++i) {
            const int row = i / 20;
            w->spawn({{"Position", {{"x", (i % 20) * 0.8}, {"y", row * 0.8 + 5}}},
                      {"Velocity", {{"x", (i % 3) - 1}}},
                      {"RigidBody", {{"restitution", 0.3}}},
                      {"Collider", {{"radius", 0.5}}}});
        }
        w->spawn({{"Position", {{"x", 5}, {"y", -10}}}, {"Collider", {{"radius", 8}}}});  // the ground
    }
    for (int t = 0; t < 120; ++t) {
        if (t == 30)
            for (world* w : {&a, &b}) w->cast_spell(ecsd::ecs::make_entity(3, 1), "freeze", 0, 0);
        a.step(1);
        b.step(1);
        ASSERT_EQ(a.state_hash(), b.state_hash()) << "diverged at tick " << t;
    }
    world c(paused_world());
    EXPECT_NE(a.state_hash(), c.state_hash());
}

TEST(Clock, CatchUpIsBoundedAndSkippedTimeIsCounted) {
    world w(world_settings{});
    const auto t0 = world::clock::now();
    w.start_clock(t0);
    const auto at = [&](double periods) {
        return t0 + std::chrono::duration_cast<world::clock::duration>(
                        std::chrono::duration<double>(periods / 60));
    };
    auto next = w.advance(at(3.5));  // deadlines 1, 2, 3 are due
    EXPECT_EQ(w.tick(), 3u);
    EXPECT_LE(std::chrono::abs(next - at(4)), std::chrono::nanoseconds(2));
    w.advance(at(100.5));  // far behind: deadlines 4..100 due, 4 run, the rest skipped and counted
    EXPECT_EQ(w.tick(), 7u);
    EXPECT_EQ(w.skipped_ticks(), 93u);
    EXPECT_EQ(w.info()["skipped_ticks"], 93);
}

TEST(Clock, InfoHasTickPercentilesOfTheLastTicks) {
    world w(paused_world());
    EXPECT_EQ(w.info()["tick_p99_ms"], 0.0);  // no tick yet
    for (int i = 0; i < 300; ++i) w.spawn({{"Position", json::object()}, {"Velocity", {{"x", 1}}}});
    w.step(40);
    const auto info = w.info();
    EXPECT_GT(info["tick_p50_ms"].get<double>(), 0.0);
    EXPECT_GE(info["tick_p99_ms"].get<double>(), info["tick_p50_ms"].get<double>());
    EXPECT_LE(info["tick_p50_ms"].get<double>(), 1000.0);
}

TEST(Clock, AbsoluteDeadlinesDoNotDrift) {
    world w(world_settings{});
    const auto t0 = world::clock::now();
    w.start_clock(t0);
    auto now = t0;
    while (w.tick() < 216000) now = w.advance(now);  // an hour of 60 Hz, woken exactly on time
    // The deadline after tick 216000 is 216001/60 s after the start, to the nanosecond.
    const auto expected = t0 + std::chrono::hours(1) + std::chrono::nanoseconds(16'666'667);
    EXPECT_LE(std::chrono::abs(now - expected), std::chrono::nanoseconds(2));
    EXPECT_EQ(w.skipped_ticks(), 0u);
}

TEST(WorldJson, BadInputChangesNothing) {
    world w(paused_world());
    const auto e = w.spawn({{"Position", {{"x", 1}}}});
    const auto before = w.state_hash();
    EXPECT_EQ(reason_of([&] {
                  w.spawn({{"Position", json::object()}, {"Nope", json::object()}});
              }),
              "no_such_component");
    EXPECT_EQ(reason_of([&] {
                  w.insert_components(e, {{"Velocity", json::object()}, {"Position", {{"x", "a"}}}});
              }),
              "invalid_value");
    EXPECT_EQ(reason_of([&] { w.remove_components(e, {"Position", "Velocity"}); }), "no_such_component");
    EXPECT_EQ(reason_of([&] { w.mutate_component(e, "Position", "z", 1); }), "invalid_value");
    EXPECT_EQ(reason_of([&] {
                  w.spawn_many(json::array({{{"Position", json::object()}}, {{"Health", {{"hp", "x"}}}}}));
              }),
              "invalid_value");
    EXPECT_EQ(reason_of([&] { w.despawn(e + (std::uint64_t{1} << 32)); }), "no_such_entity");
    EXPECT_EQ(w.state_hash(), before);
    EXPECT_EQ(w.registry().size(), 1u);
}

TEST(WorldJson, QueryPagesAndSelectsFields) {
    world w(paused_world());
    for (int i = 0; i < 10; ++i) w.spawn({{"Position", {{"x", i}}}, {"Health", json::object()}});
    const auto r = w.query("Position, Health", std::vector<std::string>{"Position"}, 3, 4);
    EXPECT_EQ(r["total"], 10);
    ASSERT_EQ(r["entities"].size(), 3u);
    EXPECT_EQ(r["entities"][0]["components"]["Position"]["x"], 4.0);
    EXPECT_FALSE(r["entities"][0]["components"].contains("Health"));
    const auto r2 = w.query(json{{"all", {"Position"}}, {"none", {"Health"}}}, std::nullopt, 100, 0);
    EXPECT_EQ(r2["total"], 0);
}

TEST(Prefabs, CreateTreeLikeSeed001WithOverrides) {
    world w(paused_world());
    w.define_prefab("tree", {{"Position", json::object()}, {"Appearance", {{"name", "tree"}}}});
    const auto ids = w.spawn_prefab("tree", 3, {{"Position", {{"x", 7}}}});
    ASSERT_EQ(ids.size(), 3u);
    EXPECT_EQ(w.get_components(ids[2], std::nullopt)["Position"]["x"], 7.0);
    EXPECT_EQ(w.get_components(ids[2], std::nullopt)["Appearance"]["name"], "tree");
    EXPECT_EQ(reason_of([&] { w.spawn_prefab("bush", 1, nullptr); }), "no_such_prefab");
}

TEST(Prefabs, SpawnManyRefusesAWholeBatchAsSpawnManyWould) {
    world w(paused_world());
    w.define_prefab("boss", {{"Name", {{"name", "Gorm"}}}, {"Health", json::object()}});
    // Two of a named prefab in one call: the second name is taken in this request, nothing spawns.
    EXPECT_EQ(reason_of([&] { w.spawn_prefab("boss", 2, nullptr); }), "invalid_value");
    EXPECT_EQ(w.registry().size(), 0u);
    ASSERT_EQ(w.spawn_prefab("boss", 1, nullptr).size(), 1u);
    EXPECT_EQ(reason_of([&] { w.spawn_prefab("boss", 1, nullptr); }), "invalid_value");  // taken now
    // Past max_entities: refused whole, as spawn_many refuses.
    auto s = paused_world();
    s.max_entities = 10;
    world small(s);
    small.define_prefab("rock", {{"Position", json::object()}});
    EXPECT_EQ(reason_of([&] { small.spawn_prefab("rock", 11, nullptr); }), "limit_reached");
    EXPECT_EQ(small.registry().size(), 0u);
    EXPECT_EQ(small.spawn_prefab("rock", 10, nullptr).size(), 10u);
}

TEST(Systems, ListEnableDisableAndMembers) {
    world w(paused_world());
    w.spawn({{"Position", json::object()}, {"Velocity", {{"x", 1}}}});
    const auto systems = w.list_systems();
    ASSERT_EQ(systems.size(), 9u);
    EXPECT_EQ(systems[1]["name"], "movement");
    EXPECT_EQ(systems[1]["members"], 1);
    w.set_system_enabled("movement", false);
    w.step(5);
    EXPECT_EQ(w.query("Position", std::nullopt, 1, 0)["entities"][0]["components"]["Position"]["x"], 0.0);
    EXPECT_EQ(reason_of([&] { w.set_system_enabled("cleanup", false); }), "invalid_value");
    EXPECT_EQ(reason_of([&] { w.run_system("nope"); }), "no_such_system");
    EXPECT_EQ(w.system_entities("movement", 10, 0)["total"], 1);
}

TEST(Systems, RunInPhaseOrderWithSignaturesDerivedFromTheirTerms) {
    world w(paused_world());
    const auto systems = w.list_systems();
    const std::vector<std::string> phases{"input", "simulation", "collision", "post", "cleanup"};
    std::size_t last = 0;
    for (const auto& s : systems) {
        const auto at = std::find(phases.begin(), phases.end(), s["phase"].get<std::string>());
        ASSERT_NE(at, phases.end()) << s.dump();
        const auto rank = static_cast<std::size_t>(at - phases.begin());
        EXPECT_GE(rank, last) << s["name"] << " runs before a system of an earlier phase";
        last = rank;
    }
    const auto signature = [&](const std::string& name) {
        for (const auto& s : systems)
            if (s["name"] == name) return s["signature"].get<std::string>();
        return std::string("missing");
    };
    EXPECT_EQ(signature("movement"), "Position, Velocity");
    EXPECT_EQ(signature("collision_response"), "Position, Collider, Contacts");
    EXPECT_EQ(signature("spells"), "MagicInput");
    EXPECT_EQ(signature("cleanup"), "*");
}

TEST(Components, TheLintersNamingExceptionListsExactlyTheBuiltInComponents) {
    // .clang-tidy lets component types keep their wire names (CamelCase); its list must be
    // builtin_components, or a new component would fail lint and a removed one stay excused.
    std::ifstream in(std::string(ECSD_SOURCE_DIR) + "/.clang-tidy");
    ASSERT_TRUE(in) << "cannot read .clang-tidy";
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto at = text.find("ClassIgnoredRegexp, value: '^(");
    ASSERT_NE(at, std::string::npos);
    const auto from = text.find('(', at) + 1;
    std::set<std::string> excused;
    std::stringstream list(text.substr(from, text.find(')', from) - from));
    for (std::string name; std::getline(list, name, '|');) excused.insert(name);
    std::set<std::string> builtin;
    [&]<typename... T>(ecsd::world::type_list<T...>) {
        (builtin.insert(ecsd::ecs::component_traits<T>::name), ...);
    }(ecsd::world::builtin_components{});
    EXPECT_EQ(excused, builtin);
}

TEST(Collision, FarAwayBodiesDoNotBreakTheGrid) {
    world w(paused_world());
    const auto a = w.spawn({{"Position", {{"x", 1e15}, {"y", -1e15}}}, {"Collider", json::object()}});
    const auto b = w.spawn({{"Position", {{"x", 0}, {"y", 0}}}, {"Collider", json::object()}});
    const auto c = w.spawn({{"Position", {{"x", 0.5}, {"y", 0}}}, {"Collider", json::object()}});
    w.step(2);
    EXPECT_FALSE(w.registry().has<Contacts>(a));
    EXPECT_EQ(w.registry().get<Contacts>(b).entities, (std::vector<ecsd::ecs::entity_ref>{{c}}));
}

// world.get_components writes its answer as text; it must read exactly like the tree the registry's
// json path (value_json, as snapshots use) builds, dumped.
TEST(ComponentText, WrittenTextEqualsTheDumpedTreeForEveryKind) {
    world w(paused_world());
    w.register_component(
        "Loot", json{{"gold", 3}, {"scores", json::array({1.5, 2})}, {"cursed", false}, {"title", "x"}});
    const auto other = w.spawn(json::object());
    const auto e = w.spawn({{"Position", {{"x", 0.1}, {"y", -2.5e-7}}},
                            {"Velocity", {{"x", 1e15}}},
                            {"RigidBody", {{"mass", 3}}},
                            {"Collider", {{"layer", 4294967295u}}},
                            {"Appearance", {{"name", "oak \"tall\"\n\u00e9"}}},
                            {"Health", json::object()},
                            {"AI", json::object()},
                            {"Player", json::object()},
                            {"Frozen", json::object()},
                            {"Ghost", {{"passes", {"wall", "monster"}}}},
                            {"MagicInput", {{"spell", "heal"}, {"target", other}}},
                            {"Lifetime", {{"remaining", 2}}},
                            {"Loot", {{"gold", 7}, {"title", "tab\there"}}}});
    const auto text_of = [&](const std::optional<std::vector<std::string>>& names) {
        std::string out;
        ecsd::ecs::json_text t(out);
        w.write_components(e, names, t);
        t.flush();
        return out;
    };
    const auto tree_of = [&](const std::vector<std::string>& names) {
        const auto& reg = w.registry();
        json out = json::object();
        for (const auto& n : names) out[n] = reg.get_json(e, reg.component_by_name(n));
        return out.dump();
    };
    std::vector<std::string> all;
    for (auto c : w.registry().components_of(e)) all.push_back(w.registry().storage(c).name());
    EXPECT_EQ(all.size(), 13u);
    EXPECT_EQ(text_of(std::nullopt), tree_of(all));
    const std::vector<std::string> some{"RigidBody", "Loot", "Player", "RigidBody"};
    EXPECT_EQ(text_of(some), tree_of(some));
    EXPECT_EQ(json::parse(text_of(some)).size(), 3u);  // a name asked twice appears once
}

TEST(ComponentText, AMissingComponentIsAnErrorAndWritesNothing) {
    world w(paused_world());
    const auto e = w.spawn({{"Position", json::object()}});
    std::string out;
    ecsd::ecs::json_text t(out);
    EXPECT_EQ(reason_of([&] {
                  w.write_components(e, std::vector<std::string>{"Position", "Health"}, t);
              }),
              "no_such_component");
    EXPECT_EQ(reason_of([&] { w.write_components(e, std::vector<std::string>{"Nope"}, t); }),
              "no_such_component");
    t.flush();
    EXPECT_TRUE(out.empty());
}

TEST(ComponentText, QueryTextIsCanonicalJsonWithLiveAndDeadRows) {
    world w(paused_world());
    std::vector<ecsd::ecs::entity_id> ids;
    ids.reserve(6);
    for (int i = 0; i < 6; ++i)
        ids.push_back(
            w.spawn({{"Position", {{"x", i}}}, {"RigidBody", json::object()}, {"Health", {{"hp", 50 + i}}}}));
    w.despawn(ids[2]);
    const auto text_of = [&](const json& q, const std::optional<std::vector<std::string>>& fields,
                             std::size_t limit, std::size_t offset) {
        std::string out;
        ecsd::ecs::json_text t(out);
        w.write_query(q, fields, limit, offset, t);
        t.flush();
        return out;
    };
    // Canonical: the text is exactly what nlohmann would dump for the same value (sorted keys, same numbers).
    for (const auto& text :
         {text_of("Position", std::nullopt, 100, 0),
          text_of("Position, Health", std::vector<std::string>{"Health", "Velocity", "Health"}, 2, 1),
          text_of(json{{"died", true}}, std::nullopt, 100, 0)}) {
        EXPECT_EQ(text, json::parse(text).dump());
    }
    const auto page =
        json::parse(text_of("Position, Health", std::vector<std::string>{"Health", "Collider"}, 2, 1));
    EXPECT_EQ(page["total"], 5);
    ASSERT_EQ(page["entities"].size(), 2u);
    EXPECT_EQ(page["entities"][0]["components"],
              (json{{"Health", {{"hp", 51.0}, {"max", 100.0}}}}));  // no Collider
    const auto died = json::parse(text_of(json{{"died", true}}, std::nullopt, 100, 0));
    EXPECT_EQ(died["entities"], (json::array({{{"alive", false}, {"entity", ids[2]}}})));
    std::string untouched;
    ecsd::ecs::json_text t(untouched);
    EXPECT_EQ(reason_of([&] { w.write_query("Position, Nope", std::nullopt, 10, 0, t); }),
              "no_such_component");
    t.flush();
    EXPECT_TRUE(untouched.empty());
}

TEST(ComponentText, AQueryPageOfMixedComponentSetsWritesEachEntitysOwn) {
    // Consecutive entities with the same components share one sorted list of names; an entity with
    // another set must get its own, and the one after it the first set again.
    world w(paused_world());
    std::vector<ecsd::ecs::entity_id> ids;
    for (int i = 0; i < 8; ++i) {
        json components{{"Position", {{"x", i}}}};
        if (i % 3 == 1) components["Health"] = {{"hp", i}};
        if (i % 4 == 2) components["Player"] = json::object();
        ids.push_back(w.spawn(components));
    }
    std::string out;
    {
        ecsd::ecs::json_text t(out);
        w.write_query("Position", std::nullopt, 100, 0, t);
    }
    const auto page = json::parse(out);
    ASSERT_EQ(page["entities"].size(), ids.size());
    for (const auto& row : page["entities"])
        EXPECT_EQ(row["components"],
                  w.get_components(row["entity"].get<ecsd::ecs::entity_id>(), std::nullopt))
            << row.dump();
}

// The watch hub answers many near() views at once from one grid of positions (world::near_index):
// every answer, its order included, must be the one a plain walk of the world gives, in a dense
// cluster (counting sort), with an outlier far away (the sorted fallback), on rims, at radii from
// below a cell to beyond the world, with slots reused by later generations, and with change filters.
TEST(NearIndex, AnswersEveryNearQueryAsThePlainWalkDoes) {
    world w(paused_world());
    std::mt19937 rng(7);
    std::uniform_real_distribution<double> in(-40, 40);
    std::vector<ecsd::ecs::entity_id> ids;
    for (int i = 0; i < 600; ++i) {
        json comps = {{"Position", {{"x", std::round(in(rng))}, {"y", in(rng)}}}};
        if (i % 3 == 0) comps["Velocity"] = {{"x", 0}, {"y", 0}};
        ids.push_back(w.spawn(comps));
    }
    w.spawn({{"Velocity", {{"x", 1}, {"y", 0}}}});  // no Position: never near anything
    // Slots reused: a new generation's id sorts after the older ids around it, its slot does not.
    for (std::size_t i = 0; i < 40; ++i) {
        w.despawn(ids[i * 5]);
        ids[i * 5] = w.spawn({{"Position", {{"x", in(rng)}, {"y", in(rng)}}}});
    }
    w.step(1);
    for (std::size_t i = 0; i < 30; ++i)
        w.insert_components(ids[i * 7 + 1], {{"Velocity", {{"x", 1}, {"y", 1}}}});
    const auto compare = [&](const std::string& phase) {
        std::uniform_int_distribution<std::size_t> pick(0, ids.size() - 1);
        const double radii[] = {0.3, 1, 2.5, 6, 13, 200, 5e6};
        for (int k = 0; k < 120; ++k) {
            const double r = radii[static_cast<std::size_t>(k) % std::size(radii)];
            const char* filters[] = {"", "", "added(Velocity), ", "changed(Velocity), "};
            const std::string q =
                filters[static_cast<std::size_t>(k / 2) % std::size(filters)] +
                (k % 2 == 0 ? "near(" + std::to_string(ids[pick(rng)]) + ", " + std::to_string(r) + ")"
                            : "Velocity, near(" + std::to_string(std::round(in(rng))) + ", " +
                                  std::to_string(in(rng)) + ", " + std::to_string(r) + ")");
            const json plain = w.query(json(q), std::nullopt, 100000, 0);
            for (const double cell : {0.5, 3.0, 50.0}) {
                world::near_index grid(w, cell);
                const json indexed = w.query(json(q), std::nullopt, 100000, 0);
                ASSERT_EQ(indexed, plain) << phase << ": " << q << " with cells of " << cell;
            }
        }
    };
    compare("cluster");
    ids.push_back(w.spawn({{"Position", {{"x", 4e6}, {"y", -3e6}}}}));
    compare("with an outlier");
}

// The watch hub keeps one grid from tick to tick and brings it up to date (position_grid::rebuild
// reuses the last build when the pool holds the same entities in the same order): after moves
// across cells, despawns and spawns, an entity whose position turns NaN or infinite and back, and
// one that leaves the occupied rectangle, a kept grid answers as a fresh one and a plain walk do.
TEST(NearIndex, AGridKeptFromTickToTickAnswersAsAFreshOne) {
    world_settings s = paused_world();
    s.gravity_y = 0;
    world w(s);
    std::mt19937 rng(11);
    std::uniform_real_distribution<double> in(-30, 30), speed(-4, 4);
    std::vector<ecsd::ecs::entity_id> ids;
    for (int i = 0; i < 400; ++i)
        ids.push_back(w.spawn({{"Position", {{"x", in(rng)}, {"y", in(rng)}}},
                               {"Velocity", {{"x", speed(rng)}, {"y", speed(rng)}}}}));
    position_grid kept;
    std::uniform_int_distribution<std::size_t> pick(0, ids.size() - 1);
    const auto compare = [&](const std::string& phase) {
        const double radii[] = {0.4, 2, 5, 11, 80};
        for (int k = 0; k < 40; ++k) {
            const double r = radii[static_cast<std::size_t>(k) % std::size(radii)];
            const std::string q =
                k % 2 == 0 ? "near(" + std::to_string(ids[pick(rng)]) + ", " + std::to_string(r) + ")"
                           : "near(" + std::to_string(in(rng)) + ", " + std::to_string(in(rng)) + ", " +
                                 std::to_string(r) + ")";
            const json plain = w.query(json(q), std::nullopt, 100000, 0);
            {
                world::near_index index(w, 2.5, &kept);
                ASSERT_EQ(w.query(json(q), std::nullopt, 100000, 0), plain) << phase << ", kept grid: " << q;
            }
            world::near_index fresh(w, 2.5);
            ASSERT_EQ(w.query(json(q), std::nullopt, 100000, 0), plain) << phase << ", fresh grid: " << q;
        }
    };
    compare("first build");
    for (int tick = 0; tick < 30; ++tick) {  // about 2 m a second: some cross a 2.5 m cell each tick
        w.step(1);
        compare("tick " + std::to_string(tick));
    }
    // Written past the protocol's checks, as a system's arithmetic could leave them.
    auto& odd = w.registry().get<Position>(ids[3]);
    odd.x = std::numeric_limits<double>::quiet_NaN();
    compare("one position NaN");
    odd.x = std::numeric_limits<double>::infinity();
    compare("one position infinite");
    odd.x = 1.5;
    compare("back on the map");
    w.despawn(ids[10]);
    ids[10] = w.spawn({{"Position", {{"x", 0.5}, {"y", 0.5}}}});
    compare("a despawn and a spawn");
    w.mutate_component(ids[20], "Position", "x", json(45.0));  // past the rectangle and its margin
    compare("one outside the rectangle");
    w.step(3);
    compare("after it");
}

TEST(World, GivesBackUnusedCapacityOnceItsShapeHasHeldForASecond) {
    world w(paused_world());  // 60 Hz
    for (int i = 0; i < 1000; ++i)
        (void)w.spawn({{"Position", json::object()}, {"Velocity", json::object()}});
    w.step(59);
    EXPECT_EQ(w.memory_releases(), 0u) << "not before a second of ticks";
    w.step(2);
    EXPECT_EQ(w.memory_releases(), 1u);
    w.step(120);
    EXPECT_EQ(w.memory_releases(), 1u) << "once per shape";
    // Entities coming and going every tick: nothing is given back meanwhile.
    for (int i = 0; i < 120; ++i) {
        (void)w.spawn({{"Position", json::object()}});
        w.step(1);
    }
    EXPECT_EQ(w.memory_releases(), 1u);
    w.step(61);
    EXPECT_EQ(w.memory_releases(), 2u) << "the new shape, once it has held";
    EXPECT_EQ(w.registry().size(), 1120u);
}
