#pragma once
// Options every accepted socket gets, on every face (TCP, HTTP, event streams, WebSocket): the
// daemon's one place for socket tuning.
#include <asio/ip/tcp.hpp>
#if defined(__linux__)
#include <netinet/in.h>
#include <netinet/tcp.h>
#endif

namespace ecsd::net {

/// Unsent bytes the kernel may hold for a socket before it stops taking more (TCP_NOTSENT_LOWAT).
/// Without it Linux queues megabytes for a slow reader, and a watch notification would wait behind
/// seconds of older ones; with it the rest waits in the server, where notifications merge.
inline constexpr int notsent_lowat_bytes = 128 * 1024;

/// @brief No Nagle delay (answers are small and awaited); a small unsent queue in the kernel.
inline void tune_socket(asio::ip::tcp::socket& socket) {
    asio::error_code ignored;  // best effort: a socket without them still works
    socket.set_option(asio::ip::tcp::no_delay(true), ignored);
#if defined(__linux__) && defined(TCP_NOTSENT_LOWAT)
    socket.set_option(
        asio::detail::socket_option::integer<IPPROTO_TCP, TCP_NOTSENT_LOWAT>(notsent_lowat_bytes), ignored);
#endif
}

}  // namespace ecsd::net
