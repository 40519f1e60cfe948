#pragma once
// What a handler may know about the connection that called it. Lives on the connection's
// strand: methods that are not world-bound run there and may use all of it; world-bound
// handlers run on a world's strand and may use only `watches`, which never changes.

#include <cstdint>
#include <memory>
#include <string>

#include "rpc/identities.hpp"

namespace ecsd::net {

class watch_sink;

/// @brief Per-connection state shared between the connection and the dispatcher.
struct session {
    std::uint64_t id = 0;                 ///< connection number, for logs
    std::string peer;                     ///< "address:port" of the client
    bool authenticated = false;           ///< true once server.auth succeeded, or when no token is set
    std::shared_ptr<watch_sink> watches;  ///< where world.watch notifications for this connection go
    int auth_failures = 0;                ///< wrong tokens sent on this connection
    bool close_requested = false;         ///< a handler asks the connection to close after this answer
    bool lines = true;                   ///< a line connection (TCP), where notifications can arrive any time
    role who = role::admin;              ///< what it may call (rpc/identities.hpp); admin without tokens
    std::string identity = "anonymous";  ///< the authenticated identity ("admin" for --token)
    std::string token_hash;              ///< its token's SHA-256, when it came from --tokens
    std::uint64_t identity_generation = 0;  ///< the tokens file it was checked against
    const char* face = "tcp";               ///< "tcp", "websocket" or "http": server.clients shows it
};

/// @brief What the HTTP face hands the TCP face's connection when a client upgrades to WebSocket
/// (GET /ws): the connection then serves it as it serves a TCP client, framing messages instead of
/// lines. The two faces never include each other; the daemon passes this between them.
struct websocket_handover {
    std::string response;     ///< the 101 Switching Protocols answer, written first
    std::string early_input;  ///< bytes the client sent after its upgrade request
    session from;             ///< the upgrade's session: id, peer, and what its Authorization header proved
};

}  // namespace ecsd::net
