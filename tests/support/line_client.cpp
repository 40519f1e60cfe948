#include "line_client.hpp"

#include <arpa/inet.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <sys/socket.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <stdexcept>

#include <gtest/gtest.h>

#include "ecsd/protocol/jsonrpc.hpp"
#include "ecsd_server.hpp"

namespace ecsd::test {

line_client::line_client(int port, const std::string& host, int receive_buffer, const std::string& source) {
    fd_ = ::socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
    if (fd_ < 0) throw std::runtime_error("socket failed");
    if (receive_buffer > 0) ::setsockopt(fd_, SOL_SOCKET, SO_RCVBUF, &receive_buffer, sizeof receive_buffer);
    const int one = 1;
    ::setsockopt(fd_, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    if (!source.empty()) {
        sockaddr_in local{};
        local.sin_family = AF_INET;
        if (::inet_pton(AF_INET, source.c_str(), &local.sin_addr) != 1 ||
            ::bind(fd_, reinterpret_cast<sockaddr*>(&local), sizeof local) != 0) {
            ::close(fd_);
            throw std::runtime_error("cannot bind to " + source);
        }
    }
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_port = htons(static_cast<std::uint16_t>(port));
    if (::inet_pton(AF_INET, host.c_str(), &addr.sin_addr) != 1)
        throw std::runtime_error("bad address " + host);
    if (::connect(fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
        ::close(fd_);
        throw std::runtime_error("connect to " + host + ":" + std::to_string(port) + " failed");
    }
}

line_client::~line_client() {
    if (fd_ >= 0) ::close(fd_);
}

bool line_client::send_raw(std::string_view bytes) {
    while (!bytes.empty()) {
        const auto n = ::send(fd_, bytes.data(), bytes.size(), MSG_NOSIGNAL);
        if (n < 0) {
            if (errno == EINTR) continue;
            return false;
        }
        bytes.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

int line_client::fill(std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        // Rounded up: a deadline under a millisecond away still polls (truncated, it never did).
        const auto left =
            std::chrono::ceil<std::chrono::milliseconds>(deadline - std::chrono::steady_clock::now()).count();
        if (left <= 0) return -2;
        pollfd p{fd_, POLLIN, 0};
        const int r = ::poll(&p, 1, static_cast<int>(left));
        if (r < 0 && errno == EINTR) continue;
        if (r <= 0) return -2;
        char buf[65536];
        const auto n = ::recv(fd_, buf, std::min(sizeof buf, read_chunk_), 0);
        if (n > 0) {
            buffer_.append(buf, static_cast<std::size_t>(n));
            return 1;
        }
        if (n == 0) return 0;
        if (errno == EINTR || errno == EAGAIN) continue;
        return -1;
    }
}

std::optional<std::string> line_client::read_line(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        const auto eol = buffer_.find('\n');
        if (eol != std::string::npos) {
            std::string line = buffer_.substr(0, eol);
            buffer_.erase(0, eol + 1);
            if (!line.empty() && line.back() == '\r') line.pop_back();
            return line;
        }
        if (fill(deadline) != 1) return std::nullopt;
    }
}

nlohmann::json line_client::read_json(std::chrono::milliseconds timeout) {
    auto line = read_line(timeout);
    if (!line) return nullptr;
    return nlohmann::json::parse(*line);
}

nlohmann::json line_client::call(std::string_view method, const nlohmann::json& params) {
    if (!send_line(protocol::make_request(next_id_++, method, params))) return nullptr;
    return read_json(std::chrono::seconds(5) * sanitizer_time_factor);  // a sanitized ecsd is slower
}

nlohmann::json line_client::result(std::string_view method, const nlohmann::json& params) {
    const auto response = call(method, params);
    EXPECT_TRUE(response.is_object() && response.contains("result")) << method << " -> " << response.dump();
    return response.is_object() ? response.value("result", nlohmann::json()) : nlohmann::json();
}

bool line_client::wait_closed(std::chrono::milliseconds timeout) {
    const auto deadline = std::chrono::steady_clock::now() + timeout;
    for (;;) {
        buffer_.clear();
        const int r = fill(deadline);
        if (r == 0 || r == -1) return true;
        if (r == -2) return false;
    }
}

void line_client::shutdown_write() {
    ::shutdown(fd_, SHUT_WR);
}

}  // namespace ecsd::test
