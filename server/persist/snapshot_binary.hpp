#pragma once
// The binary snapshot: what the server writes by default. The same contents as the JSON form
// (snapshot.hpp), with component values dumped as they lie in memory where a type allows it
// (EnTT's snapshot idea), optionally compressed with zstd, and sealed with a CRC-32.
// Layout (every integer little-endian): docs/persistence.md, "The binary snapshot".

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>

#include "persist/snapshot.hpp"

namespace ecsd::persist {

/// @brief The first 8 bytes of every binary snapshot.
inline constexpr std::string_view binary_snapshot_magic = "ECSDSNAP";
/// @brief The binary layout version this server writes and the newest it reads.
inline constexpr std::uint32_t binary_snapshot_version = 1;

/// @brief How a snapshot is written: binary (the default), binary with a zstd-compressed body,
/// or the JSON document.
enum class snapshot_format { binary, zstd, json_text };

/// @brief "binary", "zstd" or "json"; nullopt for anything else.
[[nodiscard]] std::optional<snapshot_format> parse_snapshot_format(std::string_view text);
[[nodiscard]] std::string_view format_name(snapshot_format f);

/// @brief The sealed binary snapshot of a world (a zstd-compressed body when `compress`).
[[nodiscard]] std::string binary_snapshot(const world::world& w, std::uint64_t journal_seq, bool compress);

/// @brief True when the bytes start with binary_snapshot_magic.
[[nodiscard]] bool is_binary_snapshot(std::string_view bytes) noexcept;

/// @brief Throws persist_error when the bytes are not a binary snapshot this server can read
/// (too short for a header, or a newer version): problems no repair may touch.
void check_binary_header(std::string_view bytes, const std::string& source);

/// @brief The CRC-32 in the last 4 bytes against the bytes before them.
[[nodiscard]] snapshot_seal check_binary_seal(std::string_view bytes);

/// @brief The journal sequence number in the header.
[[nodiscard]] std::uint64_t binary_snapshot_journal_seq(std::string_view bytes);

/// @brief A world rebuilt from a binary snapshot (the checksum is not checked here: see
/// check_binary_seal); throws persist_error naming `source` and the byte offset of the damage.
[[nodiscard]] std::unique_ptr<world::world> from_binary_snapshot(std::string_view bytes,
                                                                 const std::string& source);

}  // namespace ecsd::persist
