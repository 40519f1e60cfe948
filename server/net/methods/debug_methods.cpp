// debug.*: fault drills, off unless ecsd runs with --enable-debug (as Redis keeps its DEBUG command
// behind enable-debug-command). debug.sleep holds a world's strand, as a runaway request or system
// would: the world stops ticking and answering for that long, and with the Agones SDK on, the
// Health pings stop while it lasts (docs/scaling.md).
#include <chrono>
#include <thread>

#include <spdlog/spdlog.h>

#include "ecsd/protocol/errors.hpp"
#include "hosting/hosted_world.hpp"
#include "methods.hpp"
#include "rpc/method_table.hpp"
#include "rpc/services.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

/// @brief The longest debug.sleep: long enough to outlast any health rule, short enough that a
/// mistaken call costs seconds, not the server.
constexpr double max_sleep_seconds = 30;

method_answer sleep(method_context& ctx) {
    if (!ctx.services.config.enable_debug) {
        return method_answer::error(protocol::reason::unauthorized,
                                    "debug methods are off: start ecsd with --enable-debug to use them");
    }
    const auto seconds = ctx.params.at("seconds").get<double>();
    spdlog::warn("world '{}': debug.sleep holds its strand for {} s", ctx.hosted->name(), seconds);
    std::this_thread::sleep_for(std::chrono::duration<double>(seconds));
    return {{"slept", seconds}, {"tick", ctx.world().tick()}};
}

}  // namespace

void register_debug_methods(method_table& table) {
    table.add({.name = "debug.sleep",
               .summary = "With --enable-debug: holds the world's strand for `seconds` (a stuck world, on "
                          "purpose); no tick and no request of that world runs meanwhile.",
               .params = object_schema(
                   {{"seconds", {{"type", "number"}, {"minimum", 0}, {"maximum", max_sleep_seconds}}}},
                   {"seconds"}),
               .result = object_schema({{"slept", {{"type", "number"}}}, {"tick", {{"type", "integer"}}}},
                                       {"slept", "tick"}),
               .flags = method_flags::world_bound | method_flags::admin,
               .handler = sleep});
}

}  // namespace ecsd::net
