#pragma once
// Server-wide state handlers may read from any strand: the config, the method table, the world
// directory and counters. Everything here is immutable after start-up or thread-safe.

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "config.hpp"
#include "hosting/watch.hpp"
#include "hosting/watch_budget.hpp"
#include "hosting/world_log.hpp"
#include "hosting/world_transfers.hpp"
#include "rpc/auth_limiter.hpp"
#include "rpc/client_registry.hpp"
#include "rpc/identities.hpp"
#include "rpc/observe.hpp"
#include "rpc/output_budget.hpp"

namespace ecsd::net {

class method_table;
class world_directory;

/// @brief Shared, thread-safe server state.
struct server_services {
    server_services(const server_config& cfg, const method_table& table, world_directory& directory)
        : config(cfg), methods(table), worlds(directory), slowlog(cfg.slowlog_us, cfg.slowlog_len) {
        watch_views->max_views_per_world = cfg.max_watch_views;
        watch_views->max_views_total = cfg.max_watch_views_total;
    }

    const server_config& config;
    const method_table& methods;
    world_directory& worlds;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    nlohmann::json openrpc;  ///< built once after every family registered; read-only afterwards
    std::atomic<std::size_t> connections_open{0};
    std::atomic<std::uint64_t> connections_total{0};
    std::atomic<std::uint64_t> requests_total{0};
    std::atomic<std::uint64_t> bytes_in{0};           ///< read from clients (TCP and HTTP)
    std::atomic<std::uint64_t> bytes_out{0};          ///< written to clients
    auth_limiter auth_guard;                          ///< wrong tokens per address
    action_limiter action_guard{config.action_rate};  ///< players' world.call_action (--action-rate)
    identity_store identities;                        ///< the --tokens file's identities (rpc/identities.hpp)
    client_registry clients;                          ///< who is connected, for server.clients
    std::unique_ptr<request_stats> stats;             ///< per method; made once the table is complete
    slow_log slowlog;
    monitor_hub monitors;
    world_transfers transfers;  ///< world.export / world.import in progress
    /// Distinct watch views in all worlds (--max-watch-views, --max-watch-views-total); every
    /// connection's watch_sink holds it.
    std::shared_ptr<watch_budget> watch_views = std::make_shared<watch_budget>();
    /// Unsent bytes of all connections (--max-output-total), watch backlogs' shared diffs once.
    output_budget output{config.max_output_total, [] { return held_diffs::process().bytes(); }};

    /// @brief Tells --max-output-total what a connection holds unsent, every face alike: `own`
    /// bytes of its output, and what its watch sink holds (queued notifications are its own; its
    /// backlogs' diffs may be shared with other connections, and the total counts those once).
    void note_output(output_budget::account& a, std::size_t own, const watch_sink* watches, bool moved) {
        const auto w = watches != nullptr ? watches->held() : watch_sink::held_bytes{};
        output.update(a, own + w.queued, w.backlogs, moved);
    }

    /// @brief What every write completion does first, TCP and HTTP alike: counts the bytes sent
    /// and says whether the connection goes on. When it was stopped, or the write failed (then
    /// close(reason) is called), it clears `write_in_flight` and answers false.
    template <typename ErrorCode, typename Close>
    bool write_completed(bool stopped, bool& write_in_flight, const ErrorCode& ec, std::size_t n,
                         Close&& close) {
        bytes_out.fetch_add(n, std::memory_order_relaxed);
        if (!stopped && !ec) return true;
        write_in_flight = false;
        if (!stopped) close(ec.message());
        return false;
    }
};

/// @brief load_world's replay: a journaled request runs through the method table's handler, as it
/// did when it was accepted, under the rules of the state it was saved in (ecs::restoring_scope).
[[nodiscard]] journal_replay replay_through(server_services& services);

}  // namespace ecsd::net
