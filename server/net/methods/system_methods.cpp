// world.list_systems, world.system_entities, world.enable_system, world.disable_system, world.run_system.
#include "method_table.hpp"
#include "methods.hpp"
#include "methods/schemas.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

std::string system_name(const method_context& ctx) {
    return ctx.params.at("system").get<std::string>();
}

json list_systems(method_context& ctx) {
    return {{"systems", ctx.world().list_systems()}};
}

json system_entities(method_context& ctx) {
    return ctx.world().system_entities(system_name(ctx), ctx.params.value("limit", std::size_t{100}),
                                       ctx.params.value("offset", std::size_t{0}));
}

json enable_system(method_context& ctx) {
    ctx.world().set_system_enabled(system_name(ctx), true);
    return {{"system", system_name(ctx)}, {"enabled", true}};
}

json disable_system(method_context& ctx) {
    ctx.world().set_system_enabled(system_name(ctx), false);
    return {{"system", system_name(ctx)}, {"enabled", false}};
}

json run_system(method_context& ctx) {
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
    table.add({"world.list_systems",
               "Systems in tick order: name, phase, order, enabled, signature, members, timing.",
               object_schema(), object_schema({{"systems", {{"type", "array"}}}}, {"systems"}), read,
               list_systems});
    table.add({"world.system_entities", "The entities a system works on, in id order.",
               object_schema({{"system", {{"type", "string"}}},
                              {"limit", schemas::page_limit()},
                              {"offset", schemas::page_offset()}},
                             {"system"}),
               object_schema({{"entities", {{"type", "array"}}}, {"total", {{"type", "integer"}}}},
                             {"entities", "total"}),
               read, system_entities});
    table.add(
        {"world.enable_system", "Puts a system back into the tick.", name, state, write, enable_system});
    table.add({"world.disable_system", "Leaves a system out of the tick (cleanup cannot be disabled).", name,
               state, write, disable_system});
    table.add({"world.run_system",
               "Runs one system once, now, outside the tick (a spell run as a system, on demand).", name,
               object_schema({{"system", {{"type", "string"}}}, {"tick", {{"type", "integer"}}}}, {"system"}),
               write, run_system});
}

}  // namespace ecsd::net
