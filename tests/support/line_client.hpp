#pragma once
// A small blocking TCP client for tests: send JSON-RPC lines, read response lines with a
// timeout. See ecsd_server.hpp for an example. Never raises SIGPIPE (MSG_NOSIGNAL).

#include <chrono>
#include <cstddef>
#include <optional>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

namespace ecsd::test {

/// @brief One blocking connection that speaks lines.
class line_client {
  public:
    /// @brief Connects to host:port; throws std::runtime_error on failure. A positive
    /// receive_buffer sets SO_RCVBUF before connecting (to make a slow reader); a non-empty
    /// `source` binds the local end to that address first (127.0.0.2: another client address).
    explicit line_client(int port, const std::string& host = "127.0.0.1", int receive_buffer = 0,
                         const std::string& source = "");
    line_client(const line_client&) = delete;
    line_client& operator=(const line_client&) = delete;
    ~line_client();

    /// @brief Sends bytes as they are; false when the connection is broken.
    bool send_raw(std::string_view bytes);
    /// @brief Sends one line (a newline is appended).
    bool send_line(std::string_view line) { return send_raw(std::string(line) + "\n"); }
    /// @brief Sends a JSON value as one line.
    bool send_json(const nlohmann::json& message) { return send_line(message.dump()); }

    /// @brief The next line without its newline; nullopt on timeout, end of stream or error.
    [[nodiscard]] std::optional<std::string> read_line(
        std::chrono::milliseconds timeout = std::chrono::seconds(5));
    /// @brief The next line parsed as JSON; null JSON on timeout/close (a parse error throws).
    [[nodiscard]] nlohmann::json read_json(std::chrono::milliseconds timeout = std::chrono::seconds(5));

    /// @brief Sends a request with the next id and returns its response (null JSON if none came within
    /// 5 s, times sanitizer_time_factor).
    [[nodiscard]] nlohmann::json call(std::string_view method, const nlohmann::json& params = nullptr);
    /// @brief Like call() but returns only the result, failing the current test on an error response.
    [[nodiscard]] nlohmann::json result(std::string_view method, const nlohmann::json& params = nullptr);

    /// @brief True when the server closes the connection within `timeout` (buffered lines and
    /// further data are discarded).
    [[nodiscard]] bool wait_closed(std::chrono::milliseconds timeout = std::chrono::seconds(5));
    /// @brief Half-closes: the server sees end of stream and still answers.
    void shutdown_write();

    /// @brief Reads at most `bytes` per recv(), so that lines arrive split across reads without
    /// shrinking SO_RCVBUF (a receive window smaller than the peer's segment size stalls TCP on the
    /// persist timer for seconds at a time).
    void set_read_chunk(std::size_t bytes) noexcept { read_chunk_ = bytes; }

    /// @brief The socket, for tests that need raw access.
    [[nodiscard]] int fd() const noexcept { return fd_; }

  private:
    // 1: data read, 0: end of stream, -1: error, -2: timeout
    int fill(std::chrono::steady_clock::time_point deadline);

    int fd_ = -1;
    std::string buffer_;
    long long next_id_ = 1;
    std::size_t read_chunk_ = 65536;
};

}  // namespace ecsd::test
