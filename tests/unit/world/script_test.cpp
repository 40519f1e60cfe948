// Systems and spells written in Lua (world/script.hpp): the API, the sandbox, budgets, undo of a
// failed run, determinism across thread counts, and scripts kept by snapshots.
#include "world/script.hpp"

#include <string>

#include <gtest/gtest.h>

#include "persist/snapshot.hpp"
#include "persist/snapshot_binary.hpp"
#include "world/world.hpp"

namespace ecsd::world {
namespace {

using ecs::ecs_error;
using ecs::reason;

world_settings paused(unsigned threads = 1) {
    world_settings s;
    s.name = "scripted";
    s.paused = true;
    s.threads = threads;
    return s;
}

script_source sys(std::string name, std::string query, std::string source,
                  system_phase phase = system_phase::simulation, int order = 0) {
    script_source s;
    s.name = std::move(name);
    s.query = std::move(query);
    s.phase = phase;
    s.order = order;
    s.source = std::move(source);
    return s;
}

const char* const regen = R"lua(
return function(w)
  for e in w:each() do
    e.Health.hp = math.min(e.Health.hp + 1, e.Health.max)
  end
end
)lua";

/// @brief Process-wide script limits changed for one test, and put back however the test ends
/// (an ASSERT that returns early included).
class scoped_limits {
  public:
    template <typename F>
    explicit scoped_limits(F&& change) : saved_(current_script_limits()) {
        auto limits = saved_;
        change(limits);
        set_script_limits(limits);
    }
    scoped_limits(const scoped_limits&) = delete;
    scoped_limits& operator=(const scoped_limits&) = delete;
    ~scoped_limits() { set_script_limits(saved_); }

  private:
    script_limits saved_;
};

const system_def* find_system(const world& w, const std::string& name) {
    for (const auto& s : w.systems())
        if (s.name == name) return &s;
    return nullptr;
}

/// @brief A system that fails with `body` disables itself with a reason containing `expect`, and
/// the world keeps ticking with its other systems.
void expect_stopped(const std::string& body, const std::string& expect) {
    world w(paused());
    const auto e = w.spawn({{"Position", {{"x", 0}, {"y", 0}}}, {"Velocity", {{"x", 1}, {"y", 0}}}});
    w.define_system(sys("bad", "Position", "return function(w)\n" + body + "\nend"));
    w.step(1);
    const auto* s = find_system(w, "bad");
    ASSERT_NE(s, nullptr);
    EXPECT_FALSE(s->enabled) << body;
    EXPECT_NE(s->error.find(expect), std::string::npos) << "error: " << s->error;
    w.step(2);  // movement still runs
    EXPECT_DOUBLE_EQ(w.registry().get<Position>(e).x, 3.0 / 60.0);
}

TEST(Script, TheSmallestShapeRegeneratesHealth) {
    world w(paused());
    const auto e = w.spawn({{"Health", {{"hp", 50}, {"max", 100}}}});
    const auto full = w.spawn({{"Health", {{"hp", 100}, {"max", 100}}}});
    w.define_system(sys("regen", "Health", regen));
    w.step(1);
    EXPECT_EQ(w.registry().get<Health>(e).hp, 51);
    EXPECT_EQ(w.registry().get<Health>(full).hp, 100);
    w.step(100);
    EXPECT_EQ(w.registry().get<Health>(e).hp, 100);
    const auto* s = find_system(w, "regen");
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->enabled) << s->error;
    EXPECT_EQ(s->stats.runs(), 101U);
    // list_systems shows it with the built-ins: its phase, signature and members.
    bool listed = false;
    for (const auto& row : w.list_systems()) {
        if (row["name"] != "regen") continue;
        listed = true;
        EXPECT_EQ(row["phase"], "simulation");
        EXPECT_EQ(row["signature"], "Health");
        EXPECT_EQ(row["members"], 2);
        EXPECT_EQ(row["lua"], true);
        EXPECT_TRUE(row["error"].is_null());
    }
    EXPECT_TRUE(listed);
}

TEST(Script, PhaseAndOrderPlaceTheSystemInThePipeline) {
    world w(paused());
    w.define_system(sys("late", "Health", regen, system_phase::simulation, 5));
    w.define_system(sys("early", "Health", regen, system_phase::simulation, -1));
    w.define_system(sys("first", "Health", regen, system_phase::input, 0));
    std::vector<std::string> names;
    for (const auto& s : w.systems()) names.push_back(s.name);
    const auto at = [&](const std::string& n) {
        return std::find(names.begin(), names.end(), n) - names.begin();
    };
    EXPECT_LT(at("spells"), at("first"));  // a phase's built-ins (order 0) first, then user order 0
    EXPECT_LT(at("first"), at("early"));
    EXPECT_LT(at("early"), at("movement"));
    EXPECT_LT(at("movement"), at("late"));
    EXPECT_LT(at("late"), at("collision_detection"));
}

TEST(Script, SpawnDespawnAddRemoveGetNearAndRandom) {
    world w(paused());
    const auto a = w.spawn({{"Position", {{"x", 0}, {"y", 0}}}, {"Health", json::object()}});
    const auto b = w.spawn({{"Position", {{"x", 10}, {"y", 0}}}, {"Health", json::object()}});
    const auto c = w.spawn({{"Position", {{"x", 1}, {"y", 1}}}, {"Lifetime", {{"remaining", 50}}}});
    w.register_component("Mana", {{"points", 5}});
    w.define_system(sys("api", "Health",
                        R"lua(
return function(w)
  assert(w.dt > 0 and w.tick == 0)
  for e in w:each() do
    local near = w:near(e.Position.x, e.Position.y, 2)
    e.Mana = {points = #near}                  -- adds a run-time component
    if e.Position.x > 5 then e.Health = nil end -- removes one
  end
  local c = w:get()lua" + std::to_string(c) +
                            R"lua()
  assert(c and c.id == )lua" +
                            std::to_string(c) + R"lua( and c.Lifetime.remaining == 50)
  assert(c.Health == nil)
  c.Lifetime.remaining = 7                     -- a field write through w:get()
  w:despawn(c)
  assert(w:get(123456789) == nil)
  local id = w:spawn{Position = {x = 5, y = 5}, Appearance = {name = "imp"}}
  local r1, r2, r3 = w:random(), w:random(10), math.random(3, 4)
  assert(r1 >= 0 and r1 < 1 and r2 >= 1 and r2 <= 10 and (r3 == 3 or r3 == 4))
end
)lua"));
    w.step(1);
    const auto* s = find_system(w, "api");
    ASSERT_TRUE(s->enabled) << s->error;
    auto& reg = w.registry();
    EXPECT_EQ(w.get_components(a, std::vector<std::string>{"Mana"})["Mana"]["points"], 2);  // a and c
    EXPECT_EQ(w.get_components(b, std::vector<std::string>{"Mana"})["Mana"]["points"], 1);
    EXPECT_TRUE(reg.has<Health>(a));
    EXPECT_FALSE(reg.has<Health>(b));
    EXPECT_FALSE(reg.alive(c));
    EXPECT_EQ(reg.size(), 3U);  // a, b and the spawned imp
    const auto found = w.query("Appearance", std::nullopt, 10, 0);
    ASSERT_EQ(found["total"], 1);
    EXPECT_EQ(found["entities"][0]["components"]["Appearance"]["name"], "imp");
}

TEST(Script, RandomIsTheSameForTheSameWorldAndTick) {
    const auto roll = [] {
        world w(paused());
        const auto e = w.spawn({{"Health", json::object()}});
        w.define_system(sys("dice", "Health", R"lua(
return function(w) for e in w:each() do e.Health.hp = w:random(1000) + math.random() end end)lua"));
        w.step(3);
        return w.registry().get<Health>(e).hp;
    };
    EXPECT_EQ(roll(), roll());
}

TEST(Script, DefiningTheSameNameAgainReplacesItAtTheNextTick) {
    world w(paused());
    const auto e = w.spawn({{"Health", {{"hp", 10}, {"max", 100}}}});
    w.define_system(sys("regen", "Health", regen));
    w.step(1);
    EXPECT_EQ(w.registry().get<Health>(e).hp, 11);
    w.define_system(sys("regen", "Health",
                        "return function(w) for e in w:each() do e.Health.hp = e.Health.hp + 10 end end"));
    w.step(1);
    EXPECT_EQ(w.registry().get<Health>(e).hp, 21);
    EXPECT_EQ(std::count_if(w.systems().begin(), w.systems().end(),
                            [](const system_def& s) { return s.name == "regen"; }),
              1);
    w.remove_system("regen");
    w.step(1);
    EXPECT_EQ(w.registry().get<Health>(e).hp, 21);
    EXPECT_THROW(w.remove_system("regen"), ecs_error);
    EXPECT_THROW(w.remove_system("movement"), ecs_error);
}

TEST(Script, ASyntaxErrorIsInvalidParamsWithLineAndColumn) {
    world w(paused());
    try {
        w.define_system(sys("broken", "Health", "return function(w)\n  local x = = 1\nend"));
        FAIL() << "a syntax error was accepted";
    } catch (const ecs_error& e) {
        EXPECT_EQ(e.why(), reason::invalid_params);
        // Lua names the line and the token; the column is where that token first stands in the line.
        EXPECT_NE(std::string(e.what()).find("line 2, column 11: unexpected symbol near '='"),
                  std::string::npos)
            << e.what();
    }
    EXPECT_EQ(find_system(w, "broken"), nullptr);
    EXPECT_THROW(w.define_system(sys("notfn", "Health", "return 42")), ecs_error);
    EXPECT_THROW(w.define_system(sys("movement", "Health", regen)), ecs_error);
    EXPECT_THROW(w.define_system(sys("badq", "Health, near(0, 0, 1)", regen)), ecs_error);
    EXPECT_THROW(w.define_system(sys("nocomp", "Nope", regen)), ecs_error);
    EXPECT_THROW(w.define_system(sys("bad name", "Health", regen)), ecs_error);
}

TEST(Script, SandboxEscapesAreRefusedAndTheSystemIsDisabled) {
    expect_stopped("os.execute('touch /tmp/pwned')", "global 'os'");
    expect_stopped("io.open('/etc/passwd')", "global 'io'");
    expect_stopped("require('os')", "global 'require'");
    expect_stopped("load('\\27LuaT\\0')", "global 'load'");  // bytecode (or any text): no load at all
    expect_stopped("string.dump(function() end)", "field 'dump'");
    expect_stopped("debug.getinfo(1)", "global 'debug'");
    expect_stopped("dofile('/etc/passwd')", "global 'dofile'");
    expect_stopped("collectgarbage('stop')", "global 'collectgarbage'");
    expect_stopped("setmetatable({}, {__gc = function() while true do end end})", "__gc");
    expect_stopped("local s = string.format('%p', {})", "%p");
}

TEST(Script, RunawayScriptsAreStoppedWithinTheirBudget) {
    expect_stopped("while true do end", "instruction budget");
    // pcall cannot catch the end of the budget
    expect_stopped("while true do pcall(function() while true do end end) end", "instruction budget");
    // Deep recursion in Lua: the budget or Lua's stack limit ends it, whichever comes first.
    expect_stopped("local function f(n) return f(n + 1) + 1 end f(1)", "bad:2:");
    // Recursion through C (a metamethod calling itself) stops at Lua's C-stack limit, not the thread's.
    expect_stopped("local t = setmetatable({}, {__index = function(t, k) return t[k] end}) local x = t.x",
                   "stack overflow");
    expect_stopped("local t = {} local i = 0 while true do i = i + 1 t[i] = string.rep('x', 1000) .. i end",
                   "memory cap");
    expect_stopped("local s = string.rep('a', 100000) s:find('.-.-.-.-b')", "backtrack");
    expect_stopped("local s = string.rep('a', 5000) string.match(s, '(.-)*(.-)*b')", "backtrack");
}

TEST(Script, AHandleKeptFromAnEarlierRunTouchesNothing) {
    world w(paused());
    const auto a = w.spawn({{"Health", {{"hp", 10}, {"max", 100}}}});
    const auto b = w.spawn({{"Health", {{"hp", 20}, {"max", 100}}}});
    w.define_system(sys("keeper", "Health", R"lua(
local kept, step
return function(w)
  if kept then
    kept.Health.hp = 0          -- a table of the last run: nobody reads it back
    kept.Lifetime = {remaining = 1}
    assert(kept.Name == nil)
    for e in step do end        -- the last run's iterator is over
  end
  step = w:each()
  kept = step()
end
)lua"));
    w.step(3);
    EXPECT_TRUE(find_system(w, "keeper")->enabled) << find_system(w, "keeper")->error;
    EXPECT_EQ(w.registry().get<Health>(a).hp, 10);
    EXPECT_EQ(w.registry().get<Health>(b).hp, 20);
    EXPECT_FALSE(w.registry().has<Lifetime>(a));
}

TEST(Script, RecursionThroughPcallEndsWithoutCrashing) {
    world w(paused());
    w.spawn({{"Health", json::object()}});
    // Each level's pcall catches the C-stack overflow below it: the run ends normally.
    w.define_system(
        sys("deep", "Health", "return function(w) local function f() return pcall(f) end f() end"));
    w.step(3);
    EXPECT_EQ(w.tick(), 3U);
}

TEST(Script, AFailedRunLeavesNoneOfItsWrites) {
    world w(paused());
    for (int i = 0; i < 10; ++i)
        w.spawn({{"Health", {{"hp", 10}, {"max", 100}}}, {"Position", {{"x", i}, {"y", 0}}}});
    w.register_component("Mana", {{"points", 5}});
    const auto before = w.state_hash();
    const auto count = w.registry().size();
    w.define_system(sys("half", "Health", R"lua(
return function(w)
  local n = 0
  for e in w:each() do
    n = n + 1
    e.Health.hp = 1
    e.Mana = {points = 1}
    e.Position = nil
    w:spawn{Health = {}}
    if n == 7 then error("boom") end
  end
end
)lua"));
    w.step(1);
    const auto* s = find_system(w, "half");
    EXPECT_FALSE(s->enabled);
    EXPECT_NE(s->error.find("half:10: boom"), std::string::npos) << s->error;
    EXPECT_EQ(w.registry().size(), count);
    EXPECT_EQ(w.state_hash(), before);
    // Enabled again, it fails again the same way; the error is cleared meanwhile.
    w.set_system_enabled("half", true);
    EXPECT_TRUE(find_system(w, "half")->error.empty());
}

TEST(Script, ABadValueIsARuntimeErrorNotAHalfWrite) {
    world w(paused());
    const auto e = w.spawn({{"RigidBody", json::object()}, {"Health", json::object()}});
    w.define_system(
        sys("neg", "RigidBody", "return function(w) for e in w:each() do e.RigidBody.mass = -1 end end"));
    w.step(1);
    EXPECT_FALSE(find_system(w, "neg")->enabled);
    EXPECT_NE(find_system(w, "neg")->error.find("RigidBody.mass"), std::string::npos);
    EXPECT_EQ(w.registry().get<RigidBody>(e).mass, 1);
}

TEST(Script, SpellsInLuaAreCastLikeTheBuiltIns) {
    world w(paused());
    const auto hero = w.spawn({{"Position", {{"x", 0}, {"y", 0}}}});
    const auto near = w.spawn({{"Position", {{"x", 2}, {"y", 0}}}, {"Health", {{"hp", 50}, {"max", 100}}}});
    const auto far = w.spawn({{"Position", {{"x", 9}, {"y", 0}}}, {"Health", {{"hp", 50}, {"max", 100}}}});
    script_source fireball;
    fireball.name = "fireball";
    fireball.source = R"lua(
return function(w, caster, target, amount)
  for _, id in ipairs(w:near(caster.Position.x, caster.Position.y, 3)) do
    local t = w:get(id)
    if t.Health then t.Health.hp = t.Health.hp - amount end
  end
end
)lua";
    w.define_spell(fireball);
    bool listed = false;
    for (const auto& s : w.list_spells()) listed = listed || s["name"] == "fireball";
    EXPECT_TRUE(listed);
    w.cast_spell(hero, "fireball", 0, 30);
    w.step(1);
    EXPECT_EQ(w.registry().get<Health>(near).hp, 20);
    EXPECT_EQ(w.registry().get<Health>(far).hp, 50);
    // A failing spell is recorded like a built-in's failure and changes nothing.
    fireball.source = "return function(w, c) c.Position.x = 99 error('fizzle') end";
    w.define_spell(fireball);
    w.cast_spell(hero, "fireball", 0, 1);
    w.step(1);
    EXPECT_EQ(w.registry().get<Position>(hero).x, 0);
    EXPECT_NE(w.info()["spell_failures"].dump().find("fizzle"), std::string::npos);
}

// A system casts spells (w:cast): the cast is checked at once and queued like every structural
// change, so the spells system runs it in the next tick; a failed run casts nothing. Spells in Lua
// are removed with remove_spell, and a cast already queued then fails at its tick.
TEST(Script, SystemsCastSpellsAndLuaSpellsAreRemoved) {
    world w(paused());
    const auto hero = w.spawn({{"Position", {{"x", 0}, {"y", 0}}}, {"Player", json::object()}});
    const auto orc = w.spawn({{"Position", {{"x", 1}, {"y", 0}}}, {"Health", {{"hp", 50}, {"max", 100}}}});
    script_source smite;
    smite.name = "smite";
    smite.source =
        "return function(w, caster, target, amount) target.Health.hp = target.Health.hp - amount end";
    w.define_spell(smite);
    // Tick 0 casts (queued to the end of the run: no MagicInput yet inside it); tick 1 smites.
    w.define_system(sys("caster", "Player", R"lua(
return function(w)
  for e in w:each() do
    if w.tick % 2 == 0 then
      w:cast(e, "smite", w:near(1, 0, 0.5)[1], 5)
      assert(not pcall(w.cast, w, e, "smite"), "a second cast in one run is refused")
    end
  end
end
)lua",
                        system_phase::post));
    w.step(1);
    EXPECT_TRUE(w.registry().has<MagicInput>(hero));
    EXPECT_EQ(w.registry().get<Health>(orc).hp, 50);
    w.step(1);
    EXPECT_EQ(w.registry().get<Health>(orc).hp, 45);
    ASSERT_TRUE(find_system(w, "caster")->enabled) << find_system(w, "caster")->error;

    // Refusals are the script's errors, and the failed run casts nothing.
    for (const std::string& bad :
         {std::string("w:cast(e, 'nope')"), std::string("w:cast(e, 'smite', 999)"),
          std::string("w:cast(e, 'smite', nil, -1)"), std::string("w:cast(e, 'smite') error('after')")}) {
        world v(paused());
        const auto p = v.spawn({{"Player", json::object()}});
        v.define_spell(smite);
        v.define_system(sys("c", "Player", "return function(w) for e in w:each() do " + bad + " end end"));
        v.step(1);
        EXPECT_FALSE(find_system(v, "c")->enabled) << bad;
        EXPECT_FALSE(v.registry().has<MagicInput>(p)) << bad;
    }

    // A target that an earlier op of the same run despawns: the cast is dropped, not turned on
    // the caster.
    {
        world v(paused());
        const auto p = v.spawn({{"Player", json::object()}, {"Health", {{"hp", 50}, {"max", 100}}}});
        const auto t = v.spawn({{"Health", {{"hp", 50}, {"max", 100}}}});
        v.define_spell(smite);
        v.define_system(sys("c", "Player",
                            "return function(w) for e in w:each() do w:despawn(" + std::to_string(t) +
                                ") w:cast(e, 'smite', " + std::to_string(t) + ", 5) end end"));
        v.step(1);
        EXPECT_TRUE(find_system(v, "c")->enabled) << find_system(v, "c")->error;
        EXPECT_FALSE(v.registry().alive(t));
        EXPECT_FALSE(v.registry().has<MagicInput>(p));
    }

    // remove_spell: the queued cast fails at its tick, listed in spell_failures.
    w.set_system_enabled("caster", false);
    w.cast_spell(hero, "smite", orc, 5);
    w.remove_spell("smite");
    w.step(1);
    EXPECT_EQ(w.registry().get<Health>(orc).hp, 45);
    EXPECT_NE(w.info()["spell_failures"].dump().find("no such spell"), std::string::npos);
    EXPECT_THROW(w.remove_spell("smite"), ecs_error);
    EXPECT_THROW(w.remove_spell("freeze"), ecs_error);  // a built-in stays
}

/// @brief A world of movers and bodies plus user systems that spawn, despawn and write.
std::uint64_t scripted_hash(unsigned threads, int ticks) {
    world w(paused(threads));
    json list = json::array();
    for (int i = 0; i < 20000; ++i)
        list.push_back({{"Position", {{"x", (i % 200) * 1.5}, {"y", (i / 200) * 1.5}}},
                        {"Velocity", {{"x", (i % 7) - 3}, {"y", (i % 5) - 2}}},
                        {"Collider", {{"radius", 0.5}}},
                        {"Health", {{"hp", i % 100}, {"max", 100}}}});
    w.spawn_many(list);
    w.define_system(sys("regen", "Health", regen));
    w.define_system(sys("churn", "Health, Position", R"lua(
return function(w)
  for e in w:each() do
    if e.Health.hp == 42 and w:random(4) == 1 then w:despawn(e) end
    e.Velocity.x = e.Velocity.x * 0.99 + (w:random() - 0.5) * 0.1
  end
  for i = 1, 3 do
    w:spawn{Position = {x = w:random(100), y = w:random(100)}, Velocity = {x = 1, y = 0},
            Collider = {radius = 0.5}, Health = {hp = 1}}
  end
end
)lua",
                        system_phase::post));
    w.step(static_cast<std::uint64_t>(ticks));
    EXPECT_TRUE(find_system(w, "churn")->enabled) << find_system(w, "churn")->error;
    return w.state_hash();
}

TEST(Script, TheHashAfterNTicksIsTheSameAtOneTwoAndFourThreads) {
    const auto one = scripted_hash(1, 20);
    EXPECT_EQ(one, scripted_hash(2, 20));
    EXPECT_EQ(one, scripted_hash(4, 20));
}

TEST(Script, SnapshotsKeepScriptsAndTheRestoredWorldEvolvesIdentically) {
    world a(paused());
    for (int i = 0; i < 50; ++i)
        a.spawn({{"Position", {{"x", i}, {"y", 0}}},
                 {"Velocity", {{"x", 1}, {"y", 0}}},
                 {"Health", {{"hp", i}, {"max", 100}}}});
    a.define_system(sys("regen", "Health", regen, system_phase::post, 3));
    a.define_system(sys("broken", "Health", "return function(w) error('no') end"));
    script_source heal;
    heal.name = "big_heal";
    heal.source = "return function(w, c, t, amount) t.Health.hp = t.Health.max end";
    a.define_spell(heal);
    a.step(2);
    ASSERT_FALSE(find_system(a, "broken")->enabled);
    const auto json_copy = persist::from_snapshot(persist::to_snapshot(a, 0), "test");
    const auto bytes = persist::binary_snapshot(a, 0, false);
    const auto binary_copy = persist::from_binary_snapshot(bytes, "test");
    for (const auto* b : {json_copy.get(), binary_copy.get()}) {
        ASSERT_NE(find_system(*b, "regen"), nullptr);
        EXPECT_EQ(find_system(*b, "regen")->order, 3);
        EXPECT_FALSE(find_system(*b, "broken")->enabled);
        EXPECT_NE(find_system(*b, "broken")->error.find("no"), std::string::npos);
        EXPECT_NE(b->find_spell("big_heal"), nullptr);
        EXPECT_EQ(b->scripts_json(), a.scripts_json());
    }
    for (int t = 0; t < 30; ++t) {
        a.step(1);
        json_copy->step(1);
        binary_copy->step(1);
        ASSERT_EQ(a.state_hash(), json_copy->state_hash()) << t;
        ASSERT_EQ(a.state_hash(), binary_copy->state_hash()) << t;
    }
}

TEST(Script, RunTimeComponentsReadAndWriteInPlace) {
    world w(paused());
    w.register_component("Mana", {{"points", 5}, {"regen", 0.5}});
    const auto e = w.spawn({{"Mana", json::object()}});
    w.define_system(
        sys("mana", "Mana",
            "return function(w) for e in w:each() do e.Mana.points = e.Mana.points + e.Mana.regen end end"));
    w.step(2);
    EXPECT_EQ(w.get_components(e, std::vector<std::string>{"Mana"})["Mana"]["points"], 6.0);
}

// The iterator reuses one handle and one table per component of its query. A step that replaces,
// removes or loads a component beyond the query must leave the next entity's handle exact.
TEST(Script, TheIteratorsHandleIsExactAfterReplacedRemovedAndExtraComponents) {
    world w(paused());
    std::vector<ecs::entity_id> es;
    for (int i = 0; i < 6; ++i)
        es.push_back(w.spawn({{"Position", {{"x", i}, {"y", 10 * i}}},
                              {"Velocity", {{"x", 0}, {"y", 0}}},
                              {"Health", {{"hp", 40 + i}, {"max", 100}}}}));
    // Entity 1 gets a new Position table, entity 2 loses Velocity, entity 3 reads Health (not in
    // the query); every entity records what its handle showed in Velocity.x, so a table left over
    // from the step before would show.
    w.define_system(sys("mix", "Position, Velocity", R"lua(
return function(w)
  local i = 0
  for e in w:each() do
    i = i + 1
    e.Velocity.x = e.Position.x + e.Position.y
    if i == 2 then
      e.Position = {x = 100, y = 200}
      assert(e.Position.x == 100, "the new table is what the handle shows")
    end
    if i == 3 then
      e.Velocity = nil
      assert(e.Velocity == nil, "a removed component reads nil")
    end
    if i == 4 then e.Velocity.y = e.Health.hp end
    if i == 5 then assert(rawget(e, "Health") == nil, "Health left over from the step before") end
    assert(getmetatable(e) == "entity", "a handle's metatable is not the script's to see")
    assert(not pcall(setmetatable, e, {}), "nor to replace")
  end
end
)lua"));
    w.step(1);
    const auto* s = find_system(w, "mix");
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->enabled) << s->error;
    auto& reg = w.registry();
    EXPECT_DOUBLE_EQ(reg.get<Velocity>(es[0]).x, 0);
    EXPECT_DOUBLE_EQ(reg.get<Velocity>(es[1]).x, 11);
    EXPECT_DOUBLE_EQ(reg.get<Position>(es[1]).x, 100);
    EXPECT_DOUBLE_EQ(reg.get<Position>(es[1]).y, 200);
    EXPECT_FALSE(reg.has<Velocity>(es[2]));
    EXPECT_DOUBLE_EQ(reg.get<Velocity>(es[3]).x, 33);
    EXPECT_DOUBLE_EQ(reg.get<Velocity>(es[3]).y, 43);
    for (const int i : {4, 5}) {
        EXPECT_DOUBLE_EQ(reg.get<Position>(es[i]).x, i) << i;
        EXPECT_DOUBLE_EQ(reg.get<Velocity>(es[i]).x, 11 * i) << i;
        EXPECT_DOUBLE_EQ(reg.get<Velocity>(es[i]).y, 0) << i;
    }
}

// w:near answers from a grid of the run's positions; it must answer exactly what a scan of every
// Position does, for any point and radius, and still after the run moves an entity.
TEST(Script, NearIsExactlyAScanOfEveryPosition) {
    const scoped_limits long_runs([](script_limits& l) { l.instructions = 50'000'000; });  // a long scan
    world w(paused());
    std::uint64_t x = 12345;
    for (int i = 0; i < 400; ++i) {
        x = x * 6364136223846793005ULL + 1442695040888963407ULL;
        const double px = static_cast<double>((x >> 20) % 100000) / 1000.0;
        const double py = static_cast<double>((x >> 40) % 100000) / 1000.0;
        (void)w.spawn({{"Position", {{"x", px}, {"y", py}}}});
    }
    w.define_system(sys("probe", "Position", R"lua(
local function scan(pts, x, y, r)
  local out = {}
  for _, p in ipairs(pts) do
    local dx, dy = p[2] - x, p[3] - y
    if dx * dx + dy * dy <= r * r then out[#out + 1] = p[1] end
  end
  table.sort(out)
  return out
end
local function same(a, b)
  if #a ~= #b then return false end
  for i = 1, #a do if a[i] ~= b[i] then return false end end
  return true
end
local function points(w)
  local pts = {}
  for e in w:each() do pts[#pts + 1] = {e.id, e.Position.x, e.Position.y} end
  return pts
end
return function(w)
  local pts = points(w)
  for i = 1, 300 do
    local x, y = w:random() * 120 - 10, w:random() * 120 - 10
    local r = w:random() * ({0.5, 4, 40})[i % 3 + 1]
    assert(same(w:near(x, y, r), scan(pts, x, y, r)), ("near(%g, %g, %g)"):format(x, y, r))
  end
  assert(#w:near(50, 50, 1e300) == #pts, "everything is within 1e300")
  assert(#w:near(1e300, -1e300, 1) == 0, "nothing is out there")
  -- The run moves one entity: near() sees it where it is now.
  local moved, x0, y0 = pts[1][1], pts[1][2], pts[1][3]
  for e in w:each() do if e.id == moved then e.Position.x = x0 + 1000 end end
  assert(same(w:near(x0 + 1000, y0, 0.5), {moved}), "the moved entity is found where it went")
  for _, id in ipairs(w:near(x0, y0, 0.01)) do assert(id ~= moved, "and not where it was") end
end
)lua"));
    w.step(3);
    const auto* s = find_system(w, "probe");
    ASSERT_NE(s, nullptr);
    EXPECT_TRUE(s->enabled) << s->error;
    EXPECT_EQ(s->stats.runs(), 3U);
}

TEST(Script, LimitsOnScriptsPerWorldAndSourceBytes) {
    const scoped_limits small([](script_limits& l) {
        l.max_scripts = 2;
        l.max_source_bytes = 200;
    });
    world w(paused());
    w.define_system(sys("one", "Health", regen));
    w.define_system(sys("two", "Health", regen));
    w.define_system(sys("two", "Health", regen));  // a replacement is not one more
    EXPECT_THROW(w.define_system(sys("three", "Health", regen)), ecs_error);
    EXPECT_THROW(w.define_system(sys("one", "Health", std::string(201, ' ') + regen)), ecs_error);
}

}  // namespace
}  // namespace ecsd::world
