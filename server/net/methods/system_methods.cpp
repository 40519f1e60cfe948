// world.list_systems, world.system_entities, world.enable_system, world.disable_system, world.run_system.
#include "methods.hpp"
#include "methods/schemas.hpp"
#include "rpc/method_table.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

std::string system_name(const method_context& ctx) {
    return ctx.params.at("system").get<std::string>();
}

method_answer list_systems(method_context& ctx) {
    return {{"systems", ctx.world().list_systems()}};
}

method_answer system_entities(method_context& ctx) {
    return ctx.world().system_entities(system_name(ctx), ctx.params.value("limit", std::size_t{100}),
                                       ctx.params.value("offset", std::size_t{0}));
}

method_answer enable_system(method_context& ctx) {
    ctx.world().set_system_enabled(system_name(ctx), true);
    return {{"system", system_name(ctx)}, {"enabled", true}};
}

method_answer disable_system(method_context& ctx) {
    ctx.world().set_system_enabled(system_name(ctx), false);
    return {{"system", system_name(ctx)}, {"enabled", false}};
}

method_answer run_system(method_context& ctx) {
    ctx.world().run_system(system_name(ctx));
    return {{"system", system_name(ctx)}, {"tick", ctx.world().tick()}};
}

}  // namespace

void register_system_methods(method_table& table) {
    const json name = object_schema({{"system", {{"type", "string"}}}}, {"system"});
    const json state =
        object_schema({{"system", {{"type", "string"}}}, {"enabled", {{"type", "boolean"}}}}, {"system"});
    const auto read = method_flags::world_bound | method_flags::read_only;
    const auto write = method_flags::world_bound | method_flags::mutating;
    table.add({.name = "world.list_systems",
               .summary = "Systems in tick order: name, phase, order, enabled, signature, members, timing.",
               .params = object_schema(),
               .result = object_schema({{"systems", {{"type", "array"}}}}, {"systems"}),
               .flags = read,
               .handler = list_systems});
    table.add({.name = "world.system_entities",
               .summary = "The entities a system works on, in id order.",
               .params = object_schema({{"system", {{"type", "string"}}},
                                        {"limit", schemas::page_limit()},
                                        {"offset", schemas::page_offset()}},
                                       {"system"}),
               .result = object_schema({{"entities", {{"type", "array"}}}, {"total", {{"type", "integer"}}}},
                                       {"entities", "total"}),
               .flags = read,
               .handler = system_entities});
    table.add({.name = "world.enable_system",
               .summary = "Puts a system back into the tick.",
               .params = name,
               .result = state,
               .flags = write,
               .handler = enable_system});
    table.add({.name = "world.disable_system",
               .summary = "Leaves a system out of the tick (cleanup cannot be disabled).",
               .params = name,
               .result = state,
               .flags = write,
               .handler = disable_system});
    table.add({.name = "world.run_system",
               .summary = "Runs one system once, now, outside the tick (a spell run as a system, on demand).",
               .params = name,
               .result = object_schema({{"system", {{"type", "string"}}}, {"tick", {{"type", "integer"}}}},
                                       {"system"}),
               .flags = write,
               .handler = run_system});
}

}  // namespace ecsd::net
