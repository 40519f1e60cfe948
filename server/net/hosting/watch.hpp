#pragma once
// world.watch, the server side. Two halves that meet at a mutex:
//
//   watch_hub   one per hosted world, on its strand. Groups subscriptions by view (query, fields,
//               pace): after each tick every due view computes ONE diff (world/watch_view.hpp),
//               encoded once, and hands the same bytes to each of its subscribers.
//   watch_sink  one per connection. World strands deliver diffs into it; the connection's strand
//               takes them out as notification lines when its output has room. A subscriber
//               that falls behind (its queue is full) keeps the shared diffs it was not sent
//               (its backlog: pointers, never copies, so the world's strand does no work for
//               it). When it catches up, its connection's strand merges them per entity (latest
//               value wins, enter+leave cancels out) into one notification with "coalesced": N.
//               Past a byte bound the backlog is dropped and the subscriber gets the whole
//               state again ("resync"), as it is when it stays behind for more than
//               max_behind_ticks: a reader that does not read stops costing the world anything
//               (a view none of whose subscribers wants diffs is not diffed) until it reads again.
//
// Bounds on the work (watch_budget.hpp): distinct views per world and per server are capped, and
// after a tick the due views diff until a quarter of the tick period is spent; the others wait
// for the next tick, first in line (their diff then covers those ticks too).
//
// A subscriber joins a group only when the group's base is the current state (nothing changed
// since its last diff); otherwise it starts a group of its own, which merges with its twin at
// the next diff, when both bases are current again. So every subscriber's stream is exact.
#include <atomic>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

#include "ecsd/protocol/errors.hpp"
#include "hosting/watch_budget.hpp"
#include "world/position_grid.hpp"
#include "world/watch_view.hpp"

namespace ecsd::net {

class hosted_world;

/// @brief Bounds of one connection's watches (from the server's settings).
struct watch_limits {
    std::size_t max_subscriptions = 64;  ///< --max-watches
    /// Notifications waiting for the connection's output, and as many again in that output: a
    /// window, not a buffer. Small, so that a slow reader is at most this far behind plus its
    /// socket's buffers; the rest waits as shared diffs merged into one when it reads.
    std::size_t queue_bytes = 256 << 10;
    /// server.monitor's lines waiting for the connection's output: past it they are dropped and
    /// counted. Larger than the window, since lines are not merged as diffs are.
    std::size_t lines_bytes = 4 << 20;
    /// A subscriber that fell behind holds at most this many bytes of unsent diffs (and never fewer
    /// than min_backlog of them) before it is resynced.
    std::size_t pending_bytes = 16 << 20;
    std::size_t min_backlog = 4;
    /// A subscriber behind for more than this many ticks is resynced when it reads again, and its
    /// view is no longer diffed for it meanwhile.
    std::uint64_t max_behind_ticks = 256;
};

struct server_config;

/// @brief Bytes of the diffs that subscribers who fell behind hold in their backlogs, each diff
/// counted once however many backlogs share it. Subscribers of one view that fell behind together
/// hold the same diffs (pointers, never copies): counted per backlog, 1,000 watchers of one view
/// would read as a thousand times the memory they hold, and the server-wide output bound would
/// close readers that read. Process-wide, as the diffs are; the bound (rpc/output_budget.hpp)
/// adds it to what the connections hold of their own. Thread-safe.
class held_diffs {
  public:
    [[nodiscard]] static held_diffs& process();
    /// @brief One more backlog holds `d`; its bytes count when it is the first.
    void hold(const world::watch_diff& d);
    /// @brief A backlog let go of `d`; its bytes leave the count with the last.
    void release(const world::watch_diff& d);
    [[nodiscard]] std::size_t bytes() const noexcept { return bytes_.load(std::memory_order_relaxed); }
    /// @brief Distinct diffs held.
    [[nodiscard]] std::size_t diffs() const;

  private:
    mutable std::mutex mutex_;
    // A held diff is alive (its backlogs own it), so its address names it while it is here.
    std::unordered_map<const world::watch_diff*, std::uint32_t> holders_;
    std::atomic<std::size_t> bytes_{0};
};

/// @brief A subscriber's backlog: the diffs it was not sent, oldest first, held in held_diffs
/// while they are here (clear, take and the destructor let go of them).
class diff_backlog {
  public:
    using diff_ptr = std::shared_ptr<const world::watch_diff>;
    diff_backlog() = default;
    diff_backlog(const diff_backlog&) = delete;
    diff_backlog& operator=(const diff_backlog&) = delete;
    diff_backlog(diff_backlog&& o) noexcept
        : diffs_(std::move(o.diffs_)), bytes_(std::exchange(o.bytes_, 0)) {
        o.diffs_.clear();
    }
    diff_backlog& operator=(diff_backlog&& o) noexcept;
    ~diff_backlog() { clear(); }

    void push_back(diff_ptr d);
    void clear();
    /// @brief The diffs, no longer held here (a catch-up merges and writes them).
    [[nodiscard]] std::vector<diff_ptr> take();
    [[nodiscard]] const std::vector<diff_ptr>& diffs() const noexcept { return diffs_; }
    [[nodiscard]] std::size_t size() const noexcept { return diffs_.size(); }
    [[nodiscard]] bool empty() const noexcept { return diffs_.empty(); }
    [[nodiscard]] const diff_ptr& back() const noexcept { return diffs_.back(); }
    /// @brief The diffs' bytes in full, whoever else holds them.
    [[nodiscard]] std::size_t bytes() const noexcept { return bytes_; }

  private:
    std::vector<diff_ptr> diffs_;
    std::size_t bytes_ = 0;
};

/// @brief Notification bytes taken from a sink, in order: text, and large diff bodies shared with
/// every other connection that sends them (written from where they are, never copied).
class watch_bytes {
  public:
    struct piece {
        std::string text;
        std::shared_ptr<const std::string> shared;  // set: these bytes, not text
    };
    /// @brief Text to append to (the last piece, or a new one after a shared piece).
    std::string& text();
    /// @brief Bytes shared with others, appended as they are.
    void share(std::shared_ptr<const std::string> bytes);
    /// @brief Bytes held, text and shared.
    [[nodiscard]] std::size_t size() const noexcept;
    [[nodiscard]] std::vector<piece>& pieces() noexcept { return pieces_; }
    /// @brief Everything as one string (a copy of the shared pieces).
    void append_to(std::string& out) const;

  private:
    std::vector<piece> pieces_;
    std::size_t shared_bytes_ = 0;
};

/// @brief One connection's subscriptions and the notifications waiting for it. Thread-safe.
class watch_sink : public std::enable_shared_from_this<watch_sink> {
  public:
    explicit watch_sink(watch_limits limits, std::shared_ptr<watch_budget> budget = nullptr)
        : limits_(limits), budget_(std::move(budget)) {}
    /// @brief A connection's sink with the server's bounds; `wake` posts to the connection's
    /// strand (it is called with the sink's lock held, so it must only post).
    [[nodiscard]] static std::shared_ptr<watch_sink> for_connection(const server_config& cfg,
                                                                    std::shared_ptr<watch_budget> budget,
                                                                    std::function<void()> wake);
    /// @brief The server's bound on views (null: none), shared by every sink of the server.
    [[nodiscard]] const std::shared_ptr<watch_budget>& budget() const noexcept { return budget_; }

    /// @brief How the connection is woken when notifications arrive (posts to its strand).
    void set_wake(std::function<void()> wake);

    /// @brief Runs a function later on a network thread (hosted_world: asio::defer on the io_context).
    using handoff = std::function<void(std::function<void()>)>;

    /// @brief While one lives on a thread, the wakes of sinks delivered to on that thread wait for
    /// it to end. A world's publish delivers to many sinks with diff work in between, so each wake
    /// found the other network thread asleep and cost a futex or epoll_ctl call (10 µs a view, as
    /// long as a sixth of its diff, with a thousand distinct near() views). Given a handoff, the
    /// batch ends by handing all its wakes to one function that runs after the tick (hosted_world
    /// defers it on the world's own thread). Made at the end of the tick instead, each wake woke
    /// the other network thread, which the kernel placed on the tick's core to run the woken
    /// connection: a hundred wakes cost the tick 2-4 ms and hundreds of involuntary switches, and
    /// its p99 went from 6-7 ms to 10 (docs/benchmarks.md).
    class wake_batch {
      public:
        explicit wake_batch(const handoff* to = nullptr);
        ~wake_batch();
        wake_batch(const wake_batch&) = delete;
        wake_batch& operator=(const wake_batch&) = delete;

      private:
        // Wakes each sink still open; its wake function is called outside its lock, so the
        // connection it wakes never waits for that lock on another thread.
        static void wake_all(const std::vector<std::weak_ptr<watch_sink>>& sinks);
        std::vector<std::weak_ptr<watch_sink>> sinks_;
        wake_batch* outer_;
        const handoff* to_;
        friend class watch_sink;
    };

    /// @brief How a subscription's updates are written.
    enum class format : std::uint8_t {
        notifications,   ///< world.watch: notifications with entered / changed / left
        brp_components,  ///< world.get_components+watch: responses {components, removed, errors}
        brp_names,       ///< world.list_components+watch: responses {added, removed}
    };

    // --- world strands ---
    /// @brief A new subscription, or nullopt at the limit or once closed.
    [[nodiscard]] std::optional<std::uint64_t> add(std::weak_ptr<hosted_world> world,
                                                   format f = format::notifications);
    /// @brief A diff for a subscription; false when it or the connection is gone (drop it).
    bool deliver(std::uint64_t sub, const std::shared_ptr<const world::watch_diff>& diff);
    /// @brief The whole state again (`entities_json` is the array); the subscription is current.
    bool deliver_state(std::uint64_t sub, std::uint64_t tick, const std::string& entities_json);
    /// @brief Ends a subscription with a last notification `"ended":true,"reason":...`, and
    /// `"moved_to":...` when not empty (the world moved to that server).
    void end(std::uint64_t sub, std::uint64_t tick, std::string_view reason, std::string_view moved_to = {});
    /// @brief world.unwatch: forgets a subscription, whichever world it follows, and says which
    /// (its hub is told on that world's strand); nullopt when it was not there or has ended.
    [[nodiscard]] std::optional<std::weak_ptr<hosted_world>> remove(std::uint64_t sub);
    /// @brief False when a diff would be thrown away: the subscription is gone, or it fell too far
    /// behind and gets the whole state once its reader reads again.
    [[nodiscard]] bool wants(std::uint64_t sub) const;

    // --- any strand ---
    /// @brief A whole line (with its newline) from outside any subscription: server.monitor's feed.
    /// Past the queue bound it is dropped and counted (the next line says how many); false once
    /// the connection is gone.
    bool push_line(std::string line);

    // --- the connection's strand ---
    /// @brief The request id of the oldest subscription not yet given one (BRP streams answer
    /// with it); called once per successful subscribing request, in request order.
    void bind_next(std::string id_json);
    /// @brief The oldest subscription whose world.watch answer has not gone out may now send.
    void start_next();
    /// @brief The oldest subscription whose answer has not gone out ends unheard: its answer went
    /// out as plain JSON (inside an HTTP batch), with no stream to carry notifications.
    void end_next();
    /// @brief Appends notification lines to `out` until about `room` bytes were added; asks the
    /// worlds of subscriptions that fell too far behind for their whole state again.
    void take(watch_bytes& out, std::size_t room);
    /// @brief The same, as one string (diff bodies copied into it).
    void take(std::string& out, std::size_t room);
    /// @brief True while a started subscription has notifications that take() has not written
    /// yet (queued, a backlog to catch up on, or a resync under way). Answers wait behind them:
    /// a notification published before a request arrives before that request's answer.
    [[nodiscard]] bool owes() const;
    /// @brief The connection is gone: nothing more is accepted, and its worlds drop its subscriptions.
    void close();
    /// @brief How many notification bytes a connection that has `unsent` bytes of output should
    /// take now: 0 once its output holds a window's worth (it takes more after the client has
    /// read). Every face asks this, so a slow reader lags by the same bound on each.
    [[nodiscard]] std::size_t room(std::size_t unsent) const noexcept {
        return unsent >= limits_.queue_bytes ? 0 : limits_.queue_bytes - unsent;
    }
    /// @brief Subscriptions open.
    [[nodiscard]] std::size_t size() const;
    /// @brief What the sink holds for its connection: notifications queued and not taken yet (its
    /// own), and its subscribers' backlogs in full (diffs maybe shared with other connections:
    /// held_diffs counts those toward the server-wide bound, once).
    struct held_bytes {
        std::size_t queued = 0;
        std::size_t backlogs = 0;
    };
    [[nodiscard]] held_bytes held() const;
    /// @brief A subscription fell so far behind that it will get the whole state again.
    [[nodiscard]] bool owes_resync() const;

  private:
    enum class mode : std::uint8_t { current, behind, needs_resync, resync_asked };
    struct subscription {
        std::weak_ptr<hosted_world> world;
        format f = format::notifications;
        std::string id_json;        // the subscribing request's id (BRP streams)
        std::uint64_t created = 0;  // creation order: started once started_ reaches it
        mode m = mode::current;
        // behind: the diffs it was not sent, oldest first. Shared with the view's other
        // subscribers, never copied; merged on the connection's strand when it catches up.
        diff_backlog backlog;
        std::uint64_t behind_since = 0;  // behind: the tick of its oldest diff not sent
        std::uint64_t tick = 0;          // ~0: ended
    };
    struct item {
        std::uint64_t sub;
        std::shared_ptr<const world::watch_diff> diff;  // a diff, or
        std::string params;                             // a state or end notification's params body
        // What it holds in memory (a diff's per-entity entries included, not only its text).
        [[nodiscard]] std::size_t size() const noexcept {
            return diff ? diff->bytes() + 96 : params.size() + 96;
        }
    };
    // A subscriber that caught up: its backlog, taken out of the lock to be merged and written.
    struct catch_up {
        std::uint64_t sub;
        format f;
        std::string id_json;
        std::vector<std::shared_ptr<const world::watch_diff>> diffs;
    };

    // Past its bound a backlog folds into one diff, or is dropped for a resync.
    void fold_backlog(subscription& s) const;
    void take_locked(watch_bytes& out, std::size_t room,
                     std::vector<std::pair<std::uint64_t, std::shared_ptr<hosted_world>>>& resyncs,
                     std::vector<catch_up>& catch_ups);
    // Posts the wake unless one is pending (or, with `again`, even then).
    void wake_locked(bool again = false);
    static void render(std::string& out, std::uint64_t sub, std::string_view body);
    static void render(watch_bytes& out, std::uint64_t sub, const std::shared_ptr<const world::watch_diff>& d,
                       std::string_view coalesced);
    // One notification (or BRP response per entity) from a backlog; false when a BRP stream ended.
    static bool render_catch_up(watch_bytes& out, const catch_up& c);
    // BRP streams: one response per update; false when the entity is gone (the stream ends).
    static bool render_brp(std::string& out, format f, const std::string& id_json,
                           const world::watch_entry& e);
    static void render_brp_end(std::string& out, const std::string& id_json, protocol::reason r,
                               std::string_view why);

    watch_limits limits_;
    std::shared_ptr<watch_budget> budget_;
    mutable std::mutex mutex_;
    std::function<void()> wake_;
    bool wake_pending_ = false;
    bool closed_ = false;
    std::map<std::uint64_t, subscription> subs_;
    std::deque<item> queue_;
    std::size_t queue_bytes_ = 0;
    std::deque<std::string> lines_;  // push_line's, sent before any subscription's
    std::size_t lines_bytes_ = 0;
    std::uint64_t lines_dropped_ = 0;
    std::uint64_t next_id_ = 1;
    std::uint64_t created_ = 0;
    std::uint64_t started_ = 0;
    std::uint64_t bound_ = 0;
};

/// @brief A world's subscriptions, grouped by view. Used only on the world's strand.
class watch_hub {
  public:
    watch_hub() = default;
    ~watch_hub();
    watch_hub(const watch_hub&) = delete;
    watch_hub& operator=(const watch_hub&) = delete;

    /// @brief world.watch: validates, registers, and returns the answer as JSON text
    /// `{"subscription":S,"tick":T,"entities":[...]}`. Throws on bad input or at the limit.
    std::string subscribe(const world::world& w, const std::shared_ptr<watch_sink>& sink,
                          std::weak_ptr<hosted_world> self, const nlohmann::json& query,
                          const std::optional<std::vector<std::string>>& fields, std::uint64_t every);
    /// @brief world.get_components+watch / world.list_components+watch: one entity. Returns the
    /// first answer as JSON text. Throws no_such_entity, no_such_component, limit_reached.
    std::string subscribe_entity(const world::world& w, const std::shared_ptr<watch_sink>& sink,
                                 std::weak_ptr<hosted_world> self, world::entity_id e,
                                 const std::optional<std::vector<std::string>>& components, bool names_only);
    /// @brief world.unwatch; false when the subscription is not this sink's in this world.
    bool unsubscribe(const watch_sink* sink, std::uint64_t sub);
    /// @brief A subscriber fell too far behind: it gets the whole state and a group whose base is now.
    void resync(const world::world& w, const std::shared_ptr<watch_sink>& sink, std::uint64_t sub);
    /// @brief After a tick: due views diff and deliver.
    void after_tick(const world::world& w);
    /// @brief Where a publish hands its subscribers' wakes (hosted_world: a post to the network
    /// threads); without one they are made on the world's thread at the end of the publish.
    void set_handoff(watch_sink::handoff to) { handoff_ = std::move(to); }
    /// @brief A request changed the world (between ticks).
    void note_mutation() noexcept { ++version_; }
    /// @brief Diffs every view now (a paused world whose requests changed it).
    void publish_now(const world::world& w);
    /// @brief The world object was replaced (world.load): everyone gets the new whole state.
    void world_replaced(const world::world& w);
    /// @brief The world goes away: every subscription ends with `reason` (and `moved_to`).
    void end_all(std::uint64_t tick, std::string_view reason, std::string_view moved_to = {});
    [[nodiscard]] bool empty() const noexcept { return groups_.empty(); }
    /// @brief world.info's "watches": views, subscribers, views not diffed at the last publish
    /// because no subscriber reads them (stalled), and due diffs put off by the tick budget.
    [[nodiscard]] nlohmann::json figures() const;

  private:
    struct subscriber {
        std::shared_ptr<watch_sink> sink;
        std::uint64_t id;
    };
    struct group {
        std::unique_ptr<world::watch_view> view;
        std::vector<subscriber> subs;
        std::uint64_t base_version = 0;
        bool owed = false;     // was due, put off by the tick budget: diffs at the next publish
        bool stalled = false;  // no subscriber read it when it was last due (counted in stalled_)
    };
    void publish(const world::world& w, bool all);
    group& place(std::unique_ptr<world::watch_view> view, subscriber s, const world::world& w,
                 std::string& state);
    // A subscription to `key` may open: throws limit_reached when it is a new view past a bound.
    void reserve_view(const std::string& key, const std::shared_ptr<watch_sink>& sink);
    // Erases groups without subscribers; a key with no group left releases its view.
    void drop_empty();
    void release_all() noexcept;

    std::vector<std::unique_ptr<group>> groups_;
    world::position_grid grid_;             // the positions near() views were last answered from
    std::uint64_t version_ = 0;             // bumped by every tick and every change made by a request
    std::shared_ptr<watch_budget> budget_;  // the server's (from the first sink)
    std::unordered_map<std::string, std::size_t> keys_;  // view key -> its groups (twins)
    std::size_t cursor_ = 0;                             // where the next publish starts
    std::size_t stalled_ = 0;                            // groups whose `stalled` is set
    std::uint64_t deferred_ = 0;
    watch_sink::handoff handoff_;
};

}  // namespace ecsd::net
