#pragma once
// Server-wide state handlers may read from any strand: the config, the method table, the world
// directory and counters. Everything here is immutable after start-up or thread-safe.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <memory>

#include <nlohmann/json.hpp>

#include "auth_limiter.hpp"
#include "config.hpp"
#include "observe.hpp"

namespace ecsd::net {

class method_table;
class world_directory;

/// @brief Shared, thread-safe server state.
struct server_services {
    server_services(const server_config& cfg, const method_table& table, world_directory& directory)
        : config(cfg), methods(table), worlds(directory), slowlog(cfg.slowlog_us, cfg.slowlog_len) {}

    const server_config& config;
    const method_table& methods;
    world_directory& worlds;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    nlohmann::json openrpc;  ///< built once after every family registered; read-only afterwards
    std::atomic<std::size_t> connections_open{0};
    std::atomic<std::uint64_t> connections_total{0};
    std::atomic<std::uint64_t> requests_total{0};
    std::atomic<std::uint64_t> bytes_in{0};   ///< read from clients (TCP and HTTP)
    std::atomic<std::uint64_t> bytes_out{0};  ///< written to clients
    auth_limiter auth_guard;                  ///< wrong tokens per address
    std::unique_ptr<request_stats> stats;     ///< per method; made once the table is complete
    slow_log slowlog;
    monitor_hub monitors;
};

}  // namespace ecsd::net
