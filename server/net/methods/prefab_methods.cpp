// world.define_prefab, world.spawn_prefab, world.list_prefabs: named sets of components to spawn from, like a
// createTree helper.
#include "methods.hpp"
#include "methods/schemas.hpp"
#include "rpc/method_table.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

method_answer define_prefab(method_context& ctx) {
    const auto name = ctx.params.at("name").get<std::string>();
    ctx.world().define_prefab(name, ctx.params.at("components"));
    return {{"name", name}};
}

method_answer spawn_prefab(method_context& ctx) {
    return {{"entities", ctx.world().spawn_prefab(ctx.params.at("name").get<std::string>(),
                                                  ctx.params.value("count", std::size_t{1}),
                                                  ctx.params.value("overrides", json()))}};
}

method_answer list_prefabs(method_context& ctx) {
    json out = json::array();
    for (const auto& [name, components] : ctx.world().prefabs())
        out.push_back({{"name", name}, {"components", components}});
    return {{"prefabs", out}};
}

}  // namespace

void register_prefab_methods(method_table& table) {
    const json name{{"type", "string"}, {"minLength", 1}, {"maxLength", 64}};
    table.add({.name = "world.define_prefab",
               .summary = "Defines (or redefines) a named set of components to spawn from.",
               .params = object_schema({{"name", name}, {"components", schemas::component_map()}},
                                       {"name", "components"}),
               .result = object_schema({{"name", name}}, {"name"}),
               .flags = method_flags::world_bound | method_flags::mutating,
               .handler = define_prefab});
    table.add({.name = "world.spawn_prefab",
               .summary = "Spawns count copies of a prefab; overrides merge field by field.",
               .params = object_schema(
                   {{"name", name},
                    {"count", {{"type", "integer"}, {"minimum", 1}, {"maximum", 100000}, {"default", 1}}},
                    {"overrides", schemas::component_map()}},
                   {"name"}),
               .result = object_schema({{"entities", {{"type", "array"}, {"items", schemas::entity()}}}},
                                       {"entities"}),
               .flags = method_flags::world_bound | method_flags::mutating,
               .handler = spawn_prefab});
    table.add({.name = "world.list_prefabs",
               .summary = "Every prefab of the world with its components.",
               .params = object_schema(),
               .result = object_schema({{"prefabs", {{"type", "array"}}}}, {"prefabs"}),
               .flags = method_flags::world_bound | method_flags::read_only,
               .handler = list_prefabs});
}

}  // namespace ecsd::net
