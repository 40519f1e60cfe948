#pragma once
// What a handler may know about the connection that called it. Lives on the connection's
// strand: only methods that are not world-bound (they run there) receive it.

#include <cstdint>
#include <string>

namespace ecsd::net {

/// @brief Per-connection state shared between the connection and the dispatcher.
struct session {
    std::uint64_t id = 0;        ///< connection number, for logs
    std::string peer;            ///< "address:port" of the client
    bool authenticated = false;  ///< true once server.auth succeeded, or when no token is set
};

}  // namespace ecsd::net
