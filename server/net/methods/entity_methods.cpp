// world.spawn_entity, world.spawn_entities, world.despawn_entity, world.despawn_entities,
// world.describe_entity.
#include "method_table.hpp"
#include "methods.hpp"
#include "methods/schemas.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

json spawn_entity(method_context& ctx) {
    return {{"entity", ctx.world().spawn(ctx.params.value("components", json::object()))}};
}

json spawn_entities(method_context& ctx) {
    return {{"entities", ctx.world().spawn_many(ctx.params.at("entities"))}};
}

json despawn_entity(method_context& ctx) {
    const auto e = schemas::entity_param(ctx.world(), ctx.params);
    ctx.world().despawn(e);
    return {{"entity", e}, {"despawned", true}};
}

json despawn_entities(method_context& ctx) {
    std::vector<ecs::entity_id> ids;
    for (const auto& ref : ctx.params.at("entities")) ids.push_back(ctx.world().entity_ref(ref));
    return {{"despawned", ctx.world().despawn_many(ids)}};
}

json describe_entity(method_context& ctx) {
    return ctx.world().describe(schemas::entity_param(ctx.world(), ctx.params));
}

}  // namespace

void register_entity_methods(method_table& table) {
    const auto flags = method_flags::world_bound | method_flags::mutating;
    table.add({"world.spawn_entity", "Creates an entity with the given components (all validated first).",
               object_schema({{"components", schemas::component_map()}}),
               object_schema({{"entity", schemas::entity()}}, {"entity"}), flags, spawn_entity});
    table.add(
        {"world.spawn_entities", "Creates many entities at once; all or none are created.",
         object_schema(
             {{"entities", {{"type", "array"}, {"items", schemas::component_map()}, {"maxItems", 100000}}}},
             {"entities"}),
         object_schema({{"entities", {{"type", "array"}, {"items", schemas::entity()}}}}, {"entities"}),
         flags, spawn_entities});
    table.add(
        {"world.despawn_entity", "Destroys an entity and its components; its id is never reused.",
         object_schema({{"entity", schemas::entity_ref()}}, {"entity"}),
         object_schema({{"entity", schemas::entity()}, {"despawned", {{"type", "boolean"}}}}, {"entity"}),
         flags, despawn_entity});
    const json names{{"type", "array"}, {"items", {{"type", "string"}}}};
    table.add(
        {"world.describe_entity",
         "One entity for debugging: its components, the systems whose signature it matches, and what "
         "changed on it in the last tick or since.",
         object_schema({{"entity", schemas::entity_ref()}}, {"entity"}),
         object_schema({{"entity", schemas::entity()},
                        {"components", {{"type", "object"}}},
                        {"systems", names},
                        {"changes", object_schema({{"added", names}, {"changed", names}, {"removed", names}},
                                                  {"added", "changed", "removed"})}},
                       {"entity", "components", "systems", "changes"}),
         method_flags::world_bound | method_flags::read_only, describe_entity});
    table.add({"world.despawn_entities",
               "Destroys many entities at once; all must be live, else none is destroyed. An id given twice "
               "dies once.",
               object_schema({{"entities",
                               {{"type", "array"}, {"items", schemas::entity_ref()}, {"maxItems", 100000}}}},
                             {"entities"}),
               object_schema({{"despawned", {{"type", "integer"}, {"minimum", 0}}}}, {"despawned"}), flags,
               despawn_entities});
}

}  // namespace ecsd::net
