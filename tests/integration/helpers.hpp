#pragma once
// Small helpers shared by the integration tests.

#include <cstdint>
#include <string>
#include <string_view>

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

/// @brief CRC-32 (IEEE), as ecsd seals snapshots and journal records with it: the tests' own, bit
/// by bit, so a file a test writes by hand is checked against a second implementation.
inline std::uint32_t crc32_of(std::string_view data) {
    std::uint32_t c = 0xFFFFFFFFU;
    for (const unsigned char b : data) {
        c ^= b;
        for (int k = 0; k < 8; ++k) c = (c & 1U) ? 0xEDB88320U ^ (c >> 1U) : c >> 1U;
    }
    return c ^ 0xFFFFFFFFU;
}

}  // namespace ecsd::test
