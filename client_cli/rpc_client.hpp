#pragma once

// JSON-RPC 2.0 over one lazily opened connection: one request, one response, matched by id.

#include <chrono>
#include <cstdint>
#include <deque>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "connection.hpp"
#include "json.hpp"

namespace ecsd::cli {

/// @brief Where and how to reach the server.
struct connection_options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 7777;
    std::optional<std::string> token;          ///< sent with `server.auth` right after connecting
    std::chrono::milliseconds timeout{10000};  ///< for connecting, and for each call
};

/// @brief Sends JSON-RPC requests and returns their results; connects (and authenticates) on first use
///        and again after the connection was lost.
class rpc_client {
  public:
    explicit rpc_client(connection_options options) : options_(std::move(options)) {}

    /// @brief Calls `method` with `params` (omitted when null) and returns `result`.
    /// @throws server_error on an error response, connection_error when the server cannot be reached,
    ///         hangs up, answers something that is not JSON-RPC or takes longer than the timeout.
    json call(std::string_view method, const json& params = nullptr);

    /// @brief The params of the next notification (a line without "id", such as world.watch's), from
    ///        those that arrived during earlier calls or from the socket; nullopt when none came before
    ///        `deadline`. Responses to no pending request are skipped.
    /// @throws connection_error when there is no connection or it fails (not on a quiet deadline).
    std::optional<json> next_notification(connection::clock::time_point deadline);

    /// @brief Forgets notifications kept for next_notification (when a stream is over).
    void drop_notifications() { notifications_.clear(); }

    /// @brief "host:port".
    [[nodiscard]] std::string peer() const { return options_.host + ":" + std::to_string(options_.port); }

    /// @brief Told, with a message for the user, when a call finds that the server closed the
    ///        connection while it was idle and connects again before sending.
    std::function<void(const std::string&)> on_reconnect;

    /// @brief The options in use.
    [[nodiscard]] const connection_options& options() const noexcept { return options_; }

  private:
    json round_trip(std::string_view method, const json& params, connection::clock::time_point deadline);

    connection_options options_;
    /// @brief Handles a line without "id": keeps its params for next_notification.
    void keep_notification(json& message);

    std::unique_ptr<connection> conn_;
    std::deque<json> notifications_;  ///< the oldest go first past max_kept_notifications
    std::int64_t next_id_ = 1;
    static constexpr std::size_t max_kept_notifications = 4096;
};

}  // namespace ecsd::cli
