// world.*: the life cycle of worlds. create/destroy/list touch the directory and run on the
// caller's strand; the rest are world-bound and run on the world's strand between two ticks.
#include <chrono>
#include <cstdio>

#include "ecsd/protocol/errors.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/world_directory.hpp"
#include "hosting/world_factory.hpp"
#include "hosting/world_log.hpp"
#include "methods.hpp"
#include "rpc/method_table.hpp"
#include "rpc/services.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

/// @brief Most ticks one world.step may run: a request must not hold a world for long.
constexpr std::uint64_t max_step_ticks = 100000;

const json world_name{{"type", "string"}, {"minLength", 1}, {"maxLength", 64}, {"description", "world name"}};

method_answer create(method_context& ctx) {
    const auto name = ctx.params.at("world").get<std::string>();
    // The name first (world_exists, limit_reached): only its holder writes the world's files, and
    // a refused create has written nothing.
    auto claim = ctx.services.worlds.claim(name);
    auto w = make_world(name, ctx.params);
    w->set_default_threads(ctx.services.worlds.sim_threads());
    json info = w->info();  // safe: nobody else sees the world before add()
    auto hosted = std::make_shared<hosted_world>(ctx.services.worlds.io(), name, std::move(w));
    attach_log(*hosted, ctx.services.config, 0, /*save_now=*/true);  // its snapshot exists from the start
    ctx.services.worlds.add_hosted(std::move(hosted), std::move(claim));
    return info;
}

method_answer destroy(method_context& ctx) {
    const auto name = ctx.params.at("world").get<std::string>();
    if (!ctx.services.worlds.remove(name, ctx.params.value("moved_to", std::string()))) {
        return method_answer::error(protocol::reason::no_such_world, "no world '" + name + "'",
                                    {{"world", name}});
    }
    return {{"destroyed", name}};
}

method_answer list(method_context& ctx) {
    return {{"worlds", ctx.services.worlds.names()}};
}

method_answer world_info(method_context& ctx) {
    auto out = ctx.world().info();
    out["watches"] = ctx.hosted->watches().figures();
    return out;
}

method_answer pause(method_context& ctx) {
    auto& w = ctx.world();
    w.pause();
    return {{"paused", true}, {"tick", w.tick()}};
}

method_answer resume(method_context& ctx) {
    auto& w = ctx.world();
    if (w.paused()) {
        w.resume(std::chrono::steady_clock::now());
        ctx.hosted->reschedule();
    }
    return {{"paused", false}, {"tick", w.tick()}};
}

method_answer step(method_context& ctx) {
    const auto ticks = ctx.params.value("ticks", std::uint64_t{1});
    return {{"tick", ctx.world().step(ticks)}};
}

method_answer hash(method_context& ctx) {
    auto& w = ctx.world();
    // 64-bit hashes exceed JSON's safe integers (2^53): sent as 16 hex digits.
    char text[17];
    std::snprintf(text, sizeof text, "%016llx", static_cast<unsigned long long>(w.state_hash()));
    return {{"tick", w.tick()}, {"hash", text}};
}

json state_schema() {
    return object_schema({{"paused", {{"type", "boolean"}}}, {"tick", {{"type", "integer"}, {"minimum", 0}}}},
                         {"paused", "tick"});
}

json world_info_schema() {
    return {{"type", "object"},
            {"properties",
             {{"world", {{"type", "string"}}},
              {"tick", {{"type", "integer"}}},
              {"tick_hz", {{"type", "number"}}},
              {"paused", {{"type", "boolean"}}},
              {"threads", {{"type", "integer"}}},
              {"gravity", {{"type", "object"}}},
              {"bounds", {{"type", "object"}}},
              {"entities", {{"type", "integer"}}},
              {"overruns", {{"type", "integer"}}}}},
            {"required", {"world", "tick", "tick_hz", "paused", "entities", "overruns"}}};
}

}  // namespace

void register_world_methods(method_table& table) {
    const json gravity{{"anyOf",
                        {{{"type", "number"}, {"description", "vertical gravity (x = 0)"}},
                         object_schema({{"x", {{"type", "number"}}}, {"y", {{"type", "number"}}}})}}};
    const json side{{"type", json::array({"number", "null"})}};
    const json bounds = object_schema({{"left", side}, {"right", side}, {"bottom", side}, {"top", side}});
    table.add({.name = "world.create",
               .summary = "Creates a world; it starts ticking at once unless paused.",
               .params = object_schema(
                   {{"world", world_name},
                    {"tick_hz", {{"type", "number"}, {"minimum", 1}, {"maximum", 1000}, {"default", 60}}},
                    {"gravity", gravity},
                    {"bounds", bounds},
                    {"paused", {{"type", "boolean"}, {"default", false}}},
                    {"threads",
                     {{"type", "integer"},
                      {"minimum", 1},
                      {"maximum", world::world_settings::max_threads},
                      {"description", "threads its tick uses; default: the server's --sim-threads"}}}},
                   {"world"}),
               .result = world_info_schema(),
               .flags = method_flags::admin,
               .handler = create});
    table.add({.name = "world.destroy",
               .summary = "Destroys a world and every entity in it.",
               .params = object_schema(
                   {{"world", world_name},
                    {"moved_to",
                     {{"type", "string"},
                      {"minLength", 1},
                      {"maxLength", 255},
                      {"description",
                       "where the world went (ecsctl world move): its watchers' last notification says "
                       "`world_moved` and this"}}}},
                   {"world"}),
               .result = object_schema({{"destroyed", {{"type", "string"}}}}, {"destroyed"}),
               // World-bound so it runs on the world's strand: the watchers' last notifications are
               // published before the answer, and a client reads them first.
               .flags = method_flags::world_bound | method_flags::admin,
               .handler = destroy});
    table.add({.name = "world.list",
               .summary = "Names of all worlds.",
               .params = object_schema(),
               .result = object_schema({{"worlds", {{"type", "array"}, {"items", {{"type", "string"}}}}}},
                                       {"worlds"}),
               .flags = method_flags::read_only,
               .handler = list});
    table.add({.name = "world.info",
               .summary = "Tick, tick rate, paused, gravity, entity count, overruns and timing of a world.",
               .params = object_schema(),
               .result = world_info_schema(),
               .flags = method_flags::world_bound | method_flags::read_only,
               .handler = world_info});
    table.add({.name = "world.pause",
               .summary = "Stops the fixed-rate tick; world.step still works.",
               .params = object_schema(),
               .result = state_schema(),
               .flags = method_flags::world_bound | method_flags::mutating,
               .handler = pause});
    table.add({.name = "world.resume",
               .summary = "Restarts the fixed-rate tick; the next tick is one period from now.",
               .params = object_schema(),
               .result = state_schema(),
               .flags = method_flags::world_bound | method_flags::mutating,
               .handler = resume});
    table.add(
        {.name = "world.step",
         .summary = "Runs ticks now, paused or not; returns the new tick.",
         .params = object_schema(
             {{"ticks", {{"type", "integer"}, {"minimum", 1}, {"maximum", max_step_ticks}, {"default", 1}}}}),
         .result = object_schema({{"tick", {{"type", "integer"}}}}, {"tick"}),
         .flags = method_flags::world_bound | method_flags::mutating | method_flags::in_slices,
         .handler = step});
    table.add({.name = "world.hash",
               .summary = "Hash of every entity and component value at the current tick (16 hex digits).",
               .params = object_schema(),
               .result = object_schema({{"tick", {{"type", "integer"}}},
                                        {"hash", {{"type", "string"}, {"minLength", 16}, {"maxLength", 16}}}},
                                       {"tick", "hash"}),
               .flags = method_flags::world_bound | method_flags::read_only,
               .handler = hash});
}

}  // namespace ecsd::net
