#pragma once
// One table of settings, in the style of Redis's config.c: each row names a setting once and
// binds it to a command-line flag, an environment variable fallback and its server.info echo.

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <string_view>
#include <variant>
#include <vector>

#include <nlohmann/json.hpp>

namespace CLI {
class App;
}

namespace ecsd::net {

/// @brief Every setting of the daemon, with its default.
struct server_config {
    std::string host = "127.0.0.1";
    std::uint16_t port = 7777;
    std::uint16_t http_port = 7778;  ///< the HTTP face (JSON-RPC over HTTP, SSE, the viewer); 0: off
    /// Host names the HTTP face answers besides its own address (`*`: any); see docs/http.md.
    std::vector<std::string> http_allow_hosts;
    /// Origins whose pages may send requests besides the HTTP face's own (`*`: any).
    std::vector<std::string> http_allow_origins;
    std::string log_level = "info";
    std::size_t max_line_bytes = std::size_t{1024} * 1024;
    std::size_t preauth_line_bytes = 4096;  ///< line cap before server.auth when a token is set
    std::size_t max_connections = 1024;
    double idle_timeout = 300.0;  ///< seconds without traffic before a connection is closed; 0: never
    std::size_t max_output_bytes =
        std::size_t{16} * 1024 * 1024;  ///< response bytes held per connection before it computes no more
    /// unsent bytes of all connections together; past it the slowest readers are closed
    std::size_t max_output_total = std::size_t{1} << 30;
    std::size_t max_watches = 64;              ///< world.watch subscriptions per connection
    std::size_t max_watch_views = 256;         ///< distinct watch views (query, fields, every) per world
    std::size_t max_watch_views_total = 1024;  ///< distinct watch views in all worlds together
    double request_timeout = 10.0;  ///< seconds a request line may take to arrive once begun; 0: no deadline
    std::size_t max_batch = 1024;
    std::size_t max_pipeline = 4096;  ///< requests in flight per connection before reading pauses
    std::size_t max_worlds = 64;
    /// most snapshot text all world.import requests gather together; building a world from its text
    /// takes many times the text (docs/persistence.md), so this bounds an import's memory
    std::size_t max_import_bytes = std::size_t{64} << 20;
    std::size_t max_export_bytes = std::size_t{64} << 20;  ///< or twice the largest export's text
    std::string token;                                     ///< the admin's token; empty: none
    std::string tokens;      ///< a --tokens file of identities and roles (rpc/identities.hpp); empty: none
    std::string hash_token;  ///< --hash-token: main prints its SHA-256 and exits ("-": read from stdin)
    /// @brief Whether connections must authenticate (--token or --tokens).
    [[nodiscard]] bool auth_required() const noexcept { return !token.empty() || !tokens.empty(); }
    unsigned threads = 2;
    unsigned sim_threads = 1;  ///< threads each world's tick uses unless world.create names them
    std::string data_dir;      ///< where worlds are saved; empty: nothing is written
    double autosave = 10.0;    ///< seconds between snapshots of each world; 0: only on save and exit
    std::string appendfsync = "everysec";    ///< journal fsync policy: always / everysec / never
    std::string snapshot_format = "binary";  ///< binary / zstd / json (persist/snapshot_binary.hpp)
    bool read_only = false;
    std::uint64_t slowlog_us = 10'000;  ///< requests at least this slow go to server.slowlog
    std::size_t slowlog_len = 128;      ///< entries server.slowlog keeps (0: none)
    bool demo = false;                  ///< a new default world gets the demo scene (world/demo.hpp)
    bool repair =
        false;  ///< at start-up, cut damaged journals and move damaged files aside instead of refusing
    bool agones = false;  ///< speak the Agones SDK to the sidecar (also on when AGONES_SDK_HTTP_PORT is set)
    std::uint16_t agones_port = 9358;  ///< the sidecar's HTTP port on localhost (AGONES_SDK_HTTP_PORT)
    double agones_health = 2.0;        ///< seconds between Health pings to the sidecar
    bool enable_debug = false;         ///< allow debug.* methods (fault drills and tests)
    /// Lua scripts (world.define_system / define_spell, world/script.hpp): instructions one run of a
    /// system or spell may execute, bytes one world's scripts may hold, scripts per world, source bytes.
    std::uint64_t script_instructions = 1'000'000;
    std::size_t script_memory = std::size_t{64} << 20;
    std::size_t max_scripts = 64;
    std::size_t max_script_bytes = std::size_t{64} << 10;
    double action_rate = 60.0;  ///< world.call_action calls a second per player identity; 0: no limit
};

/// @brief One row of the settings table.
struct setting {
    std::string_view name;  ///< flag without dashes and key in server.info
    std::string_view env;   ///< environment variable read when the flag is absent
    std::string_view help;
    bool secret;  ///< never echoed or logged
    std::function<void(CLI::App&, server_config&, const setting&)> bind;
    std::function<nlohmann::json(const server_config&)> show;
};

/// @brief The settings table.
[[nodiscard]] const std::vector<setting>& settings();

/// @brief Parses flags (and environment fallbacks); returns the config, or the exit code when
/// the program must stop (--help, --version, a bad value).
[[nodiscard]] std::variant<server_config, int> parse_command_line(int argc, const char* const* argv);

/// @brief The settings as JSON for server.info; secrets show as "set" or "".
[[nodiscard]] nlohmann::json config_to_json(const server_config& config);

}  // namespace ecsd::net
