#pragma once

// A blocking line-oriented TCP client with a deadline on every operation, built on Asio the way Asio's
// blocking_tcp_client example does: asynchronous operations run on a private io_context for at most the
// time left, and the socket is closed when the time is up.

#include <chrono>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <string_view>

#include <asio/io_context.hpp>
#include <asio/ip/tcp.hpp>

namespace ecsd::cli {

/// @brief One TCP connection that writes and reads LF-terminated lines; every failure, the peer closing
///        and an expired deadline throw connection_error.
class connection {
  public:
    using clock = std::chrono::steady_clock;

    /// @brief Resolves `host` and connects to `port` before `deadline`.
    connection(const std::string& host, std::uint16_t port, clock::time_point deadline);
    connection(const connection&) = delete;
    connection& operator=(const connection&) = delete;
    ~connection();

    /// @brief Sends `line` followed by '\n'.
    void write_line(std::string_view line, clock::time_point deadline);

    /// @brief Reads one line (without its LF or CRLF).
    [[nodiscard]] std::string read_line(clock::time_point deadline);

    /// @brief Reads one line like read_line, but when `deadline` passes first returns nullopt and keeps
    ///        the connection (and any partial line) for the next read. For streams that may stay quiet.
    [[nodiscard]] std::optional<std::string> read_line_before(clock::time_point deadline);

    /// @brief Whether the peer has hung up (an idle timeout, a restart), without waiting: what has
    ///        already arrived is kept for the next read. A connection that says no is usable as far
    ///        as anyone can tell without sending.
    [[nodiscard]] bool peer_has_closed();

    /// @brief "host:port", for messages.
    [[nodiscard]] const std::string& peer() const noexcept { return peer_; }

    /// @brief Largest response line accepted (64 MiB); a longer one is a connection error.
    static constexpr std::size_t max_line = std::size_t{64} << 20U;

  private:
    /// @brief Starts reading one line into buffer_; the handler sets `error` and `length` when it runs.
    void start_read_line(asio::error_code& error, std::size_t& length);
    /// @brief Throws for a failed read; otherwise takes the first `length` bytes (a line) off the buffer.
    std::string finish_read(const asio::error_code& error, std::size_t length);

    /// @brief Runs the io_context until the pending operation completes or `deadline` passes.
    void run_until(clock::time_point deadline, std::string_view what,
                   const std::function<void()>& cancel = {});

    asio::io_context io_;
    asio::ip::tcp::socket socket_;
    std::string buffer_;
    std::string peer_;
};

}  // namespace ecsd::cli
