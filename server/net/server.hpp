#pragma once
// The daemon: one io_context run by --threads threads, an acceptor and the worlds. Signals reach
// it through stop(), called by main's signal thread (main.cpp).

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <memory>
#include <mutex>

#include <asio.hpp>

#include "config.hpp"
#include "hosting/agones_sdk.hpp"
#include "hosting/world_directory.hpp"
#include "http/http_server.hpp"
#include "rpc/dispatcher.hpp"
#include "rpc/method_table.hpp"
#include "rpc/services.hpp"
#include "transport/connection_manager.hpp"

namespace ecsd::net {

/// @brief The whole server.
class server {
  public:
    /// @brief Registers the methods, creates the "default" world and binds the listening socket
    /// (throws on failure).
    explicit server(server_config config);
    server(const server&) = delete;
    server& operator=(const server&) = delete;

    /// @brief The bound address (the real port when --port 0).
    [[nodiscard]] asio::ip::tcp::endpoint local_endpoint() const { return acceptor_.local_endpoint(); }

    /// @brief The HTTP port, or 0 when the HTTP face is off.
    [[nodiscard]] std::uint16_t http_port() const noexcept;

    /// @brief Serves until stop() (main calls it on SIGINT/SIGTERM), then drains connections; returns
    /// within 2 s of the stop.
    void run();
    /// @brief Starts the graceful stop, as a signal would. Safe from any thread.
    void stop();
    /// @brief Reads the --tokens file again (SIGHUP); a file with a mistake is logged and the old
    /// one kept. False when no --tokens file is set. Safe from any thread.
    bool reload_tokens();

  private:
    void load_worlds();
    void save_all_worlds();
    void do_accept();
    void refuse(asio::ip::tcp::socket socket);
    void begin_shutdown();

    server_config config_;
    asio::io_context io_;
    // Acceptor, stop and the retry timer share one strand: with several threads running the
    // io_context, a stop must not close the acceptor while an accept handler re-arms it.
    asio::strand<asio::io_context::executor_type> control_;
    asio::ip::tcp::acceptor acceptor_;
    asio::steady_timer accept_retry_;
    method_table methods_;
    world_directory worlds_;
    server_services services_;
    dispatcher dispatcher_;
    connection_manager connections_;
    std::unique_ptr<http_server> http_;      // null: --http-port 0, or the port could not be bound
    std::unique_ptr<agones_sdk> agones_;     // null: --agones off
    std::atomic<std::uint64_t> next_id_{0};  // TCP and WebSocket connections (the latter from HTTP's threads)

    std::mutex done_mutex_;
    std::condition_variable done_cv_;
    bool done_ = false;
    std::atomic<bool> shutting_down_{false};
};

}  // namespace ecsd::net
