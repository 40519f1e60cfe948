// world.query: entities matching all / any / none / change filters, with their values.
#include "methods.hpp"
#include "methods/schemas.hpp"
#include "rpc/method_table.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

json query(method_context& ctx) {
    // Written as text: a page of entities with their values would otherwise be a tree of thousands of nodes.
    ecs::json_text w(ctx.raw_result);
    ctx.world().write_query(ctx.params.at("query"), schemas::optional_names(ctx.params, "fields"),
                            ctx.params.value("limit", std::size_t{100}),
                            ctx.params.value("offset", std::size_t{0}), w);
    return nullptr;
}

}  // namespace

void register_query_methods(method_table& table) {
    table.add(
        {.name = "world.query",
         .summary =
             "Entities matching a query, in id order: text (\"Position, Velocity, !Frozen, Health|Shield, "
             "changed(Position), near(0, 0, 10)\") or {all, any, none, added, changed, removed, died, near}.",
         .params = object_schema({{"query", schemas::query()},
                                  {"fields", schemas::names()},
                                  {"limit", schemas::page_limit()},
                                  {"offset", schemas::page_offset()}},
                                 {"query"}),
         .result = object_schema({{"entities", {{"type", "array"}}}, {"total", {{"type", "integer"}}}},
                                 {"entities", "total"}),
         .flags = method_flags::world_bound | method_flags::read_only,
         .handler = query});
}

}  // namespace ecsd::net
