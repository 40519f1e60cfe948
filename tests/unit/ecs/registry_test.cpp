#include "ecs/registry.hpp"

#include <algorithm>
#include <random>
#include <stdexcept>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "test_components.hpp"

using namespace ecsd::ecs;
using test::Position;
using test::Velocity;

class RegistryTest : public ::testing::Test {
  protected:
    RegistryTest() {
        reg.register_component<Position>();
        reg.register_component<Velocity>();
        reg.register_component<test::Health>();
        reg.register_component<test::Player>();
    }
    registry reg;
};

TEST(RegistryTypes, UsingATypeThatWasNeverRegisteredIsALoudError) {
    registry reg;
    const auto e = reg.create();
    EXPECT_THROW((void)reg.storage<Position>(), std::logic_error);
    EXPECT_THROW(reg.emplace<Position>(e), std::logic_error);
    EXPECT_FALSE(reg.has<Position>(e)) << "asking is fine: no entity has a type nobody registered";
    try {
        (void)reg.storage<Velocity>();
        FAIL();
    } catch (const std::logic_error& err) {
        EXPECT_NE(std::string(err.what()).find("never registered"), std::string::npos) << err.what();
    }
}

TEST_F(RegistryTest, EmplaceGetRemove) {
    const auto e = reg.create();
    reg.emplace<Position>(e, {1, 2});
    ASSERT_TRUE(reg.has<Position>(e));
    EXPECT_FLOAT_EQ(reg.get<Position>(e).y, 2);
    reg.remove<Position>(e);
    EXPECT_FALSE(reg.has<Position>(e));
    EXPECT_EQ(reg.try_get<Position>(e), nullptr);
}

TEST_F(RegistryTest, AddingTwiceIsComponentExists) {
    const auto e = reg.create();
    reg.emplace<Position>(e);
    try {
        reg.emplace<Position>(e);
        FAIL() << "expected component_exists";
    } catch (const ecs_error& err) {
        EXPECT_EQ(err.why(), reason::component_exists);
    }
}

TEST_F(RegistryTest, StaleIdIsReportedAndNeverTouchesTheNewOwner) {
    const auto old_id = reg.create();
    reg.emplace<Position>(old_id, {1, 1});
    reg.destroy(old_id);
    const auto new_id = reg.create();
    reg.emplace<Position>(new_id, {9, 9});
    ASSERT_EQ(index_of(old_id), index_of(new_id));

    try {
        reg.insert_json(old_id, reg.id_of<Position>(), {{"x", 0}});
        FAIL() << "expected no_such_entity";
    } catch (const ecs_error& err) {
        EXPECT_EQ(err.why(), reason::no_such_entity);
        EXPECT_NE(std::string(err.what()).find("stale"), std::string::npos);
    }
    EXPECT_THROW(reg.destroy(old_id), ecs_error);
    EXPECT_THROW(reg.remove<Position>(old_id), ecs_error);
    EXPECT_FALSE(reg.has<Position>(old_id));
    EXPECT_FLOAT_EQ(reg.get<Position>(new_id).x, 9);
    EXPECT_TRUE(reg.alive(new_id));
}

TEST_F(RegistryTest, UnknownIdSaysItNeverExisted) {
    try {
        reg.check(make_entity(12345, 1));
        FAIL();
    } catch (const ecs_error& err) {
        EXPECT_NE(std::string(err.what()).find("does not exist"), std::string::npos);
    }
}

TEST_F(RegistryTest, DestroyRemovesEveryComponent) {
    const auto e = reg.create();
    reg.emplace<Position>(e);
    reg.emplace<test::Player>(e);
    reg.destroy(e);
    EXPECT_EQ(reg.storage<Position>().size(), 0u);
    EXPECT_EQ(reg.storage<test::Player>().size(), 0u);
    EXPECT_EQ(reg.size(), 0u);
}

TEST_F(RegistryTest, EachVisitsEntitiesWithAllComponents) {
    const auto a = reg.create();
    const auto b = reg.create();
    reg.emplace<Position>(a);
    reg.emplace<Velocity>(a, {1, 0});
    reg.emplace<Position>(b);
    int visited = 0;
    reg.each<Position, const Velocity>([&](entity_id e, Position& p, const Velocity& v) {
        EXPECT_EQ(e, a);
        p.x += v.x;
        ++visited;
    });
    EXPECT_EQ(visited, 1);
    EXPECT_FLOAT_EQ(reg.get<Position>(a).x, 1);
}

TEST_F(RegistryTest, OwningGroupKeepsPairsAlignedThroughChurn) {
    reg.own_group<Position, Velocity>();
    std::vector<entity_id> ids;
    for (int i = 0; i < 50; ++i) {
        const auto e = reg.create();
        ids.push_back(e);
        reg.emplace<Position>(e, {static_cast<float>(i), 0});
        if (i % 3) reg.emplace<Velocity>(e, {static_cast<float>(i), 0});
    }
    for (int i = 0; i < 50; i += 4) reg.destroy(ids[static_cast<std::size_t>(i)]);
    for (int i = 1; i < 50; i += 5)
        if (reg.has<Velocity>(ids[static_cast<std::size_t>(i)]))
            reg.remove<Velocity>(ids[static_cast<std::size_t>(i)]);

    std::size_t expected = 0;
    for (auto e : ids) expected += reg.has<Position>(e) && reg.has<Velocity>(e);
    EXPECT_EQ(static_cast<std::size_t>(reg.group_size_of(reg.id_of<Position>())), expected);
    std::size_t seen = 0;
    reg.each<Position, Velocity>([&](entity_id, Position& p, Velocity& v) {
        EXPECT_FLOAT_EQ(p.x, v.x);  // both came from the same i: the pair is aligned
        ++seen;
    });
    EXPECT_EQ(seen, expected);
}

TEST_F(RegistryTest, DestroyDuringWalkIsDeferredToFlush) {
    std::vector<entity_id> ids;
    for (int i = 0; i < 10; ++i) {
        ids.push_back(reg.create());
        reg.emplace<Position>(ids.back());
        reg.emplace<Velocity>(ids.back());
    }
    int visited = 0;
    reg.each<Position, Velocity>([&](entity_id e, Position&, Velocity&) {
        reg.destroy(e);
        reg.remove<Velocity>(ids[9]);  // removing from one not walked yet: still visited
        ++visited;
    });
    EXPECT_EQ(visited, 10);
    EXPECT_EQ(reg.size(), 10u);
    EXPECT_GT(reg.deferred_count(), 0u);
    reg.flush();
    EXPECT_EQ(reg.size(), 0u);
}

TEST_F(RegistryTest, AddingDuringWalkNeverInvalidatesIt) {
    for (int i = 0; i < 1000; ++i) {
        const auto e = reg.create();
        reg.emplace<Position>(e);
    }
    int visited = 0;
    reg.each<Position>([&](entity_id, Position& p) {
        const auto fresh = reg.create();
        reg.emplace<Position>(fresh, {5, 5});  // would reallocate the packed array if done now
        p.x = 1;
        ++visited;
    });
    EXPECT_EQ(visited, 1000);
    reg.flush();
    EXPECT_EQ(reg.storage<Position>().size(), 2000u);
}

TEST_F(RegistryTest, JsonFaceValidatesAndChangesNothingOnError) {
    const auto e = reg.create();
    const auto pos = reg.id_of<Position>();
    reg.emplace_json(e, pos, {{"x", 3}});
    EXPECT_EQ(reg.get_json(e, pos), (json{{"x", 3.0}, {"y", 0.0}}));
    EXPECT_THROW(reg.insert_json(e, pos, {{"z", 1}}), ecs_error);
    EXPECT_THROW(reg.insert_json(e, pos, {{"x", "fast"}}), ecs_error);
    EXPECT_THROW(reg.set_field_json(e, pos, "x", json("no")), ecs_error);
    EXPECT_EQ(reg.get_json(e, pos), (json{{"x", 3.0}, {"y", 0.0}}));
    reg.set_field_json(e, pos, "y", 7);
    EXPECT_FLOAT_EQ(reg.get<Position>(e).y, 7);
}

TEST(RegistryTypes, AThousandComponentTypesInOneWorld) {
    registry reg;
    std::vector<component_id> ids;
    for (int i = 0; i < 1024; ++i) ids.push_back(reg.register_dynamic("C" + std::to_string(i), {{"v", i}}));
    const auto e = reg.create();
    reg.emplace_json(e, ids[1023], {{"v", 5}});
    reg.emplace_json(e, ids[7], json::object());  // {} for the defaults (null is only for tags)
    EXPECT_TRUE(reg.has(e, ids[1023]));
    EXPECT_FALSE(reg.has(e, ids[1022]));
    EXPECT_EQ(reg.get_json(e, ids[7]), (json{{"v", 7.0}}));
    auto q = reg.resolve(parse_query("C1023, C7, !C8"));
    int n = 0;
    reg.for_each_match(q, [&](entity_id) { ++n; });
    EXPECT_EQ(n, 1);
}

TEST(RegistryTypes, NameRanksFollowTheNamesAsTheyAreRegistered) {
    // Typed and run-time components, registered out of name order: after each registration the
    // ranks number every name in sorted order (what JSON objects of components are written in).
    registry reg;
    std::vector<std::string> names;
    const auto check = [&] {
        std::vector<std::string> sorted = names;
        std::sort(sorted.begin(), sorted.end());
        ASSERT_EQ(reg.component_count(), names.size());
        for (component_id c = 0; c < reg.component_count(); ++c) {
            const auto want =
                std::lower_bound(sorted.begin(), sorted.end(), reg.storage(c).name()) - sorted.begin();
            EXPECT_EQ(reg.name_rank(c), static_cast<std::uint32_t>(want)) << reg.storage(c).name();
        }
    };
    reg.register_component<Velocity>();
    names.emplace_back(reg.storage(reg.id_of<Velocity>()).name());
    check();
    std::mt19937 rng(9);
    for (int i = 0; i < 40; ++i) {
        const std::string name = "n" + std::to_string(rng() % 100000) + "_" + std::to_string(i);
        reg.register_dynamic(name, i % 3 == 0 ? json::object() : json{{"v", i}});
        names.push_back(name);
        check();
    }
    reg.register_component<Position>();
    names.emplace_back(reg.storage(reg.id_of<Position>()).name());
    reg.register_dynamic("A", json::object());  // before every other name
    names.emplace_back("A");
    check();
}

TEST(RegistryTypes, DuplicateNameIsComponentExists) {
    registry reg;
    reg.register_dynamic("vector2", {{"x", 0}, {"y", 0}});
    try {
        reg.register_dynamic("vector2", {{"x", 0}});
        FAIL();
    } catch (const ecs_error& e) {
        EXPECT_EQ(e.why(), reason::component_exists);
    }
}

TEST_F(RegistryTest, DestroyingFromAFullyOwnedGroupKeepsItAligned) {
    reg.own_group<Position, Velocity>();
    std::vector<entity_id> ids;
    for (int i = 0; i < 40; ++i) {
        ids.push_back(reg.create());
        reg.emplace<Position>(ids.back(), {static_cast<float>(i), 0});
        reg.emplace<Velocity>(ids.back(), {static_cast<float>(i), 0});
    }
    for (int i = 0; i < 40; i += 3) reg.destroy(ids[static_cast<std::size_t>(i)]);
    std::size_t seen = 0;
    reg.each<Position, Velocity>([&](entity_id e, Position& p, Velocity& v) {
        EXPECT_FLOAT_EQ(p.x, v.x);
        EXPECT_EQ(static_cast<float>(std::find(ids.begin(), ids.end(), e) - ids.begin()), p.x);
        ++seen;
    });
    EXPECT_EQ(seen, 26u);
    EXPECT_EQ(reg.group_size_of(reg.id_of<Position>()), 26);
}

TEST_F(RegistryTest, BatchDestroyRecordsEveryDeathAndKeepsGroupsAligned) {
    reg.own_group<Position, Velocity>();
    std::vector<entity_id> ids;
    for (int i = 0; i < 30; ++i) {
        ids.push_back(reg.create());
        reg.emplace<Position>(ids.back(), {static_cast<float>(i), 0});
        if (i % 4) reg.emplace<Velocity>(ids.back(), {static_cast<float>(i), 0});
    }
    std::vector<entity_id> doomed;
    for (int i = 0; i < 30; i += 2) doomed.push_back(ids[static_cast<std::size_t>(i)]);
    doomed.push_back(doomed.front());  // named twice: dies once
    reg.destroy(doomed);
    EXPECT_EQ(reg.size(), 15u);
    EXPECT_EQ(reg.died().size(), 15u);
    EXPECT_EQ(reg.storage<Position>().removed[1].size(), 15u);
    EXPECT_EQ(reg.storage<Velocity>().removed[1].size(), 7u);  // doomed i with i % 4 == 0 had none
    std::size_t seen = 0;
    reg.each<Position, Velocity>([&](entity_id, Position& p, Velocity& v) {
        EXPECT_FLOAT_EQ(p.x, v.x);
        ++seen;
    });
    EXPECT_EQ(static_cast<long>(seen), reg.group_size_of(reg.id_of<Position>()));
    EXPECT_EQ(seen, 15u);  // every odd i has Velocity (i % 4 != 0)
}

TEST_F(RegistryTest, BatchDestroyWithADeadIdChangesNothing) {
    const auto a = reg.create();
    const auto b = reg.create();
    reg.emplace<Position>(a);
    reg.destroy(b);
    const std::vector<entity_id> both{a, b};
    EXPECT_THROW(reg.destroy(both), ecs_error);
    EXPECT_TRUE(reg.alive(a));
    EXPECT_TRUE(reg.has<Position>(a));
}

TEST_F(RegistryTest, BatchDestroyDuringWalkIsDeferred) {
    std::vector<entity_id> ids;
    for (int i = 0; i < 5; ++i) {
        ids.push_back(reg.create());
        reg.emplace<Position>(ids.back());
    }
    int visited = 0;
    reg.each<Position>([&](entity_id, Position&) {
        if (visited++ == 0) reg.destroy(ids);
    });
    EXPECT_EQ(visited, 5);
    EXPECT_EQ(reg.size(), 5u);
    reg.flush();
    EXPECT_EQ(reg.size(), 0u);
}

// A group nesting a third component (Health here; RigidBody in the world): through random churn
// the members with it stay a prefix aligned in all three pools, and each_split_nested visits each
// entity once, in the right part, with its own values.
TEST_F(RegistryTest, ANestedGroupKeepsItsPrefixAlignedThroughChurn) {
    std::vector<entity_id> ids;
    const auto add = [&](int i, bool v, bool h) {
        const auto e = reg.create();
        ids.push_back(e);
        reg.emplace<Position>(e, {static_cast<float>(i), 0});
        if (v) reg.emplace<Velocity>(e, {static_cast<float>(i), 0});
        if (h) reg.emplace<test::Health>(e, {i, i});
    };
    for (int i = 0; i < 60; ++i) add(i, i % 3 != 0, i % 2 == 0);
    // Nesting after the fact realigns what is there.
    reg.own_group<Position, Velocity>();
    reg.nest_in_group<Position, Velocity, test::Health>();
    EXPECT_THROW((reg.nest_in_group<Position, Velocity, test::Player>()), ecs_error) << "one nested type";
    EXPECT_THROW((reg.own_group<test::Health, test::Player>()), ecs_error) << "Health is in a group";

    std::mt19937 rng(5);
    const auto check = [&](int step) {
        std::size_t with_h = 0, without_h = 0, expect_with = 0, expect_without = 0;
        for (auto e : ids) {
            if (!reg.alive(e) || !reg.has<Position>(e) || !reg.has<Velocity>(e)) continue;
            (reg.has<test::Health>(e) ? expect_with : expect_without) += 1;
        }
        reg.each_split_nested<Position, Velocity, const test::Health>(
            [&](Position& p, Velocity& v, const test::Health& h) {
                EXPECT_EQ(p.x, v.x) << "step " << step;
                EXPECT_EQ(static_cast<int>(p.x), h.hp) << "step " << step;
                ++with_h;
            },
            [&](Position& p, const Velocity& v) {
                EXPECT_EQ(p.x, v.x) << "step " << step;
                ++without_h;
            },
            [](std::uint32_t n, auto&& range) {  // in two pieces, as the world's threads would
                range(0U, n / 2);
                range(n / 2, n);
            });
        ASSERT_EQ(with_h, expect_with) << "step " << step;
        ASSERT_EQ(without_h, expect_without) << "step " << step;
        ASSERT_EQ(reg.nested_size_of(reg.id_of<Position>()), static_cast<long>(expect_with));
        ASSERT_EQ(reg.group_size_of(reg.id_of<Position>()), static_cast<long>(expect_with + expect_without));
    };
    check(-1);
    for (int step = 0; step < 600; ++step) {
        const auto e = ids[rng() % ids.size()];
        const int i = static_cast<int>(reg.alive(e) && reg.has<Position>(e) ? reg.get<Position>(e).x : 0);
        switch (rng() % 7) {
            case 0:
                if (reg.alive(e) && reg.has<test::Health>(e)) reg.remove<test::Health>(e);
                break;
            case 1:
                if (reg.alive(e) && !reg.has<test::Health>(e)) reg.emplace<test::Health>(e, {i, i});
                break;
            case 2:
                if (reg.alive(e) && reg.has<Velocity>(e)) reg.remove<Velocity>(e);
                break;
            case 3:
                if (reg.alive(e) && !reg.has<Velocity>(e))
                    reg.emplace<Velocity>(e, {static_cast<float>(i), 0});
                break;
            case 4:
                if (reg.alive(e)) reg.destroy(e);
                break;
            case 5: {
                std::vector<entity_id> batch;
                for (int k = 0; k < 3; ++k) {
                    const auto d = ids[rng() % ids.size()];
                    if (reg.alive(d)) batch.push_back(d);
                }
                reg.destroy(batch);
                break;
            }
            default:
                add(static_cast<int>(ids.size()), rng() % 4 != 0, rng() % 2 == 0);
        }
        check(step);
    }
}

// A batch large enough for registry::destroy_bulk (holes, then one ordered pass per pool, and pools
// that lose everything emptied whole) leaves what destroying the same ids one call each leaves: the
// same entities with the same values, the same group and nested prefixes, aligned, the same tracked
// members and the same change records in the same order. Only the packed order may differ.
// `in_runs`: the world is made in blocks of 64 entities that share their components, some blocks
// with a type past the first 10 (overflow bits), and the batch names ids in order, so that it
// dies in runs (entity_table::destroy_run); otherwise every entity draws its own and the batch is
// shuffled.
static void bulk_destroy_leaves_what_each_leaves(bool in_runs) {
    const auto build = [in_runs](registry& r, std::vector<entity_id>& ids) {
        r.register_component<Position>();
        r.register_component<Velocity>();
        r.register_component<test::Health>();
        r.register_component<test::Player>();
        r.register_component<test::Named>();
        for (int i = 0; i < 8; ++i) r.register_dynamic("Extra" + std::to_string(i), {{"v", i}});
        const component_id late = r.register_dynamic("Late", {{"v", 0}});  // the 14th type: overflow
        r.own_group<Position, Velocity>();
        r.nest_in_group<Position, Velocity, test::Health>();
        const int tracked = r.track(r.resolve(parse_query("Position, !Player")));
        std::mt19937 rng(11);
        std::uint32_t draw = 0;
        for (int i = 0; i < 6000; ++i) {
            const auto e = r.create();
            ids.push_back(e);
            if (!in_runs || i % 64 == 0) draw = static_cast<std::uint32_t>(rng());
            r.emplace<Position>(e, {static_cast<float>(i), 0});
            if (draw % 4 != 0) r.emplace<Velocity>(e, {static_cast<float>(i), 0});
            if ((draw >> 2) % 2 == 0) r.emplace<test::Health>(e, {i, i});
            if (i % 3 == 0) r.emplace<test::Player>(e);  // every Player dies below: emptied whole
            if (i % 7 == 0) r.emplace<test::Named>(e, {"n" + std::to_string(i), {1.0 * i}, {}, true});
            if (in_runs && (draw >> 3) % 5 == 0) r.emplace_json(e, late, {{"v", i}});
        }
        r.end_tick();
        return tracked;
    };
    registry bulk, each;
    std::vector<entity_id> ids, same;
    const int w_bulk = build(bulk, ids);
    const int w_each = build(each, same);
    ASSERT_EQ(ids, same);

    std::vector<entity_id> doomed;
    std::mt19937 rng(3);
    for (std::size_t i = 0; i < ids.size(); ++i)
        if (in_runs ? (i / 100) % 3 != 1 || i % 3 == 0 : i % 3 == 0 || rng() % 3 == 0)
            doomed.push_back(ids[i]);
    if (!in_runs) std::shuffle(doomed.begin(), doomed.end(), rng);
    doomed.push_back(doomed[10]);  // named twice: dies once
    ASSERT_GE(doomed.size(), registry::bulk_destroy_min);
    bulk.destroy(doomed);
    for (auto e : doomed)
        if (each.alive(e)) each.destroy(e);

    EXPECT_EQ(bulk.size(), each.size());
    EXPECT_EQ(bulk.died(), each.died());
    for (auto e : ids) {  // every dead id is stale, with the generation one call each leaves
        EXPECT_EQ(bulk.entities().stale(e), each.entities().stale(e));
        EXPECT_EQ(bulk.why_not_alive(e), each.why_not_alive(e));
    }
    for (component_id c = 0; c < bulk.component_count(); ++c) {
        const auto& a = bulk.storage(c);
        const auto& b = each.storage(c);
        ASSERT_EQ(a.size(), b.size()) << a.name();
        EXPECT_EQ(std::vector<entity_id>(a.removed[1].begin(), a.removed[1].end()),
                  std::vector<entity_id>(b.removed[1].begin(), b.removed[1].end()))
            << a.name();
    }
    EXPECT_EQ(bulk.storage<test::Player>().size(), 0u);
    for (auto e : ids) {
        ASSERT_EQ(bulk.alive(e), each.alive(e));
        if (!bulk.alive(e)) {
            EXPECT_FALSE(bulk.has<Position>(e));
            continue;
        }
        EXPECT_EQ(bulk.get<Position>(e).x, each.get<Position>(e).x);
        ASSERT_EQ(bulk.has<Velocity>(e), each.has<Velocity>(e));
        if (bulk.has<Velocity>(e)) {
            EXPECT_EQ(bulk.get<Velocity>(e).x, each.get<Velocity>(e).x);
        }
        ASSERT_EQ(bulk.has<test::Health>(e), each.has<test::Health>(e));
        if (bulk.has<test::Health>(e)) {
            EXPECT_EQ(bulk.get<test::Health>(e).hp, each.get<test::Health>(e).hp);
        }
        ASSERT_EQ(bulk.has<test::Named>(e), each.has<test::Named>(e));
        if (bulk.has<test::Named>(e)) {
            EXPECT_EQ(bulk.get<test::Named>(e).name, each.get<test::Named>(e).name);
        }
        EXPECT_EQ(bulk.is_member(w_bulk, index_of(e)), each.is_member(w_each, index_of(e)));
    }
    EXPECT_EQ(bulk.member_count(w_bulk), each.member_count(w_each));
    const auto pid = bulk.id_of<Position>();
    EXPECT_EQ(bulk.group_size_of(pid), each.group_size_of(pid));
    EXPECT_EQ(bulk.nested_size_of(pid), each.nested_size_of(pid));
    std::size_t with = 0, without = 0;
    bulk.each_split_nested<Position, Velocity, const test::Health>(
        [&](Position& p, Velocity& v, const test::Health& h) {
            EXPECT_EQ(p.x, v.x);
            EXPECT_EQ(static_cast<int>(p.x), h.hp);
            ++with;
        },
        [&](Position& p, const Velocity& v) {
            EXPECT_EQ(p.x, v.x);
            ++without;
        },
        [](std::uint32_t n, auto&& range) { range(0U, n); });
    EXPECT_EQ(static_cast<long>(with), bulk.nested_size_of(pid));
    EXPECT_EQ(static_cast<long>(with + without), bulk.group_size_of(pid));

    // The pools work on: new entities take the freed slots, and the emptied pool fills again.
    for (int i = 0; i < 100; ++i) {
        const auto e = bulk.create();
        bulk.emplace<Position>(e, {-1, 0});
        bulk.emplace<Velocity>(e, {-1, 0});
        bulk.emplace<test::Player>(e);
        EXPECT_TRUE(bulk.has<test::Player>(e));
    }
    EXPECT_EQ(bulk.storage<test::Player>().size(), 100u);
    EXPECT_EQ(bulk.group_size_of(pid), each.group_size_of(pid) + 100);
    // The freed slots come back in the order one call each queued them, generations bumped alike.
    for (int i = 0; i < 100; ++i) {
        const auto e = each.create();
        each.emplace<Position>(e, {-1, 0});
        each.emplace<Velocity>(e, {-1, 0});
        each.emplace<test::Player>(e);
    }
    std::vector<entity_id> next_bulk, next_each;
    for (int i = 0; i < 500; ++i) {
        next_bulk.push_back(bulk.create());
        next_each.push_back(each.create());
    }
    EXPECT_EQ(next_bulk, next_each);
}
TEST(RegistryBulkDestroy, LeavesWhatOneCallEachLeaves) {
    bulk_destroy_leaves_what_each_leaves(false);
}
TEST(RegistryBulkDestroy, RunsOfIdsLeaveWhatOneCallEachLeaves) {
    bulk_destroy_leaves_what_each_leaves(true);
}
