#include "server.hpp"

#include <cstdio>
#include <filesystem>
#include <thread>
#include <vector>

#include <spdlog/spdlog.h>

#include "ecsd/protocol/jsonrpc.hpp"
#include "ecsd/protocol/version.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/world_factory.hpp"
#include "hosting/world_log.hpp"
#include "http/http_server.hpp"
#include "methods/methods.hpp"
#include "persist/atomic_file.hpp"
#include "rpc/identities.hpp"
#include "rpc/openrpc.hpp"
#include "transport/connection.hpp"
#include "world/demo.hpp"
#include "world/world.hpp"

namespace ecsd::net {
namespace {

// SIGTERM to exit must take under 2 s (issue 5): connections get this long to drain.
constexpr auto shutdown_grace = std::chrono::milliseconds(1500);
// At the connection limit, a connection stalled this long may be closed to make room.
constexpr auto eviction_age = std::chrono::seconds(1);
// After the final save, the Agones sidecar gets this long to answer Shutdown.
constexpr auto agones_shutdown_timeout = std::chrono::milliseconds(1000);

}  // namespace

server::server(server_config config)
    : config_(std::move(config)),
      io_(static_cast<int>(config_.threads)),
      control_(asio::make_strand(io_)),
      acceptor_(control_),
      accept_retry_(control_),
      worlds_(io_, config_.max_worlds, config_.sim_threads),
      services_(config_, methods_, worlds_),
      dispatcher_(services_) {
    register_all_methods(methods_);
    services_.openrpc = make_openrpc(methods_);
    services_.stats = std::make_unique<request_stats>(methods_.methods().size());
    // A tokens file that cannot be read or has a mistake stops the start: no identity is guessed.
    if (!config_.tokens.empty()) services_.identities.set(identity_table::load(config_.tokens));
    load_worlds();

    const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(config_.host), config_.port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);

    const auto bound = acceptor_.local_endpoint();
    spdlog::info("ecsd {} listening on {}:{} ({} threads, token {}, tokens file {})", protocol::version,
                 bound.address().to_string(), bound.port(), config_.threads,
                 config_.token.empty() ? "off" : "on", config_.tokens.empty() ? "none" : config_.tokens);
    // Tests and scripts read this line to learn the port chosen by --port 0.
    std::printf("listening on %s:%u\n", bound.address().to_string().c_str(),
                static_cast<unsigned>(bound.port()));
    if (config_.http_port != 0) {
        try {
            http_ =
                std::make_unique<http_server>(io_, services_, dispatcher_, config_.host, config_.http_port);
            // A WebSocket client becomes a connection of the TCP face, counted against the same limit.
            http_->on_websocket([this](asio::ip::tcp::socket& socket, websocket_handover& h) {
                if (connections_.size() >= config_.max_connections) return false;
                connections_.start(std::make_shared<connection>(std::move(socket), services_, dispatcher_,
                                                                connections_, ++next_id_, std::move(h)));
                return true;
            });
            const auto shown =
                bound.address().is_unspecified() ? std::string("localhost") : bound.address().to_string();
            spdlog::info("HTTP (JSON-RPC, SSE and the viewer) on {}:{}", config_.host, http_->port());
            std::printf("viewer at http://%s:%u/\n", shown.c_str(), static_cast<unsigned>(http_->port()));
        } catch (const std::system_error& e) {
            spdlog::error(
                "cannot listen for HTTP on {}:{}: {}; the HTTP face is off (--http-port 0 says so quietly)",
                config_.host, config_.http_port, e.code().message());
        }
    }
    std::fflush(stdout);

    do_accept();
    if (config_.agones) {
        // Listening, worlds loaded: Ready goes out as soon as the io_context runs.
        agones_ = std::make_unique<agones_sdk>(
            io_, worlds_, services_.connections_open,
            agones_sdk::settings{
                .port = config_.agones_port,
                .health_period = std::chrono::duration_cast<std::chrono::steady_clock::duration>(
                    std::chrono::duration<double>(config_.agones_health))});
        agones_->start();
    }
}

std::uint16_t server::http_port() const noexcept {
    return http_ ? http_->port() : 0;
}

void server::load_worlds() {
    if (config_.data_dir.empty()) {
        spdlog::warn("no --data-dir: worlds live in memory only, nothing is written to disk");
    } else {
        const std::filesystem::path dir(config_.data_dir);
        std::filesystem::create_directories(dir);
        if (const auto n = persist::remove_stale_temp_files(dir))
            spdlog::warn("{}: removed {} temp files a crash left behind", dir.string(), n);
        // A snapshot or journal that cannot be read stops start-up (the exception names file and offset,
        // and what --repair would lose); with --repair the damage is cut off or moved aside, and logged.
        check_orphan_journals(dir, config_.repair);
        for (const auto& name : saved_world_names(dir)) {
            auto claim = worlds_.claim(name);  // before its files are read or written
            auto loaded = load_world(dir, name, io_, replay_through(services_), config_.repair);
            if (!loaded.hosted) continue;  // --repair moved an unreadable snapshot aside
            attach_log(*loaded.hosted, config_, loaded.seq, /*save_now=*/false);
            spdlog::info("world '{}': loaded from {} at tick {} ({} entities, {} journal records replayed{})",
                         name, dir.string(), loaded.hosted->world().tick(),
                         loaded.hosted->world().registry().size(), loaded.replayed,
                         loaded.torn_tail ? ", torn tail dropped" : "");
            worlds_.add_hosted(std::move(loaded.hosted), std::move(claim));
        }
        spdlog::info("persisting to {} (autosave every {} s, appendfsync {}, {} snapshots)", dir.string(),
                     config_.autosave, config_.appendfsync, config_.snapshot_format);
    }
    if (!worlds_.find("default")) {
        auto claim = worlds_.claim("default");
        auto w = make_world("default", config_.demo ? world::demo_params() : nlohmann::json::object());
        if (config_.demo) {
            world::populate_demo(*w);
            spdlog::info("world 'default': the demo scene ({} entities; --demo)", w->registry().size());
        }
        auto hosted = std::make_shared<hosted_world>(io_, "default", std::move(w));
        attach_log(*hosted, config_, 0, /*save_now=*/true);
        worlds_.add_hosted(std::move(hosted), std::move(claim));
    }
}

void server::save_all_worlds() {
    // Every strand has stopped: the worlds can be read from this thread.
    for (const auto& hosted : worlds_.all()) {
        if (!hosted->log()) continue;
        try {
            hosted->log()->save(hosted->world());
        } catch (const std::exception& e) {
            spdlog::error("world '{}': final save failed: {}", hosted->name(), e.what());
        }
    }
}

void server::do_accept() {
    acceptor_.async_accept(asio::make_strand(io_), [this](const asio::error_code& ec,
                                                          asio::ip::tcp::socket socket) {
        if (!acceptor_.is_open()) return;
        if (ec) {
            // Typically EMFILE: retry shortly instead of spinning on a failing accept.
            spdlog::warn("accept failed: {}", ec.message());
            accept_retry_.expires_after(std::chrono::milliseconds(100));
            accept_retry_.async_wait([this](const asio::error_code& wait_ec) {
                if (!wait_ec) do_accept();
            });
            return;
        }
        services_.connections_total.fetch_add(1, std::memory_order_relaxed);
        // At the limit, a client stalled mid-request (slowloris) for over a second, or silent since
        // it connected, gives its place to the newcomer; only when none is, the newcomer is refused.
        const auto stalled_before = std::chrono::duration_cast<std::chrono::nanoseconds>(
                                        (std::chrono::steady_clock::now() - eviction_age).time_since_epoch())
                                        .count();
        if (connections_.size() >= config_.max_connections && !connections_.evict_stalled(stalled_before)) {
            refuse(std::move(socket));
        } else {
            connections_.start(std::make_shared<connection>(std::move(socket), services_, dispatcher_,
                                                            connections_, ++next_id_));
        }
        do_accept();
    });
}

void server::refuse(asio::ip::tcp::socket socket) {
    spdlog::warn("refusing a connection: {} connections open", config_.max_connections);
    const std::string line =
        protocol::make_error(nullptr, protocol::reason::limit_reached, "too many connections",
                             {{"limit", config_.max_connections}}) +
        "\n";
    // A fresh socket's send buffer is empty: this short blocking write cannot stall.
    asio::error_code ignored;
    asio::write(socket, asio::buffer(line), ignored);
    socket.shutdown(asio::ip::tcp::socket::shutdown_both, ignored);
    socket.close(ignored);
}

bool server::reload_tokens() {
    if (config_.tokens.empty()) return false;
    try {
        auto table = identity_table::load(config_.tokens);
        const auto n = table.size();
        services_.identities.set(std::move(table));
        spdlog::info("tokens file {} reloaded: {} tokens", config_.tokens, n);
    } catch (const std::exception& e) {
        spdlog::error("tokens file not reloaded, the previous one stays: {}", e.what());
    }
    return true;
}

void server::stop() {
    asio::post(control_, [this] { begin_shutdown(); });
}

void server::begin_shutdown() {
    if (shutting_down_.exchange(true)) return;
    asio::error_code ignored;
    acceptor_.close(ignored);
    accept_retry_.cancel();
    {
        std::lock_guard lock(done_mutex_);
        done_cv_.notify_all();  // the watchdog's grace starts now
    }
    // Connections drain only once every world has queued its watches' server_shutdown ends:
    // a connection that drained first would close without them (the ends would come too late).
    worlds_.stop_all([this] {
        asio::post(control_, [this] {
            connections_.shutdown_all();
            if (http_) http_->stop();
            if (agones_) agones_->stop();
        });
    });
}

void server::run() {
    // Once shutdown starts, connections get a grace period; then the loop is stopped outright.
    std::thread watchdog([this] {
        std::unique_lock lock(done_mutex_);
        done_cv_.wait(lock, [this] { return done_ || shutting_down_.load(); });
        if (!done_cv_.wait_for(lock, shutdown_grace, [this] { return done_; })) {
            spdlog::warn("connections still open after {} ms, stopping", shutdown_grace.count());
            io_.stop();
        }
    });
    std::vector<std::thread> workers;
    for (unsigned i = 1; i < config_.threads; ++i) workers.emplace_back([this] { io_.run(); });
    io_.run();
    for (auto& t : workers) t.join();
    save_all_worlds();
    // Agones: Shutdown only once every world is saved (the sidecar then lets the pod go).
    if (agones_) agones_sdk::shutdown(config_.agones_port, agones_shutdown_timeout);
    {
        std::lock_guard lock(done_mutex_);
        done_ = true;
    }
    done_cv_.notify_all();
    watchdog.join();
    spdlog::info("stopped");
}

}  // namespace ecsd::net
