#include "rpc/dispatcher.hpp"

#include <time.h>

#include <atomic>
#include <chrono>

#include <spdlog/spdlog.h>

#include "ecs/error.hpp"
#include "ecs/value_codec.hpp"
#include "ecsd/protocol/names.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/world_directory.hpp"
#include "hosting/world_log.hpp"
#include "persist/atomic_file.hpp"
#include "rpc/core_reasons.hpp"
#include "rpc/services.hpp"
#include "rpc/session.hpp"
#include "rpc/token_check.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

/// @brief What logs, monitors and the slowlog show for the params of a method_flags::secret method.
constexpr std::string_view hidden_params = "(hidden)";

using nlohmann::json;
using protocol::reason;

job_result error_result(reason why, std::string_view detail, const json& data = nullptr) {
    return {nullptr, true, protocol::error_text(why, detail, data)};
}

std::string error_text(const json& id, reason why, std::string_view detail, const json& data = nullptr) {
    return protocol::make_error(id, why, detail, data);
}

/// @brief Lets through at most `per_second` error lines each second, process-wide, and says how many
/// it held back when the next second opens. Without it a client that sends nothing but bad requests
/// makes the server spend most of its time writing the log (an error line costs more than the
/// request that caused it) and can fill the disk the log goes to. Counts may be off by a few under races;
/// nothing breaks.
class error_log_gate {
  public:
    static constexpr std::uint32_t per_second = 100;

    bool admit() {
        // The coarse clock: a read of the kernel's last tick, cheaper than the exact clock on
        // every error; a gate per second needs no better.
        timespec ts{};
        ::clock_gettime(CLOCK_MONOTONIC_COARSE, &ts);
        const std::int64_t now = ts.tv_sec;
        auto second = second_.load(std::memory_order_relaxed);
        if (now != second && second_.compare_exchange_strong(second, now, std::memory_order_relaxed)) {
            used_.store(0, std::memory_order_relaxed);
            if (const auto held = held_.exchange(0, std::memory_order_relaxed); held > 0) {
                spdlog::info(
                    "{} more error lines not logged (at most {} a second); server.info's methods count every "
                    "error",
                    held, per_second);
            }
        }
        if (used_.fetch_add(1, std::memory_order_relaxed) < per_second) return true;
        held_.fetch_add(1, std::memory_order_relaxed);
        return false;
    }

  private:
    std::atomic<std::int64_t> second_{-1};
    std::atomic<std::uint32_t> used_{0};
    std::atomic<std::uint64_t> held_{0};
};

error_log_gate error_lines;

void log_error(std::uint64_t connection, std::string_view method, reason why, std::string_view message) {
    // A line per error (issue 5), at most error_log_gate::per_second a second; messages never
    // contain tokens (server.auth does not echo them).
    if (!spdlog::should_log(spdlog::level::info) || !error_lines.admit()) return;
    spdlog::info("conn {}: {} -> {}: {}", connection, method, protocol::name(why), message);
}

}  // namespace

void dispatcher::note_done(const method_entry& method, const json& params, std::uint64_t ns, bool error,
                           std::uint64_t connection, const protocol::entity_read* read) const {
    if (services_.stats)
        services_.stats->record(static_cast<std::size_t>(&method - services_.methods.methods().data()), ns,
                                error);
    if (services_.slowlog.wants(ns))
        services_.slowlog.add(ns, method.name,
                              has(method.flags, method_flags::secret) ? json(hidden_params)
                              : read != nullptr                       ? protocol::to_params(*read)
                                                                      : params,
                              connection);
}

job_result dispatcher::invoke(const method_entry& method, method_context& ctx,
                              std::uint64_t connection) const {
    job_result r;
    const auto fail = [&](reason why, std::string_view message, const json& data = nullptr) {
        r = error_result(why, message, data);
        log_error(connection, method.name, why, message);
    };
    try {
        auto answer = method.handler(ctx);
        if (const auto& failed = answer.failed()) {
            fail(failed->why, failed->message, failed->data);
            return r;
        }
        r.value = std::move(answer.value());
        r.text = std::move(answer.text());
        return r;
    } catch (const protocol::rpc_error& e) {
        fail(e.why(), e.what(), e.data());
    } catch (const ecs::ecs_error& e) {
        fail(wire_reason(e.why()), e.what());
    } catch (const persist::storage_error& e) {
        // A snapshot or journal that cannot be written (world.save, world.create on a full disk).
        fail(reason::storage_error, e.what(), {{"detail", e.what()}});
    } catch (const json::exception& e) {
        // Handlers read validated params, so a JSON type error is a value the schema let through.
        // The library's text stays in the log; the client reads plain words (ids: 3xx type, 4xx range).
        spdlog::info("conn {}: {}: {}", connection, method.name, e.what());
        fail(reason::invalid_params, e.id >= 300 && e.id < 400 ? "params: a value has the wrong type"
                                     : e.id >= 400 && e.id < 500
                                         ? "params: a member is missing or a number is out of range"
                                         : "params: a value cannot be read");
    } catch (const std::exception& e) {
        spdlog::error("conn {}: {} failed: {}", connection, method.name, e.what());
        fail(reason::internal, "internal error");
    }
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
        if (spdlog::should_log(spdlog::level::info) && error_lines.admit())
            spdlog::info("conn {}: {} -> {}: {}", caller.id, req.method, protocol::name(why), detail);
        return answer(error_text(req.id, why, detail, data));
    };

    const method_entry* method = services_.methods.find(req.method);
    // Params the parser read as an entity_read (protocol/jsonrpc.hpp) take the typed way only to a
    // method whose handler reads them so, and only when nothing here shows params as a tree.
    if (req.read && (method == nullptr || !has(method->flags, method_flags::entity_read) ||
                     spdlog::should_log(spdlog::level::trace) || services_.monitors.active())) {
        req.params = protocol::to_params(*req.read);
        req.read.reset();
    }
    const bool may_run_unauthenticated = method != nullptr && has(method->flags, method_flags::pre_auth);
    if (!may_run_unauthenticated && !still_authenticated(services_, caller)) {
        return refuse(reason::unauthorized, "call server.auth first");
    }
    if (method == nullptr)
        return refuse(reason::method_not_found, "no method '" + req.method + "'", {{"method", req.method}});
    if (!role_may_call(caller.who, method->flags)) {
        return refuse(reason::unauthorized,
                      "the role " + std::string(role_name(caller.who)) + " may not call " + req.method,
                      {{"role", role_name(caller.who)}, {"method", req.method}});
    }
    const bool secret = has(method->flags, method_flags::secret);
    // Every request, at trace (secrets hidden): debug keeps one line per connection.
    if (spdlog::should_log(spdlog::level::trace)) {
        spdlog::trace("{} {}: {} {}", caller.lines ? "conn" : "http", caller.id, req.method,
                      secret ? std::string(hidden_params)
                             : req.params.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    if (services_.monitors.active())
        services_.monitors.publish(caller.id, caller.peer, req.method,
                                   secret ? json(hidden_params) : req.params);
    if (services_.config.read_only &&
        (has(method->flags, method_flags::mutating) || has(method->flags, method_flags::admin))) {
        return refuse(reason::unauthorized, "the server is read-only");
    }
    if (req.read) {
        // Of the params' schema by their shape (entity_read): only the world's name is left to check.
        if (req.read->world) {
            if (auto problem = protocol::world_name_problem(*req.read->world))
                return refuse(reason::invalid_params, "params.world: " + *problem);
        }
    } else {
        if (req.params.is_null()) req.params = json::object();
        if (!req.params.is_object())
            return refuse(reason::invalid_params, "params must be an object (by-name)");
        // A world name becomes a file name: every method that takes one gets it checked here, first.
        if (const auto w = req.params.find("world"); w != req.params.end() && w->is_string()) {
            if (auto problem = protocol::world_name_problem(w->get_ref<const std::string&>()))
                return refuse(reason::invalid_params, "params.world: " + *problem);
        }
        if (auto problem = method->compiled_params.validate(req.params))
            return refuse(reason::invalid_params, *problem);
    }
    if (has(method->flags, method_flags::action)) {
        // A player's calls are held to --action-rate; the caller's identity goes into the params
        // (which the schema lets no client set), so the journal replays the call as the same caller.
        if (caller.who == role::player) {
            if (const auto wait =
                    services_.action_guard.take(caller.identity, std::chrono::steady_clock::now()))
                return refuse(reason::rate_limited,
                              fmt::format("more than --action-rate ({:g}) calls a second",
                                          services_.config.action_rate),
                              {{"retry_after", *wait}});
        }
        req.params["caller"] = caller.identity;
    }

    if (has(method->flags, method_flags::world_bound)) {
        std::string name = "default";
        if (req.read) {
            if (req.read->world) name = *req.read->world;
        } else if (const auto it = req.params.find("world"); it != req.params.end()) {
            name = it->get<std::string>();
        }
        auto world = services_.worlds.find(name);
        if (!world) return refuse(reason::no_such_world, "no world '" + name + "'", {{"world", name}});
        prepared p;
        p.job = world_job{std::move(world), method,    std::move(req.id), std::move(req.params),
                          req.notification, caller.id, &caller,           std::move(req.read)};
        return p;
    }

    if (has(method->flags, method_flags::background)) {
        // Queued on the lane's strand like a world job; the connection answers when it is done.
        prepared p;
        p.job = world_job{services_.transfers.lane(), method,    std::move(req.id), std::move(req.params),
                          req.notification,           caller.id, &caller,           std::nullopt};
        return p;
    }

    method_context ctx{req.params, services_, nullptr, &caller};
    const auto t0 = std::chrono::steady_clock::now();
    const auto r = invoke(*method, ctx, caller.id);
    note_done(
        *method, req.params,
        static_cast<std::uint64_t>((std::chrono::steady_clock::now() - t0) / std::chrono::nanoseconds(1)),
        r.is_error, caller.id);
    if (!r.text.empty())
        return answer(r.is_error ? protocol::make_error_text(req.id, r.text)
                                 : protocol::make_result_text(req.id, r.text));
    return answer(protocol::make_response(req.id, r.value, r.is_error));
}

job_result dispatcher::run(world_job& job) {
    // A world sealed for a move takes nothing that would change it, so no write after the copy
    // is lost: each one is refused and can be sent to the world's new server.
    // world.export reads on: a move's export is sealed by its own first call; world.destroy ends
    // the move.
    if (job.world->sealed() && job.method->name != "world.unseal" && job.method->name != "world.export" &&
        job.method->name != "world.destroy" &&
        (has(job.method->flags, method_flags::mutating) || has(job.method->flags, method_flags::admin))) {
        const auto message = "world '" + job.world->name() +
                             "' is sealed for a move to another server (world.unseal lifts the seal)";
        log_error(job.connection, job.method->name, reason::world_sealed, message);
        return error_result(reason::world_sealed, message, {{"world", job.world->name()}});
    }
    method_context ctx{job.params, services_, job.world.get(), job.caller, job.typed_params()};
    world_log* log = has(job.method->flags, method_flags::mutating) ? job.world->log() : nullptr;
    // Write-ahead: the request is journaled before it is applied (on the world's strand, so nothing
    // else appends in between). A request that cannot be journaled is never applied, and one that
    // fails has its record cut off again: the journal holds exactly the requests that took effect.
    journal_mark mark;
    if (log) {
        try {
            mark = log->record_request(job.world->world().tick(), job.method->name, job.params);
        } catch (const persist::storage_error& e) {
            const auto message = std::string("not applied: cannot write the journal: ") + e.what();
            auto r = error_result(reason::storage_error, message,
                                  {{"world", job.world->name()}, {"detail", e.what()}});
            log_error(job.connection, job.method->name, reason::storage_error, message);
            return r;
        }
    }
    auto result = invoke(*job.method, ctx, job.connection);
    if (log && result.is_error && job.world->log() == log) {
        try {
            log->undo(mark);
        } catch (const std::exception& e) {
            // The record of a failed request stays: start-up names it (--repair cuts the journal there).
            spdlog::error("conn {}: {} failed and its journal record could not be cut off: {}",
                          job.connection, job.method->name, e.what());
        }
    }
    return result;
}

std::optional<std::string> dispatcher::finish(const world_job& job, const job_result& result) {
    if (job.notification) return std::nullopt;
    if (!result.text.empty())
        return result.is_error ? protocol::make_error_text(job.id, result.text)
                               : protocol::make_result_text(job.id, result.text);
    return protocol::make_response(job.id, result.value, result.is_error);
}

std::string batch_too_large(std::size_t limit) {
    return "the batch's answer would exceed --max-output-bytes (" + std::to_string(limit) +
           "); this element was not run";
}

journal_replay replay_through(server_services& services) {
    return [&services](hosted_world& hosted, const std::string& method, const json& params) {
        replay_outcome out;
        const auto* entry = services.methods.find(method);
        if (!entry) {
            out.known = false;
            return out;
        }
        method_context ctx{params, services, &hosted, nullptr};
        try {
            // A journaled request was accepted when it ran; an older ecsd's rules may have been
            // looser than today's input bounds, and its state must load all the same.
            const ecs::restoring_scope as_saved;
            const auto answer = entry->handler(ctx);
            if (const auto& failed = answer.failed()) out.failure = failed->message;
        } catch (const std::exception& e) {
            out.failure = e.what();
        }
        return out;
    };
}

}  // namespace ecsd::net
