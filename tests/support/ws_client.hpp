#pragma once
// A WebSocket client (RFC 6455) for the tests of the HTTP face's GET /ws: the upgrade, masked
// frames out, frames in. Raw enough to send what a browser never would (unmasked or binary frames,
// fragments, a bad handshake).

#include <poll.h>
#include <sys/socket.h>

#include <chrono>
#include <cstdint>
#include <optional>
#include <random>
#include <string>

#include <nlohmann/json.hpp>

#include "http_client.hpp"

namespace ecsd::test {

/// @brief One frame as read off the wire.
struct ws_message {
    int opcode = 0;  ///< 1 text, 8 close, 9 ping, 10 pong
    std::string payload;
    /// @brief A close frame's status code (0 when it has none).
    [[nodiscard]] int close_code() const {
        return payload.size() >= 2
                   ? (static_cast<unsigned char>(payload[0]) << 8) | static_cast<unsigned char>(payload[1])
                   : 0;
    }
};

class ws_client {
  public:
    /// @brief Connects to the HTTP port and sends the upgrade, with `extra_headers` ("Name: value\r\n"
    /// each); upgraded() says whether the answer was 101.
    explicit ws_client(int http_port, const std::string& extra_headers = {}, const std::string& path = "/ws")
        : conn_(http_port) {
        const std::string key = "dGhlIHNhbXBsZSBub25jZQ==";  // RFC 6455's own example key
        conn_.send_raw("GET " + path + " HTTP/1.1\r\nHost: 127.0.0.1:" + std::to_string(http_port) +
                       "\r\nUpgrade: websocket\r\nConnection: Upgrade\r\nSec-WebSocket-Key: " + key +
                       "\r\nSec-WebSocket-Version: 13\r\n" + extra_headers + "\r\n");
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (buf_.find("\r\n\r\n") == std::string::npos && fill(deadline)) {
        }
        const auto end = buf_.find("\r\n\r\n");
        if (end == std::string::npos) return;
        head_ = buf_.substr(0, end);
        buf_.erase(0, end + 4);
        status_ = std::stoi(head_.substr(9, 3));
        if (status_ != 101) {  // the refusal's body, when it has a length
            const auto cl = lower(head_).find("content-length: ");
            const std::size_t length = cl == std::string::npos ? 0 : std::stoul(head_.substr(cl + 16));
            while (buf_.size() < length && fill(deadline)) {
            }
            body_ = buf_.substr(0, length);
        }
    }

    [[nodiscard]] bool upgraded() const { return status_ == 101; }
    [[nodiscard]] int status() const { return status_; }
    [[nodiscard]] const std::string& head() const { return head_; }
    [[nodiscard]] const std::string& body() const { return body_; }

    /// @brief Sends one masked frame (opcode 1 text, 0 continuation, 2 binary, 8 close, 9 ping).
    bool send_frame(const std::string& payload, int opcode = 1, bool fin = true, bool masked = true) {
        std::string f;
        f += static_cast<char>((fin ? 0x80 : 0) | opcode);
        const auto n = payload.size();
        const char mask_bit = masked ? static_cast<char>(0x80) : 0;
        if (n < 126) {
            f += static_cast<char>(mask_bit | static_cast<char>(n));
        } else if (n <= 0xFFFF) {
            f += static_cast<char>(mask_bit | 126);
            f += static_cast<char>(n >> 8);
            f += static_cast<char>(n & 0xFF);
        } else {
            f += static_cast<char>(mask_bit | 127);
            for (int shift = 56; shift >= 0; shift -= 8) f += static_cast<char>((n >> shift) & 0xFF);
        }
        if (!masked) return conn_.send_raw(f + payload);
        std::uint32_t key = rng_();
        char k[4];
        for (int i = 0; i < 4; ++i) k[i] = static_cast<char>((key >> (8 * i)) & 0xFF);
        f.append(k, 4);
        for (std::size_t i = 0; i < n; ++i) f += static_cast<char>(payload[i] ^ k[i & 3]);
        return conn_.send_raw(f);
    }
    bool send_text(const std::string& text) { return send_frame(text); }

    /// @brief The next frame; nullopt on timeout or close.
    std::optional<ws_message> read(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            if (buf_.size() >= 2) {
                const auto b1 = static_cast<unsigned char>(buf_[1]);
                std::size_t header = 2;
                std::uint64_t length = b1 & 0x7F;
                if (length == 126 && buf_.size() >= 4) {
                    length = (static_cast<unsigned char>(buf_[2]) << 8) | static_cast<unsigned char>(buf_[3]);
                    header = 4;
                } else if (length == 127 && buf_.size() >= 10) {
                    length = 0;
                    for (int i = 2; i < 10; ++i) length = (length << 8) | static_cast<unsigned char>(buf_[i]);
                    header = 10;
                }
                const bool header_known = (b1 & 0x7F) < 126 || header > 2;
                if (header_known && buf_.size() >= header + length) {
                    ws_message m;
                    m.opcode = static_cast<unsigned char>(buf_[0]) & 0x0F;
                    m.payload = buf_.substr(header, static_cast<std::size_t>(length));
                    buf_.erase(0, header + static_cast<std::size_t>(length));
                    return m;
                }
            }
            if (!fill(deadline)) return std::nullopt;
        }
    }

    /// @brief The next text message as JSON, skipping pongs; null on timeout, close, or another frame.
    nlohmann::json read_json(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        for (;;) {
            const auto m = read(timeout);
            if (!m) return nullptr;
            if (m->opcode == 10) continue;
            if (m->opcode != 1) return nullptr;
            return nlohmann::json::parse(m->payload, nullptr, false);
        }
    }

    /// @brief A request, then its answer (notifications that arrive first are skipped).
    nlohmann::json call(const std::string& method, const nlohmann::json& params = nlohmann::json::object()) {
        const auto id = next_id_++;
        send_text(
            nlohmann::json{{"jsonrpc", "2.0"}, {"id", id}, {"method", method}, {"params", params}}.dump());
        for (;;) {
            auto m = read_json();
            if (m.is_null() || (m.is_object() && m.value("id", nlohmann::json()) == id)) return m;
        }
    }

    bool closed(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        return conn_.wait_closed(timeout);
    }

  private:
    bool fill(std::chrono::steady_clock::time_point deadline) {
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) return false;
        pollfd p{conn_.fd(), POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left)) <= 0) return false;
        char chunk[65536];
        const auto n = ::recv(conn_.fd(), chunk, sizeof chunk, 0);
        if (n <= 0) return false;
        buf_.append(chunk, static_cast<std::size_t>(n));
        return true;
    }

    line_client conn_;
    std::string buf_;
    std::string head_;
    std::string body_;
    int status_ = 0;
    std::int64_t next_id_ = 1;
    std::mt19937 rng_{12345};
};

}  // namespace ecsd::test
