// world.create/destroy/list/info/pause/resume/step/hash against the real ecsd.
#include <thread>

#include <gtest/gtest.h>

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
    const auto created =
        c_.result("world.create", {{"world", "arena"}, {"tick_hz", 20}, {"gravity", {{"x", 1}, {"y", -2}}}});
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

TEST_F(WorldMethods, BoundsMakeAGroundThatBodiesRestOn) {
    const json bounds{{"left", -10}, {"right", 10}, {"bottom", 0}};
    const auto created = c_.result("world.create", {{"world", "box"}, {"paused", true}, {"bounds", bounds}});
    EXPECT_EQ(created["bounds"], (json{{"left", -10.0}, {"right", 10.0}, {"bottom", 0.0}, {"top", nullptr}}));
    // The CI example of docs/ecsctl.md: a RigidBody alone falls, here onto the ground.
    const auto e = c_.result(
        "world.spawn_entity",
        {{"world", "box"},
         {"components", {{"Position", {{"x", 0}, {"y", 10}}}, {"RigidBody", json::object()}}}})["entity"];
    (void)c_.result("world.step", {{"world", "box"}, {"ticks", 600}});
    const auto c = c_.result("world.get_components", {{"world", "box"}, {"entity", e}})["components"];
    EXPECT_EQ(c["Position"]["y"], 0.0);
    EXPECT_EQ(c["Velocity"]["y"], 0.0);
    EXPECT_EQ(reason_of(c_.call("world.create", {{"world", "bad"}, {"bounds", {{"left", 1}, {"right", 0}}}})),
              "invalid_value");
    EXPECT_EQ(reason_of(c_.call("world.create", {{"world", "bad"}, {"bounds", {{"floor", 0}}}})),
              "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.info", {{"world", "bad"}})), "no_such_world")
        << "a refused world is not made";
}

TEST_F(WorldMethods, AnOptionalTermFiltersNothingAndWatchCarriesIt) {
    (void)c_.result("world.create", {{"world", "opt"}, {"paused", true}});
    const auto a =
        c_.result("world.spawn_entity",
                  {{"world", "opt"},
                   {"components", {{"Position", json::object()}, {"Health", json::object()}}}})["entity"];
    (void)c_.result("world.spawn_entity", {{"world", "opt"}, {"components", {{"Position", json::object()}}}});
    EXPECT_EQ(c_.result("world.query", {{"world", "opt"}, {"query", "Position, ?Health"}})["total"], 2);
    EXPECT_EQ(
        c_.result("world.query",
                  {{"world", "opt"}, {"query", {{"all", {"Position"}}, {"optional", {"Health"}}}}})["total"],
        2);
    const auto w = c_.result("world.watch", {{"world", "opt"}, {"query", "Position, ?Health"}});
    ASSERT_EQ(w["entities"].size(), 2u);
    EXPECT_EQ(w["entities"][0]["entity"], a);
    EXPECT_TRUE(w["entities"][0]["components"].contains("Health")) << w;
    EXPECT_FALSE(w["entities"][1]["components"].contains("Health")) << w;
    EXPECT_EQ(reason_of(c_.call("world.query", {{"world", "opt"}, {"query", "Position, ?Nope"}})),
              "no_such_component");
}

TEST_F(WorldMethods, DescribeEntityShowsComponentsSystemsAndRecentChanges) {
    (void)c_.result("world.create", {{"world", "d"}, {"paused", true}});
    const auto e = c_.result(
        "world.spawn_entity",
        {{"world", "d"},
         {"components", {{"Position", {{"x", 0}, {"y", 10}}}, {"RigidBody", json::object()}}}})["entity"];
    (void)c_.result("world.step", {{"world", "d"}, {"ticks", 3}});
    (void)c_.result("world.remove_components",
                    {{"world", "d"}, {"entity", e}, {"components", {"RigidBody"}}});
    const auto d = c_.result("world.describe_entity", {{"world", "d"}, {"entity", e}});
    EXPECT_EQ(d["entity"], e);
    EXPECT_TRUE(d["components"].contains("Velocity")) << "added with the RigidBody";
    EXPECT_FALSE(d["components"].contains("RigidBody"));
    EXPECT_EQ(d["systems"], json({"movement", "bounds", "cleanup"}));
    EXPECT_EQ(d["changes"]["removed"], json({"RigidBody"}));
    EXPECT_EQ(d["changes"]["changed"], json({"Position", "Velocity"}))
        << "movement wrote both in the last tick";
    EXPECT_EQ(d["changes"]["added"], json::array()) << "added three ticks ago: out of the window";
    EXPECT_EQ(reason_of(c_.call("world.describe_entity", {{"world", "d"}, {"entity", 12345}})),
              "no_such_entity");
}

// Issue 44: the hurt, for regeneration (Health.hp < Health.max), in both forms; and a list compared
/// The ids of a world.query answer, in its order.
json ids(const json& answer) {
    json out = json::array();
    for (const auto& e : answer["entities"]) out.push_back(e["entity"]);
    return out;
}

// whole with == and != (Contacts.entities != []).
TEST_F(WorldMethods, AFieldComparesWithAnotherFieldOfTheSameEntity) {
    (void)c_.result("world.create", {{"world", "ff"}, {"paused", true}});
    const auto spawn = [&](double hp, double max) {
        return c_.result(
            "world.spawn_entity",
            {{"world", "ff"}, {"components", {{"Health", {{"hp", hp}, {"max", max}}}}}})["entity"];
    };
    const auto hurt = spawn(40, 100);
    spawn(100, 100);
    const auto also_hurt = spawn(5, 50);
    EXPECT_EQ(ids(c_.result("world.query", {{"world", "ff"}, {"query", "Health.hp < Health.max"}})),
              json({hurt, also_hurt}));
    const json object{{"where", {{{"field", "Health.hp"}, {"op", "<"}, {"other", "Health.max"}}}}};
    EXPECT_EQ(ids(c_.result("world.query", {{"world", "ff"}, {"query", object}})), json({hurt, also_hurt}));
    EXPECT_EQ(ids(c_.result("world.query", {{"world", "ff"}, {"query", "Health.hp == Health.max"}})).size(),
              1u);
    const auto bad = c_.call("world.query", {{"world", "ff"}, {"query", "Health.hp < Health.maxx"}});
    EXPECT_EQ(reason_of(bad), "invalid_params") << bad;
    EXPECT_NE(bad["error"]["message"].get<std::string>().find("maxx"), std::string::npos) << bad;
    const auto at = c_.call("world.query", {{"world", "ff"}, {"query", "Health, Health.hp < boss"}});
    EXPECT_NE(at["error"]["message"].get<std::string>().find("character 21"), std::string::npos) << at;
}

// Issue 44: a BRP-shaped world.query was refused while the docs promised BRP clients work.
TEST_F(WorldMethods, AQueryInTheBevyRemoteProtocolsShapeIsAnsweredAsBrpAnswers) {
    (void)c_.result("world.create", {{"world", "brp"}, {"paused", true}});
    const auto spawn = [&](const json& components) {
        return c_.result("world.spawn_entity", {{"world", "brp"}, {"components", components}})["entity"];
    };
    const auto walker =
        spawn({{"Position", {{"x", 1}, {"y", 2}}}, {"Velocity", json::object()}, {"Health", json::object()}});
    const auto rock = spawn({{"Position", json::object()}});
    spawn({{"Position", json::object()}, {"Frozen", json::object()}});
    const auto r =
        c_.result("world.query",
                  {{"world", "brp"},
                   {"data", {{"components", {"Position"}}, {"option", {"Health"}}, {"has", {"Velocity"}}}},
                   {"filter", {{"without", {"Frozen"}}}},
                   {"strict", false}});
    ASSERT_TRUE(r.is_array()) << r;
    ASSERT_EQ(r.size(), 2u) << r;
    EXPECT_EQ(r[0]["entity"], walker);
    EXPECT_EQ(r[0]["components"]["Position"]["x"], 1.0);
    EXPECT_TRUE(r[0]["components"].contains("Health")) << "an option is shown where present";
    EXPECT_FALSE(r[0]["components"].contains("Velocity")) << "has only reports presence";
    EXPECT_EQ(r[0]["has"]["Velocity"], true);
    EXPECT_EQ(r[1]["entity"], rock);
    EXPECT_EQ(r[1]["has"]["Velocity"], false);
    EXPECT_FALSE(r[1]["components"].contains("Health"));
    const auto with = c_.result("world.query", {{"world", "brp"}, {"filter", {{"with", {"Velocity"}}}}});
    ASSERT_EQ(with.size(), 1u) << with;
    EXPECT_EQ(with[0]["entity"], walker);
    EXPECT_EQ(reason_of(c_.call("world.query", {{"world", "brp"}, {"query", "*"}, {"data", json::object()}})),
              "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.query", {{"world", "brp"}})), "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.query", {{"world", "brp"}, {"data", {{"components", {"Nope"}}}}})),
              "no_such_component");
}

TEST_F(WorldMethods, ValueFiltersWorkInTextAndObjectFormInQueryAndWatch) {
    (void)c_.result("world.create", {{"world", "vf"}, {"paused", true}});
    const auto spawn = [&](double hp, const char* kind) {
        return c_.result("world.spawn_entity",
                         {{"world", "vf"},
                          {"components", {{"Health", {{"hp", hp}}}, {"AI", {{"kind", kind}}}}}})["entity"];
    };
    const auto weak = spawn(20, "slime");
    spawn(80, "slime");
    const auto boss = spawn(40, "boss");
    EXPECT_EQ(ids(c_.result("world.query", {{"world", "vf"}, {"query", "Health.hp < 50"}})),
              json({weak, boss}));
    EXPECT_EQ(
        ids(c_.result("world.query", {{"world", "vf"}, {"query", R"(Health.hp < 50, AI.kind == "boss")"}})),
        json({boss}));
    const json object{{"where",
                       {{{"field", "AI.kind"}, {"op", "!="}, {"value", "boss"}},
                        {{"field", "Health.hp"}, {"op", "<="}, {"value", 20}}}}};
    EXPECT_EQ(ids(c_.result("world.query", {{"world", "vf"}, {"query", object}})), json({weak}));
    EXPECT_EQ(reason_of(c_.call("world.query", {{"world", "vf"}, {"query", "Health.mana < 5"}})),
              "invalid_params");
    EXPECT_EQ(reason_of(c_.call("world.query", {{"world", "vf"}, {"query", "Health.hp < true"}})),
              "invalid_params");
    EXPECT_EQ(reason_of(c_.call(
                  "world.query",
                  {{"world", "vf"}, {"query", {{"where", {{{"field", "hp"}, {"op", "<"}, {"value", 1}}}}}}})),
              "invalid_params");
    // A watch follows the filter: an entity healed past it leaves as unmatched, one hurt under it enters.
    line_client watcher(server_.port());
    const auto w = watcher.result("world.watch", {{"world", "vf"}, {"query", "Health.hp < 50"}});
    ASSERT_EQ(w["entities"].size(), 2u);
    (void)c_.result(
        "world.mutate_components",
        {{"world", "vf"}, {"entity", weak}, {"component", "Health"}, {"path", "hp"}, {"value", 90}});
    (void)c_.result("world.step", {{"world", "vf"}});
    const auto note = watcher.read_json(std::chrono::seconds(2));
    ASSERT_EQ(note.value("method", ""), "world.watch") << note;
    EXPECT_EQ(note["params"]["left"][0]["entity"], weak);
    EXPECT_EQ(note["params"]["left"][0]["reason"], "unmatched");
}

TEST_F(WorldMethods, AMutateAnswersWithTheComponentAsGetReadsIt) {
    // mutate's answer is written as text: it must be the JSON the tree gave, for typed components
    // (doubles, strings, nested fields) and run-time ones (numbers, strings, booleans).
    (void)c_.result("world.create", {{"world", "mt"}, {"paused", true}});
    (void)c_.result("world.register_component",
                    {{"world", "mt"},
                     {"name", "Loot"},
                     {"fields", {{"gold", 0}, {"label", "none"}, {"cursed", false}, {"weight", 0.5}}}});
    const auto e = c_.result("world.spawn_entity", {{"world", "mt"},
                                                    {"components",
                                                     {{"Position", {{"x", 1.25}, {"y", -3}}},
                                                      {"Name", {{"name", "q\"uote"}}},
                                                      {"Health", json::object()},
                                                      {"Loot", json::object()}}}})["entity"];
    const json edits =
        json::array({json{"Position", "x", 0.1}, json{"Position", "/y", 123456.789e-3},
                     json{"Health", "hp", 7}, json{"Name", "name", "tab\there"},
                     json{"Loot", "gold", 123456789012}, json{"Loot", "label", "\u00e9t\u00e9"},
                     json{"Loot", "cursed", true}, json{"Loot", "weight", -2.5e-7}});
    for (const auto& edit : edits) {
        c_.send_json({{"jsonrpc", "2.0"},
                      {"id", 7},
                      {"method", "world.mutate_components"},
                      {"params",
                       {{"world", "mt"},
                        {"entity", e},
                        {"component", edit[0]},
                        {"path", edit[1]},
                        {"value", edit[2]}}}});
        const auto line = c_.read_line();
        ASSERT_TRUE(line.has_value()) << edit;
        const auto answer = json::parse(*line);
        ASSERT_TRUE(answer.contains("result")) << *line;
        const auto got =
            c_.result("world.get_components", {{"world", "mt"}, {"entity", e}, {"components", {edit[0]}}});
        EXPECT_EQ(answer["result"],
                  (json{{"component", edit[0]}, {"entity", e}, {"value", got["components"][edit[0]]}}))
            << *line;
        const auto at = line->find(R"("result":)");
        ASSERT_NE(at, std::string::npos);
        const auto text = line->substr(at + 9, line->size() - at - 10);  // up to the envelope's }
        EXPECT_EQ(text, answer["result"].dump()) << "keys in json::dump() order, nothing else in the text";
    }
}

TEST_F(WorldMethods, ASpawnAnswersWithTheIdAsText) {
    // spawn_entity writes its answer as text: exactly the JSON the tree gave, with and without
    // components (absent components spawn a bare entity), and its id names the entity spawned.
    (void)c_.result("world.create", {{"world", "sp"}, {"paused", true}});
    for (const json& params :
         {json{{"world", "sp"}}, json{{"world", "sp"}, {"components", json::object()}},
          json{{"world", "sp"}, {"components", {{"Position", {{"x", 2.5}, {"y", -1.0}}}}}}}) {
        c_.send_json({{"jsonrpc", "2.0"}, {"id", 9}, {"method", "world.spawn_entity"}, {"params", params}});
        const auto line = c_.read_line();
        ASSERT_TRUE(line.has_value()) << params;
        const auto answer = json::parse(*line);
        ASSERT_TRUE(answer.contains("result")) << *line;
        const auto e = answer["result"]["entity"];
        ASSERT_TRUE(e.is_number_unsigned()) << *line;
        const auto at = line->find(R"("result":)");
        ASSERT_NE(at, std::string::npos);
        EXPECT_EQ(line->substr(at + 9, line->size() - at - 10), json({{"entity", e}}).dump());
        const auto got = c_.result("world.get_components", {{"world", "sp"}, {"entity", e}});
        EXPECT_EQ(got["components"], params.value("components", json::object())) << *line;
    }
}

TEST_F(WorldMethods, ANameIsUniqueAndStandsWhereverAnIdIsTaken) {
    (void)c_.result("world.create", {{"world", "n"}, {"paused", true}});
    const json hero_components{{"Name", {{"name", "hero"}}},
                               {"Position", json::object()},
                               {"Health", {{"hp", 10}}},
                               {"Player", json::object()}};
    const auto hero =
        c_.result("world.spawn_entity", {{"world", "n"}, {"components", hero_components}})["entity"];
    EXPECT_EQ(c_.result("world.get_components", {{"world", "n"}, {"entity", "hero"}})["entity"], hero);
    EXPECT_EQ(reason_of(c_.call("world.spawn_entity",
                                {{"world", "n"}, {"components", {{"Name", {{"name", "hero"}}}}}})),
              "invalid_value")
        << "a second hero";
    EXPECT_EQ(
        reason_of(c_.call("world.spawn_entities",
                          {{"world", "n"},
                           {"entities", {{{"Name", {{"name", "twin"}}}}, {{"Name", {{"name", "twin"}}}}}}})),
        "invalid_value")
        << "twins in one batch";
    EXPECT_EQ(c_.result("world.query", {{"world", "n"}, {"query", "Name"}})["total"], 1)
        << "nothing of a refused request stays";
    EXPECT_EQ(reason_of(c_.call("world.spawn_entity",
                                {{"world", "n"}, {"components", {{"Name", {{"name", "123"}}}}}})),
              "invalid_value")
        << "a name never reads as an id";
    (void)c_.result(
        "world.mutate_components",
        {{"world", "n"}, {"entity", "hero"}, {"component", "Health"}, {"path", "hp"}, {"value", 5}});
    EXPECT_EQ(
        c_.result("world.get_components", {{"world", "n"}, {"entity", hero}})["components"]["Health"]["hp"],
        5.0);
    const auto foe = c_.result(
        "world.spawn_entity",
        {{"world", "n"},
         {"components",
          {{"Name", {{"name", "foe"}}}, {"Health", json::object()}, {"AI", json::object()}}}})["entity"];
    EXPECT_EQ(
        reason_of(c_.call(
            "world.mutate_components",
            {{"world", "n"}, {"entity", "foe"}, {"component", "Name"}, {"path", "name"}, {"value", "hero"}})),
        "invalid_value");
    // near(NAME, r) centres on the named entity, in text and object form, as near(ID, r) does.
    const auto close = c_.result(
        "world.spawn_entity",
        {{"world", "n"},
         {"components", {{"Position", {{"x", 1}, {"y", 0}}}, {"Health", json::object()}}}})["entity"];
    (void)c_.result("world.spawn_entity",
                    {{"world", "n"}, {"components", {{"Position", {{"x", 50}, {"y", 0}}}}}});
    const auto ids_of = [](const json& result) {
        std::vector<json> ids;
        for (const auto& row : result["entities"]) ids.push_back(row["entity"]);
        return ids;
    };
    const std::vector<json> near_hero{hero, close};
    EXPECT_EQ(ids_of(c_.result("world.query", {{"world", "n"}, {"query", "near(hero, 2)"}})), near_hero);
    EXPECT_EQ(ids_of(c_.result("world.query", {{"world", "n"}, {"query", R"(Health, near("hero", 2))"}})),
              near_hero);
    EXPECT_EQ(ids_of(c_.result("world.query",
                               {{"world", "n"}, {"query", {{"near", {{"entity", "hero"}, {"r", 2}}}}}})),
              near_hero);
    EXPECT_EQ(ids_of(c_.result(
                  "world.query",
                  {{"world", "n"}, {"query", "near(" + std::to_string(hero.get<std::uint64_t>()) + ", 2)"}})),
              near_hero)
        << "ids keep working";
    EXPECT_EQ(reason_of(c_.call("world.query", {{"world", "n"}, {"query", "near(nobody, 2)"}})),
              "no_such_entity");
    (void)c_.result("world.despawn_entity", {{"world", "n"}, {"entity", close}});
    EXPECT_EQ(c_.result("world.cast_spell",
                        {{"world", "n"}, {"caster", "hero"}, {"spell", "kill_all_monsters"}})["caster"],
              hero);
    (void)c_.result("world.step", {{"world", "n"}});
    EXPECT_EQ(reason_of(c_.call("world.get_components", {{"world", "n"}, {"entity", foe}})),
              "no_such_entity");
    EXPECT_EQ(reason_of(c_.call("world.get_components", {{"world", "n"}, {"entity", "foe"}})),
              "no_such_entity")
        << "the name died with it";
    // The name is free again once its owner is gone.
    const auto again = c_.result("world.spawn_entity",
                                 {{"world", "n"}, {"components", {{"Name", {{"name", "foe"}}}}}})["entity"];
    EXPECT_EQ(c_.result("world.despawn_entity", {{"world", "n"}, {"entity", "foe"}})["entity"], again);
}

TEST(DemoWorld, DemoFillsTheDefaultWorldWithAScheneThatMoves) {
    ecsd_server server({"--demo"});
    line_client c(server.port());
    const auto info = c.result("world.info");
    EXPECT_GT(info["entities"].get<int>(), 10);
    EXPECT_EQ(info["bounds"]["bottom"], 0.0);
    const auto before = c.result("world.query", {{"query", "Position, Velocity"}, {"limit", 1000}});
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    const auto after = c.result("world.query", {{"query", "Position, Velocity"}, {"limit", 1000}});
    ASSERT_EQ(before["entities"].size(), after["entities"].size());
    int moved = 0;
    for (std::size_t i = 0; i < after["entities"].size(); ++i)
        moved +=
            before["entities"][i]["components"]["Position"] != after["entities"][i]["components"]["Position"];
    EXPECT_GT(moved, 5) << "a newcomer sees the default world move";
    EXPECT_FALSE(c.result("world.list_prefabs")["prefabs"].empty());
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

// world.create {threads} and --sim-threads: worlds big enough to be split tick to the same hash
// at 1, 2 and 4 threads (ecsd under TSan runs this too). 70,000 movers make four pieces.
TEST(SimThreads, WorldsOnOneTwoAndFourThreadsTickToTheSameHash) {
    ecsd_server server({"--sim-threads", "2"});
    line_client c(server.port());
    EXPECT_EQ(c.result("world.info")["threads"], 2) << "the default world takes --sim-threads";
    EXPECT_EQ(reason_of(c.call("world.create", {{"world", "x"}, {"threads", 0}})), "invalid_params");
    EXPECT_EQ(reason_of(c.call("world.create", {{"world", "x"}, {"threads", 65}})), "invalid_params");
    EXPECT_EQ(reason_of(c.call("world.info", {{"world", "x"}})), "no_such_world");
    const std::vector<std::pair<std::string, int>> worlds{{"t1", 1}, {"t2", 2}, {"t4", 4}};
    const json mover = {{"Position", {{"x", 1}, {"y", 100}}},
                        {"Velocity", {{"x", 1}, {"y", 0}}},
                        {"RigidBody", json::object()}};
    for (const auto& [name, threads] : worlds) {
        const auto created =
            c.result("world.create",
                     {{"world", name}, {"paused", true}, {"threads", threads}, {"bounds", {{"bottom", 0}}}});
        EXPECT_EQ(created["threads"], threads);
        (void)c.result("world.define_prefab", {{"world", name}, {"name", "mover"}, {"components", mover}});
        (void)c.result("world.spawn_prefab", {{"world", name}, {"name", "mover"}, {"count", 70000}});
        // Colliders on a grid 0.9 m apart with radius 0.5: each touches its neighbours.
        for (int batch = 0; batch < 6; ++batch) {  // 18,000: four pieces of the search
            json list = json::array();
            for (int i = batch * 3000; i < (batch + 1) * 3000; ++i)
                list.push_back({{"Position", {{"x", (i % 100) * 0.9}, {"y", 1 + (i / 100) * 0.9}}},
                                {"Velocity", {{"x", (i % 5) - 2}, {"y", (i % 3) - 1}}},
                                {"RigidBody", {{"restitution", 0.8}}},
                                {"Collider", {{"radius", 0.5}}}});
            (void)c.result("world.spawn_entities", {{"world", name}, {"entities", list}});
        }
    }
    std::string hash;
    for (int round = 0; round < 3; ++round) {
        for (const auto& [name, threads] : worlds) {
            (void)c.result("world.step", {{"world", name}, {"ticks", 10}});
            const auto h = c.result("world.hash", {{"world", name}});
            if (name == "t1") {
                EXPECT_NE(h["hash"], hash) << "the world moved";
                hash = h["hash"].get<std::string>();
            }
            EXPECT_EQ(h["hash"], hash) << name << " after round " << round;
        }
    }
}

}  // namespace
}  // namespace ecsd::test
