#include "http/http_server.hpp"

#include <algorithm>
#include <cctype>
#include <vector>

#include <spdlog/spdlog.h>

#include "http/http_connection.hpp"
#include "rpc/services.hpp"

namespace ecsd::net {
namespace {

// At the connection limit, a connection idle or stalled this long may be closed to make room
// (the TCP port's rule, server.cpp).
constexpr auto eviction_age = std::chrono::seconds(1);

std::string lower(std::string_view s) {
    std::string out(s);
    for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
    return out;
}

/// The name in a Host header: without the port, and an IPv6 literal without its brackets.
std::string_view host_name(std::string_view host) {
    if (host.starts_with('[')) {
        const auto close = host.find(']');
        return close == std::string_view::npos ? host : host.substr(1, close - 1);
    }
    const auto colon = host.find(':');
    if (colon != std::string_view::npos && host.find(':', colon + 1) == std::string_view::npos)
        return host.substr(0, colon);
    return host;
}

}  // namespace

http_server::http_server(asio::io_context& io, server_services& services, dispatcher& dispatch,
                         const std::string& host, std::uint16_t port)
    : io_(io), services_(services), dispatch_(dispatch), strand_(asio::make_strand(io)), acceptor_(strand_) {
    const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(host), port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
    port_ = acceptor_.local_endpoint().port();
    address_ = endpoint.address();
    for (const auto& h : services.config.http_allow_hosts) allowed_hosts_.push_back(lower(h));
    for (const auto& o : services.config.http_allow_origins) {
        auto origin = lower(o);
        while (origin.size() > 1 && origin.back() == '/') origin.pop_back();
        allowed_origins_.push_back(std::move(origin));
    }
    do_accept();
}

bool http_server::host_allowed(std::string_view host) const {
    if (host.empty()) return true;
    const auto full = lower(host);
    const auto name = lower(host_name(host));
    for (const auto& h : allowed_hosts_) {
        if (h == "*" || h == name || h == full) return true;
    }
    asio::error_code ec;
    auto address = asio::ip::make_address(name, ec);
    if (ec) return name == "localhost" && (address_.is_loopback() || address_.is_unspecified());
    // An address cannot be rebound to another server: any of the ones this socket may be reached at.
    if (address.is_v6() && address.to_v6().is_v4_mapped())
        address = asio::ip::make_address_v4(asio::ip::v4_mapped, address.to_v6());
    return address == address_ || address_.is_unspecified() ||
           (address_.is_loopback() && address.is_loopback());
}

bool http_server::origin_allowed(std::string_view origin, std::string_view host) const {
    auto o = lower(origin);
    while (o.size() > 1 && o.back() == '/') o.pop_back();
    if (!host.empty() && o == "http://" + lower(host)) return true;  // the page this server served
    return std::any_of(allowed_origins_.begin(), allowed_origins_.end(),
                       [&](const std::string& a) { return a == "*" || a == o; });
}

std::shared_ptr<http_connection> http_server::pick_victim(std::int64_t before_ns) const {
    // Idle ones first: closing them loses nothing (a keep-alive client opens a new connection);
    // then those stalled mid-request (slowloris). Within each, the oldest.
    for (const bool idle : {true, false}) {
        std::shared_ptr<http_connection> victim;
        std::int64_t oldest = before_ns + 1;
        for (const auto& c : connections_) {
            const auto since = idle ? c->idle_since() : c->stalled_since();
            if (since > 0 && since < oldest) {
                oldest = since;
                victim = c;
            }
        }
        if (victim) return victim;
    }
    return nullptr;
}

void http_server::do_accept() {
    acceptor_.async_accept(asio::make_strand(io_), [this](const asio::error_code& ec,
                                                          asio::ip::tcp::socket socket) {
        if (!acceptor_.is_open()) return;
        if (ec) {
            spdlog::warn("http accept failed: {}", ec.message());
            auto retry = std::make_shared<asio::steady_timer>(strand_, std::chrono::milliseconds(100));
            retry->async_wait([this, retry](const asio::error_code& e) {
                if (!e) do_accept();
            });
            return;
        }
        std::shared_ptr<http_connection> c;
        std::shared_ptr<http_connection> victim;
        {
            std::lock_guard lock(mutex_);
            if (stopped_) return;
            // At the limit, a connection idle or stalled for over a second gives its place to the
            // newcomer, as on the TCP port; only when none is, the newcomer is refused.
            if (connections_.size() >= services_.config.max_connections) {
                victim = pick_victim(std::chrono::duration_cast<std::chrono::nanoseconds>(
                                         (std::chrono::steady_clock::now() - eviction_age).time_since_epoch())
                                         .count());
            }
            if (connections_.size() >= services_.config.max_connections && !victim) {
                const std::string busy =
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 21\r\n"
                    "X-Content-Type-Options: nosniff\r\nConnection: close\r\n\r\ntoo many connections\n";
                asio::error_code ignored;
                asio::write(socket, asio::buffer(busy), ignored);
                socket.close(ignored);
            } else {
                c = std::make_shared<http_connection>(std::move(socket), services_, dispatch_, *this,
                                                      ++next_id_);
                connections_.insert(c);
            }
        }
        if (victim) victim->evict();
        if (c) c->start();
        do_accept();
    });
}

void http_server::stop() {
    asio::dispatch(strand_, [this] {
        asio::error_code ignored;
        acceptor_.close(ignored);
    });
    std::vector<std::shared_ptr<http_connection>> all;
    {
        std::lock_guard lock(mutex_);
        stopped_ = true;
        all.assign(connections_.begin(), connections_.end());
    }
    for (auto& c : all) c->stop();
}

void http_server::remove(const std::shared_ptr<http_connection>& c) {
    std::lock_guard lock(mutex_);
    connections_.erase(c);
}

}  // namespace ecsd::net
