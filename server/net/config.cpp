#include "config.hpp"

#include <thread>

#include <CLI/CLI.hpp>

#include "ecsd/protocol/version.hpp"
#include "world/script.hpp"

namespace ecsd::net {
namespace {

template <class T>
setting row(std::string_view name, std::string_view env, std::string_view help, T server_config::*member,
            const std::function<void(CLI::Option&)>& check = {}, bool secret = false) {
    setting s{name, env, help, secret, {}, {}};
    s.bind = [member, check](CLI::App& app, server_config& cfg, const setting& self) {
        // A bool is a bare flag (--read-only), also --read-only=true|false, --read-only true|false (as
        // older releases took it, so scripts keep working) and ECSD_READ_ONLY=1/0. A value is taken
        // only when the next word is no option: `--read-only --port 0` stays a bare flag.
        CLI::Option* opt = nullptr;
        if constexpr (std::is_same_v<T, bool>) {
            opt = app.add_option("--" + std::string(self.name), cfg.*member, std::string(self.help))
                      ->expected(0, 1)
                      ->default_str("true")  // what a bare flag means
                      // option_text replaces CLI11's whole annotation, the variable's name too.
                      ->option_text("[true|false] (Env:" + std::string(self.env) + ")");
        } else {
            opt = app.add_option("--" + std::string(self.name), cfg.*member, std::string(self.help));
        }
        opt->envname(std::string(self.env));
        if constexpr (!std::is_same_v<T, std::string> && !std::is_same_v<T, bool>) opt->capture_default_str();
        if (check) check(*opt);
    };
    s.show = [member, secret](const server_config& cfg) -> nlohmann::json {
        if (secret) {
            if constexpr (std::is_same_v<T, std::string>) return (cfg.*member).empty() ? "" : "set";
        }
        return cfg.*member;
    };
    return s;
}

std::vector<setting> make_settings() {
    const auto positive = [](CLI::Option& o) { o.check(CLI::PositiveNumber); };
    // Repeatable, one value each time (`--http-allow-host a --http-allow-host b`); the environment
    // variable splits at commas.
    const auto list = [](CLI::Option& o) {
        o.expected(1)
            ->multi_option_policy(CLI::MultiOptionPolicy::TakeAll)
            ->delimiter(',')
            ->allow_extra_args(false);
    };
    std::vector<setting> t;
    t.push_back(row("host", "ECSD_HOST", "address to listen on", &server_config::host));
    t.push_back(row("port", "ECSD_PORT", "TCP port; 0 picks a free one and prints it", &server_config::port));
    t.push_back(row("http-port", "ECSD_HTTP_PORT",
                    "HTTP port for JSON-RPC over HTTP and the viewer page; 0: off",
                    &server_config::http_port));
    t.push_back(row("http-allow-host", "ECSD_HTTP_ALLOW_HOST",
                    "a Host name the HTTP face answers besides its own address (repeat it for more; the "
                    "variable takes a comma-separated list); * allows any (no DNS rebinding protection)",
                    &server_config::http_allow_hosts, list));
    t.push_back(row("http-allow-origin", "ECSD_HTTP_ALLOW_ORIGIN",
                    "an origin (scheme://host:port) whose pages may POST to the HTTP face besides its own "
                    "(repeat it for more; the variable takes a comma-separated list); * allows any",
                    &server_config::http_allow_origins, list));
    t.push_back(
        row("log-level", "ECSD_LOG_LEVEL", "trace, debug, info, warn, error, critical or off",
            &server_config::log_level, [](CLI::Option& o) {
                o.check(CLI::IsMember({"trace", "debug", "info", "warn", "error", "critical", "off"}));
            }));
    t.push_back(row("max-line-bytes", "ECSD_MAX_LINE_BYTES",
                    "longest request line; longer ones close the connection", &server_config::max_line_bytes,
                    positive));
    t.push_back(row("preauth-line-bytes", "ECSD_PREAUTH_LINE_BYTES",
                    "longest line before server.auth (token set)", &server_config::preauth_line_bytes,
                    positive));
    t.push_back(row("max-connections", "ECSD_MAX_CONNECTIONS", "connections served at once",
                    &server_config::max_connections, positive));
    t.push_back(row("idle-timeout", "ECSD_IDLE_TIMEOUT",
                    "seconds without traffic before a connection closes; 0: never",
                    &server_config::idle_timeout, [](CLI::Option& o) { o.check(CLI::NonNegativeNumber); }));
    t.push_back(
        row("max-output-bytes", "ECSD_MAX_OUTPUT_BYTES",
            "response bytes held per connection; past it the server computes nothing more for it until "
            "the client reads",
            &server_config::max_output_bytes, positive));
    t.push_back(row("max-output-total", "ECSD_MAX_OUTPUT_TOTAL",
                    "bytes held unsent for all connections together; past it the slowest readers (most "
                    "bytes owed for longest) are closed until the rest fit",
                    &server_config::max_output_total, positive));
    t.push_back(row("max-watches", "ECSD_MAX_WATCHES", "world.watch subscriptions per connection",
                    &server_config::max_watches, positive));
    t.push_back(row("max-watch-views", "ECSD_MAX_WATCH_VIEWS",
                    "distinct watch views (query, fields and every: each is diffed once per tick for all its "
                    "subscribers) per world; a watch that would open one more gets limit_reached",
                    &server_config::max_watch_views, positive));
    t.push_back(row("max-watch-views-total", "ECSD_MAX_WATCH_VIEWS_TOTAL",
                    "distinct watch views in all worlds together; past it: limit_reached",
                    &server_config::max_watch_views_total, positive));
    t.push_back(row("request-timeout", "ECSD_REQUEST_TIMEOUT",
                    "seconds a request line may take from its first byte to its newline; 0: no deadline",
                    &server_config::request_timeout,
                    [](CLI::Option& o) { o.check(CLI::NonNegativeNumber); }));
    t.push_back(row("max-batch", "ECSD_MAX_BATCH", "most requests in one batch", &server_config::max_batch,
                    positive));
    t.push_back(row("max-pipeline", "ECSD_MAX_PIPELINE",
                    "requests in flight per connection before reading pauses", &server_config::max_pipeline,
                    positive));
    t.push_back(
        row("max-worlds", "ECSD_MAX_WORLDS", "most worlds at once", &server_config::max_worlds, positive));
    t.push_back(row("max-import-bytes", "ECSD_MAX_IMPORT_BYTES",
                    "most snapshot text world.import gathers, all imports together",
                    &server_config::max_import_bytes, positive));
    t.push_back(row("max-export-bytes", "ECSD_MAX_EXPORT_BYTES",
                    "snapshot text world.export may hold, all exports together (or twice the largest)",
                    &server_config::max_export_bytes, positive));
    t.push_back(row("token", "ECSD_TOKEN", "require server.auth first; this token is the admin's",
                    &server_config::token, {},
                    /*secret=*/true));
    t.push_back(row("tokens", "ECSD_TOKENS",
                    "a file of identities: one line per token, SHA256_HEX IDENTITY ROLE (admin, observer or "
                    "player); reloaded on SIGHUP",
                    &server_config::tokens));
    t.push_back(row("threads", "ECSD_THREADS", "threads running connections and worlds",
                    &server_config::threads, [](CLI::Option& o) { o.check(CLI::Range(1U, 256U)); }));
    t.push_back(
        row("sim-threads", "ECSD_SIM_THREADS",
            "threads each world's tick uses (movement, collision detection and response, and most of rest "
            "split across them) "
            "unless world.create names its own",
            &server_config::sim_threads, [](CLI::Option& o) { o.check(CLI::Range(1U, 64U)); }));
    t.push_back(row("script-instructions", "ECSD_SCRIPT_INSTRUCTIONS",
                    "Lua instructions one run of a script system or spell may execute before it is stopped "
                    "and the system disabled",
                    &server_config::script_instructions, [](CLI::Option& o) {
                        o.check(CLI::Range(std::uint64_t{1000}, std::uint64_t{2'000'000'000}));
                    }));
    t.push_back(row("script-memory", "ECSD_SCRIPT_MEMORY",
                    "bytes the Lua scripts of one world may hold together", &server_config::script_memory,
                    [](CLI::Option& o) { o.check(CLI::Range(std::size_t{1} << 20, std::size_t{1} << 34)); }));
    t.push_back(row("max-scripts", "ECSD_MAX_SCRIPTS", "Lua systems, spells and actions one world may define",
                    &server_config::max_scripts, positive));
    t.push_back(row("max-script-bytes", "ECSD_MAX_SCRIPT_BYTES", "bytes of one Lua script's source",
                    &server_config::max_script_bytes, positive));
    t.push_back(row("action-rate", "ECSD_ACTION_RATE",
                    "world.call_action calls a second each player identity may make (all its connections "
                    "together, bursts of one second's worth); faster ones get rate_limited; 0: no limit",
                    &server_config::action_rate, [](CLI::Option& o) { o.check(CLI::NonNegativeNumber); }));
    t.push_back(row("data-dir", "ECSD_DATA_DIR",
                    "folder for snapshots and journals; empty: nothing is written",
                    &server_config::data_dir));
    t.push_back(row("autosave", "ECSD_AUTOSAVE",
                    "seconds between snapshots of each world; 0: only world.save and exit",
                    &server_config::autosave, [](CLI::Option& o) { o.check(CLI::NonNegativeNumber); }));
    t.push_back(row("appendfsync", "ECSD_APPENDFSYNC", "journal fsync: always, everysec or never",
                    &server_config::appendfsync, [](CLI::Option& o) {
                        o.check(CLI::IsMember({"always", "everysec", "never"}));
                    }));
    t.push_back(row("snapshot-format", "ECSD_SNAPSHOT_FORMAT",
                    "how snapshots are written: binary, zstd (binary, compressed) or json; any of them loads",
                    &server_config::snapshot_format, [](CLI::Option& o) {
                        o.check(CLI::IsMember({"binary", "zstd", "json"}));
                    }));
    t.push_back(
        row("read-only", "ECSD_READ_ONLY", "refuse mutating and admin methods", &server_config::read_only));
    t.push_back(
        row("repair", "ECSD_REPAIR",
            "start even if files in --data-dir are damaged: cut a damaged journal at the damage and move "
            "damaged files aside (as FILE.damaged), logging what is lost; without it ecsd refuses to start",
            &server_config::repair));
    t.push_back(
        row("slowlog-us", "ECSD_SLOWLOG_US",
            "requests whose handler takes at least this many microseconds go to server.slowlog; 0: all",
            &server_config::slowlog_us));
    t.push_back(row("slowlog-len", "ECSD_SLOWLOG_LEN", "entries server.slowlog keeps (the newest); 0: none",
                    &server_config::slowlog_len));
    t.push_back(
        row("demo", "ECSD_DEMO",
            "a new default world gets a ground, walls and a small moving scene (scripts/run.sh sets it); "
            "a saved default world loads as it was",
            &server_config::demo));
    t.push_back(row("agones", "ECSD_AGONES",
                    "speak the Agones SDK (Ready, Health, labels, Shutdown) to its sidecar on localhost; on "
                    "by itself when AGONES_SDK_HTTP_PORT is set",
                    &server_config::agones));
    t.push_back(
        row("agones-port", "AGONES_SDK_HTTP_PORT",
            "the Agones sidecar's HTTP port on localhost (Agones sets AGONES_SDK_HTTP_PORT); giving it "
            "turns --agones on",
            &server_config::agones_port, [](CLI::Option& o) { o.check(CLI::Range(1, 65535)); }));
    t.push_back(row("agones-health", "ECSD_AGONES_HEALTH",
                    "seconds between Agones Health pings (sent only while every world's tick loop is alive)",
                    &server_config::agones_health, positive));
    t.push_back(row("enable-debug", "ECSD_ENABLE_DEBUG",
                    "allow the debug.* methods (debug.sleep stalls a world on purpose: fault drills, tests)",
                    &server_config::enable_debug));
    return t;
}

}  // namespace

const std::vector<setting>& settings() {
    static const std::vector<setting> table = make_settings();
    return table;
}

std::variant<server_config, int> parse_command_line(int argc, const char* const* argv) {
    server_config cfg;
    cfg.threads = std::max(1U, std::thread::hardware_concurrency());
    CLI::App app{"ecsd: a networked Entity-Component-System server speaking JSON-RPC 2.0 over TCP"};
    app.set_version_flag("--version", std::string(protocol::version_line("ecsd")));
    for (const auto& s : settings()) s.bind(app, cfg, s);
    app.add_option("--hash-token", cfg.hash_token,
                   "print the SHA-256 of TOKEN for a --tokens file and exit ('-': read it from stdin)");
    try {
        app.parse(argc, argv);
    } catch (const CLI::ParseError& e) {
        return app.exit(e);
    }
    // Agones sets AGONES_SDK_HTTP_PORT in the game server's container: the SDK is then on unless
    // --agones false (or ECSD_AGONES=0) says otherwise.
    if (app.get_option("--agones")->count() == 0 && app.get_option("--agones-port")->count() > 0)
        cfg.agones = true;
    // Every world's scripts take their limits from here (world/script.hpp).
    world::set_script_limits({.instructions = cfg.script_instructions,
                              .memory_bytes = cfg.script_memory,
                              .max_scripts = cfg.max_scripts,
                              .max_source_bytes = cfg.max_script_bytes});
    return cfg;
}

nlohmann::json config_to_json(const server_config& config) {
    nlohmann::json out = nlohmann::json::object();
    for (const auto& s : settings()) out[std::string(s.name)] = s.show(config);
    return out;
}

}  // namespace ecsd::net
