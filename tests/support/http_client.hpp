#pragma once
// A raw HTTP/1.1 client for the tests of ecsd's HTTP face, and ecsd started with that face on a
// free port: shared by every test file that speaks HTTP.

#include <netinet/in.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecsd_server.hpp"
#include "line_client.hpp"

namespace ecsd::test {

/// @brief `s` in lower case (ASCII): HTTP header names are case-insensitive.
inline std::string lower(std::string s) {
    for (auto& c : s) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return s;
}

/// @brief One HTTP request carrying a JSON-RPC body: `POST /`, with `extra` header lines (each
/// ending in CRLF) before Content-Length, as a browser or curl would send it.
inline std::string post(const std::string& body, const std::string& extra = {}) {
    return "POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n" + extra +
           "Content-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body;
}

/// @brief A port nobody listens on right now (bind to 0, read it, close): another process may
/// still take it before ecsd binds it (start_with_http tries again).
inline int free_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

/// @brief One HTTP response as read off the wire.
struct response {
    int status = 0;
    std::string head;  ///< status line and headers, as sent
    std::string body;
    /// @brief True when the head holds `text` (a header line or part of one), in any case.
    [[nodiscard]] bool has(const std::string& text) const {
        return lower(head).find(lower(text)) != std::string::npos;
    }
};

/// @brief A raw HTTP client: send bytes, read whole responses (Content-Length framed) or events.
class http_client {
  public:
    explicit http_client(int port) : conn_(port) {}
    bool send(const std::string& bytes) { return conn_.send_raw(bytes); }
    /// @brief Reads one response; nullopt on timeout or close before it was complete.
    std::optional<response> read(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            const auto end = buf_.find("\r\n\r\n");
            if (end != std::string::npos) {
                response r;
                r.head = buf_.substr(0, end);
                r.status = std::stoi(r.head.substr(9, 3));
                std::size_t length = 0;
                const auto cl = lower(r.head).find("content-length: ");
                if (cl != std::string::npos) length = std::stoul(r.head.substr(cl + 16));
                if (buf_.size() >= end + 4 + length) {
                    r.body = buf_.substr(end + 4, length);
                    buf_.erase(0, end + 4 + length);
                    return r;
                }
            }
            if (!fill(deadline)) return std::nullopt;
        }
    }
    /// @brief The head of a streamed response (no Content-Length); its events follow (event()).
    std::optional<std::string> read_head(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            const auto end = buf_.find("\r\n\r\n");
            if (end != std::string::npos) {
                auto head = buf_.substr(0, end);
                buf_.erase(0, end + 4);
                return head;
            }
            if (!fill(deadline)) return std::nullopt;
        }
    }
    /// @brief The next SSE `data:` payload (comments, the keep-alives, are skipped).
    std::optional<nlohmann::json> event(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        const auto deadline = std::chrono::steady_clock::now() + timeout;
        for (;;) {
            const auto end = buf_.find("\n\n");
            if (end != std::string::npos) {
                const std::string block = buf_.substr(0, end);
                buf_.erase(0, end + 2);
                if (block.rfind("data: ", 0) == 0) return nlohmann::json::parse(block.substr(6));
                continue;
            }
            if (!fill(deadline)) return std::nullopt;
        }
    }
    bool closed(std::chrono::milliseconds timeout = std::chrono::seconds(5)) {
        return conn_.wait_closed(timeout);
    }
    [[nodiscard]] int fd() const { return conn_.fd(); }

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
};

/// @brief ecsd with its HTTP face on a free port, in `*http`. A free port can be taken by another
/// test between free_port() and ecsd's bind (ctest runs tests side by side); ecsd then runs
/// without HTTP, so it is started again on another port, up to five times (then the caller's
/// check of http_port() fails).
inline std::unique_ptr<ecsd_server> start_with_http(server_options options, int* http) {
    const auto more = options.args;
    for (int attempt = 0;; ++attempt) {
        *http = free_port();
        options.args = {"--http-port", std::to_string(*http)};
        options.args.insert(options.args.end(), more.begin(), more.end());
        auto s = std::make_unique<ecsd_server>(options);
        if (s->http_port() == *http || attempt == 4) return s;
    }
}

}  // namespace ecsd::test
