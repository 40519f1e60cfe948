#pragma once
// Server-wide state handlers may read from any strand: the config, the method table, the world
// directory and counters. Everything here is immutable after start-up or thread-safe.

#include <atomic>
#include <chrono>
#include <cstdint>

#include <nlohmann/json.hpp>

#include "config.hpp"

namespace ecsd::net {

class method_table;
class world_directory;

/// @brief Shared, thread-safe server state.
struct server_services {
    server_services(const server_config& cfg, const method_table& table, world_directory& directory) noexcept
        : config(cfg), methods(table), worlds(directory) {}

    const server_config& config;
    const method_table& methods;
    world_directory& worlds;
    std::chrono::steady_clock::time_point started = std::chrono::steady_clock::now();
    nlohmann::json openrpc;  ///< built once after every family registered; read-only afterwards
    std::atomic<std::size_t> connections_open{0};
    std::atomic<std::uint64_t> connections_total{0};
    std::atomic<std::uint64_t> requests_total{0};
};

}  // namespace ecsd::net
