// world.*: the life cycle of worlds. create/destroy/list touch the directory and run on the
// caller's strand; the rest are world-bound and run on the world's strand between two ticks.
#include <chrono>
#include <cstdio>

#include "ecsd/protocol/errors.hpp"
#include "hosted_world.hpp"
#include "method_table.hpp"
#include "methods.hpp"
#include "services.hpp"
#include "world/world.hpp"
#include "world_directory.hpp"
#include "world_factory.hpp"
#include "world_log.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

/// @brief Most ticks one world.step may run: a request must not hold a world for long.
constexpr std::uint64_t max_step_ticks = 100000;

const json world_name{{"type", "string"}, {"minLength", 1}, {"maxLength", 64}, {"description", "world name"}};

json create(method_context& ctx) {
    const auto name = ctx.params.at("world").get<std::string>();
    if (ctx.services.worlds.find(name)) {
        throw protocol::rpc_error(protocol::reason::world_exists, "world '" + name + "' exists",
                                  {{"world", name}});
    }
    auto w = make_world(name, ctx.params);
    json info = w->info();  // safe: nobody else sees the world before add()
    auto hosted = std::make_shared<hosted_world>(ctx.services.worlds.io(), name, std::move(w));
    attach_log(*hosted, ctx.services, 0, /*save_now=*/true);  // its snapshot exists from the start
    ctx.services.worlds.add_hosted(std::move(hosted));
    return info;
}

json destroy(method_context& ctx) {
    const auto name = ctx.params.at("world").get<std::string>();
    if (!ctx.services.worlds.remove(name)) {
        throw protocol::rpc_error(protocol::reason::no_such_world, "no world '" + name + "'",
                                  {{"world", name}});
    }
    return {{"destroyed", name}};
}

json list(method_context& ctx) {
    return {{"worlds", ctx.services.worlds.names()}};
}

json info(method_context& ctx) {
    return ctx.world().info();
}

json pause(method_context& ctx) {
    auto& w = ctx.world();
    w.pause();
    return {{"paused", true}, {"tick", w.tick()}};
}

json resume(method_context& ctx) {
    auto& w = ctx.world();
    if (w.paused()) {
        w.resume(std::chrono::steady_clock::now());
        ctx.hosted->reschedule();
    }
    return {{"paused", false}, {"tick", w.tick()}};
}

json step(method_context& ctx) {
    const auto ticks = ctx.params.value("ticks", std::uint64_t{1});
    return {{"tick", ctx.world().step(ticks)}};
}

json hash(method_context& ctx) {
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

json info_schema() {
    return {{"type", "object"},
            {"properties",
             {{"world", {{"type", "string"}}},
              {"tick", {{"type", "integer"}}},
              {"tick_hz", {{"type", "number"}}},
              {"paused", {{"type", "boolean"}}},
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
    table.add(
        {"world.create", "Creates a world; it starts ticking at once unless paused.",
         object_schema({{"world", world_name},
                        {"tick_hz", {{"type", "number"}, {"minimum", 1}, {"maximum", 1000}, {"default", 60}}},
                        {"gravity", gravity},
                        {"bounds", bounds},
                        {"paused", {{"type", "boolean"}, {"default", false}}}},
                       {"world"}),
         info_schema(), method_flags::admin, create});
    table.add({"world.destroy", "Destroys a world and every entity in it.",
               object_schema({{"world", world_name}}, {"world"}),
               object_schema({{"destroyed", {{"type", "string"}}}}, {"destroyed"}), method_flags::admin,
               destroy});
    table.add({"world.list", "Names of all worlds.", object_schema(),
               object_schema({{"worlds", {{"type", "array"}, {"items", {{"type", "string"}}}}}}, {"worlds"}),
               method_flags::read_only, list});
    table.add({"world.info",
               "Tick, tick rate, paused, gravity, entity count, overruns and timing of a world.",
               object_schema(), info_schema(), method_flags::world_bound | method_flags::read_only, info});
    table.add({"world.pause", "Stops the fixed-rate tick; world.step still works.", object_schema(),
               state_schema(), method_flags::world_bound | method_flags::mutating, pause});
    table.add({"world.resume", "Restarts the fixed-rate tick; the next tick is one period from now.",
               object_schema(), state_schema(), method_flags::world_bound | method_flags::mutating, resume});
    table.add(
        {"world.step", "Runs ticks now, paused or not; returns the new tick.",
         object_schema(
             {{"ticks", {{"type", "integer"}, {"minimum", 1}, {"maximum", max_step_ticks}, {"default", 1}}}}),
         object_schema({{"tick", {{"type", "integer"}}}}, {"tick"}),
         method_flags::world_bound | method_flags::mutating | method_flags::in_slices, step});
    table.add({"world.hash", "Hash of every entity and component value at the current tick (16 hex digits).",
               object_schema(),
               object_schema({{"tick", {{"type", "integer"}}},
                              {"hash", {{"type", "string"}, {"minLength", 16}, {"maxLength", 16}}}},
                             {"tick", "hash"}),
               method_flags::world_bound | method_flags::read_only, hash});
}

}  // namespace ecsd::net
