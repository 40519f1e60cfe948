#pragma once
// world.export / world.import in pieces: a world's snapshot is larger than one request line may be,
// so it crosses the protocol in chunks. An export is taken once, at one tick, and kept here while
// its chunks are read; an import is gathered here chunk by chunk until its last one creates the
// world. Any strand may call; a mutex guards the maps (held for map updates only).

#include <chrono>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <string_view>

namespace ecsd::net {

/// @brief Exports being read and imports being gathered, server-wide.
class world_transfers {
  public:
    using clock = std::chrono::steady_clock;
    /// @brief An export or import untouched this long is dropped.
    static constexpr auto idle_limit = std::chrono::seconds(60);
    /// @brief Most bytes all imports together may gather (snapshot text).
    static constexpr std::size_t max_import_bytes = std::size_t{1} << 30;
    /// @brief Most exports and imports kept at once (each kind).
    static constexpr std::size_t max_transfers = 16;

    /// @brief One export: the sealed snapshot text of a world at one tick.
    struct export_text {
        std::string world;
        std::uint64_t tick = 0;
        std::shared_ptr<const std::string> text;
    };

    /// @brief Keeps a new export; returns its id (the oldest is dropped beyond max_transfers).
    std::string add_export(export_text e);
    /// @brief The export with this id, or nullopt (unknown, finished or dropped).
    [[nodiscard]] std::optional<export_text> find_export(std::string_view id);
    /// @brief Forgets an export (its last chunk was read).
    void end_export(std::string_view id);

    /// @brief Appends a chunk to the import of `world` at `offset` (0 starts it anew). Returns the
    /// bytes gathered, or nullopt when `offset` is not where the import stands (`*expected` says
    /// where). Throws std::length_error past max_import_bytes or max_transfers.
    std::optional<std::size_t> append_import(const std::string& world, std::size_t offset,
                                             std::string_view data, std::size_t* expected);
    /// @brief Takes the gathered text of `world`'s import out of the table.
    [[nodiscard]] std::string take_import(const std::string& world);
    /// @brief Forgets `world`'s import.
    void drop_import(const std::string& world);

  private:
    void expire(clock::time_point now);

    struct kept_export {
        export_text e;
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
};

}  // namespace ecsd::net
