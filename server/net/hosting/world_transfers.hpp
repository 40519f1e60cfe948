#pragma once
// world.export / world.import in pieces: a world's snapshot is larger than one request line may be,
// so it crosses the protocol in chunks. An export is taken once, at one tick, and kept here while
// its chunks are read; an import is gathered here chunk by chunk until its last one creates the
// world. Any strand may call; a mutex guards the maps (held for map updates only).
//
// What they hold is bounded. Exports of one world in one state share one text, and the texts all
// exports hold together stay under max(2 x the largest, --max-export-bytes): past it, exports
// idle for a while are dropped first, then a new one is refused. Imports together hold at most
// --max-import-bytes of text. Every import request runs on the lane (one thread of its own, one
// request at a time), so building a world from its text never holds a network thread, and only
// one such build, the costly part (a parsed document is many times its text), runs at once.

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>
#include <thread>

#include <asio.hpp>

namespace ecsd::net {

class hosted_world;

/// @brief Exports being read and imports being gathered, server-wide.
class world_transfers {
  public:
    using clock = std::chrono::steady_clock;
    /// @brief An import untouched this long is dropped.
    static constexpr auto idle_limit = std::chrono::seconds(60);
    /// @brief An export untouched this long is dropped (a reader reads its chunks back to back).
    static constexpr auto export_idle_limit = std::chrono::seconds(20);
    /// @brief An export untouched this long is dropped when a new one needs its room.
    static constexpr auto export_abandoned = std::chrono::seconds(5);
    /// @brief Most exports and imports kept at once (each kind).
    static constexpr std::size_t max_transfers = 16;

    /// @brief Starts the lane's thread.
    world_transfers();
    /// @brief Stops the lane's thread; requests still queued there are dropped unanswered.
    ~world_transfers();
    world_transfers(const world_transfers&) = delete;
    world_transfers& operator=(const world_transfers&) = delete;

    /// @brief Where method_flags::background requests run: a host without a world whose strand
    /// is the lane's one thread.
    [[nodiscard]] const std::shared_ptr<hosted_world>& lane() const noexcept { return lane_; }

    /// @brief One export: the sealed snapshot text of a world at one tick.
    struct export_text {
        std::string world;
        std::uint64_t tick = 0;
        std::shared_ptr<const std::string> text;
    };
    /// @brief Which state of which world an export's text shows: the same key, the same text.
    struct export_state {
        const void* world = nullptr;  ///< the world object (world.load swaps it)
        std::uint64_t tick = 0;
        std::uint64_t version = 0;  ///< hosted_world::state_version()
    };

    /// @brief The text an export kept here holds of this state, or null.
    [[nodiscard]] std::shared_ptr<const std::string> shared_text(const std::string& world,
                                                                 const export_state& state);
    /// @brief Keeps a new export; returns its id (the oldest is dropped beyond max_transfers).
    /// Throws std::length_error when its text would put what exports hold past max(2 x the largest,
    /// `max_bytes`).
    std::string add_export(export_text e, const export_state& state, std::size_t max_bytes);
    /// @brief The export with this id, or nullopt (unknown, finished or dropped).
    [[nodiscard]] std::optional<export_text> find_export(std::string_view id);
    /// @brief Forgets an export (its last chunk was read).
    void end_export(std::string_view id);
    /// @brief Bytes of text all exports hold (a shared text counted once).
    [[nodiscard]] std::size_t export_bytes();

    /// @brief Appends a chunk to the import of `world` at `offset` (0 starts it anew). Returns the
    /// bytes gathered, or nullopt when `offset` is not where the import stands (`*expected` says
    /// where). Throws std::length_error past `max_bytes` (all imports together) or max_transfers.
    std::optional<std::size_t> append_import(const std::string& world, std::size_t offset,
                                             std::string_view data, std::size_t* expected,
                                             std::size_t max_bytes);
    /// @brief Takes the gathered text of `world`'s import out of the table.
    [[nodiscard]] std::string take_import(const std::string& world);
    /// @brief Forgets `world`'s import.
    void drop_import(const std::string& world);

  private:
    void expire(clock::time_point now);
    std::size_t export_bytes_locked() const;

    struct kept_export {
        export_text e;
        export_state state;
        clock::time_point touched;
    };
    struct gathering {
        std::string text;
        clock::time_point touched;
    };
    std::mutex mutex_;
    std::uint64_t next_id_ = 0;
    std::map<std::string, kept_export, std::less<>> exports_;
    std::map<std::string, gathering, std::less<>> imports_;

    asio::io_context lane_io_;
    asio::executor_work_guard<asio::io_context::executor_type> lane_work_;
    std::shared_ptr<hosted_world> lane_;
    std::thread lane_thread_;
};

}  // namespace ecsd::net
