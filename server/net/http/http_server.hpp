#pragma once
// The HTTP face: an acceptor on --http-port (same host as the TCP port) and its connections.
// Same dispatcher, same method table, same worlds as the TCP port; see http_connection.hpp.
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_set>

#include <asio.hpp>

namespace ecsd::net {

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

  private:
    void do_accept();

    asio::io_context& io_;
    server_services& services_;
    dispatcher& dispatch_;
    asio::strand<asio::io_context::executor_type> strand_;
    asio::ip::tcp::acceptor acceptor_;
    std::uint16_t port_ = 0;
    std::mutex mutex_;
    std::unordered_set<std::shared_ptr<http_connection>> connections_;
    std::uint64_t next_id_ = 0;
    bool stopped_ = false;
};

}  // namespace ecsd::net
