#pragma once

// `ecsctl world move NAME --to HOST:PORT`: copies a world to another server and switches over.
// The source is sealed while the copy is taken (it neither ticks nor takes writes: each one is
// refused with world_sealed, never lost), the copy is imported paused and compared by hash at the
// same tick, then it resumes on the target and the source world is destroyed, its watchers told
// where it went. Any failure before the switch unseals the source and removes the partial copy.

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>

#include "json.hpp"

namespace ecsd::cli {

struct session;
struct verb_input;

/// @brief "HOST:PORT" (or "[v6]:PORT") split; throws usage_error when it is not one.
[[nodiscard]] std::pair<std::string, std::uint16_t> parse_host_port(std::string_view text);

/// @brief `ecsctl export NAME [FILE]`: the world's snapshot text (world.export, every chunk) into
///        FILE, or onto the session's output when FILE is absent or `-` (then it returns a discarded
///        value: nothing more is printed). With FILE: `{world, file, tick, bytes}`.
json run_export(session& s, const verb_input& input);

/// @brief `ecsctl import NAME [FILE] [--paused]`: creates world NAME from a snapshot text read from
///        FILE or standard input, sent with world.import in chunks; returns the last answer.
json run_import(session& s, const verb_input& input);

/// @brief Runs the move; returns `{world, from, to, tick, entities, hash, bytes, ms, source}`.
/// @throws usage_error, server_error, connection_error (after undoing what it began).
json run_move(session& s, const verb_input& input);

}  // namespace ecsd::cli
