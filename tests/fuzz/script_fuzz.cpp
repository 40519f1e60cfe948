// Fuzz target for Lua scripts (world/script.hpp): the input is a script's source, defined as a
// system and as a spell on a small world with built-in and run-time components, then run for a
// few ticks. A script is a stranger's program, so: no crash, no leak, no exception out of the
// world, and a run that fails leaves nothing behind. Each tick is stepped on two identical worlds,
// one with the script; while the script has never succeeded (it fails at its first run, or is
// refused at definition), the two hashes must be equal.
#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <string>

#include <spdlog/spdlog.h>

#include "ecs/error.hpp"
#include "world/script.hpp"
#include "world/world.hpp"

namespace {

namespace world = ecsd::world;
using nlohmann::json;

void check(bool ok) {
    if (!ok) std::abort();
}

std::unique_ptr<world::world> make_world() {
    world::world_settings s;
    s.name = "fuzzed";
    s.paused = true;
    auto w = std::make_unique<world::world>(s);
    w->register_component("Mana", {{"points", 10}, {"tags", json::array()}, {"label", "m"}});
    w->spawn({{"Position", {{"x", 0}, {"y", 0}}}, {"Player", json::object()}, {"Name", {{"name", "hero"}}}});
    for (int i = 0; i < 6; ++i)
        w->spawn({{"Position", {{"x", i}, {"y", 1}}},
                  {"Velocity", {{"x", 1}, {"y", 0}}},
                  {"Health", {{"hp", 10 * i}, {"max", 100}}},
                  {"AI", json::object()},
                  {"Mana", {{"points", i}}}});
    return w;
}

bool failed_first(const world::world& w, const std::string& name) {
    for (const auto& s : w.systems())
        if (s.name == name) return !s.error.empty() && s.stats.runs() <= 1;
    return true;  // not defined: refused
}

}  // namespace

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
    static const bool setup = [] {
        spdlog::set_level(spdlog::level::off);
        world::script_limits l;
        l.instructions = 20'000;  // a loop that never ends costs the fuzzer little
        l.memory_bytes = std::size_t{4} << 20;
        world::set_script_limits(l);
        return true;
    }();
    (void)setup;
    if (size > 4096) return 0;
    const std::string source(reinterpret_cast<const char*>(data), size);
    auto with = make_world();
    auto without = make_world();
    world::script_source sys;
    sys.name = "fuzzed";
    sys.query = "Position, Health";
    sys.source = source;
    bool defined = true;
    try {
        with->define_system(sys);
    } catch (const ecsd::ecs::ecs_error&) {
        defined = false;
    }
    world::script_source spell;
    spell.what = world::script_source::kind::spell;
    spell.name = "zap";
    spell.source = source;
    bool cast = false;
    try {
        with->define_spell(spell);
        with->cast_spell(with->registry().entities().id_of(0), "zap", 0, 1);
        cast = true;
    } catch (const ecsd::ecs::ecs_error&) {
    }
    for (int tick = 0; tick < 3; ++tick) {
        with->step(1);
        without->step(1);
        const bool spell_ok = !cast || !with->info()["spell_failures"].empty();
        if (tick == 0 && spell_ok && (!defined || failed_first(*with, "fuzzed")))
            check(with->state_hash() == without->state_hash());
    }
    (void)with->state_hash();
    return 0;
}
