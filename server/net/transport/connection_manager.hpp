#pragma once
// Owns the open connections so the server can count them and shut them all down
// (Asio's http/server connection_manager, made thread-safe for a multi-threaded io_context).

#include <cstddef>
#include <cstdint>
#include <memory>
#include <mutex>
#include <unordered_set>

namespace ecsd::net {

class connection;

/// @brief The set of open connections.
class connection_manager {
  public:
    /// @brief Adds and starts a connection.
    void start(const std::shared_ptr<connection>& c);
    /// @brief Forgets a closed connection.
    void remove(const std::shared_ptr<connection>& c);
    /// @brief Asks every connection to finish what is in flight and close.
    void shutdown_all();
    /// @brief At the connection limit: closes the connection stalled longest (mid-request, or
    /// silent since it opened) if that began at or before `stalled_before_ns` (steady clock);
    /// true when one was asked to close.
    bool evict_stalled(std::int64_t stalled_before_ns);
    /// @brief Open connections.
    [[nodiscard]] std::size_t size() const;

  private:
    mutable std::mutex mutex_;
    std::unordered_set<std::shared_ptr<connection>> connections_;
};

}  // namespace ecsd::net
