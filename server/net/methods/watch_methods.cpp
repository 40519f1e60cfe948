// world.watch / world.unwatch: a live world pushed to its clients as per-tick diffs (watch.hpp).
#include "ecsd/protocol/errors.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/watch.hpp"
#include "methods.hpp"
#include "methods/schemas.hpp"
#include "rpc/method_table.hpp"
#include "rpc/session.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

watch_sink& sink_of(method_context& ctx) {
    if (ctx.caller == nullptr || !ctx.caller->watches)
        throw protocol::rpc_error(protocol::reason::invalid_request,
                                  "world.watch needs a connection to send to");
    return *ctx.caller->watches;
}

method_answer watch(method_context& ctx) {
    (void)sink_of(ctx);
    auto& hosted = *ctx.hosted;
    return method_answer::text(hosted.watches().subscribe(
        ctx.world(), ctx.caller->watches, hosted.weak_from_this(), ctx.params.at("query"),
        schemas::optional_names(ctx.params, "fields"), ctx.params.value("every", std::uint64_t{1})));
}

method_answer unwatch(method_context& ctx) {
    // Not world-bound: a subscription id is unique on its connection across worlds, so the id alone
    // names it (params.world, when given, is not needed and not checked). The sink forgets it at
    // once, so no notification of it follows this answer; its world's hub is told on its strand.
    auto& sink = sink_of(ctx);
    const auto sub = ctx.params.at("subscription").get<std::uint64_t>();
    const auto world = sink.remove(sub);
    if (!world) {
        return method_answer::error(protocol::reason::no_such_subscription,
                                    "no subscription " + std::to_string(sub) + " on this connection",
                                    {{"subscription", sub}});
    }
    if (auto w = world->lock()) {
        asio::post(w->strand(), [w, self = sink.shared_from_this(), sub] {
            (void)w->watches().unsubscribe(self.get(), sub);
        });
    }
    return {{"subscription", sub}, {"ended", true}};
}

method_answer watch_entity(method_context& ctx, bool names_only) {
    (void)sink_of(ctx);
    auto& hosted = *ctx.hosted;
    return method_answer::text(hosted.watches().subscribe_entity(
        ctx.world(), ctx.caller->watches, hosted.weak_from_this(),
        schemas::entity_param(ctx.world(), ctx.params),
        names_only ? std::nullopt : schemas::optional_names(ctx.params, "components"), names_only));
}

}  // namespace

void register_watch_methods(method_table& table) {
    table.add(
        {.name = "world.watch",
         .summary =
             "Follows a query: answers the matching entities now, then sends a world.watch notification "
             "for every tick (or every N ticks) in which they changed: entered, changed, left.",
         .params = object_schema(
             {{"query", schemas::query()},
              {"fields", schemas::names()},
              {"every", {{"type", "integer"}, {"minimum", 1}, {"maximum", 1000000}, {"default", 1}}}},
             {"query"}),
         .result = object_schema({{"subscription", {{"type", "integer"}}},
                                  {"tick", {{"type", "integer"}}},
                                  {"entities", {{"type", "array"}}}},
                                 {"subscription", "tick", "entities"}),
         .flags = method_flags::world_bound | method_flags::read_only | method_flags::opens_stream,
         .handler = watch});
    // The Bevy Remote Protocol's streaming names, served by the same machinery: each update is one
    // more response with the request's id, until the connection closes.
    table.add(
        {.name = "world.get_components+watch",
         .summary =
             "BRP: the entity's components now, then one response with the same id whenever their values "
             "change: {components (changed), removed, errors}.",
         .params =
             object_schema({{"entity", schemas::entity_ref()}, {"components", schemas::names()}}, {"entity"}),
         .result = object_schema({{"components", {{"type", "object"}}},
                                  {"removed", {{"type", "array"}}},
                                  {"errors", {{"type", "object"}}}},
                                 {"components", "removed", "errors"}),
         .flags = method_flags::world_bound | method_flags::read_only | method_flags::opens_stream,
         .handler = [](method_context& ctx) { return watch_entity(ctx, false); }});
    table.add(
        {.name = "world.list_components+watch",
         .summary =
             "BRP: the names of the entity's components now, then one response with the same id whenever "
             "components are added or removed: {added, removed}.",
         .params = object_schema({{"entity", schemas::entity_ref()}}, {"entity"}),
         .result = object_schema({{"added", {{"type", "array"}}}, {"removed", {{"type", "array"}}}},
                                 {"added", "removed"}),
         .flags = method_flags::world_bound | method_flags::read_only | method_flags::opens_stream,
         .handler = [](method_context& ctx) { return watch_entity(ctx, true); }});
    table.add(
        {.name = "world.unwatch",
         .summary = "Ends a subscription of this connection, in whichever world it follows.",
         .params =
             object_schema({{"subscription", {{"type", "integer"}, {"minimum", 1}}},
                            {"world",
                             {{"type", "string"},
                              {"description", "accepted and not needed: the subscription names its world"}}}},
                           {"subscription"}),
         .result = object_schema({{"subscription", {{"type", "integer"}}}, {"ended", {{"type", "boolean"}}}},
                                 {"subscription", "ended"}),
         .flags = method_flags::read_only,
         .handler = unwatch});
}

}  // namespace ecsd::net
