// world.get_components, world.insert_components, world.mutate_components,
// world.remove_components, world.list_components, world.register_component.
#include "ecsd/protocol/jsonrpc.hpp"
#include "methods.hpp"
#include "methods/schemas.hpp"
#include "rpc/method_table.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;
using protocol::reason;

method_answer get_components(method_context& ctx) {
    // The hottest read: written as text, keys in json::dump() order ("components" < "entity"). Its
    // params usually come typed (method_flags::entity_read): an id and the names, no tree.
    std::optional<std::vector<std::string>> tree_names;
    const auto e = ctx.read ? ctx.read->entity : schemas::entity_param(ctx.world(), ctx.params);
    if (!ctx.read) tree_names = schemas::optional_names(ctx.params, "components");
    const auto& names = ctx.read ? ctx.read->components : tree_names;
    const auto& reg = ctx.world().registry();
    // The common error, answered without a throw: it must cost no more than a success.
    if (!reg.alive(e)) return method_answer::error(reason::no_such_entity, reg.why_not_alive(e));
    std::string out;
    ecs::json_text w(out);
    w.raw(R"({"components":)");
    ctx.world().write_components(e, names, w);
    w.raw(R"(,"entity":)");
    w.unsigned_integer(e);
    w.raw("}");
    w.flush();
    return method_answer::text(std::move(out));
}

method_answer insert_components(method_context& ctx) {
    const auto e = schemas::entity_param(ctx.world(), ctx.params);
    if (!ctx.world().registry().alive(e))
        return method_answer::error(reason::no_such_entity, ctx.world().registry().why_not_alive(e));
    ctx.world().insert_components(e, ctx.params.at("components"));
    return {{"entity", e}};
}

method_answer mutate_components(method_context& ctx) {
    const auto e = schemas::entity_param(ctx.world(), ctx.params);
    if (!ctx.world().registry().alive(e))
        return method_answer::error(reason::no_such_entity, ctx.world().registry().why_not_alive(e));
    const auto& component = ctx.params.at("component").get_ref<const std::string&>();
    ctx.world().mutate_component(e, component, ctx.params.at("path").get_ref<const std::string&>(),
                                 ctx.params.at("value"));
    // Written as text, as get's answer is (keys in json::dump() order): building the answer as a
    // tree and serialising it was a fifth of a mutate's cost, and a journal replay throws it away.
    const auto& reg = ctx.world().registry();
    std::string out;
    ecs::json_text w(out);
    w.raw(R"({"component":)");
    w.string(component);
    w.raw(R"(,"entity":)");
    w.unsigned_integer(e);
    w.raw(R"(,"value":)");
    reg.storage(reg.component_by_name(component)).write_value(ecs::index_of(e), w);
    w.raw("}");
    w.flush();
    return method_answer::text(std::move(out));
}

method_answer remove_components(method_context& ctx) {
    const auto e = schemas::entity_param(ctx.world(), ctx.params);
    if (!ctx.world().registry().alive(e))
        return method_answer::error(reason::no_such_entity, ctx.world().registry().why_not_alive(e));
    ctx.world().remove_components(e, ctx.params.at("components").get<std::vector<std::string>>());
    return {{"entity", e}};
}

method_answer list_components(method_context& ctx) {
    if (ctx.params.contains("entity")) {
        const auto e = schemas::entity_param(ctx.world(), ctx.params);
        ctx.world().registry().check(e);
        return {{"entity", e}, {"components", ctx.world().list_components(e)}};
    }
    return {{"components", ctx.world().list_components(std::nullopt)}};
}

method_answer register_component(method_context& ctx) {
    const auto name = ctx.params.at("name").get<std::string>();
    ctx.world().register_component(name, ctx.params.value("fields", json::object()));
    const auto all = ctx.world().list_components(std::nullopt);
    for (const auto& c : all)
        if (c["name"] == name) return c;
    return {{"name", name}};
}

}  // namespace

void register_component_methods(method_table& table) {
    const auto write = method_flags::world_bound | method_flags::mutating;
    const auto read = method_flags::world_bound | method_flags::read_only;
    table.add({.name = "world.get_components",
               .summary = "Component values of an entity: all of them, or the named ones.",
               .params = object_schema({{"entity", schemas::entity_ref()}, {"components", schemas::names()}},
                                       {"entity"}),
               .result = object_schema({{"entity", schemas::entity()}, {"components", {{"type", "object"}}}},
                                       {"entity", "components"}),
               .flags = read | method_flags::entity_read,
               .handler = get_components});
    table.add({.name = "world.insert_components",
               .summary = "Adds components or replaces their whole values (all validated first).",
               .params = object_schema(
                   {{"entity", schemas::entity_ref()}, {"components", schemas::component_map()}},
                   {"entity", "components"}),
               .result = object_schema({{"entity", schemas::entity()}}, {"entity"}),
               .flags = write,
               .handler = insert_components});
    table.add(
        {.name = "world.mutate_components",
         .summary = "Sets one field of one component, e.g. path \"x\" of Position.",
         .params = object_schema(
             {{"entity", schemas::entity_ref()},
              {"component", {{"type", "string"}}},
              {"path", {{"type", "string"}, {"description", "a field name; a leading / is accepted"}}},
              {"value", json::object()}},
             {"entity", "component", "path", "value"}),
         .result = object_schema(
             {{"entity", schemas::entity()}, {"component", {{"type", "string"}}}, {"value", json::object()}},
             {"entity"}),
         .flags = write,
         .handler = mutate_components});
    table.add({.name = "world.remove_components",
               .summary = "Removes the named components; fails whole if the entity lacks one.",
               .params = object_schema({{"entity", schemas::entity_ref()}, {"components", schemas::names()}},
                                       {"entity", "components"}),
               .result = object_schema({{"entity", schemas::entity()}}, {"entity"}),
               .flags = write,
               .handler = remove_components});
    table.add(
        {.name = "world.list_components",
         .summary =
             "With entity: the names of its components. Without: every component type with kind, fields "
             "and count.",
         .params = object_schema({{"entity", schemas::entity_ref()}}),
         .result = object_schema({{"components", {{"type", "array"}}}}, {"components"}),
         .flags = read,
         .handler = list_components});
    table.add(
        {.name = "world.register_component",
         .summary = "Defines a component at run time: fields {name: default} or {name: {type, default}}.",
         .params = object_schema({{"name", {{"type", "string"}, {"minLength", 1}, {"maxLength", 64}}},
                                  {"fields", {{"type", "object"}, {"maxProperties", 64}}}},
                                 {"name"}),
         .result = object_schema({{"name", {{"type", "string"}}}, {"fields", {{"type", "array"}}}}, {"name"}),
         .flags = write,
         .handler = register_component});
}

}  // namespace ecsd::net
