#include "http/http_server.hpp"

#include <vector>

#include <spdlog/spdlog.h>

#include "http/http_connection.hpp"
#include "rpc/services.hpp"

namespace ecsd::net {

http_server::http_server(asio::io_context& io, server_services& services, dispatcher& dispatch,
                         const std::string& host, std::uint16_t port)
    : io_(io), services_(services), dispatch_(dispatch), strand_(asio::make_strand(io)), acceptor_(strand_) {
    const asio::ip::tcp::endpoint endpoint(asio::ip::make_address(host), port);
    acceptor_.open(endpoint.protocol());
    acceptor_.set_option(asio::ip::tcp::acceptor::reuse_address(true));
    acceptor_.bind(endpoint);
    acceptor_.listen(asio::socket_base::max_listen_connections);
    port_ = acceptor_.local_endpoint().port();
    do_accept();
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
        {
            std::lock_guard lock(mutex_);
            if (stopped_) return;
            if (connections_.size() >= services_.config.max_connections) {
                const std::string busy =
                    "HTTP/1.1 503 Service Unavailable\r\nContent-Type: text/plain\r\nContent-Length: 21\r\n"
                    "Connection: close\r\n\r\ntoo many connections\n";
                asio::error_code ignored;
                asio::write(socket, asio::buffer(busy), ignored);
                socket.close(ignored);
            } else {
                c = std::make_shared<http_connection>(std::move(socket), services_, dispatch_, *this,
                                                      ++next_id_);
                connections_.insert(c);
            }
        }
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
