// world.query: entities matching all / any / none / change filters, with their values; also in the
// Bevy Remote Protocol's shape ({data, filter}), answered as BRP answers.
#include <algorithm>
#include <string>
#include <vector>

#include "ecsd/protocol/errors.hpp"
#include "methods.hpp"
#include "methods/schemas.hpp"
#include "rpc/method_table.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

/// BRP answers every match at once; ecsd pages. A BRP query answers at most this many (the page
/// limit of ecsd's own shape, which pages on with `offset`).
constexpr std::size_t brp_limit = 10000;

std::vector<std::string> names_at(const json& object, const char* key) {
    if (!object.is_object() || !object.contains(key)) return {};
    return object.at(key).get<std::vector<std::string>>();
}

void add_unique(std::vector<std::string>& to, const std::vector<std::string>& names) {
    for (const auto& n : names)
        if (std::find(to.begin(), to.end(), n) == to.end()) to.push_back(n);
}

/// @brief BRP's world.query: `data` {components (required and shown), option (shown where present),
/// has (reported as true/false)} and `filter` {with, without}, as ecsd's all / optional / none.
method_answer brp_query(method_context& ctx) {
    const json data = ctx.params.value("data", json::object());
    const json filter = ctx.params.value("filter", json::object());
    const auto components = names_at(data, "components");
    const auto option = names_at(data, "option");
    const auto has = names_at(data, "has");
    std::vector<std::string> all = components;
    add_unique(all, names_at(filter, "with"));
    std::vector<std::string> optional;
    for (const auto* list : {&option, &has})
        for (const auto& n : *list)
            if (std::find(all.begin(), all.end(), n) == all.end() &&
                std::find(optional.begin(), optional.end(), n) == optional.end())
                optional.push_back(n);
    std::vector<std::string> shown = components;
    add_unique(shown, option);
    std::vector<std::string> fields = shown;
    add_unique(fields, has);
    const json terms = {{"all", all}, {"optional", optional}, {"none", names_at(filter, "without")}};
    std::string text;
    {
        ecs::json_text w(text);  // buffers: the text is whole once it is gone
        ctx.world().write_query(terms, fields, brp_limit, 0, w);
    }
    const json page = json::parse(text);
    json out = json::array();
    for (const auto& e : page["entities"]) {
        const auto& values = e["components"];
        json comps = json::object();
        for (const auto& n : shown)
            if (const auto it = values.find(n); it != values.end()) comps[n] = *it;
        json present = json::object();
        for (const auto& n : has) present[n] = values.contains(n);
        out.push_back(
            {{"entity", e["entity"]}, {"components", std::move(comps)}, {"has", std::move(present)}});
    }
    return out;
}

method_answer query(method_context& ctx) {
    const bool brp = ctx.params.contains("data") || ctx.params.contains("filter");
    if (brp && ctx.params.contains("query"))
        return method_answer::error(protocol::reason::invalid_params,
                                    "params: give query (ecsd's shape) or data and filter (BRP's), not both");
    if (brp) return brp_query(ctx);
    if (!ctx.params.contains("query"))
        return method_answer::error(protocol::reason::invalid_params,
                                    "params: missing required member 'query' (or BRP's data and filter)");
    // Written as text: a page of entities with their values would otherwise be a tree of thousands of nodes.
    const auto limit = ctx.params.value("limit", std::size_t{100});
    std::string out;
    // Room for a page of entities with a few components each (about 130 bytes apiece): the string
    // grows by doubling otherwise, copying what it holds each time.
    out.reserve(256 + 160 * std::min(limit, std::size_t{1000}));
    ecs::json_text w(out);
    ctx.world().write_query(ctx.params.at("query"), schemas::optional_names(ctx.params, "fields"), limit,
                            ctx.params.value("offset", std::size_t{0}), w);
    w.flush();
    return method_answer::text(std::move(out));
}

}  // namespace

void register_query_methods(method_table& table) {
    const json brp_data = {
        {"type", "object"},
        {"additionalProperties", false},
        {"properties",
         {{"components", schemas::names()}, {"option", schemas::names()}, {"has", schemas::names()}}}};
    const json brp_filter = {{"type", "object"},
                             {"additionalProperties", false},
                             {"properties", {{"with", schemas::names()}, {"without", schemas::names()}}}};
    table.add(
        {.name = "world.query",
         .summary =
             "Entities matching a query, in id order: text (\"Position, Velocity, !Frozen, Health|Shield, "
             "changed(Position), near(0, 0, 10)\") or {all, any, none, added, changed, removed, died, near}; "
             "or Bevy Remote Protocol's {data, filter}, answered as BRP answers.",
         .params = object_schema({{"query", schemas::query()},
                                  {"fields", schemas::names()},
                                  {"limit", schemas::page_limit()},
                                  {"offset", schemas::page_offset()},
                                  {"data", brp_data},
                                  {"filter", brp_filter},
                                  {"strict", {{"type", "boolean"}}}}),
         .result = {{"anyOf",
                     {object_schema({{"entities", {{"type", "array"}}}, {"total", {{"type", "integer"}}}},
                                    {"entities", "total"}),
                      {{"type", "array"}}}}},
         .flags = method_flags::world_bound | method_flags::read_only,
         .handler = query});
}

}  // namespace ecsd::net
