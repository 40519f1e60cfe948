#pragma once
// Small helpers shared by the integration tests.

#include <nlohmann/json.hpp>
#include <string>

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

/// @brief The text of one request line (no newline).
inline std::string request_line(const json& id, const std::string& method, const json& params = nullptr) {
    json r{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}};
    if (!params.is_null()) r["params"] = params;
    return r.dump();
}

/// @brief The text of one notification line (no newline).
inline std::string notification_line(const std::string& method, const json& params = nullptr) {
    json r{{"jsonrpc", "2.0"}, {"method", method}};
    if (!params.is_null()) r["params"] = params;
    return r.dump();
}

}  // namespace ecsd::test
