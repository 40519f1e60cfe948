#pragma once
// World snapshots: a versioned, human-readable JSON document holding a world's
// settings, run-time component definitions, prefabs, system switches, every
// entity with its exact id and components, the id allocator (so ids are never
// reused after a restart) and each storage's dense order (so a restored world
// evolves bit-identically to the one that was saved). Format: docs/persistence.md.

#include <functional>
#include <memory>
#include <stdexcept>
#include <string>
#include <string_view>

#include <nlohmann/json.hpp>

#include "world/world.hpp"

namespace ecsd::persist {

using nlohmann::json;

/// @brief The snapshot format version this server writes and the newest it reads.
inline constexpr int snapshot_version = 1;

/// @brief Ticks and journal sequence numbers a snapshot may hold: below 2^53 (see counter() in
/// snapshot.cpp).
inline constexpr std::uint64_t max_counter = std::uint64_t{1} << 53U;

/// @brief A file that cannot be loaded; what() names the file and the problem.
class persist_error : public std::runtime_error {
  public:
    using std::runtime_error::runtime_error;
};

/// @brief Throws persist_error naming the file (or stream) and the problem.
[[noreturn]] inline void fail(const std::string& source, const std::string& what) {
    throw persist_error(source + ": " + what);
}

/// @brief The snapshot document of a world; `journal_seq` is the last journal record it includes.
[[nodiscard]] json to_snapshot(const world::world& w, std::uint64_t journal_seq);

/// @brief The same document as text, written entity by entity without building the whole
/// tree in memory first (what saving uses: no tree of the whole world is built and freed).
[[nodiscard]] std::string snapshot_text(const world::world& w, std::uint64_t journal_seq);

/// @brief A world rebuilt from a snapshot document; throws persist_error naming `source`.
[[nodiscard]] std::unique_ptr<world::world> from_snapshot(const json& doc, const std::string& source);

/// @brief `text` parsed as a snapshot's document (or a part of one, named by `what`); throws
/// persist_error naming `source` where it is not JSON or nests deeper than any snapshot ecsd writes
/// (protocol::max_document_depth), so no tree built from a file or an import can be deep enough
/// for a recursive copy to run out of stack.
[[nodiscard]] json read_document(std::string_view text, const std::string& source, std::string_view what);

/// @brief A world rebuilt from a JSON snapshot text a client sent (world.import), named `name`
/// whatever the text says: the checksum when there is one, the nesting depth, the header, every
/// value and counter are checked as for a file. Throws persist_error saying what is wrong.
/// The text is read in place (taken by value: move it in), through simdjson's DOM, so the import
/// holds about the text, its DOM and the world, not a whole tree of the text.
[[nodiscard]] std::unique_ptr<world::world> world_from_import(std::string text, const std::string& name);

/// @brief The journal sequence number a snapshot document includes.
[[nodiscard]] std::uint64_t snapshot_journal_seq(const json& doc);

/// @brief Appends the checksum member to a snapshot text (a JSON object): the file then ends with
/// `,"checksum":"crc32:XXXXXXXX"}`, the CRC-32 of every byte before that comma. Still valid JSON.
[[nodiscard]] std::string seal_snapshot(std::string text);

/// @brief What checking a snapshot text's checksum found.
struct snapshot_seal {
    enum class state { good, missing, mismatch } status = state::missing;
    std::uint32_t stored = 0;
    std::uint32_t computed = 0;
    std::uint64_t offset = 0;  ///< byte offset of the checksum member (the bytes before it are covered)
};
/// @brief Checks the checksum seal_snapshot wrote; `missing` for a snapshot without one (written
/// by an older ecsd, or by hand).
[[nodiscard]] snapshot_seal check_snapshot_seal(std::string_view text);

/// @brief Throws persist_error when `doc` is not a snapshot this server can read (not a snapshot,
/// or a newer version): problems no repair may touch.
void check_snapshot_header(const json& doc, const std::string& source);

// --- shared by the JSON and the binary form (snapshot_binary.hpp) ---
/// @brief The document's format, version, journal_seq, world settings, systems, component types and
/// prefabs: what the JSON form adds the allocator, `entities` and `dense_order` to, and the binary
/// form its arrays.
[[nodiscard]] json snapshot_head(const world::world& w, std::uint64_t journal_seq);
/// @brief An empty world with the head's settings, tick, component types, prefabs and system
/// switches; throws persist_error or json::exception. Call inside an ecs::restoring_scope.
[[nodiscard]] std::unique_ptr<world::world> world_from_head(const json& doc, const std::string& source);
/// @brief Runs `build` (which rebuilds a saved world) in an ecs::restoring_scope, turning the core's
/// and JSON's exceptions into persist_error naming `source`.
[[nodiscard]] std::unique_ptr<world::world> rebuild_world(
    const std::string& source, const std::function<std::unique_ptr<world::world>()>& build);

}  // namespace ecsd::persist
