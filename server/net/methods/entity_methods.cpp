// world.spawn_entity, world.spawn_entities, world.despawn_entity, world.despawn_entities,
// world.describe_entity.
#include "methods.hpp"
#include "methods/schemas.hpp"
#include "rpc/method_table.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

method_answer spawn_entity(method_context& ctx) {
    // The components by reference (value() copied the whole tree for each spawn) and the answer as
    // text, as get's is: a journal replay, half spawns, throws the answer away.
    static const json none = json::object();
    const auto given = ctx.params.find("components");
    const auto e = ctx.world().spawn(given == ctx.params.end() ? none : *given);
    std::string out;
    ecs::json_text w(out);
    w.raw(R"({"entity":)");
    w.unsigned_integer(e);
    w.raw("}");
    w.flush();
    return method_answer::text(std::move(out));
}

method_answer spawn_entities(method_context& ctx) {
    return {{"entities", ctx.world().spawn_many(ctx.params.at("entities"))}};
}

method_answer despawn_entity(method_context& ctx) {
    const auto e = schemas::entity_param(ctx.world(), ctx.params);
    ctx.world().despawn(e);
    return {{"entity", e}, {"despawned", true}};
}

method_answer despawn_entities(method_context& ctx) {
    std::vector<ecs::entity_id> ids;
    for (const auto& ref : ctx.params.at("entities")) ids.push_back(ctx.world().entity_ref(ref));
    return {{"despawned", ctx.world().despawn_many(ids)}};
}

method_answer describe_entity(method_context& ctx) {
    return ctx.world().describe(schemas::entity_param(ctx.world(), ctx.params));
}

}  // namespace

void register_entity_methods(method_table& table) {
    const auto flags = method_flags::world_bound | method_flags::mutating;
    table.add({.name = "world.spawn_entity",
               .summary = "Creates an entity with the given components (all validated first).",
               .params = object_schema({{"components", schemas::component_map()}}),
               .result = object_schema({{"entity", schemas::entity()}}, {"entity"}),
               .flags = flags,
               .handler = spawn_entity});
    table.add(
        {.name = "world.spawn_entities",
         .summary = "Creates many entities at once; all or none are created.",
         .params = object_schema(
             {{"entities", {{"type", "array"}, {"items", schemas::component_map()}, {"maxItems", 100000}}}},
             {"entities"}),
         .result =
             object_schema({{"entities", {{"type", "array"}, {"items", schemas::entity()}}}}, {"entities"}),
         .flags = flags,
         .handler = spawn_entities});
    table.add({.name = "world.despawn_entity",
               .summary = "Destroys an entity and its components; its id is never reused.",
               .params = object_schema({{"entity", schemas::entity_ref()}}, {"entity"}),
               .result = object_schema({{"entity", schemas::entity()}, {"despawned", {{"type", "boolean"}}}},
                                       {"entity"}),
               .flags = flags,
               .handler = despawn_entity});
    const json names{{"type", "array"}, {"items", {{"type", "string"}}}};
    table.add(
        {.name = "world.describe_entity",
         .summary =
             "One entity for debugging: its components, the systems whose signature it matches, and what "
             "changed on it in the last tick or since.",
         .params = object_schema({{"entity", schemas::entity_ref()}}, {"entity"}),
         .result = object_schema(
             {{"entity", schemas::entity()},
              {"components", {{"type", "object"}}},
              {"systems", names},
              {"changes", object_schema({{"added", names}, {"changed", names}, {"removed", names}},
                                        {"added", "changed", "removed"})}},
             {"entity", "components", "systems", "changes"}),
         .flags = method_flags::world_bound | method_flags::read_only,
         .handler = describe_entity});
    table.add(
        {.name = "world.despawn_entities",
         .summary =
             "Destroys many entities at once; all must be live, else none is destroyed. An id given twice "
             "dies once.",
         .params = object_schema(
             {{"entities", {{"type", "array"}, {"items", schemas::entity_ref()}, {"maxItems", 100000}}}},
             {"entities"}),
         .result = object_schema({{"despawned", {{"type", "integer"}, {"minimum", 0}}}}, {"despawned"}),
         .flags = flags,
         .handler = despawn_entities});
}

}  // namespace ecsd::net
