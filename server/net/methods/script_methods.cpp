// world.define_system, world.remove_system, world.define_spell, world.remove_spell, and the actions
// (world.define_action, remove_action, call_action, list_actions): game logic in Lua 5.4 that runs
// in the world's pipeline or when a client calls it (world/script.hpp). The limits on what a script may do
// are server flags
// (--script-instructions, --script-memory, --max-scripts, --max-script-bytes).
#include <algorithm>

#include "methods.hpp"
#include "methods/schemas.hpp"
#include "rpc/method_table.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

method_answer define_system(method_context& ctx) {
    world::script_source src;
    src.name = ctx.params.at("name").get<std::string>();
    src.query = ctx.params.at("query").get<std::string>();
    src.phase = world::script_phase(ctx.params.at("phase").get<std::string>());
    src.order = ctx.params.value("order", 0);
    src.every = ctx.params.value("every", 1U);
    src.source = ctx.params.at("source").get<std::string>();
    const bool replaced = [&] {
        for (const auto& s : ctx.world().systems())
            if (s.name == src.name) return true;
        return false;
    }();
    ctx.world().define_system(src);
    return {{"name", src.name}, {"replaced", replaced}, {"from_tick", ctx.world().tick() + 1}};
}

method_answer remove_system(method_context& ctx) {
    const auto name = ctx.params.at("name").get<std::string>();
    ctx.world().remove_system(name);
    return {{"name", name}, {"removed", true}};
}

method_answer define_spell(method_context& ctx) {
    world::script_source src;
    src.name = ctx.params.at("name").get<std::string>();
    src.source = ctx.params.at("source").get<std::string>();
    const bool replaced = ctx.world().find_spell(src.name) != nullptr;
    ctx.world().define_spell(src);
    return {{"name", src.name}, {"replaced", replaced}};
}

method_answer remove_spell(method_context& ctx) {
    const auto name = ctx.params.at("name").get<std::string>();
    ctx.world().remove_spell(name);
    return {{"name", name}, {"removed", true}};
}

method_answer define_action(method_context& ctx) {
    world::script_source src;
    src.name = ctx.params.at("name").get<std::string>();
    src.source = ctx.params.at("source").get<std::string>();
    const auto& actions = ctx.world().actions();
    const bool replaced = std::any_of(actions.begin(), actions.end(),
                                      [&](const world::action_def& a) { return a.name == src.name; });
    ctx.world().define_action(src);
    return {{"name", src.name}, {"replaced", replaced}};
}

method_answer remove_action(method_context& ctx) {
    const auto name = ctx.params.at("name").get<std::string>();
    ctx.world().remove_action(name);
    return {{"name", name}, {"removed", true}};
}

method_answer call_action(method_context& ctx) {
    // params.caller is the dispatcher's (method_flags::action): the identity, on replay too.
    const auto name = ctx.params.at("name").get<std::string>();
    const auto caller = ctx.params.value("caller", std::string("anonymous"));
    const auto args = ctx.params.value("args", json(nullptr));
    return ctx.world().call_action(name, caller, args);
}

method_answer list_actions(method_context& ctx) {
    return {{"actions", ctx.world().list_actions()}};
}

}  // namespace

void register_script_methods(method_table& table) {
    const json name{
        {"type", "string"}, {"minLength", 1}, {"maxLength", 64}};  // letters, digits, _: checked by the world
    const json source{{"type", "string"}, {"minLength", 1}};
    const auto write = method_flags::world_bound | method_flags::mutating;
    table.add(
        {.name = "world.define_system",
         .summary = "Adds a system written in Lua 5.4 to the pipeline, or replaces the one of that name "
                    "from the next tick on (hot reload).",
         .params = object_schema(
             {{"name", name},
              {"query", {{"type", "string"}, {"minLength", 1}}},
              {"phase", {{"type", "string"}, {"enum", {"input", "simulation", "collision", "post"}}}},
              {"order", {{"type", "integer"}, {"minimum", -1000}, {"maximum", 1000}, {"default", 0}}},
              {"every", {{"type", "integer"}, {"minimum", 1}, {"maximum", 3600}, {"default", 1}}},
              {"source", source}},
             {"name", "query", "phase", "source"}),
         .result = object_schema(
             {{"name", name}, {"replaced", {{"type", "boolean"}}}, {"from_tick", {{"type", "integer"}}}},
             {"name", "replaced"}),
         .flags = write,
         .handler = define_system});
    table.add({.name = "world.remove_system",
               .summary = "Takes a Lua system out of the pipeline (built-in systems stay).",
               .params = object_schema({{"name", name}}, {"name"}),
               .result = object_schema({{"name", name}, {"removed", {{"type", "boolean"}}}}, {"name"}),
               .flags = write,
               .handler = remove_system});
    table.add({.name = "world.define_spell",
               .summary = "Adds (or replaces) a spell written in Lua 5.4; world.cast_spell casts it.",
               .params = object_schema({{"name", name}, {"source", source}}, {"name", "source"}),
               .result = object_schema({{"name", name}, {"replaced", {{"type", "boolean"}}}}, {"name"}),
               .flags = write,
               .handler = define_spell});
    table.add({.name = "world.remove_spell",
               .summary = "Takes a Lua spell out (built-in spells stay); casts of it already queued fail.",
               .params = object_schema({{"name", name}}, {"name"}),
               .result = object_schema({{"name", name}, {"removed", {{"type", "boolean"}}}}, {"name"}),
               .flags = write,
               .handler = remove_spell});
    table.add({.name = "world.define_action",
               .summary = "Adds (or replaces) an action written in Lua 5.4: game logic clients call with "
                          "world.call_action; its chunk returns function(w, caller, args).",
               .params = object_schema({{"name", name}, {"source", source}}, {"name", "source"}),
               .result = object_schema({{"name", name}, {"replaced", {{"type", "boolean"}}}}, {"name"}),
               .flags = write,
               .handler = define_action});
    table.add({.name = "world.remove_action",
               .summary = "Takes an action out.",
               .params = object_schema({{"name", name}}, {"name"}),
               .result = object_schema({{"name", name}, {"removed", {{"type", "boolean"}}}}, {"name"}),
               .flags = write,
               .handler = remove_action});
    table.add({.name = "world.call_action",
               .summary = "Runs an action now, between two ticks, atomically and journaled, as the calling "
                          "identity; answers what it returns. The player role may call it (--action-rate).",
               .params = object_schema({{"name", name}, {"args", json::object()}}, {"name"}),
               .result = json::object(),  // whatever the action returns
               .flags = write | method_flags::action,
               .handler = call_action});
    table.add({.name = "world.list_actions",
               .summary = "The actions of a world, with how many calls applied and failed.",
               .params = object_schema(),
               .result = object_schema({{"actions", {{"type", "array"}}}}, {"actions"}),
               .flags = method_flags::world_bound | method_flags::read_only,
               .handler = list_actions});
}

}  // namespace ecsd::net
