#pragma once
// Wrong tokens are rate limited per client address and across the whole server: after a few in a
// row an address is locked out for a while, doubling each time, and after more from any addresses
// (a guesser with many source addresses) every address is, so guessing goes from tens of thousands
// a second to a handful a minute. A correct token clears its address.
//
// A lockout never keeps out the right token: the callers check the token of a connection that has
// sent no wrong one even while locked out, and close a connection at its first wrong token then.
// A guesser thus gets one guess per new connection during a lockout, where the right client, on a
// fresh connection, gets in. Thread-safe; bounded in size.
#include <chrono>
#include <cstdint>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>

namespace ecsd::net {

/// @brief Failed server.auth attempts per address.
class auth_limiter {
  public:
    using clock = std::chrono::steady_clock;
    /// @brief Wrong tokens an address may send before it is locked out.
    static constexpr int free_failures = 5;
    /// @brief Wrong tokens one connection may send before it is closed.
    static constexpr int connection_failures = 3;
    /// @brief Wrong tokens from all addresses together before every address is locked out.
    static constexpr int server_free_failures = 50;

    /// @brief The address part of a peer "1.2.3.4:5678" (or "::1:5678"): what lockouts count by.
    [[nodiscard]] static std::string address_of(const std::string& peer) {
        return peer.substr(0, peer.rfind(':'));
    }

    /// @brief Seconds until `address` may try again (its own lockout or the server's, whichever
    /// ends later), or nullopt when it may try now.
    [[nodiscard]] std::optional<double> locked(const std::string& address, clock::time_point now);
    /// @brief Records a wrong token; returns the lockout in seconds it now starts for its address or
    /// for the server (0: none yet).
    double failed(const std::string& address, clock::time_point now);
    /// @brief A correct token: the address starts afresh.
    void succeeded(const std::string& address);

  private:
    struct entry {
        int failures = 0;  // since the last lockout ended
        int lockouts = 0;  // how many times it was locked out: the next lasts 2^lockouts s
        clock::time_point until{};
        clock::time_point last{};
        /// One more wrong token: the lockout it starts after `free` of them (0: none yet).
        double fail(clock::time_point now, int free);
    };
    static constexpr std::size_t max_entries = 10000;
    std::mutex mutex_;
    std::unordered_map<std::string, entry> by_address_;
    entry server_;  // every address's wrong tokens together
};

/// @brief --action-rate: each player identity's world.call_action calls, a token bucket per identity
/// (every connection of the identity together) that holds one second of calls. Thread-safe; its
/// size is bounded by the identities of the --tokens file (one entry each).
class action_limiter {
  public:
    using clock = std::chrono::steady_clock;
    /// @param per_second calls a second each identity may make; 0: no limit
    explicit action_limiter(double per_second) : rate_(per_second) {}
    /// @brief Takes one call for `identity`; nullopt when it may go, else the seconds until it may.
    [[nodiscard]] std::optional<double> take(const std::string& identity, clock::time_point now);

  private:
    struct bucket {
        double tokens = 0;
        clock::time_point last{};
    };
    static constexpr std::size_t max_entries = 100000;
    double rate_;
    std::mutex mutex_;
    std::unordered_map<std::string, bucket> by_identity_;
};

}  // namespace ecsd::net
