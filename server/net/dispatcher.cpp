#include "dispatcher.hpp"

#include <spdlog/spdlog.h>

#include "ecs/error.hpp"
#include "hosted_world.hpp"
#include "services.hpp"
#include "session.hpp"
#include "world/world.hpp"
#include "world_directory.hpp"
#include "world_log.hpp"

namespace ecsd::net {
namespace {

using nlohmann::json;
using protocol::reason;

job_result error_result(reason why, std::string_view detail, const json& data = nullptr) {
    return {protocol::error_object(why, detail, data), true, {}};
}

std::string error_text(const json& id, reason why, std::string_view detail, const json& data = nullptr) {
    return protocol::make_error(id, why, detail, data);
}

void log_error(std::uint64_t connection, std::string_view method, const job_result& r) {
    // A line per error (issue 5); messages never contain tokens (server.auth does not echo them).
    const auto& data = r.value["data"];
    spdlog::info("conn {}: {} -> {}: {}", connection, method, data.value("reason", "?"),
                 r.value.value("message", ""));
}

}  // namespace

job_result dispatcher::invoke(const method_entry& method, method_context& ctx, std::uint64_t connection) const {
    job_result r;
    try {
        r.value = method.handler(ctx);
        r.text = std::move(ctx.raw_result);
        return r;
    } catch (const protocol::rpc_error& e) {
        r = error_result(e.why(), e.what(), e.data());
    } catch (const ecs::ecs_error& e) {
        r = {protocol::error_object(e.reason(), e.what()), true, {}};
        if (!protocol::reason_from_name(e.reason())) {
            spdlog::warn("conn {}: {} threw reason '{}' which is not in the reason table", connection, method.name,
                         e.reason());
        }
    } catch (const json::exception& e) {
        // Handlers read validated params, so a JSON type error is a value the schema let through.
        r = error_result(reason::invalid_params, e.what());
    } catch (const std::exception& e) {
        spdlog::error("conn {}: {} failed: {}", connection, method.name, e.what());
        r = error_result(reason::internal, "internal error");
    }
    log_error(connection, method.name, r);
    return r;
}

prepared dispatcher::prepare(protocol::request&& req, session& caller) {
    services_.requests_total.fetch_add(1, std::memory_order_relaxed);
    const auto answer = [&](std::string text) {
        prepared p;
        if (!req.notification) p.response = std::move(text);
        return p;
    };
    const auto refuse = [&](reason why, std::string_view detail, const json& data = nullptr) {
        spdlog::info("conn {}: {} -> {}: {}", caller.id, req.method, protocol::name(why), detail);
        return answer(error_text(req.id, why, detail, data));
    };

    const method_entry* method = services_.methods.find(req.method);
    const bool may_run_unauthenticated = method != nullptr && has(method->flags, method_flags::pre_auth);
    if (!caller.authenticated && !may_run_unauthenticated) {
        return refuse(reason::unauthorized, "call server.auth first");
    }
    if (method == nullptr) return refuse(reason::method_not_found, "no method '" + req.method + "'", {{"method", req.method}});
    if (services_.config.read_only && (has(method->flags, method_flags::mutating) || has(method->flags, method_flags::admin))) {
        return refuse(reason::unauthorized, "the server is read-only");
    }
    if (req.params.is_null()) req.params = json::object();
    if (!req.params.is_object()) return refuse(reason::invalid_params, "params must be an object (by-name)");
    if (auto problem = method->compiled_params.validate(req.params)) return refuse(reason::invalid_params, *problem);

    if (has(method->flags, method_flags::world_bound)) {
        auto it = req.params.find("world");
        const std::string name = it == req.params.end() ? std::string("default") : it->get<std::string>();
        auto world = services_.worlds.find(name);
        if (!world) return refuse(reason::no_such_world, "no world '" + name + "'", {{"world", name}});
        prepared p;
        p.job = world_job{std::move(world), method, std::move(req.id), std::move(req.params), req.notification, caller.id};
        return p;
    }

    method_context ctx{req.params, services_, nullptr, &caller, {}};
    const auto r = invoke(*method, ctx, caller.id);
    if (!r.text.empty()) return answer(protocol::make_result_text(req.id, r.text));
    return answer(protocol::make_response(req.id, r.value, r.is_error));
}

job_result dispatcher::run(world_job& job) {
    method_context ctx{job.params, services_, job.world.get(), nullptr, {}};
    world_log* log = has(job.method->flags, method_flags::mutating) ? job.world->log() : nullptr;
    const std::uint64_t tick = log ? job.world->world().tick() : 0;
    auto result = invoke(*job.method, ctx, job.connection);
    // Journal before the response goes out: with appendfsync always, an acknowledged write is on disk.
    if (log && !result.is_error) {
        try {
            log->record_request(tick, job.method->name, job.params);
        } catch (const std::exception& e) {
            spdlog::error("conn {}: {} applied but not journaled: {}", job.connection, job.method->name, e.what());
            result = error_result(reason::internal, std::string("applied but not journaled: ") + e.what());
        }
    }
    return result;
}

std::optional<std::string> dispatcher::finish(const world_job& job, const job_result& result) {
    if (job.notification) return std::nullopt;
    if (!result.text.empty()) return protocol::make_result_text(job.id, result.text);
    return protocol::make_response(job.id, result.value, result.is_error);
}

}  // namespace ecsd::net
