#include "rpc/token_check.hpp"

#include <algorithm>
#include <string>

#include "rpc/constant_time.hpp"
#include "rpc/services.hpp"
#include "rpc/session.hpp"

namespace ecsd::net {

std::optional<protocol::rpc_error> check_token(server_services& services, session& caller,
                                               std::string_view given) {
    const auto& config = services.config;
    if (!config.auth_required()) {
        caller.authenticated = true;
        return std::nullopt;
    }
    auto& guard = services.auth_guard;
    const auto address = auth_limiter::address_of(caller.peer);
    const auto now = auth_limiter::clock::now();
    const auto in_seconds = [](double s) { return std::to_string(static_cast<long>(s + 0.999)); };
    // During a lockout, a connection that has sent no wrong token still has its token checked: the
    // right one is never locked out, and a wrong one closes the connection (auth_limiter.hpp).
    const auto wait = guard.locked(address, now);
    if (wait && caller.auth_failures > 0) {
        return protocol::rpc_error(
            protocol::reason::rate_limited,
            "too many wrong tokens from " + address + "; try again in " + in_seconds(*wait) + " s",
            {{"retry_after", *wait}});
    }
    // Both are checked whatever the other says, so the time taken tells nothing of which matched.
    const bool admin = !config.token.empty() && constant_time_equal(given, config.token);
    std::string hash;
    std::optional<identity> who;
    if (!config.tokens.empty()) {
        hash = sha256_hex(given);
        who = services.identities.find(hash);
    }
    if (admin || who) {
        guard.succeeded(address);
        caller.authenticated = true;
        if (admin) {
            caller.who = role::admin;
            caller.identity = "admin";
            caller.token_hash.clear();
        } else {
            caller.who = who->what;
            caller.identity = std::move(who->name);
            caller.token_hash = std::move(hash);
            caller.identity_generation = services.identities.generation();
        }
        services.clients.update(caller);
        return std::nullopt;
    }
    const double lockout = std::max(wait.value_or(0.0), guard.failed(address, now));
    if (++caller.auth_failures >= auth_limiter::connection_failures || wait) caller.close_requested = true;
    if (lockout > 0) {
        return protocol::rpc_error(
            protocol::reason::rate_limited,
            "invalid token; too many from " + address + ", try again in " + in_seconds(lockout) + " s",
            {{"retry_after", lockout}});
    }
    return protocol::rpc_error(protocol::reason::unauthorized, "invalid token");
}

bool still_authenticated(server_services& services, session& caller) {
    if (!caller.authenticated) return false;
    if (caller.token_hash.empty()) return true;
    const auto generation = services.identities.generation();
    if (caller.identity_generation == generation) return true;
    // The tokens file was reloaded: the token must still be in it, and its role is the new one.
    auto who = services.identities.find(caller.token_hash);
    caller.identity_generation = generation;
    if (!who) {
        caller.authenticated = false;
        caller.token_hash.clear();
        services.clients.update(caller);
        return false;
    }
    caller.who = who->what;
    caller.identity = std::move(who->name);
    services.clients.update(caller);
    return true;
}

}  // namespace ecsd::net
