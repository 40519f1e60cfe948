// rpc.discover, server.ping, server.info, server.slowlog, server.monitor, server.auth: methods
// about the server itself. They are not world-bound, so they run on the calling connection's strand.
#include <sys/resource.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>

#include "ecsd/protocol/depth.hpp"
#include "ecsd/protocol/errors.hpp"
#include "ecsd/protocol/version.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/watch.hpp"
#include "hosting/world_directory.hpp"
#include "methods.hpp"
#include "rpc/method_table.hpp"
#include "rpc/services.hpp"
#include "rpc/session.hpp"
#include "rpc/token_check.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

method_answer discover(method_context& ctx) {
    return ctx.services.openrpc;
}

method_answer ping(method_context&) {
    return json("pong");
}

// jemalloc's control call, when ecsd links jemalloc (cmake/CompilerOptions.cmake, ECSD_JEMALLOC):
// a weak reference, null under glibc's malloc and the sanitizers.
extern "C" int mallctl(const char*, void*, std::size_t*, void*, std::size_t) __attribute__((weak));

/// @brief The allocator's own figures (jemalloc's stats.*), or null without jemalloc: what the
/// heap holds live (`allocated`), in pages it uses (`active`), resident (`resident`), for its own
/// books (`metadata`) and mapped but given back (`retained`). The registry's big arrays are not in
/// it: they are mapped by the memory module.
json allocator_figures() {
    if (mallctl == nullptr) return nullptr;
    std::uint64_t epoch = 1;
    std::size_t len = sizeof(epoch);
    if (mallctl("epoch", &epoch, &len, &epoch, len) != 0) return nullptr;  // refreshes the stats
    json out = json::object();
    for (const char* name : {"allocated", "active", "resident", "metadata", "retained"}) {
        std::size_t v = 0;
        len = sizeof(v);
        if (mallctl(("stats." + std::string(name)).c_str(), &v, &len, nullptr, 0) == 0) out[name] = v;
    }
    return out;
}

/// @brief The process's resident memory and each world's registry, as of its last tick.
json memory_of(const server_services& s) {
    long pages = 0;
    if (std::FILE* f = std::fopen("/proc/self/statm", "r")) {
        long size = 0;
        if (std::fscanf(f, "%ld %ld", &size, &pages) != 2) pages = 0;
        std::fclose(f);
    }
    json worlds = json::object();
    for (const auto& w : s.worlds.all()) {
        const auto& f = w->last_figures();
        worlds[w->name()] = {{"entities", f.entities.load(std::memory_order_relaxed)},
                             {"registry_bytes", f.memory_bytes.load(std::memory_order_relaxed)},
                             {"tick", f.tick.load(std::memory_order_relaxed)}};
    }
    return {{"rss_bytes", pages * ::sysconf(_SC_PAGESIZE)},
            {"worlds", std::move(worlds)},
            {"allocator", allocator_figures()}};
}

/// @brief CPU time the process has used (every thread), as load tools divide it per request.
json cpu_of() {
    ::rusage ru{};
    if (::getrusage(RUSAGE_SELF, &ru) != 0) return {{"user_s", 0.0}, {"system_s", 0.0}};
    const auto seconds = [](const ::timeval& t) {
        return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6;
    };
    return {{"user_s", seconds(ru.ru_utime)}, {"system_s", seconds(ru.ru_stime)}};
}

method_answer slowlog(method_context& ctx) {
    auto& log = ctx.services.slowlog;
    auto out = log.to_json(ctx.params.value("count", std::size_t{10}));
    if (ctx.params.value("reset", false)) log.reset();
    return out;
}

method_answer monitor(method_context& ctx) {
    auto& hub = ctx.services.monitors;
    if (ctx.params.value("stop", false)) return {{"monitoring", false}, {"was", hub.remove(ctx.caller->id)}};
    if (!ctx.caller->watches || !ctx.caller->lines) {
        return method_answer::error(protocol::reason::invalid_params,
                                    "server.monitor streams over TCP only (notifications on the connection)");
    }
    hub.add(ctx.caller->id, ctx.caller->watches);
    return {{"monitoring", true}};
}

method_answer info(method_context& ctx) {
    const auto& s = ctx.services;
    const auto& c = s.config;
    const double uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.started).count();
    return {{"version", protocol::version},
            {"uptime_s", uptime},
            {"connections",
             {{"open", s.connections_open.load()},
              {"total", s.connections_total.load()},
              {"max", c.max_connections}}},
            {"requests_total", s.requests_total.load()},
            {"bytes", {{"in", s.bytes_in.load()}, {"out", s.bytes_out.load()}}},
            {"output",
             {{"unsent", s.output.total()},
              {"max", s.output.limit()},
              {"dropped", s.output.dropped()},
              {"backlogs",
               {{"bytes", held_diffs::process().bytes()}, {"diffs", held_diffs::process().diffs()}}}}},
            {"watch_views", {{"open", s.watch_views->views.load()}, {"max", s.watch_views->max_views_total}}},
            {"methods", s.stats ? s.stats->to_json(s.methods) : json::object()},
            {"memory", memory_of(s)},
            {"cpu", cpu_of()},
            {"worlds", s.worlds.names()},
            {"limits",
             {{"max_line_bytes", c.max_line_bytes},
              {"preauth_line_bytes", c.preauth_line_bytes},
              {"max_nesting_depth", protocol::max_nesting_depth},
              {"max_batch", c.max_batch},
              {"max_pipeline", c.max_pipeline},
              {"max_connections", c.max_connections},
              {"max_output_bytes", c.max_output_bytes},
              {"max_worlds", c.max_worlds},
              {"idle_timeout_s", c.idle_timeout},
              {"request_timeout_s", c.request_timeout},
              {"max_watches", c.max_watches},
              {"max_watch_views", c.max_watch_views},
              {"max_watch_views_total", c.max_watch_views_total},
              {"max_output_total", c.max_output_total}}},
            {"auth_required", c.auth_required()},
            {"config", config_to_json(c)}};
}

method_answer auth(method_context& ctx) {
    if (auto refused =
            check_token(ctx.services, *ctx.caller, ctx.params.at("token").get_ref<const std::string&>()))
        return method_answer::error(refused->why(), refused->what(), refused->data());
    const auto& who = *ctx.caller;
    return {{"authenticated", true}, {"identity", who.identity}, {"role", role_name(who.who)}};
}

json info_schema() {
    const json count{{"type", "integer"}, {"minimum", 0}};
    return {
        {"type", "object"},
        {"properties",
         {{"version", {{"type", "string"}}},
          {"uptime_s", {{"type", "number"}}},
          {"connections", object_schema({{"open", count}, {"total", count}, {"max", count}})},
          {"requests_total", count},
          {"bytes", object_schema({{"in", count}, {"out", count}})},
          {"methods",
           {{"type", "object"},
            {"description", "per method called so far: calls, errors, total_ms, p50_us, p99_us, max_us"}}},
          {"memory",
           {{"type", "object"},
            {"description",
             "rss_bytes; per world: entities, registry_bytes, tick (as of its last tick); allocator: "
             "jemalloc's allocated, active, resident, metadata, retained bytes (null without jemalloc)"}}},
          {"cpu", object_schema({{"user_s", {{"type", "number"}}}, {"system_s", {{"type", "number"}}}})},
          {"worlds", {{"type", "array"}, {"items", {{"type", "string"}}}}},
          {"limits", {{"type", "object"}}},
          {"auth_required", {{"type", "boolean"}}},
          {"config", {{"type", "object"}, {"description", "every setting; the token shows as \"set\""}}}}},
        {"required", {"version", "uptime_s", "connections", "worlds", "limits", "config"}}};
}

method_answer clients(method_context& ctx) {
    return {{"clients", ctx.services.clients.list()}};
}

}  // namespace

void register_server_methods(method_table& table) {
    table.add({.name = "rpc.discover",
               .summary = "The OpenRPC 1.2.6 document of every method, generated from the method table.",
               .params = object_schema(),
               .result = {{"type", "object"}, {"required", {"openrpc", "info", "methods"}}},
               .flags = method_flags::read_only,
               .handler = discover});
    table.add({.name = "server.ping",
               .summary = "Answers \"pong\".",
               .params = object_schema(),
               .result = {{"const", "pong"}},
               .flags = method_flags::read_only,
               .handler = ping});
    table.add({.name = "server.info",
               .summary = "Version, uptime, connections, worlds, limits and the configuration.",
               .params = object_schema(),
               .result = info_schema(),
               .flags = method_flags::read_only,
               .handler = info});
    table.add({.name = "server.slowlog",
               .summary = "The slowest recent requests (handler time at least --slowlog-us), newest first; "
                          "reset empties it.",
               .params = object_schema(
                   {{"count", {{"type", "integer"}, {"minimum", 0}, {"maximum", 100000}, {"default", 10}}},
                    {"reset", {{"type", "boolean"}, {"default", false}}}}),
               .result = object_schema({{"entries", {{"type", "array"}}},
                                        {"len", {{"type", "integer"}}},
                                        {"threshold_us", {{"type", "integer"}}},
                                        {"max_len", {{"type", "integer"}}}},
                                       {"entries", "len"}),
               .flags = method_flags::read_only | method_flags::operator_only,
               .handler = slowlog});
    table.add({.name = "server.monitor",
               .summary =
                   "Streams every later request of the other connections to this one as server.monitor "
                   "notifications (like Redis's MONITOR); {stop: true} ends it.",
               .params = object_schema({{"stop", {{"type", "boolean"}, {"default", false}}}}),
               .result = object_schema(
                   {{"monitoring", {{"type", "boolean"}}}, {"was", {{"type", "boolean"}}}}, {"monitoring"}),
               .flags = method_flags::read_only | method_flags::operator_only,
               .handler = monitor});
    table.add({.name = "server.clients",
               .summary = "Every open connection (TCP, WebSocket, HTTP): id, peer address, identity and role "
                          "(null until it authenticated), seconds connected.",
               .params = object_schema(),
               .result = object_schema({{"clients", {{"type", "array"}}}}, {"clients"}),
               .flags = method_flags::read_only | method_flags::operator_only,
               .handler = clients});
    table.add({.name = "server.auth",
               .summary =
                   "Authenticates the connection with a token (--token or --tokens); required first when one "
                   "is set. Answers with the identity and its role.",
               .params = object_schema({{"token", {{"type", "string"}, {"maxLength", 1024}}}}, {"token"}),
               .result = object_schema({{"authenticated", {{"const", true}}},
                                        {"identity", {{"type", "string"}}},
                                        {"role", {{"enum", {"admin", "observer", "player"}}}}},
                                       {"authenticated", "identity", "role"}),
               .flags = method_flags::pre_auth | method_flags::secret,
               .handler = auth});
}

}  // namespace ecsd::net
