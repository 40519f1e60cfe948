// rpc.discover, server.ping, server.info, server.auth: methods about the server itself. They
// are not world-bound, so they run on the calling connection's strand.
#include <chrono>

#include "constant_time.hpp"
#include "ecsd/protocol/depth.hpp"
#include "ecsd/protocol/errors.hpp"
#include "ecsd/protocol/version.hpp"
#include "method_table.hpp"
#include "methods.hpp"
#include "services.hpp"
#include "session.hpp"
#include "world_directory.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;

json discover(method_context& ctx) { return ctx.services.openrpc; }

json ping(method_context&) { return "pong"; }

json info(method_context& ctx) {
    const auto& s = ctx.services;
    const auto& c = s.config;
    const double uptime = std::chrono::duration<double>(std::chrono::steady_clock::now() - s.started).count();
    return {{"version", protocol::version},
            {"uptime_s", uptime},
            {"connections",
             {{"open", s.connections_open.load()}, {"total", s.connections_total.load()}, {"max", c.max_connections}}},
            {"requests_total", s.requests_total.load()},
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
              {"idle_timeout_s", c.idle_timeout}}},
            {"auth_required", !c.token.empty()},
            {"config", config_to_json(c)}};
}

json auth(method_context& ctx) {
    const auto& expected = ctx.services.config.token;
    if (!expected.empty() && !constant_time_equal(ctx.params.at("token").get_ref<const std::string&>(), expected)) {
        throw protocol::rpc_error(protocol::reason::unauthorized, "invalid token");
    }
    ctx.caller->authenticated = true;
    return {{"authenticated", true}};
}

json info_schema() {
    const json count{{"type", "integer"}, {"minimum", 0}};
    return {{"type", "object"},
            {"properties",
             {{"version", {{"type", "string"}}},
              {"uptime_s", {{"type", "number"}}},
              {"connections", object_schema({{"open", count}, {"total", count}, {"max", count}})},
              {"requests_total", count},
              {"worlds", {{"type", "array"}, {"items", {{"type", "string"}}}}},
              {"limits", {{"type", "object"}}},
              {"auth_required", {{"type", "boolean"}}},
              {"config", {{"type", "object"}, {"description", "every setting; the token shows as \"set\""}}}}},
            {"required", {"version", "uptime_s", "connections", "worlds", "limits", "config"}}};
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
    table.add({.name = "server.auth",
               .summary = "Authenticates the connection with the server's token; required first when one is set.",
               .params = object_schema({{"token", {{"type", "string"}, {"maxLength", 1024}}}}, {"token"}),
               .result = object_schema({{"authenticated", {{"const", true}}}}, {"authenticated"}),
               .flags = method_flags::pre_auth,
               .handler = auth});
}

}  // namespace ecsd::net
