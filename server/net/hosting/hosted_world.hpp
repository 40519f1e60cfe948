#pragma once
// A world as the server hosts it: the world itself, the strand that owns it, and the timer that
// drives its fixed-rate tick. Everything that touches the world runs on the strand, so ticks
// and requests never overlap and the network never locks the world.

#include <atomic>
#include <chrono>
#include <cstdint>
#include <functional>
#include <memory>
#include <string>
#include <string_view>

#include <asio.hpp>

#include "hosting/watch.hpp"

namespace ecsd::world {
class world;
}
namespace ecsd::memory {
class spare_blocks;
}

namespace ecsd::net {

/// @brief One named world with its strand and tick timer.
class world_log;

class hosted_world : public std::enable_shared_from_this<hosted_world> {
  public:
    using strand_type = asio::strand<asio::io_context::executor_type>;

    /// @brief Hosts `world` under `name`; the timer starts with start(). A null world (unit
    /// tests of routing) is hosted without a tick.
    hosted_world(asio::io_context& io, std::string name, std::shared_ptr<world::world> world);
    ~hosted_world();
    hosted_world(const hosted_world&) = delete;
    hosted_world& operator=(const hosted_world&) = delete;

    /// @brief The world's name.
    [[nodiscard]] const std::string& name() const noexcept { return name_; }
    /// @brief The strand every access to the world runs on.
    [[nodiscard]] strand_type& strand() noexcept { return strand_; }
    /// @brief The world; only on strand().
    [[nodiscard]] world::world& world() noexcept { return *world_; }
    /// @brief The world as shared; only on strand().
    [[nodiscard]] std::shared_ptr<world::world> world_ptr() const noexcept { return world_; }

    /// @brief Arms the tick timer. Safe from any thread.
    void start();
    /// @brief Cancels the tick timer for good (world destroyed or server stopping) and ends every
    /// watch of the world with `reason` (and `moved_to`, when the world moved to another server).
    /// Safe from any thread. `then` runs on the strand once the ends are in the sinks.
    void stop(std::string_view reason = "world_destroyed", std::string moved_to = {},
              std::function<void()> then = {});

    /// @brief On the strand: seals the world for a move (world.export with `seal`). It stops
    /// ticking and the dispatcher refuses every request that would change it (world_sealed)
    /// until unseal(). The seal is not saved: a restarted server ticks the world again.
    void seal();
    /// @brief On the strand: lifts the seal; ticking resumes from now (no catch-up burst).
    void unseal();
    /// @brief On the strand: true while sealed.
    [[nodiscard]] bool sealed() const noexcept { return sealed_; }

    /// @brief Figures any strand may read (server.info), as of the world's last tick.
    struct figures {
        std::atomic<std::size_t> entities{0};
        std::atomic<std::size_t> memory_bytes{0};
        std::atomic<std::uint64_t> tick{0};
    };
    [[nodiscard]] const figures& last_figures() const noexcept { return figures_; }

    /// @brief When the world last showed that its strand makes progress; any thread may read it.
    /// The tick loop stamps it at every wake-up; a paused world has no wake-ups and is stamped by
    /// probe(). A strand held by a runaway request or system stamps nothing (the Agones health rule).
    [[nodiscard]] std::chrono::steady_clock::time_point last_beat() const noexcept {
        return std::chrono::steady_clock::time_point(
            std::chrono::steady_clock::duration(last_beat_.load(std::memory_order_relaxed)));
    }
    /// @brief Posts a probe on the strand: it stamps last_beat() if the world is paused (a running
    /// world's tick loop stamps it itself, so a loop that stopped re-arming is not hidden). Safe
    /// from any thread.
    void probe();

    /// @brief The world's subscriptions; only on strand().
    [[nodiscard]] watch_hub& watches() noexcept { return watches_; }
    /// @brief On the strand, after a request changed the world.
    void note_mutation() noexcept {
        ++state_version_;
        watches_.note_mutation();
    }
    /// @brief On the strand: changes whenever a request changed the world or world.load replaced
    /// it; with the tick, it says whether two exports may share one snapshot text.
    [[nodiscard]] std::uint64_t state_version() const noexcept { return state_version_; }
    /// @brief On the strand, after a run of requests that changed it: a paused world has no tick
    /// to publish its changes, so its watchers hear of them now.
    void publish_if_paused();
    /// @brief On the strand: re-arms the timer from the world's schedule; call after resume().
    void reschedule();

    // --- persistence (null log: no data folder) ---------------------------------------
    /// @brief Attaches the world's snapshot and journal; before start().
    void set_log(std::unique_ptr<world_log> log, double autosave_seconds);
    /// @brief The world's log, or nullptr; only on strand().
    [[nodiscard]] world_log* log() noexcept { return log_.get(); }
    /// @brief On the strand: stops persisting this world, deleting its files when asked (world.destroy).
    void drop_log(bool remove_files);
    /// @brief On the strand: swaps in a world read back from disk (world.load).
    void replace_world(std::shared_ptr<world::world> world);

  private:
    /// @brief Points the world's after_tick at the watches and the figures.
    void hook_ticks();
    void note_figures(const world::world& w) noexcept;
    void arm(std::chrono::steady_clock::time_point now);
    void on_timer(const asio::error_code& ec);
    void arm_autosave();
    /// @brief Forks the background save now (a due autosave, run right after a tick).
    void start_autosave();
    /// @brief Checks every 10 ms whether the background save ended (never blocks the strand).
    void poll_save();
    void stamp_beat(std::chrono::steady_clock::time_point now) noexcept {
        last_beat_.store(now.time_since_epoch().count(), std::memory_order_relaxed);
    }

    std::string name_;
    strand_type strand_;
    asio::steady_timer timer_;
    std::shared_ptr<world::world> world_;
    bool stopped_ = false;
    bool sealed_ = false;
    std::uint64_t state_version_ = 0;
    std::unique_ptr<world_log> log_;
    asio::steady_timer autosave_timer_;
    asio::steady_timer save_poll_timer_;
    double autosave_seconds_ = 0;
    bool autosave_due_ = false;  ///< the autosave timer fired: fork right after the next tick
    std::unique_ptr<memory::spare_blocks> spares_;  ///< made ready for the due autosave's child
    watch_hub watches_;
    figures figures_;
    std::atomic<std::chrono::steady_clock::rep> last_beat_{
        std::chrono::steady_clock::now().time_since_epoch().count()};
};

}  // namespace ecsd::net
