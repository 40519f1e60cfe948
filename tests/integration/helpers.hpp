#pragma once
// Small helpers shared by the integration tests.

#include <string>

#include <nlohmann/json.hpp>

#include "ecsd/protocol/jsonrpc.hpp"
#include "ecsd_server.hpp"
#include "line_client.hpp"

namespace ecsd::test {

using nlohmann::json;

// Sanitizers change what memory and time a server uses (TSan's shadow memory, ASan's redzones and
// quarantine of freed blocks, both their slowdown): bounds asserted on RSS or wall time scale by
// these, so they still tell a bounded server from an unbounded one (hundreds of MB) under them.
#if defined(__SANITIZE_ADDRESS__)
inline constexpr long sanitizer_memory_factor = 8;
inline constexpr int sanitizer_time_factor = 3;
#elif defined(__SANITIZE_THREAD__)
inline constexpr long sanitizer_memory_factor = 4;
inline constexpr int sanitizer_time_factor = 3;
#else
inline constexpr long sanitizer_memory_factor = 1;
inline constexpr int sanitizer_time_factor = 1;
#endif

/// @brief error.data.reason of a response, or "" when it is not an error.
inline std::string reason_of(const json& response) {
    if (!response.is_object() || !response.contains("error")) return "";
    return response["error"]["data"].value("reason", "");
}

/// @brief The text of one request line (no newline): protocol::make_request, ecsctl's builder.
inline std::string request_line(const json& id, const std::string& method, const json& params = nullptr) {
    return protocol::make_request(id, method, params);
}

/// @brief The text of one notification line (no newline): protocol::make_notification.
inline std::string notification_line(const std::string& method, const json& params = nullptr) {
    return protocol::make_notification(method, params);
}

}  // namespace ecsd::test
