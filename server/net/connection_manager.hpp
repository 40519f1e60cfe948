#pragma once
// Owns the open connections so the server can count them and shut them all down
// (Asio's http/server connection_manager, made thread-safe for a multi-threaded io_context).

#include <cstddef>
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
    /// @brief Open connections.
    [[nodiscard]] std::size_t size() const;

private:
    mutable std::mutex mutex_;
    std::unordered_set<std::shared_ptr<connection>> connections_;
};

}  // namespace ecsd::net
