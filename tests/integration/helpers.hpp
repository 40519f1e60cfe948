#pragma once
// Small helpers shared by the integration tests.

#include <unistd.h>

#include <chrono>
#include <cstdint>
#include <cstdio>
#include <filesystem>
#include <fstream>
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

/// @brief The SHA-256 of a token as `ecsd --hash-token` prints it: a --tokens file's first column.
inline std::string hash_token(const std::string& token) {
    const std::string command = ecsd_server::binary() + " --hash-token " + token;
    FILE* p = ::popen(command.c_str(), "r");
    if (p == nullptr) return {};
    char buffer[128] = {};
    std::string out;
    if (std::fgets(buffer, sizeof buffer, p) != nullptr) out = buffer;
    ::pclose(p);
    while (!out.empty() && (out.back() == '\n' || out.back() == '\r')) out.pop_back();
    return out;
}

/// @brief A file in the temp folder holding `text`, removed with the object (a --tokens file).
struct temp_file {
    std::filesystem::path path;
    temp_file(const std::string& prefix, const std::string& text)
        : path(std::filesystem::temp_directory_path() /
               (prefix + "_" + std::to_string(::getpid()) + "_" +
                std::to_string(std::chrono::steady_clock::now().time_since_epoch().count()))) {
        write(text);
    }
    /// @brief Replaces the text whole (renamed into place, as an editor or a deploy would).
    void write(const std::string& text) const {
        const auto tmp = path.string() + ".new";
        std::ofstream(tmp) << text;
        std::filesystem::rename(tmp, path);
    }
    temp_file(const temp_file&) = delete;
    temp_file& operator=(const temp_file&) = delete;
    ~temp_file() {
        std::error_code ignored;
        std::filesystem::remove(path, ignored);
    }
};

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
