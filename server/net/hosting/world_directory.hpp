#pragma once
// The named worlds of one server. Lookups come from every connection strand, so the map is
// guarded by a mutex held only for the lookup itself; the worlds are touched on their strands.
//
// A world's files belong to whoever holds its name. A name is claimed (claim()) before anything
// is written for it, and the claim either becomes the hosted world (add_hosted) or is released,
// so two requests making the same world (world.create, world.import, start-up) never write the
// same snapshot or journal, and a refused one (world_exists, limit_reached) writes nothing.

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
class world_directory;

/// @brief The right to make a world of one name: held from claim() until it becomes the hosted
/// world or is dropped (then the name is free again). Move-only.
class world_claim {
  public:
    world_claim() noexcept = default;
    world_claim(world_claim&& other) noexcept : dir_(other.dir_), name_(std::move(other.name_)) {
        other.dir_ = nullptr;
    }
    world_claim& operator=(world_claim&& other) noexcept;
    world_claim(const world_claim&) = delete;
    world_claim& operator=(const world_claim&) = delete;
    ~world_claim() { release(); }
    /// @brief The name claimed.
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    /// @brief True while it holds a name.
    [[nodiscard]] explicit operator bool() const noexcept { return dir_ != nullptr; }
    /// @brief Gives the name up (nothing was made of it).
    void release() noexcept;

  private:
    friend class world_directory;
    world_claim(world_directory* dir, std::string name) noexcept : dir_(dir), name_(std::move(name)) {}
    world_directory* dir_ = nullptr;
    std::string name_;
};

/// @brief Thread-safe map of world names to hosted worlds.
class world_directory {
  public:
    /// @brief An empty directory; worlds get strands on `io`.
    world_directory(asio::io_context& io, std::size_t max_worlds, unsigned sim_threads = 1) noexcept
        : io_(io), max_worlds_(max_worlds), sim_threads_(sim_threads) {}

    /// @brief Adds and starts a world. Throws protocol::rpc_error world_exists or limit_reached.
    std::shared_ptr<hosted_world> add(std::string name, std::shared_ptr<world::world> world);
    /// @brief Claims `name` for a world about to be made; call before writing any of its files.
    /// Throws protocol::rpc_error world_exists (a world, a claim, or a destroyed world whose files
    /// are still being removed has it) or limit_reached (worlds and claims fill --max-worlds).
    [[nodiscard]] world_claim claim(const std::string& name);
    /// @brief The same checks as claim() without claiming (an import's first chunk).
    void check_room(const std::string& name) const;
    /// @brief Threads a world's tick uses when its settings name none (ecsd --sim-threads).
    [[nodiscard]] unsigned sim_threads() const noexcept { return sim_threads_; }
    /// @brief Adds and starts a world built elsewhere (loaded from disk). Same errors as add().
    /// Either way the world gets sim_threads() as its default thread count.
    void add_hosted(std::shared_ptr<hosted_world> hosted);
    /// @brief Adds and starts a world under the name `claim` holds (from claim(); never throws
    /// world_exists or limit_reached: the claim already counted).
    void add_hosted(std::shared_ptr<hosted_world> hosted, world_claim claim);
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
    /// @brief Stops every world's timer and ends its watches with server_shutdown; `then` runs
    /// (on the last world's strand) once every world has put those ends in its sinks.
    void stop_all(std::function<void()> then);

  private:
    friend class world_claim;
    /// @brief Throws world_exists or limit_reached for `name`; under mutex_.
    void check_room_locked(const std::string& name) const;

    asio::io_context& io_;
    std::size_t max_worlds_;
    unsigned sim_threads_;
    mutable std::mutex mutex_;
    std::map<std::string, std::shared_ptr<hosted_world>, std::less<>> worlds_;
    std::set<std::string, std::less<>> retiring_;  ///< destroyed, files not yet removed
    std::set<std::string, std::less<>> claimed_;   ///< being made: counted as worlds
};

}  // namespace ecsd::net
