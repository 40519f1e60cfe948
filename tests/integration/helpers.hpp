#pragma once
// Small helpers shared by the integration tests.

#include <string>

#include <nlohmann/json.hpp>

#include "ecsd_server.hpp"
#include "line_client.hpp"

namespace ecsd::test {

using nlohmann::json;

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
