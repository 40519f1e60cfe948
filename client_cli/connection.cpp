#include "connection.hpp"

#include <poll.h>
#include <sys/socket.h>

#include <cerrno>

#include <asio/connect.hpp>
#include <asio/read_until.hpp>
#include <asio/write.hpp>

#include "errors.hpp"

namespace ecsd::cli {

connection::connection(const std::string& host, std::uint16_t port, clock::time_point deadline)
    : socket_(io_), peer_(host + ":" + std::to_string(port)) {
    asio::ip::tcp::resolver resolver(io_);
    asio::error_code error = asio::error::would_block;
    asio::ip::tcp::resolver::results_type endpoints;
    resolver.async_resolve(host, std::to_string(port),
                           [&](const asio::error_code& ec, asio::ip::tcp::resolver::results_type results) {
                               error = ec;
                               endpoints = std::move(results);
                           });
    run_until(deadline, "resolving the host", [&] { resolver.cancel(); });
    if (error) {
        throw connection_error("cannot resolve " + host + ": " + error.message());
    }

    error = asio::error::would_block;
    asio::async_connect(socket_, endpoints,
                        [&](const asio::error_code& ec, const asio::ip::tcp::endpoint&) { error = ec; });
    run_until(deadline, "connecting");
    if (error) {
        throw connection_error("cannot connect to " + peer_ + ": " + error.message());
    }
    socket_.set_option(asio::ip::tcp::no_delay(true));
}

connection::~connection() {
    asio::error_code ignored;
    socket_.close(ignored);
}

void connection::write_line(std::string_view line, clock::time_point deadline) {
    std::string framed;
    framed.reserve(line.size() + 1);
    framed.append(line);
    framed.push_back('\n');
    asio::error_code error = asio::error::would_block;
    asio::async_write(socket_, asio::buffer(framed),
                      [&](const asio::error_code& ec, std::size_t) { error = ec; });
    run_until(deadline, "sending the request");
    if (error) {
        throw connection_error("lost connection to " + peer_ + ": " + error.message());
    }
}

void connection::start_read_line(asio::error_code& error, std::size_t& length) {
    error = asio::error::would_block;
    length = 0;
    asio::async_read_until(socket_, asio::dynamic_buffer(buffer_, max_line), '\n',
                           [&error, &length](const asio::error_code& ec, std::size_t n) {
                               error = ec;
                               length = n;
                           });
}

std::string connection::read_line(clock::time_point deadline) {
    asio::error_code error;
    std::size_t length = 0;
    start_read_line(error, length);
    run_until(deadline, "waiting for the response");
    return finish_read(error, length);
}

std::optional<std::string> connection::read_line_before(clock::time_point deadline) {
    asio::error_code error;
    std::size_t length = 0;
    start_read_line(error, length);
    io_.restart();
    io_.run_until(deadline);
    if (!io_.stopped()) {
        // Quiet until the deadline: cancel the read (the bytes it got stay in buffer_) and let its
        // handler run; it may also have completed just now.
        asio::error_code ignored;
        socket_.cancel(ignored);
        io_.run();
    }
    if (error == asio::error::operation_aborted) {
        return std::nullopt;
    }
    return finish_read(error, length);
}

bool connection::peer_has_closed() {
    for (;;) {
        pollfd p{socket_.native_handle(), POLLIN, 0};
        if (::poll(&p, 1, 0) <= 0) return false;  // nothing arrived: still open
        if (p.revents & (POLLERR | POLLNVAL)) return true;
        char chunk[4096];
        const auto n = ::recv(socket_.native_handle(), chunk, sizeof chunk, MSG_DONTWAIT);
        if (n == 0) return true;  // EOF
        if (n < 0) return errno != EAGAIN && errno != EWOULDBLOCK && errno != EINTR;
        if (buffer_.size() + static_cast<std::size_t>(n) > max_line) return false;  // let read_line report it
        buffer_.append(chunk, static_cast<std::size_t>(n));
    }
}

std::string connection::finish_read(const asio::error_code& error, std::size_t length) {
    if (error == asio::error::eof) {
        throw connection_error(peer_ + " closed the connection");
    }
    if (error == asio::error::not_found) {
        throw connection_error("response from " + peer_ + " is too long");
    }
    if (error) {
        throw connection_error("lost connection to " + peer_ + ": " + error.message());
    }
    std::string line = buffer_.substr(0, length - 1);
    buffer_.erase(0, length);
    if (!line.empty() && line.back() == '\r') {
        line.pop_back();
    }
    return line;
}

void connection::run_until(clock::time_point deadline, std::string_view what,
                           const std::function<void()>& cancel) {
    io_.restart();
    io_.run_until(deadline);
    if (!io_.stopped()) {
        // Time is up: closing the socket cancels the pending operation; let its handler run.
        if (cancel) {
            cancel();
        }
        asio::error_code ignored;
        socket_.close(ignored);
        io_.run();
        throw connection_error("timed out " + std::string(what) + " (" + peer_ + ")");
    }
}

}  // namespace ecsd::cli
