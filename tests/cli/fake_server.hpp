#pragma once

// A tiny line server on 127.0.0.1 for the connection and exit-code paths that a healthy ecsd never
// takes: silence, hanging up, garbage. Verb tests use the real ecsd, never this.

#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <functional>
#include <mutex>
#include <string>
#include <thread>
#include <vector>

namespace ecsd::test {

/// @brief Accepts connections one at a time; for each request line calls `reply` and sends what it returns
///        (nothing when empty). `hang_up` closes each connection right after accepting it.
class fake_server {
  public:
    using reply_fn = std::function<std::string(const std::string& line)>;

    explicit fake_server(reply_fn reply, bool hang_up = false) : reply_(std::move(reply)), hang_up_(hang_up) {
        listen_fd_ = socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        addr.sin_port = 0;
        ::bind(listen_fd_, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // NOLINT: POSIX API
        ::listen(listen_fd_, 8);
        socklen_t len = sizeof addr;
        getsockname(listen_fd_, reinterpret_cast<sockaddr*>(&addr), &len);  // NOLINT: POSIX API
        port_ = ntohs(addr.sin_port);
        thread_ = std::thread([this] { serve(); });
    }
    fake_server(const fake_server&) = delete;
    fake_server& operator=(const fake_server&) = delete;
    ~fake_server() {
        stopping_ = true;
        shutdown(listen_fd_, SHUT_RDWR);
        {
            std::lock_guard lock(mutex_);
            if (client_fd_ >= 0) shutdown(client_fd_, SHUT_RDWR);
        }
        thread_.join();
        close(listen_fd_);
    }

    /// @brief The port it listens on.
    [[nodiscard]] int port() const noexcept { return port_; }

    /// @brief Every line received so far.
    [[nodiscard]] std::vector<std::string> lines() const {
        std::lock_guard lock(mutex_);
        return lines_;
    }

  private:
    void serve() {
        while (!stopping_) {
            const int fd = accept(listen_fd_, nullptr, nullptr);
            if (fd < 0) return;
            if (hang_up_) {
                close(fd);
                continue;
            }
            {
                std::lock_guard lock(mutex_);
                client_fd_ = fd;
            }
            std::string buffer;
            char chunk[4096];
            for (;;) {
                const auto n = read(fd, chunk, sizeof chunk);
                if (n <= 0) break;
                buffer.append(chunk, static_cast<std::size_t>(n));
                for (auto nl = buffer.find('\n'); nl != std::string::npos; nl = buffer.find('\n')) {
                    const std::string line = buffer.substr(0, nl);
                    buffer.erase(0, nl + 1);
                    {
                        std::lock_guard lock(mutex_);
                        lines_.push_back(line);
                    }
                    const std::string answer = reply_(line);
                    if (!answer.empty()) (void)!write(fd, answer.data(), answer.size());
                }
            }
            {
                std::lock_guard lock(mutex_);
                client_fd_ = -1;
            }
            close(fd);
        }
    }

    reply_fn reply_;
    bool hang_up_ = false;
    int listen_fd_ = -1;
    int port_ = 0;
    std::atomic<bool> stopping_{false};
    mutable std::mutex mutex_;
    int client_fd_ = -1;
    std::vector<std::string> lines_;
    std::thread thread_;
};

/// @brief A port nothing listens on (bound, then released).
inline int closed_port() {
    const int fd = socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in addr{};
    addr.sin_family = AF_INET;
    addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr);  // NOLINT: POSIX API
    socklen_t len = sizeof addr;
    getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len);  // NOLINT: POSIX API
    close(fd);
    return ntohs(addr.sin_port);
}

}  // namespace ecsd::test
