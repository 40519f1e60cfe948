#pragma once
// The named worlds of one server. Lookups come from every connection strand, so the map is
// guarded by a mutex held only for the lookup itself; the worlds are touched on their strands.

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <asio.hpp>

namespace ecsd::world {
class world;
}

namespace ecsd::net {

class hosted_world;

/// @brief Thread-safe map of world names to hosted worlds.
class world_directory {
  public:
    /// @brief An empty directory; worlds get strands on `io`.
    world_directory(asio::io_context& io, std::size_t max_worlds, unsigned sim_threads = 1) noexcept
        : io_(io), max_worlds_(max_worlds), sim_threads_(sim_threads) {}

    /// @brief Adds and starts a world. Throws protocol::rpc_error world_exists or limit_reached.
    std::shared_ptr<hosted_world> add(std::string name, std::shared_ptr<world::world> world);
    /// @brief Threads a world's tick uses when its settings name none (ecsd --sim-threads).
    [[nodiscard]] unsigned sim_threads() const noexcept { return sim_threads_; }
    /// @brief Adds and starts a world built elsewhere (loaded from disk). Same errors as add().
    /// Either way the world gets sim_threads() as its default thread count.
    void add_hosted(std::shared_ptr<hosted_world> hosted);
    /// @brief The world with this name, or nullptr.
    [[nodiscard]] std::shared_ptr<hosted_world> find(std::string_view name) const;
    /// @brief Removes and stops a world; nullptr when there was none. Requests already queued on
    /// its strand still run against it and then it is freed. With `moved_to`, its watchers hear
    /// that the world moved there (`world_moved`).
    std::shared_ptr<hosted_world> remove(std::string_view name, std::string moved_to = {});
    /// @brief Names of all worlds, sorted.
    [[nodiscard]] std::vector<std::string> names() const;
    /// @brief Every world.
    [[nodiscard]] std::vector<std::shared_ptr<hosted_world>> all() const;
    /// @brief Number of worlds.
    [[nodiscard]] std::size_t size() const;
    /// @brief The io_context worlds get their strands on.
    [[nodiscard]] asio::io_context& io() noexcept { return io_; }
    /// @brief Stops every world's timer (server shutdown).
    void stop_all();

  private:
    asio::io_context& io_;
    std::size_t max_worlds_;
    unsigned sim_threads_;
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<hosted_world>, std::less<>> worlds_;
    std::set<std::string, std::less<>> retiring_;  ///< destroyed, files not yet removed
};

}  // namespace ecsd::net
