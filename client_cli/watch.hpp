#pragma once

// `ecsctl watch`: follows a world.watch subscription. The state a client holds (the initial answer with
// every notification applied) and the frame drawn from it are pure code, unit-tested; run_watch does
// the I/O: a table redrawn in place on a terminal, one JSON text per notification otherwise.

#include <cstdint>
#include <map>
#include <string>
#include <string_view>
#include <vector>

#include "json.hpp"
#include "session.hpp"

namespace ecsd::cli {

/// @brief What a watcher holds: the matching entities with the watched fields, as the server said.
class watch_state {
  public:
    /// @brief Starts from world.watch's answer `{subscription, tick, entities: [{entity, components}]}`.
    void start(const json& answer);

    /// @brief Applies one notification's params: `entered` (replaces the entity), `changed` (merges
    ///        the components given, drops those in `removed`), `left`, or a `resync` (the whole state
    ///        again), `coalesced` and `ended`.
    void apply(const json& params);

    [[nodiscard]] const json& subscription() const noexcept { return subscription_; }
    [[nodiscard]] std::uint64_t tick() const noexcept { return tick_; }
    [[nodiscard]] const std::map<std::uint64_t, json>& entities() const noexcept { return entities_; }
    /// @brief Notifications applied since start().
    [[nodiscard]] std::uint64_t notifications() const noexcept { return notifications_; }
    /// @brief Ticks merged into `coalesced` notifications, and how many `resync`s came.
    [[nodiscard]] std::uint64_t coalesced() const noexcept { return coalesced_; }
    [[nodiscard]] std::uint64_t resyncs() const noexcept { return resyncs_; }
    /// @brief True after an `ended` notification; end_reason() says why.
    [[nodiscard]] bool ended() const noexcept { return ended_; }
    [[nodiscard]] const std::string& end_reason() const noexcept { return end_reason_; }

  private:
    void replace_all(const json& entities);

    json subscription_;
    std::uint64_t tick_ = 0;
    std::map<std::uint64_t, json> entities_;  ///< entity id -> {component: value}
    std::uint64_t notifications_ = 0;
    std::uint64_t coalesced_ = 0;
    std::uint64_t resyncs_ = 0;
    bool ended_ = false;
    std::string end_reason_;
};

/// @brief Terminal size in character cells.
struct screen_size {
    int rows = 24;
    int cols = 80;
};

/// @brief A value in few characters: numbers with at most 3 decimals, `{x, y}` as `x=1.5 y=-2`,
///        strings bare, an empty object (a tag) as `yes`.
[[nodiscard]] std::string compact_value(const json& value);

/// @brief The live table's text: a header line (world, tick, entities, notifications), the column
///        headers (ENTITY, then `fields`, or every component seen when `fields` is empty) and one row
///        per entity, as many as fit in `size.rows - 1` lines (the last says how many more there are);
///        every line cut to `size.cols` and ending in '\n'. No escape sequences.
[[nodiscard]] std::string render_watch(const watch_state& state, std::string_view world,
                                       const std::vector<std::string>& fields, screen_size size);

/// @brief A server.monitor notification's params as one readable line, as redis-cli monitor prints
///        them: `1795468801.250000 [5 127.0.0.1:40122] world.step {"ticks":5}` (the time in seconds
///        since the epoch, the connection id and peer, the method, its params as compact JSON when
///        it has any), or `(N requests dropped: this monitor read too slowly)`. No '\n'.
[[nodiscard]] std::string monitor_line(const json& params);

/// @brief Runs the `monitor` verb: calls server.monitor, then prints every request the server receives
///        from the other connections, one JSON text per line (the notification's params) when piped
///        or a monitor_line on a terminal, until Ctrl-C or `--count` requests; then stops the feed
///        (`{"stop": true}`) so the connection can go on. Ctrl-C is not an error.
/// @throws usage_error, server_error, connection_error like run_verb.
void run_monitor(session& s, const verb& v, const verb_input& input);

/// @brief Runs a verb whose row `streams`: run_monitor for server.monitor, run_watch otherwise.
void run_stream(session& s, const verb& v, const verb_input& input);

/// @brief Runs the `watch` verb: subscribes, prints the answer and the notifications (a live table in
///        table format, JSON lines otherwise) until Ctrl-C, `--count` notifications or the
///        subscription ends, then unsubscribes. Ctrl-C is not an error.
/// @throws usage_error, server_error, connection_error like run_verb.
void run_watch(session& s, const verb& v, const verb_input& input);

}  // namespace ecsd::cli
