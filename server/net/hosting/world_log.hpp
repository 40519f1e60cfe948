#pragma once
// Persistence of one hosted world: its snapshot file and its journal in the
// data folder. Touched only on the world's strand (or before serving starts,
// or after every strand stopped).
//
//   <data-dir>/<world>.snapshot        the last snapshot, binary (persist/snapshot_binary.hpp)
//   <data-dir>/<world>.snapshot.json   ... or JSON (persist/snapshot.hpp): --snapshot-format json,
//                                      world.save {format: "json"}, or written by an older ecsd
//   <data-dir>/<world>.journal         requests and ticks since that snapshot
// A save removes the other form once the new file is durable; if a crash leaves both, the one
// with the higher journal_seq loads (either would give the same world after replay).

#include <chrono>
#include <cstdint>
#include <filesystem>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include <asio.hpp>
#include <nlohmann/json.hpp>

#include "memory/forked_save.hpp"
#include "persist/journal.hpp"
#include "persist/snapshot_binary.hpp"

namespace ecsd::world {
class world;
}

namespace ecsd::net {

class hosted_world;
struct server_config;

/// @brief What replaying one journaled request came to. The journal is replayed through the same
/// handlers that ran the requests, which live in a layer above this one; load_world is handed them.
struct replay_outcome {
    bool known = true;    ///< false: no such method (a journal of a newer ecsd)
    std::string failure;  ///< empty: it applied; else why it no longer does
};
/// @brief Applies one journaled request (method and params) to a hosted world being loaded.
using journal_replay =
    std::function<replay_outcome(hosted_world&, const std::string& method, const nlohmann::json& params)>;

/// @brief What a save wrote.
struct save_report {
    std::string path;
    std::uint64_t bytes = 0;
    std::uint64_t tick = 0;
    double ms = 0;
};

/// @brief The journal's length and sequence number before a record written ahead of its request.
struct journal_mark {
    std::uint64_t bytes = 0;
    std::uint64_t seq = 0;
};

class world_log {
  public:
    /// @brief Opens (creating) the journal of `world` in `dir`; `seq` is the last sequence number used.
    world_log(const std::filesystem::path& dir, const std::string& world, persist::fsync_policy policy,
              std::uint64_t seq, persist::snapshot_format format = persist::snapshot_format::binary);
    /// @brief Kills a background save still running (its temp file is removed).
    ~world_log();
    world_log(const world_log&) = delete;
    world_log& operator=(const world_log&) = delete;

    /// @brief Appends a mutating request before it is applied (write-ahead). Throws
    /// persist::storage_error when it cannot be written: then nothing was written, the sequence
    /// number did not advance, and the request must not be applied. Returns where the journal was
    /// before, for undo().
    journal_mark record_request(std::uint64_t tick, const std::string& method, const nlohmann::json& params);
    /// @brief The request written by record_request failed: cuts its record off again.
    void undo(const journal_mark& mark);
    /// @brief Appends a tick mark: the clock ran the world up to `tick`. Throws persist::storage_error
    /// (nothing written, the sequence number unchanged).
    void record_tick(std::uint64_t tick);
    /// @brief Writes a snapshot atomically (in the server's format unless `format` names one), then
    /// empties the journal it now includes. A background save still running is abandoned first
    /// (this one is newer).
    save_report save(const world::world& w, std::optional<persist::snapshot_format> format = std::nullopt);
    /// @brief Starts a save in a forked child (autosave): the world stops only for the fork and
    /// goes on while the child writes the snapshot of that instant. The snapshot includes the
    /// journal up to now; when the child is done, finish_background_save() drops those records
    /// and keeps the ones written since. Returns true when a child now runs: false while one
    /// still runs (nothing started), and false when the fork failed and the save was done
    /// in-process (save()) instead, with a warning. `spares`: memory made ready ahead for the
    /// child's copies (memory::spare_blocks).
    bool start_background_save(const world::world& w, memory::spare_blocks spares = {});
    /// @brief Never blocks: true once no background save runs any more (it ended and its journal
    /// prefix was dropped, or it failed and was logged; the journal then keeps everything).
    bool finish_background_save();
    /// @brief The format saves use unless told (--snapshot-format).
    [[nodiscard]] persist::snapshot_format format() const noexcept { return format_; }
    /// @brief True while a background save's child runs.
    [[nodiscard]] bool background_save_running() const noexcept { return bg_ != nullptr; }
    /// @brief Deletes the world's files (world.destroy).
    void remove_files();

    /// @brief Where a snapshot of `format` is written: `.snapshot` (binary, zstd) or `.snapshot.json`.
    [[nodiscard]] static std::filesystem::path snapshot_path(
        const std::filesystem::path& dir, const std::string& world,
        persist::snapshot_format format = persist::snapshot_format::binary);
    /// @brief The snapshot file of `world` that loads: the only one there, or of two (a crash
    /// between writing one form and removing the other) the newer; nullopt when there is none.
    [[nodiscard]] static std::optional<std::filesystem::path> find_snapshot(const std::filesystem::path& dir,
                                                                            const std::string& world);
    [[nodiscard]] static std::filesystem::path journal_path(const std::filesystem::path& dir,
                                                            const std::string& world);

  private:
    std::filesystem::path dir_;
    std::string world_;
    persist::journal_writer journal_;
    persist::snapshot_format format_;
    /// @brief The snapshot file of `format` as sealed bytes.
    [[nodiscard]] std::string snapshot_bytes(const world::world& w, persist::snapshot_format format) const;
    /// @brief Removes the snapshot of the other form than `written` (after a save).
    void remove_other_form(persist::snapshot_format written) const noexcept;
    void append(const nlohmann::json& record);

    /// @brief Kills a background save still running and removes its temp file.
    void abandon_background_save() noexcept;

    std::uint64_t seq_;
    bool failing_ = false;  ///< the last journal write failed: logged once per episode

    std::unique_ptr<memory::background_save> bg_;  ///< the child writing a snapshot, if any
    std::uint64_t bg_journal_bytes_ = 0;  ///< the journal's length at the fork: what the snapshot holds
    std::uint64_t bg_tick_ = 0;
    std::filesystem::path bg_path_;
    std::chrono::steady_clock::time_point bg_started_{};
};

/// @brief A world read back from the data folder: its snapshot, with the journal replayed through
/// the same handlers and the same tick loop. Throws persist::persist_error naming file and offset.
struct loaded_world {
    std::shared_ptr<hosted_world> hosted;  ///< not started: hand it to world_directory::add
    std::uint64_t seq = 0;                 ///< last journal sequence number applied
    std::size_t replayed = 0;              ///< journal records applied
    bool torn_tail = false;                ///< a torn last record was dropped
    std::vector<std::string> repairs;      ///< what --repair changed and lost, one line each (also logged)
};
/// @brief Damage (a snapshot failing its checksum or not loading, a corrupt journal record, a gap
/// in sequence numbers, a record that no longer applies) throws persist::persist_error naming the
/// file and byte offset and what `repair` would lose. With `repair` the damage is dealt with
/// instead and reported in `repairs`: the journal is cut at the damage (a copy of the whole file
/// is kept as FILE.damaged); a snapshot with a bad checksum that still loads is loaded as it is
/// (a copy kept); one that does not load is moved aside with its journal and `hosted` is null.
[[nodiscard]] loaded_world load_world(const std::filesystem::path& dir, const std::string& name,
                                      asio::io_context& io, const journal_replay& replay,
                                      bool repair = false);

/// @brief Start-up check for journals whose snapshot is missing (a world that cannot be rebuilt):
/// throws persist::persist_error naming them, or with `repair` moves them aside as FILE.damaged.
/// An empty one (nothing in it) is removed.
void check_orphan_journals(const std::filesystem::path& dir, bool repair);

/// @brief Gives a hosted world (not yet started) its log when the server has a data folder;
/// with `save_now` writes its first snapshot at once. No-op without a data folder.
void attach_log(hosted_world& hosted, const server_config& cfg, std::uint64_t seq, bool save_now);

/// @brief Names of the worlds saved in a folder (from their snapshot files).
[[nodiscard]] std::vector<std::string> saved_world_names(const std::filesystem::path& dir);

}  // namespace ecsd::net
