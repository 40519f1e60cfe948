// world.save, world.load: snapshots on demand (the server also autosaves and saves on exit).
#include "ecsd/protocol/errors.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/world_directory.hpp"
#include "hosting/world_log.hpp"
#include "methods.hpp"
#include "rpc/method_table.hpp"
#include "rpc/services.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

world_log& log_of(method_context& ctx) {
    if (auto* log = ctx.hosted->log()) return *log;
    throw protocol::rpc_error(protocol::reason::invalid_params,
                              "the server has no --data-dir: nothing is saved or loaded",
                              {{"world", ctx.hosted->name()}});
}

json save(method_context& ctx) {
    const auto r = log_of(ctx).save(ctx.world());
    return {
        {"world", ctx.hosted->name()}, {"path", r.path}, {"bytes", r.bytes}, {"tick", r.tick}, {"ms", r.ms}};
}

json load(method_context& ctx) {
    (void)log_of(ctx);
    const std::string name = ctx.hosted->name();
    // Read the world back from its snapshot and journal, as a restart would.
    loaded_world loaded;
    try {
        loaded = load_world(ctx.services.config.data_dir, name, ctx.services.worlds.io(), ctx.services);
    } catch (const std::exception& e) {  // damaged or unreadable files: the world is left as it was
        throw protocol::rpc_error(protocol::reason::storage_error, std::string("cannot load: ") + e.what(),
                                  {{"world", name}, {"detail", e.what()}});
    }
    auto world = loaded.hosted->world_ptr();
    loaded.hosted->stop();  // it only carried the replay; this hosted world runs the result
    ctx.hosted->drop_log(/*remove_files=*/false);
    attach_log(*ctx.hosted, ctx.services, loaded.seq, /*save_now=*/false);
    ctx.hosted->replace_world(world);
    return {{"world", name},
            {"tick", world->tick()},
            {"entities", world->registry().size()},
            {"replayed", loaded.replayed}};
}

}  // namespace

void register_persist_methods(method_table& table) {
    const json report = object_schema({{"world", {{"type", "string"}}},
                                       {"path", {{"type", "string"}}},
                                       {"bytes", {{"type", "integer"}}},
                                       {"tick", {{"type", "integer"}}},
                                       {"ms", {{"type", "number"}}}},
                                      {"world", "path", "tick"});
    table.add({.name = "world.save",
               .summary = "Writes the world's snapshot now (atomically) and empties its journal.",
               .params = object_schema(),
               .result = report,
               .flags = method_flags::world_bound | method_flags::read_only,
               .handler = save});
    table.add(
        {.name = "world.load",
         .summary =
             "Replaces the world with what its snapshot and journal on disk hold (discarding unsaved changes "
             "is impossible: every acknowledged request is journaled).",
         .params = object_schema(),
         .result = object_schema({{"world", {{"type", "string"}}},
                                  {"tick", {{"type", "integer"}}},
                                  {"entities", {{"type", "integer"}}}},
                                 {"world", "tick"}),
         .flags = method_flags::world_bound | method_flags::admin,
         .handler = load});
}

}  // namespace ecsd::net
