// Entity, component, query, system, spell and prefab methods against the real ecsd.
#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

class WorldContent : public testing::Test {
  protected:
    void SetUp() override { ASSERT_EQ(c_.result("world.pause")["paused"], true); }
    std::uint64_t spawn(const json& components) {
        return c_.result("world.spawn_entity", {{"components", components}})["entity"].get<std::uint64_t>();
    }
    /// @brief Calls a method whose result the test does not need (result() fails the test on an error).
    void run(std::string_view method, const json& params = nullptr) { (void)c_.result(method, params); }
    ecsd_server server_;
    line_client c_{server_.port()};
};

TEST_F(WorldContent, SpawnGetInsertMutateRemoveDespawn) {
    const auto e = spawn({{"Position", {{"x", 1}}}, {"Player", json::object()}});
    EXPECT_EQ(e, 4294967296u);  // generation 1, slot 0
    auto got = c_.result("world.get_components", {{"entity", e}});
    EXPECT_EQ(got["components"]["Position"], (json{{"x", 1.0}, {"y", 0.0}}));
    EXPECT_EQ(got["components"]["Player"], json::object());

    run("world.insert_components",
        {{"entity", e}, {"components", {{"Velocity", {{"x", 2}}}, {"Position", {{"y", 5}}}}}});
    got = c_.result("world.get_components", {{"entity", e}, {"components", {"Position", "Velocity"}}});
    EXPECT_EQ(got["components"]["Position"], (json{{"x", 0.0}, {"y", 5.0}}));  // replaced whole
    EXPECT_EQ(got["components"]["Velocity"]["x"], 2.0);

    EXPECT_EQ(
        c_.result("world.mutate_components",
                  {{"entity", e}, {"component", "Position"}, {"path", "/x"}, {"value", 9}})["value"]["x"],
        9.0);
    run("world.remove_components", {{"entity", e}, {"components", {"Velocity"}}});
    EXPECT_EQ(c_.result("world.list_components", {{"entity", e}})["components"],
              json({"Position", "Player"}));

    run("world.despawn_entity", {{"entity", e}});
    const auto stale = c_.call("world.get_components", {{"entity", e}});
    EXPECT_EQ(reason_of(stale), "no_such_entity");
    EXPECT_NE(stale["error"]["message"].get<std::string>().find("stale"), std::string::npos);
    const auto next = spawn(json::object());
    EXPECT_NE(next, e);  // slot 0 reused with a new generation: the old id stays dead
    EXPECT_EQ(reason_of(c_.call("world.get_components", {{"entity", e}})), "no_such_entity");
}

TEST_F(WorldContent, DespawnEntitiesIsAllOrNothing) {
    const auto ids =
        c_.result("world.spawn_entities",
                  {{"entities", json::array({json::object(), json::object(), json::object()})}})["entities"];
    const auto a = ids[0].get<std::uint64_t>();
    const auto b = ids[1].get<std::uint64_t>();
    const auto c = ids[2].get<std::uint64_t>();
    run("world.despawn_entity", {{"entity", c}});
    const auto refused = c_.call("world.despawn_entities", {{"entities", {a, c}}});  // c is stale
    EXPECT_EQ(reason_of(refused), "no_such_entity");
    EXPECT_NE(refused["error"]["message"].get<std::string>().find(std::to_string(c)), std::string::npos);
    EXPECT_EQ(c_.result("world.info")["entities"], 2);  // a survived the refused batch
    EXPECT_EQ(reason_of(c_.call("world.despawn_entities", {{"entities", {a, 1.5}}})), "invalid_params");
    EXPECT_EQ(c_.result("world.despawn_entities", {{"entities", {a, b, a}}})["despawned"], 2);
    EXPECT_EQ(c_.result("world.info")["entities"], 0);
    EXPECT_EQ(c_.result("world.despawn_entities", {{"entities", json::array()}})["despawned"], 0);
}

TEST_F(WorldContent, BadInputIsRefusedAndChangesNothing) {
    const auto e = spawn({{"Position", json::object()}});
    const auto before = c_.result("world.hash")["hash"];
    EXPECT_EQ(reason_of(c_.call("world.spawn_entity", {{"components", {{"Nope", json::object()}}}})),
              "no_such_component");
    EXPECT_EQ(reason_of(c_.call("world.spawn_entity", {{"components", {{"Position", {{"x", "far"}}}}}})),
              "invalid_value");
    EXPECT_EQ(reason_of(c_.call("world.spawn_entity", {{"components", {{"Position", {{"z", 1}}}}}})),
              "invalid_value");
    EXPECT_EQ(
        reason_of(c_.call(
            "world.insert_components",
            {{"entity", e}, {"components", {{"Velocity", json::object()}, {"Health", {{"hp", true}}}}}})),
        "invalid_value");
    EXPECT_EQ(reason_of(c_.call("world.remove_components",
                                {{"entity", e}, {"components", {"Position", "Velocity"}}})),
              "no_such_component");
    EXPECT_EQ(
        reason_of(c_.call("world.spawn_entities",
                          {{"entities", {{{"Position", json::object()}}, {{"Bogus", json::object()}}}}})),
        "no_such_component");
    EXPECT_EQ(reason_of(c_.call("world.get_components", {{"entity", 1.5}})), "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.get_components", {{"entity", -1}})), "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.get_components", {{"entity", 9223372036854775808ull}})),
              "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.get_components", {{"entity", 12345}})), "no_such_entity");
    EXPECT_EQ(c_.result("world.hash")["hash"], before);
    EXPECT_EQ(c_.result("world.info")["entities"], 1);
}

TEST_F(WorldContent, SpawnManyAndQueryWithFieldsAndPaging) {
    json list = json::array();
    for (int i = 0; i < 30; ++i) list.push_back({{"Position", {{"x", i}}}, {"Velocity", json::object()}});
    for (int i = 0; i < 5; ++i) list.push_back({{"Position", json::object()}, {"Frozen", json::object()}});
    EXPECT_EQ(c_.result("world.spawn_entities", {{"entities", list}})["entities"].size(), 35u);
    auto r =
        c_.result("world.query",
                  {{"query", "Position, !Frozen"}, {"fields", {"Position"}}, {"limit", 10}, {"offset", 20}});
    EXPECT_EQ(r["total"], 30);
    ASSERT_EQ(r["entities"].size(), 10u);
    EXPECT_EQ(r["entities"][0]["components"]["Position"]["x"], 20.0);
    EXPECT_FALSE(r["entities"][0]["components"].contains("Velocity"));
    r = c_.result("world.query", {{"query", {{"all", {"Position"}}, {"none", {"Velocity"}}}}});
    EXPECT_EQ(r["total"], 5);
    EXPECT_EQ(reason_of(c_.call("world.query", {{"query", "Position,,"}})), "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.query", {{"query", "Unicorn"}})), "no_such_component");
}

TEST_F(WorldContent, ChangeQueriesSeeTheLastTick) {
    const auto a = spawn({{"Position", json::object()}, {"Velocity", {{"x", 1}}}});
    const auto b = spawn({{"Position", json::object()}});
    run("world.step", {{"ticks", 2}});
    auto changed = c_.result("world.query", {{"query", "changed(Position)"}});
    ASSERT_EQ(changed["total"], 1);  // the mover moved; the other was untouched
    EXPECT_EQ(changed["entities"][0]["entity"], a);
    run("world.despawn_entity", {{"entity", b}});
    const auto died = c_.result("world.query", {{"query", "died"}});
    ASSERT_EQ(died["total"], 1);
    EXPECT_EQ(died["entities"][0]["entity"], b);
    run("world.step", {{"ticks", 2}});
    EXPECT_EQ(c_.result("world.query", {{"query", "died"}})["total"], 0);
}

TEST_F(WorldContent, RegisterRuntimeComponentAndUseIt) {
    const auto def =
        c_.result("world.register_component", {{"name", "vector2"}, {"fields", {{"x", 0}, {"y", 0}}}});
    EXPECT_EQ(def["kind"], "runtime");
    EXPECT_EQ(reason_of(c_.call("world.register_component", {{"name", "vector2"}})), "component_exists");
    EXPECT_EQ(reason_of(c_.call("world.register_component", {{"name", "bad name"}})), "invalid_value");
    const auto e = spawn({{"vector2", {{"y", 3}}}});
    EXPECT_EQ(c_.result("world.get_components", {{"entity", e}})["components"]["vector2"],
              (json{{"x", 0.0}, {"y", 3.0}}));
    EXPECT_EQ(c_.result("world.query", {{"query", "vector2"}})["total"], 1);
    bool listed = false;
    const auto all = c_.result("world.list_components");
    for (const auto& c : all["components"]) listed = listed || c["name"] == "vector2";
    EXPECT_TRUE(listed);
}

TEST_F(WorldContent, SystemsListToggleAndRunOnDemand) {
    const auto systems = c_.result("world.list_systems")["systems"];
    ASSERT_EQ(systems.size(), 9u);
    EXPECT_EQ(systems[0]["name"], "spells");
    EXPECT_EQ(systems[5]["name"], "bounds");
    EXPECT_EQ(systems[6]["name"], "rest");
    EXPECT_EQ(systems[8]["name"], "cleanup");
    const auto e = spawn({{"Position", json::object()}, {"Velocity", {{"x", 60}}}});
    run("world.disable_system", {{"system", "movement"}});
    run("world.step");
    EXPECT_EQ(c_.result("world.get_components", {{"entity", e}})["components"]["Position"]["x"], 0.0);
    run("world.run_system", {{"system", "movement"}});
    EXPECT_EQ(c_.result("world.get_components", {{"entity", e}})["components"]["Position"]["x"], 1.0);
    run("world.enable_system", {{"system", "movement"}});
    EXPECT_EQ(c_.result("world.system_entities", {{"system", "movement"}})["entities"], json({e}));
    EXPECT_EQ(reason_of(c_.call("world.run_system", {{"system", "teleport"}})), "no_such_system");
    EXPECT_EQ(reason_of(c_.call("world.disable_system", {{"system", "cleanup"}})), "invalid_value");
}

TEST_F(WorldContent, CastSpellsTakeEffectOnTheNextTick) {
    const auto hero = spawn({{"Player", json::object()}, {"Health", {{"hp", 5}}}});
    const auto orc = spawn({{"Health", json::object()}, {"AI", json::object()}});
    const auto tick = c_.result("world.info")["tick"].get<std::uint64_t>();
    EXPECT_EQ(c_.result("world.cast_spell",
                        {{"caster", hero}, {"spell", "kill_all_monsters"}})["takes_effect_at_tick"],
              tick + 1);
    EXPECT_EQ(c_.result("world.info")["entities"], 2);
    run("world.step");
    EXPECT_EQ(reason_of(c_.call("world.get_components", {{"entity", orc}})), "no_such_entity");
    run("world.cast_spell", {{"caster", hero}, {"spell", "heal"}});
    run("world.step");
    EXPECT_EQ(c_.result("world.get_components", {{"entity", hero}})["components"]["Health"]["hp"], 100.0);
    EXPECT_EQ(reason_of(c_.call("world.cast_spell", {{"caster", hero}, {"spell", "fireball"}})),
              "no_such_spell");
    EXPECT_EQ(c_.result("world.list_spells")["spells"].size(), 5u);
}

TEST_F(WorldContent, PrefabsSpawnWithOverrides) {
    run("world.define_prefab",
        {{"name", "tree"},
         {"components", {{"Position", json::object()}, {"Appearance", {{"name", "oak"}}}}}});
    const auto ids =
        c_.result("world.spawn_prefab",
                  {{"name", "tree"}, {"count", 3}, {"overrides", {{"Position", {{"x", 4}}}}}})["entities"];
    ASSERT_EQ(ids.size(), 3u);
    const auto got = c_.result("world.get_components", {{"entity", ids[1]}})["components"];
    EXPECT_EQ(got["Position"]["x"], 4.0);
    EXPECT_EQ(got["Appearance"]["name"], "oak");
    EXPECT_EQ(reason_of(c_.call("world.spawn_prefab", {{"name", "bush"}})), "no_such_prefab");
    EXPECT_EQ(reason_of(c_.call("world.define_prefab",
                                {{"name", "x"}, {"components", {{"Nope", json::object()}}}})),
              "no_such_component");
    EXPECT_EQ(c_.result("world.list_prefabs")["prefabs"].size(), 1u);
}

}  // namespace
}  // namespace ecsd::test
