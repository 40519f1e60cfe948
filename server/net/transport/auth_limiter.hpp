#pragma once
// Wrong tokens are rate limited per client address: after a few in a row an address is locked out
// for a while, doubling each time, so guessing goes from tens of thousands a second to a handful a
// minute. A correct token clears the address. Thread-safe; bounded in size.
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

    /// @brief The address part of a peer "1.2.3.4:5678" (or "::1:5678"): what lockouts count by.
    [[nodiscard]] static std::string address_of(const std::string& peer) {
        return peer.substr(0, peer.rfind(':'));
    }

    /// @brief Seconds until `address` may try again, or nullopt when it may try now.
    [[nodiscard]] std::optional<double> locked(const std::string& address, clock::time_point now);
    /// @brief Records a wrong token; returns the lockout in seconds it now starts (0: none yet).
    double failed(const std::string& address, clock::time_point now);
    /// @brief A correct token: the address starts afresh.
    void succeeded(const std::string& address);

  private:
    struct entry {
        int failures = 0;  // since the last lockout ended
        int lockouts = 0;  // how many times it was locked out: the next lasts 2^lockouts s
        clock::time_point until{};
        clock::time_point last{};
    };
    static constexpr std::size_t max_entries = 10000;
    std::mutex mutex_;
    std::unordered_map<std::string, entry> by_address_;
};

}  // namespace ecsd::net
