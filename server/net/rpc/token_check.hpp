#pragma once
// The token check every face shares: server.auth on the TCP port, the Authorization header on the
// HTTP face. One rule for both, so neither is a faster way to guess (auth_limiter.hpp): wrong
// tokens count against the address, a connection that sent a wrong one waits out a lockout, and
// one that sent too many is closed (session::close_requested) once its answer is out.
#include <optional>
#include <string_view>

#include "ecsd/protocol/errors.hpp"

namespace ecsd::net {

struct server_services;
struct session;

/// @brief Checks `given` against --token and the --tokens file for `caller`. Nullopt: right (or no
/// token is set), and the session is authenticated with its identity and role. Otherwise the
/// refusal: `unauthorized`, or `rate_limited` with `data.retry_after` in seconds.
[[nodiscard]] std::optional<protocol::rpc_error> check_token(server_services& services, session& caller,
                                                             std::string_view given);

/// @brief Whether `caller` is authenticated still: after a reload of the tokens file, its token must
/// be in the new file (else it is no longer authenticated), and it takes the role the file gives now.
[[nodiscard]] bool still_authenticated(server_services& services, session& caller);

}  // namespace ecsd::net
