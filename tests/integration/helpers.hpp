#pragma once
// Small helpers shared by the integration tests.

#include <string>

#include <nlohmann/json.hpp>

#include "ecsd/protocol/jsonrpc.hpp"
#include "ecsd_server.hpp"
#include "line_client.hpp"

namespace ecsd::test {

using nlohmann::json;

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
