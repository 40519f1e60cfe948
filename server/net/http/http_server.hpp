#pragma once
// The HTTP face: an acceptor on --http-port (same host as the TCP port) and its connections.
// Same dispatcher, same method table, same worlds as the TCP port; see http_connection.hpp.
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <unordered_set>
#include <vector>

#include <asio.hpp>

namespace ecsd::net {

struct websocket_handover;
class dispatcher;
class http_connection;
struct server_services;

/// @brief Listens for HTTP and owns the open HTTP connections.
class http_server {
  public:
    /// @brief Binds host:port and starts accepting; throws std::system_error when it cannot bind.
    http_server(asio::io_context& io, server_services& services, dispatcher& dispatch,
                const std::string& host, std::uint16_t port);
    http_server(const http_server&) = delete;
    http_server& operator=(const http_server&) = delete;

    /// @brief The port it listens on.
    [[nodiscard]] std::uint16_t port() const noexcept { return port_; }
    /// @brief Stops accepting and closes every connection. Safe from any thread.
    void stop();
    /// @brief Forgets a closed connection.
    void remove(const std::shared_ptr<http_connection>& c);

    /// @brief Who serves a client that upgraded to WebSocket (the daemon: the TCP face's connections).
    /// It takes the socket (moving from it) and answers true, or leaves it and answers false when it
    /// has no room (--max-connections); then the upgrade is refused with 503.
    using websocket_taker = std::function<bool(asio::ip::tcp::socket&, websocket_handover&)>;
    void on_websocket(websocket_taker taker) { websocket_ = std::move(taker); }
    [[nodiscard]] bool hand_over(asio::ip::tcp::socket& socket, websocket_handover& h) const {
        return websocket_ && websocket_(socket, h);
    }

    /// @brief Whether a request's Host header names this server: its listening address; with a
    /// loopback address any loopback address and `localhost`; with 0.0.0.0 or :: any IP address
    /// and `localhost`; the names of --http-allow-host (`*`: any). The port is not compared (a
    /// forwarded port differs). No header at all (HTTP/1.0; browsers always send it) passes.
    [[nodiscard]] bool host_allowed(std::string_view host) const;
    /// @brief Whether a request's Origin may send requests: this server's own origin,
    /// http://HOST with the request's (allowed) Host, or one of --http-allow-origin (`*`: any).
    [[nodiscard]] bool origin_allowed(std::string_view origin, std::string_view host) const;

  private:
    void do_accept();
    // At the connection limit: the connection idle longest, else the one stalled mid-request
    // longest, if that began at or before `before_ns` (steady clock). Called with mutex_ held.
    [[nodiscard]] std::shared_ptr<http_connection> pick_victim(std::int64_t before_ns) const;

    websocket_taker websocket_;  // set once, before the first connection is accepted
    asio::io_context& io_;
    server_services& services_;
    dispatcher& dispatch_;
    asio::strand<asio::io_context::executor_type> strand_;
    asio::ip::tcp::acceptor acceptor_;
    std::uint16_t port_ = 0;
    asio::ip::address address_;                 // the address it listens on
    std::vector<std::string> allowed_hosts_;    // --http-allow-host, lower case
    std::vector<std::string> allowed_origins_;  // --http-allow-origin, lower case, no trailing '/'
    std::mutex mutex_;
    std::unordered_set<std::shared_ptr<http_connection>> connections_;
    std::uint64_t next_id_ = 0;
    bool stopped_ = false;
};

}  // namespace ecsd::net
