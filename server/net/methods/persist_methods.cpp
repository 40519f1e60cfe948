// world.save, world.load: snapshots on demand (the server also autosaves and saves on exit).
// world.export, world.import: a world's snapshot over the protocol, in chunks, to copy a world
// between servers with its ids, tick and state hash unchanged.
#include <algorithm>
#include <optional>
#include <stdexcept>

#include "ecsd/protocol/errors.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/world_directory.hpp"
#include "hosting/world_log.hpp"
#include "hosting/world_transfers.hpp"
#include "methods.hpp"
#include "persist/snapshot.hpp"
#include "persist/snapshot_binary.hpp"
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

method_answer save(method_context& ctx) {
    std::optional<persist::snapshot_format> format;
    if (ctx.params.contains("format"))  // the schema admits only the three names
        format = persist::parse_snapshot_format(ctx.params["format"].get<std::string>());
    auto& log = log_of(ctx);
    const auto r = log.save(ctx.world(), format);
    return {{"world", ctx.hosted->name()},
            {"path", r.path},
            {"format", persist::format_name(format.value_or(log.format()))},
            {"bytes", r.bytes},
            {"tick", r.tick},
            {"ms", r.ms}};
}

method_answer load(method_context& ctx) {
    (void)log_of(ctx);
    const std::string name = ctx.hosted->name();
    // Read the world back from its snapshot and journal, as a restart would.
    loaded_world loaded;
    try {
        loaded = load_world(ctx.services.config.data_dir, name, ctx.services.worlds.io(),
                            replay_through(ctx.services));
    } catch (const std::exception& e) {  // damaged or unreadable files: the world is left as it was
        return method_answer::error(protocol::reason::storage_error, std::string("cannot load: ") + e.what(),
                                    {{"world", name}, {"detail", e.what()}});
    }
    auto world = loaded.hosted->world_ptr();
    loaded.hosted->stop();  // it only carried the replay; this hosted world runs the result
    ctx.hosted->drop_log(/*remove_files=*/false);
    attach_log(*ctx.hosted, ctx.services.config, loaded.seq, /*save_now=*/false);
    ctx.hosted->replace_world(world);
    return {{"world", name},
            {"tick", world->tick()},
            {"entities", world->registry().size()},
            {"replayed", loaded.replayed}};
}

/// @brief The chunk world.export sends when not told (bytes of snapshot text).
constexpr std::size_t default_chunk_bytes = std::size_t{256} * 1024;
/// @brief The largest chunk: its JSON-escaped answer stays well under the default line limits.
constexpr std::size_t max_chunk_bytes = std::size_t{512} * 1024;

method_answer export_world(method_context& ctx) {
    auto& transfers = ctx.services.transfers;
    const auto& name = ctx.hosted->name();
    const auto max_bytes = ctx.params.value("max_bytes", default_chunk_bytes);
    const auto offset = ctx.params.value("offset", std::size_t{0});
    world_transfers::export_text e;
    std::string id;
    if (ctx.params.contains("export")) {
        if (ctx.params.contains("seal")) {
            return method_answer::error(protocol::reason::invalid_params,
                                        "`seal` goes with the first call of an export (without `export`)",
                                        {{"world", name}});
        }
        id = ctx.params.at("export").get<std::string>();
        auto found = transfers.find_export(id);
        if (!found || found->world != name) {
            return method_answer::error(
                protocol::reason::invalid_params,
                "no export '" + id + "' of world '" + name +
                    "' (finished, idle for over 20 s, dropped for room, or never begun)",
                {{"world", name}, {"export", id}});
        }
        e = std::move(*found);
    } else {
        if (offset != 0) {
            return method_answer::error(protocol::reason::invalid_params,
                                        "a new export starts at offset 0; give `export` to go on with one",
                                        {{"world", name}});
        }
        // The snapshot is taken here, between two ticks: every chunk comes from this one text.
        // Exports of the same state share it (the text is the same), so readers at once cost one.
        const world_transfers::export_state state{ctx.hosted->world_ptr().get(), ctx.world().tick(),
                                                  ctx.hosted->state_version()};
        auto text = transfers.shared_text(name, state);
        if (!text)
            text = std::make_shared<const std::string>(
                persist::seal_snapshot(persist::snapshot_text(ctx.world(), 0)));
        e = {name, state.tick, std::move(text)};
        try {
            id = transfers.add_export(e, state, ctx.services.config.max_export_bytes);
        } catch (const std::length_error& err) {
            return method_answer::error(protocol::reason::limit_reached, err.what(), {{"world", name}});
        }
        // Sealed in the same step as the snapshot: no tick and no write falls between the two.
        if (ctx.params.value("seal", false)) ctx.hosted->seal();
    }
    const std::string& text = *e.text;
    if (offset > text.size()) {
        return method_answer::error(protocol::reason::invalid_params,
                                    "offset " + std::to_string(offset) + " is past the export's " +
                                        std::to_string(text.size()) + " bytes",
                                    {{"world", name}, {"export", id}});
    }
    auto end = std::min(text.size(), offset + max_bytes);
    // A chunk never ends inside a UTF-8 sequence (each chunk is a JSON string): back up to a
    // character's first byte. max_bytes >= 16 leaves at least 13 bytes to send.
    while (end > offset && end < text.size() && (static_cast<unsigned char>(text[end]) & 0xC0U) == 0x80U)
        --end;
    const bool done = end == text.size();
    if (done) transfers.end_export(id);
    return {{"world", name},    {"export", id},
            {"tick", e.tick},   {"bytes", text.size()},
            {"offset", offset}, {"data", text.substr(offset, end - offset)},
            {"done", done},     {"sealed", ctx.hosted->sealed()}};
}

method_answer unseal_world(method_context& ctx) {
    ctx.hosted->unseal();
    return {{"world", ctx.hosted->name()}, {"tick", ctx.world().tick()}, {"sealed", false}};
}

method_answer import_world(method_context& ctx) {
    auto& services = ctx.services;
    const auto name = ctx.params.at("world").get<std::string>();
    const auto offset = ctx.params.value("offset", std::size_t{0});
    // A name taken, or no room for another world: refused before any byte is kept.
    if (offset == 0) services.worlds.check_room(name);
    std::size_t expected = 0;
    std::optional<std::size_t> gathered;
    try {
        gathered = services.transfers.append_import(name, offset,
                                                    ctx.params.at("data").get_ref<const std::string&>(),
                                                    &expected, services.config.max_import_bytes);
    } catch (const std::length_error& e) {
        return method_answer::error(protocol::reason::limit_reached, e.what(), {{"world", name}});
    }
    if (!gathered) {
        return method_answer::error(protocol::reason::invalid_params,
                                    "the import of world '" + name + "' stands at byte " +
                                        std::to_string(expected) + ": send that offset (or 0 to start again)",
                                    {{"world", name}, {"expected_offset", expected}});
    }
    if (!ctx.params.value("final", false)) return {{"world", name}, {"bytes", *gathered}, {"done", false}};

    // The name is claimed before the text is read into a world, and long before any file is
    // written: a world.create or another import of it meanwhile gets world_exists and writes
    // nothing, and a refusal here (world_exists, limit_reached) leaves no file behind.
    world_claim claim;
    try {
        claim = services.worlds.claim(name);
    } catch (const protocol::rpc_error&) {
        services.transfers.drop_import(name);
        throw;
    }
    std::string text = services.transfers.take_import(name);
    const std::size_t text_bytes = text.size();
    std::shared_ptr<world::world> w;
    try {
        w = persist::world_from_import(std::move(text), name);
    } catch (const persist::persist_error& e) {
        return method_answer::error(protocol::reason::invalid_params,
                                    "cannot import world '" + name + "': " + e.what(), {{"world", name}});
    }
    // A move imports paused (to compare hashes at the export's tick) and resumes after.
    if (const auto p = ctx.params.find("paused"); p != ctx.params.end()) {
        if (p->get<bool>())
            w->pause();
        else if (w->paused())
            w->resume(std::chrono::steady_clock::now());
    }
    json result{{"world", name},
                {"bytes", text_bytes},
                {"done", true},
                {"tick", w->tick()},
                {"entities", w->registry().size()}};
    auto hosted = std::make_shared<hosted_world>(services.worlds.io(), name, std::move(w));
    attach_log(*hosted, services.config, 0, /*save_now=*/true);
    services.worlds.add_hosted(std::move(hosted), std::move(claim));
    return result;
}

}  // namespace

void register_persist_methods(method_table& table) {
    const json report = object_schema({{"world", {{"type", "string"}}},
                                       {"path", {{"type", "string"}}},
                                       {"format", {{"type", "string"}}},
                                       {"bytes", {{"type", "integer"}}},
                                       {"tick", {{"type", "integer"}}},
                                       {"ms", {{"type", "number"}}}},
                                      {"world", "path", "tick"});
    table.add({.name = "world.save",
               .summary = "Writes the world's snapshot now (atomically) and empties its journal.",
               .params = object_schema({{"format",
                                         {{"type", "string"},
                                          {"enum", {"binary", "zstd", "json"}},
                                          {"description",
                                           "this save only; the server's --snapshot-format otherwise "
                                           "(autosaves keep using it)"}}}}),
               .result = report,
               .flags = method_flags::world_bound | method_flags::read_only | method_flags::operator_only,
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
    table.add(
        {.name = "world.export",
         .summary =
             "The world's snapshot, taken at one tick, in chunks: call again with `export` and the next "
             "offset until `done`.",
         .params = object_schema(
             {{"export", {{"type", "string"}, {"description", "an export begun by an earlier call"}}},
              {"offset", {{"type", "integer"}, {"minimum", 0}, {"default", 0}}},
              {"max_bytes",
               {{"type", "integer"},
                {"minimum", 16},
                {"maximum", max_chunk_bytes},
                {"default", default_chunk_bytes}}},
              {"seal",
               {{"type", "boolean"},
                {"default", false},
                {"description",
                 "with the first call: the world stops ticking and refuses changes (world_sealed) "
                 "until world.unseal or world.destroy; for a move to another server"}}}}),
         .result = object_schema({{"world", {{"type", "string"}}},
                                  {"export", {{"type", "string"}}},
                                  {"tick", {{"type", "integer"}}},
                                  {"bytes", {{"type", "integer"}}},
                                  {"offset", {{"type", "integer"}}},
                                  {"data", {{"type", "string"}}},
                                  {"done", {{"type", "boolean"}}},
                                  {"sealed", {{"type", "boolean"}}}},
                                 {"world", "export", "tick", "bytes", "offset", "data", "done", "sealed"}),
         // admin: it hands out the whole world and costs a snapshot of it; --read-only refuses it.
         .flags = method_flags::world_bound | method_flags::admin,
         .handler = export_world});
    table.add(
        {.name = "world.unseal",
         .summary = "Lifts a world's seal (world.export with `seal`): it ticks and takes changes again.",
         .params = object_schema(),
         .result = object_schema({{"world", {{"type", "string"}}},
                                  {"tick", {{"type", "integer"}}},
                                  {"sealed", {{"type", "boolean"}}}},
                                 {"world", "tick", "sealed"}),
         .flags = method_flags::world_bound | method_flags::admin,
         .handler = unseal_world});
    table.add(
        {.name = "world.import",
         .summary =
             "Creates a world from a snapshot sent in chunks (world.export's data, in order); the chunk "
             "with `final` creates it, with the ids, tick and state of the snapshot.",
         .params = object_schema(
             {{"world",
               {{"type", "string"}, {"minLength", 1}, {"maxLength", 64}, {"description", "world name"}}},
              {"data", {{"type", "string"}}},
              {"offset", {{"type", "integer"}, {"minimum", 0}, {"default", 0}}},
              {"final", {{"type", "boolean"}, {"default", false}}},
              {"paused",
               {{"type", "boolean"},
                {"description",
                 "with `final`: create the world paused (true) or ticking (false), "
                 "whatever the snapshot says"}}}},
             {"world", "data"}),
         .result = object_schema({{"world", {{"type", "string"}}},
                                  {"bytes", {{"type", "integer"}}},
                                  {"done", {{"type", "boolean"}}},
                                  {"tick", {{"type", "integer"}}},
                                  {"entities", {{"type", "integer"}}}},
                                 {"world", "bytes", "done"}),
         .flags = method_flags::admin | method_flags::background,
         .handler = import_world});
}

}  // namespace ecsd::net
