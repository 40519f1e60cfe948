#include "hosting/watch.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <mutex>
#include <string_view>
#include <unordered_map>
#include <unordered_set>

#include "config.hpp"
#include "ecs/error.hpp"
#include "ecs/json_text.hpp"
#include "ecsd/protocol/errors.hpp"
#include "ecsd/protocol/jsonrpc.hpp"
#include "hosting/hosted_world.hpp"

namespace ecsd::net {

using world::watch_entry;
using kind = world::watch_entry::kind;

namespace {
std::shared_ptr<const world::watch_diff> fold(
    const std::vector<std::shared_ptr<const world::watch_diff>>& diffs);
}  // namespace

// --- watch_bytes --------------------------------------------------------------------------

std::string& watch_bytes::text() {
    if (pieces_.empty() || pieces_.back().shared) pieces_.emplace_back();
    return pieces_.back().text;
}

void watch_bytes::share(std::shared_ptr<const std::string> bytes) {
    shared_bytes_ += bytes->size();
    pieces_.push_back({{}, std::move(bytes)});
}

std::size_t watch_bytes::size() const noexcept {
    std::size_t n = shared_bytes_;
    for (const auto& p : pieces_) n += p.text.size();
    return n;
}

void watch_bytes::append_to(std::string& out) const {
    for (const auto& p : pieces_) out += p.shared ? *p.shared : p.text;
}

// --- held_diffs, diff_backlog -------------------------------------------------------------

held_diffs& held_diffs::process() {
    static held_diffs h;
    return h;
}

void held_diffs::hold(const world::watch_diff& d) {
    std::lock_guard lock(mutex_);
    if (++holders_[&d] == 1) bytes_.fetch_add(d.bytes(), std::memory_order_relaxed);
}

void held_diffs::release(const world::watch_diff& d) {
    std::lock_guard lock(mutex_);
    const auto it = holders_.find(&d);
    if (it == holders_.end() || --it->second > 0) return;
    holders_.erase(it);
    bytes_.fetch_sub(d.bytes(), std::memory_order_relaxed);
}

std::size_t held_diffs::diffs() const {
    std::lock_guard lock(mutex_);
    return holders_.size();
}

diff_backlog& diff_backlog::operator=(diff_backlog&& o) noexcept {
    if (this != &o) {
        clear();
        diffs_ = std::move(o.diffs_);
        o.diffs_.clear();
        bytes_ = std::exchange(o.bytes_, 0);
    }
    return *this;
}

void diff_backlog::push_back(diff_ptr d) {
    held_diffs::process().hold(*d);
    bytes_ += d->bytes();
    diffs_.push_back(std::move(d));
}

void diff_backlog::clear() {
    (void)take();
}

std::vector<diff_backlog::diff_ptr> diff_backlog::take() {
    auto& held = held_diffs::process();
    for (const auto& d : diffs_) held.release(*d);
    bytes_ = 0;
    return std::exchange(diffs_, {});
}

// --- watch_sink ---------------------------------------------------------------------------

void watch_sink::set_wake(std::function<void()> wake) {
    std::lock_guard lock(mutex_);
    wake_ = std::move(wake);
}

namespace {
thread_local watch_sink::wake_batch* active_wakes = nullptr;  // the innermost wake_batch on this thread
}  // namespace

watch_sink::wake_batch::wake_batch(const handoff* to) : outer_(std::exchange(active_wakes, this)), to_(to) {}

watch_sink::wake_batch::~wake_batch() {
    active_wakes = outer_;
    if (sinks_.empty()) return;
    if (to_ != nullptr && *to_) {
        std::shared_ptr<std::vector<std::weak_ptr<watch_sink>>> sinks;
        try {
            sinks = std::make_shared<std::vector<std::weak_ptr<watch_sink>>>(std::move(sinks_));
            (*to_)([sinks] { wake_all(*sinks); });
            return;
        } catch (const std::exception&) {  // no memory for the handler: they are woken here
            if (sinks) sinks_ = std::move(*sinks);
        }
    }
    wake_all(sinks_);
}

void watch_sink::wake_batch::wake_all(const std::vector<std::weak_ptr<watch_sink>>& sinks) {
    for (const auto& w : sinks) {
        const auto sink = w.lock();
        if (!sink) continue;
        std::function<void()> wake;
        {
            std::lock_guard lock(sink->mutex_);
            if (sink->wake_ && !sink->closed_) wake = sink->wake_;
        }
        if (wake) wake();  // only posts
    }
}

void watch_sink::wake_locked(bool again) {
    if ((wake_pending_ && !again) || !wake_ || closed_) return;
    wake_pending_ = true;
    if (active_wakes != nullptr) {
        active_wakes->sinks_.push_back(weak_from_this());
        return;
    }
    wake_();  // only posts: the connection takes the lock on its own strand later
}

bool watch_sink::push_line(std::string line) {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    if (lines_bytes_ + line.size() > limits_.lines_bytes) {
        ++lines_dropped_;  // a monitor that does not keep up loses lines, never the server's memory
        return true;
    }
    lines_bytes_ += line.size();
    lines_.push_back(std::move(line));
    wake_locked();
    return true;
}

std::optional<std::uint64_t> watch_sink::add(std::weak_ptr<hosted_world> world, format f) {
    std::lock_guard lock(mutex_);
    if (closed_ || subs_.size() >= limits_.max_subscriptions) return std::nullopt;
    const auto id = next_id_++;
    auto& s = subs_[id];
    s.world = std::move(world);
    s.f = f;
    s.created = ++created_;
    return id;
}

bool watch_sink::deliver(std::uint64_t sub, const std::shared_ptr<const world::watch_diff>& diff) {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    const auto it = subs_.find(sub);
    if (it == subs_.end()) return false;
    auto& s = it->second;
    if (s.m == mode::needs_resync || s.m == mode::resync_asked) return true;  // the resync carries it
    if (s.m == mode::current) {
        const item next{sub, diff, {}};
        // An empty queue always takes the next diff, however large (one diff of a large view can
        // pass the bound by itself): falling behind is for clients that do not read, not for big views.
        const bool mine_queued =
            std::any_of(queue_.begin(), queue_.end(), [&](const item& q) { return q.sub == sub; });
        if (!mine_queued || queue_bytes_ + next.size() <= limits_.queue_bytes) {
            queue_bytes_ += next.size();
            queue_.push_back(next);
            wake_locked();
            return true;
        }
        // Its queue is full: from now on its diffs wait in its backlog, starting with those queued.
        s.m = mode::behind;
        s.behind_since = diff->tick;
        for (auto q = queue_.begin(); q != queue_.end();) {
            if (q->sub == sub && q->diff) {
                s.behind_since = std::min(s.behind_since, q->diff->tick);
                queue_bytes_ -= q->size();  // before the diff moves out: its size is the diff's
                s.backlog.push_back(std::move(q->diff));
                q = queue_.erase(q);
            } else {
                ++q;
            }
        }
    }
    if (diff->tick > s.behind_since && diff->tick - s.behind_since > limits_.max_behind_ticks) {
        // Its reader has not caught up for this long: it gets the whole state when it does, and
        // until then its view is not diffed for it (watch_hub::publish asks wants()).
        s.m = mode::needs_resync;
        s.backlog.clear();
        wake_locked();
        return true;
    }
    s.backlog.push_back(diff);
    if (s.backlog.size() > limits_.min_backlog && s.backlog.bytes() > limits_.pending_bytes / 4)
        fold_backlog(s);
    // The connection reports what it holds to the server-wide output bound, backlogs included.
    // One that takes nothing (its output is full) leaves its wake pending, so it is woken again
    // as its backlog doubles: it only counts, it sends nothing until its client reads.
    wake_locked(std::has_single_bit(s.backlog.size()));
    return true;
}

bool watch_sink::wants(std::uint64_t sub) const {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    const auto it = subs_.find(sub);
    return it != subs_.end() && it->second.m != mode::needs_resync && it->second.m != mode::resync_asked;
}

namespace {
std::shared_ptr<const world::watch_diff> fold_once(
    const std::vector<std::shared_ptr<const world::watch_diff>>& diffs);
}  // namespace

void watch_sink::fold_backlog(subscription& s) const {
    // A backlog folds into one diff no larger than the state it describes. Diffs too large for
    // that to fit the bound are not folded (it would cost the world's strand for nothing).
    const bool huge = std::any_of(s.backlog.diffs().begin(), s.backlog.diffs().end(),
                                  [&](const auto& d) { return d->bytes() > limits_.pending_bytes / 2; });
    if (!huge) {
        auto one = fold_once(s.backlog.diffs());
        if (one->bytes() <= limits_.pending_bytes) {
            s.backlog.clear();
            s.backlog.push_back(std::move(one));
            return;
        }
    }
    s.m = mode::needs_resync;  // too far behind to remember: it gets the whole state again
    s.backlog.clear();
}

namespace {

// One entity's updates merged across a backlog, as views of the diffs' text.
struct merged_entry {
    kind what = kind::changed;
    bool died = false;
    bool client_has = true;  // the client held the entity before the backlog began
    std::vector<std::pair<std::string_view, std::string_view>> components;
    std::vector<std::string_view> removed;
};

// Merges diffs (oldest first) per entity: the latest value wins, and an entity that entered and
// left while the client was behind is never mentioned. In id order.
std::vector<std::pair<world::entity_id, merged_entry>> merge(
    const std::vector<std::shared_ptr<const world::watch_diff>>& diffs) {
    std::unordered_map<world::entity_id, merged_entry> m;
    m.reserve(diffs.back()->refs.size());
    watch_entry e;
    for (const auto& d : diffs) {
        for (const auto& ref : d->refs) {
            d->expand(ref, e);
            auto it = m.find(e.entity);
            switch (e.what) {
                case kind::entered: {
                    // Entered replaces whatever the client holds for the entity.
                    const bool had = it != m.end() ? it->second.client_has : ref.replaces;
                    m.insert_or_assign(e.entity, merged_entry{kind::entered, false, had, e.components, {}});
                    break;
                }
                case kind::changed: {
                    if (it == m.end()) it = m.emplace(e.entity, merged_entry{}).first;
                    auto& p = it->second;
                    for (const auto& update : e.components) {
                        const auto c = std::find_if(p.components.begin(), p.components.end(),
                                                    [&](const auto& kv) { return kv.first == update.first; });
                        if (c != p.components.end())
                            c->second = update.second;
                        else
                            p.components.push_back(update);
                        std::erase(p.removed, update.first);
                    }
                    for (const auto& r : e.removed) {
                        std::erase_if(p.components, [&](const auto& kv) { return kv.first == r; });
                        if (p.what == kind::changed &&
                            std::find(p.removed.begin(), p.removed.end(), r) == p.removed.end())
                            p.removed.push_back(r);
                    }
                    break;
                }
                case kind::left: {
                    const bool had = it != m.end() ? it->second.client_has : true;
                    if (!had) {  // entered and left while the client was behind: it never hears of it
                        if (it != m.end()) m.erase(it);
                        break;
                    }
                    m.insert_or_assign(e.entity, merged_entry{kind::left, e.died, true, {}, {}});
                    break;
                }
            }
        }
    }
    std::vector<std::pair<world::entity_id, merged_entry>> out;
    out.reserve(m.size());
    for (auto& kv : m) out.emplace_back(kv.first, std::move(kv.second));
    std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    return out;
}

watch_entry as_entry(world::entity_id id, merged_entry& p) {
    return {id, p.what, p.died, std::move(p.components), std::move(p.removed)};
}

// Diffs (oldest first) folded into one that stands for them all: what merge() says, written as
// a diff of its own, with its entries' and components' positions.
std::shared_ptr<const world::watch_diff> fold(
    const std::vector<std::shared_ptr<const world::watch_diff>>& diffs) {
    const auto merged = merge(diffs);  // views into `diffs`, alive until we return
    auto d = std::make_shared<world::watch_diff>();
    d->tick = diffs.back()->tick;
    d->merged = 0;
    for (const auto& x : diffs) d->merged += x->merged;
    auto& out = d->body;
    const auto at = [&out] { return static_cast<std::uint32_t>(out.size()); };
    out += R"("tick":)";
    out += std::to_string(d->tick);
    const auto list = [&](const char* name, kind k) {
        out += ",\"";
        out += name;
        out += "\":[";
        bool first = true;
        for (const auto& [id, p] : merged) {
            if (p.what != k) continue;
            if (!first) out += ',';
            first = false;
            world::watch_ref r{id,
                               p.what,
                               p.died,
                               p.what == kind::entered && p.client_has,
                               at(),
                               0,
                               static_cast<std::uint32_t>(d->parts.size()),
                               0};
            out += R"({"entity":)";
            out += std::to_string(id);
            if (k == kind::left) {
                out += p.died ? R"(,"reason":"died"})" : R"(,"reason":"unmatched"})";
            } else {
                out += R"(,"components":{)";
                for (std::size_t i = 0; i < p.components.size(); ++i) {
                    if (i > 0) out += ',';
                    const auto begin = at();
                    out += p.components[i].first;
                    const auto name_end = at();
                    out += ':';
                    out += p.components[i].second;
                    d->parts.push_back({begin, name_end, at()});
                }
                out += '}';
                if (!p.removed.empty()) {
                    out += R"(,"removed":[)";
                    for (std::size_t i = 0; i < p.removed.size(); ++i) {
                        if (i > 0) out += ',';
                        const auto begin = at();
                        out += p.removed[i];
                        d->parts.push_back({begin, at(), 0});
                    }
                    out += ']';
                }
                out += '}';
            }
            r.end = at();
            r.count = static_cast<std::uint32_t>(d->parts.size()) - r.parts;
            d->refs.push_back(r);
        }
        out += ']';
    };
    list("entered", kind::entered);
    list("changed", kind::changed);
    list("left", kind::left);
    return d;
}

// Subscribers of one view that fell behind together catch up on the same diffs: 1,000 watchers of
// one query, slowed to 20 ticks/s, made 5,000 catch-ups over 20-29 distinct backlogs. A fold is
// kept here for the next subscriber with the same diffs, so it is done once, and its body (shared
// in the gathered write) is one buffer for all their sockets. The key is the diffs themselves,
// compared by owner: weak references, so the memo keeps no backlog alive, and a control block is not
// reused while one refers to it, so an equal key is the same sequence. A few of the newest folds,
// and none larger than a quarter of the memo's bytes.
class fold_memo {
  public:
    using diff_ptr = std::shared_ptr<const world::watch_diff>;

    diff_ptr fold_of(const std::vector<diff_ptr>& diffs) {
        {
            std::lock_guard lock(mutex_);
            for (auto& e : entries_) {
                if (same(e, diffs)) {
                    e.used = ++clock_;
                    return e.folded;
                }
            }
        }
        auto folded = fold(diffs);
        if (folded->bytes() > max_bytes / 4) return folded;
        std::lock_guard lock(mutex_);
        entry fresh{{diffs.begin(), diffs.end()}, folded, ++clock_};
        bytes_ += folded->bytes();
        entries_.push_back(std::move(fresh));
        while (entries_.size() > max_entries || bytes_ > max_bytes) {
            const auto oldest =
                std::min_element(entries_.begin(), entries_.end(),
                                 [](const entry& a, const entry& b) { return a.used < b.used; });
            bytes_ -= oldest->folded->bytes();
            entries_.erase(oldest);
        }
        return folded;
    }

  private:
    static constexpr std::size_t max_entries = 8;
    static constexpr std::size_t max_bytes = std::size_t{8} << 20;
    struct entry {
        std::vector<std::weak_ptr<const world::watch_diff>> diffs;
        diff_ptr folded;
        std::uint64_t used = 0;
    };
    static bool same(const entry& e, const std::vector<diff_ptr>& diffs) {
        if (e.diffs.size() != diffs.size()) return false;
        for (std::size_t i = 0; i < diffs.size(); ++i)
            if (e.diffs[i].owner_before(diffs[i]) || diffs[i].owner_before(e.diffs[i])) return false;
        return true;
    }
    std::mutex mutex_;
    std::vector<entry> entries_;
    std::size_t bytes_ = 0;
    std::uint64_t clock_ = 0;
};

std::shared_ptr<const world::watch_diff> fold_once(
    const std::vector<std::shared_ptr<const world::watch_diff>>& diffs) {
    static fold_memo memo;  // process-wide, as the diffs are: subscribers of one view are on many connections
    return memo.fold_of(diffs);
}

}  // namespace

bool watch_sink::deliver_state(std::uint64_t sub, std::uint64_t tick, const std::string& entities_json) {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    const auto it = subs_.find(sub);
    if (it == subs_.end()) return false;
    auto& s = it->second;
    std::erase_if(queue_, [&](const item& q) {
        if (q.sub != sub) return false;
        queue_bytes_ -= q.size();
        return true;
    });
    s.m = mode::current;
    s.backlog.clear();
    item next{sub, nullptr,
              "\"tick\":" + std::to_string(tick) + ",\"resync\":true,\"entities\":" + entities_json};
    queue_bytes_ += next.size();
    queue_.push_back(std::move(next));
    wake_locked();
    return true;
}

void watch_sink::end(std::uint64_t sub, std::uint64_t tick, std::string_view reason,
                     std::string_view moved_to) {
    std::lock_guard lock(mutex_);
    if (closed_) return;
    const auto it = subs_.find(sub);
    if (it == subs_.end()) return;
    std::erase_if(queue_, [&](const item& q) {
        if (q.sub != sub || !q.diff) return false;
        queue_bytes_ -= q.size();
        return true;
    });
    // Its last word; taken once the subscription has started, then forgotten.
    it->second.m = mode::current;
    it->second.backlog.clear();
    item last{sub, nullptr,
              "\"tick\":" + std::to_string(tick) + ",\"ended\":true,\"reason\":\"" + std::string(reason) +
                  "\"" +
                  (moved_to.empty() ? std::string() : ",\"moved_to\":" + nlohmann::json(moved_to).dump())};
    queue_bytes_ += last.size();
    queue_.push_back(std::move(last));
    it->second.world.reset();
    it->second.tick = ~std::uint64_t{0};  // marks: ended
    wake_locked();
}

std::optional<std::weak_ptr<hosted_world>> watch_sink::remove(std::uint64_t sub) {
    std::lock_guard lock(mutex_);
    const auto it = subs_.find(sub);
    if (it == subs_.end() || it->second.tick == ~std::uint64_t{0}) return std::nullopt;
    auto world = std::move(it->second.world);
    std::erase_if(queue_, [&](const item& q) {
        if (q.sub != sub) return false;
        queue_bytes_ -= q.size();
        return true;
    });
    subs_.erase(it);
    return world;
}

void watch_sink::bind_next(std::string id_json) {
    std::lock_guard lock(mutex_);
    ++bound_;
    for (auto& [id, s] : subs_) {
        if (s.created == bound_) {  // creation numbers are unique: one subscription takes it
            s.id_json = std::move(id_json);
            break;
        }
    }
}

bool watch_sink::render_brp(std::string& out, format f, const std::string& id_json, const watch_entry& e) {
    if (e.what == kind::left) {
        render_brp_end(out, id_json, protocol::reason::no_such_entity,
                       e.died ? "the entity was despawned" : "the entity no longer matches");
        return false;
    }
    protocol::begin_result(out, id_json);
    if (f == format::brp_components) {
        out += R"({"components":{)";
        for (std::size_t i = 0; i < e.components.size(); ++i) {
            if (i > 0) out += ',';
            out += e.components[i].first;
            out += ':';
            out += e.components[i].second;
        }
        out += R"(},"errors":{},"removed":[)";
    } else {
        out += R"({"added":[)";
        for (std::size_t i = 0; i < e.components.size(); ++i) {
            if (i > 0) out += ',';
            out += e.components[i].first;
        }
        out += R"(],"removed":[)";
    }
    for (std::size_t i = 0; i < e.removed.size(); ++i) {
        if (i > 0) out += ',';
        out += e.removed[i];
    }
    out += "]}}\n";
    return true;
}

void watch_sink::render_brp_end(std::string& out, const std::string& id_json, protocol::reason r,
                                std::string_view why) {
    out += protocol::make_error(nlohmann::json::parse(id_json), r, "watch ended: " + std::string(why));
    out += '\n';
}

void watch_sink::start_next() {
    std::lock_guard lock(mutex_);
    ++started_;
    wake_locked();
}

void watch_sink::end_next() {
    std::shared_ptr<hosted_world> world;
    std::uint64_t sub = 0;
    {
        std::lock_guard lock(mutex_);
        ++started_;
        for (auto it = subs_.begin(); it != subs_.end(); ++it) {
            if (it->second.created != started_) continue;
            sub = it->first;
            world = it->second.world.lock();
            std::erase_if(queue_, [&](const item& q) {
                if (q.sub != sub) return false;
                queue_bytes_ -= q.size();
                return true;
            });
            subs_.erase(it);
            break;
        }
    }
    if (world) {
        asio::post(world->strand(), [world, self = shared_from_this(), sub] {
            (void)world->watches().unsubscribe(self.get(), sub);
        });
    }
}

void watch_sink::render(std::string& out, std::uint64_t sub, std::string_view body) {
    protocol::begin_notification(out, "world.watch");
    out += R"({"subscription":)";
    out += std::to_string(sub);
    out += ',';
    out += body;
    out += "}}\n";
}

void watch_sink::render(watch_bytes& out, std::uint64_t sub,
                        const std::shared_ptr<const world::watch_diff>& d, std::string_view coalesced) {
    // Bodies this large are worth a buffer of their own in the connection's gathered write.
    constexpr std::size_t share_from = std::size_t{16} * 1024;
    auto& t = out.text();
    protocol::begin_notification(t, "world.watch");
    t += R"({"subscription":)";
    t += std::to_string(sub);
    t += ',';
    t += coalesced;
    if (d->body.size() < share_from) {
        t += d->body;
    } else {
        out.share(std::shared_ptr<const std::string>(d, &d->body));  // keeps the diff alive
    }
    out.text() += "}}\n";
}

std::shared_ptr<watch_sink> watch_sink::for_connection(const server_config& cfg,
                                                       std::shared_ptr<watch_budget> budget,
                                                       std::function<void()> wake) {
    watch_limits limits;
    limits.max_subscriptions = cfg.max_watches;
    limits.queue_bytes =
        std::max<std::size_t>(std::min(cfg.max_output_bytes / 4, limits.queue_bytes), std::size_t{64} * 1024);
    limits.lines_bytes = std::max<std::size_t>(cfg.max_output_bytes / 4, std::size_t{64} * 1024);
    limits.pending_bytes = cfg.max_output_bytes;
    auto sink = std::make_shared<watch_sink>(limits, std::move(budget));
    sink->set_wake(std::move(wake));
    return sink;
}

void watch_sink::take(std::string& out, std::size_t room) {
    watch_bytes bytes;
    take(bytes, room);
    bytes.append_to(out);
}

void watch_sink::take(watch_bytes& out, std::size_t room) {
    std::vector<std::pair<std::uint64_t, std::shared_ptr<hosted_world>>> resyncs;
    std::vector<catch_up> catch_ups;
    take_locked(out, room, resyncs, catch_ups);
    // Outside the lock: merging a backlog takes a while, and the world strands deliver meanwhile
    // (a diff that arrives now is queued behind the notification written here).
    std::vector<std::uint64_t> ended;
    for (const auto& c : catch_ups)
        if (!render_catch_up(out, c)) ended.push_back(c.sub);
    if (!ended.empty()) {
        std::lock_guard lock(mutex_);
        for (const auto sub : ended) subs_.erase(sub);
    }
    // Outside the lock: the world's strand calls back into deliver_state.
    for (auto& [sub_id, hosted] : resyncs) {
        asio::post(hosted->strand(), [world = hosted, self = shared_from_this(), sub = sub_id] {
            world->watches().resync(world->world(), self, sub);
        });
    }
}

bool watch_sink::render_catch_up(watch_bytes& bytes, const catch_up& c) {
    if (c.f != format::notifications) {
        // A single entity: one response with everything that changed meanwhile.
        bool alive = true;
        auto merged = merge(c.diffs);
        for (auto& [id, p] : merged)
            alive = render_brp(bytes.text(), c.f, c.id_json, as_entry(id, p)) && alive;
        return alive;
    }
    // One notification from the state the client has to now.
    const auto d = c.diffs.size() == 1 ? c.diffs.front() : fold_once(c.diffs);
    render(bytes, c.sub, d, "\"coalesced\":" + std::to_string(d->merged) + ",");
    return true;
}

void watch_sink::take_locked(watch_bytes& bytes, std::size_t room,
                             std::vector<std::pair<std::uint64_t, std::shared_ptr<hosted_world>>>& resyncs,
                             std::vector<catch_up>& catch_ups) {
    std::lock_guard lock(mutex_);
    wake_pending_ = false;
    if (closed_) return;
    const std::size_t start = bytes.size();
    auto& out = bytes.text();
    if (lines_dropped_ > 0) {
        protocol::begin_notification(out, "server.monitor");
        out += R"({"dropped":)" + std::to_string(lines_dropped_) + "}}\n";
        lines_dropped_ = 0;
    }
    while (!lines_.empty() && bytes.size() - start < room) {
        lines_bytes_ -= lines_.front().size();
        out += lines_.front();
        lines_.pop_front();
    }
    const auto started = [&](std::uint64_t sub) {
        const auto it = subs_.find(sub);
        return it != subs_.end() && it->second.created <= started_;
    };
    watch_entry scratch;
    for (auto q = queue_.begin(); q != queue_.end() && bytes.size() - start < room;) {
        if (!started(q->sub)) {  // its world.watch answer has not gone out yet
            ++q;
            continue;
        }
        auto& sub = subs_[q->sub];
        bool ended = !q->diff && sub.tick == ~std::uint64_t{0};
        if (sub.f == format::notifications) {
            if (q->diff)
                render(bytes, q->sub, q->diff, {});
            else
                render(bytes.text(), q->sub, q->params);
        } else if (q->diff) {
            for (const auto& ref : q->diff->refs) {
                q->diff->expand(ref, scratch);
                ended = !render_brp(bytes.text(), sub.f, sub.id_json, scratch) || ended;
            }
        } else if (ended) {
            render_brp_end(bytes.text(), sub.id_json, protocol::reason::no_such_world, "the world went away");
        } else {
            // A resync: the whole current value as one more response (the entity, if it still
            // matches, is the state's only element).
            const auto state = nlohmann::json::parse("{" + q->params + "}");
            const auto& entities = state["entities"];
            if (entities.empty()) {
                render_brp_end(bytes.text(), sub.id_json, protocol::reason::no_such_entity,
                               "the entity no longer matches");
                ended = true;
            } else {
                std::vector<std::pair<std::string, std::string>> texts;
                for (const auto& [name, value] : entities[0]["components"].items())
                    texts.emplace_back(nlohmann::json(name).dump(), value.dump());
                watch_entry en{0, kind::entered, false, {}, {}};  // render_brp needs no id
                for (const auto& [name, value] : texts) en.components.emplace_back(name, value);
                ended = !render_brp(bytes.text(), sub.f, sub.id_json, en);
            }
        }
        queue_bytes_ -= q->size();
        if (ended) subs_.erase(q->sub);
        q = queue_.erase(q);
    }
    // Catch-ups come after every queued diff of a started subscription (those of subscriptions
    // whose answers have not gone out must not hold them back: the answers wait for the catch-ups).
    if (std::any_of(queue_.begin(), queue_.end(), [&](const item& q) { return started(q.sub); })) return;
    std::size_t planned = 0;  // bytes the catch-ups will write (about: their newest diff's)
    for (auto& [id, s] : subs_) {
        if (bytes.size() - start + planned >= room || s.created > started_) break;
        if (s.m == mode::behind) {
            planned += s.backlog.back()->body.size();
            catch_ups.push_back({id, s.f, s.id_json, s.backlog.take()});
            s.m = mode::current;
        } else if (s.m == mode::needs_resync) {
            if (auto w = s.world.lock()) {
                s.m = mode::resync_asked;
                resyncs.emplace_back(id, std::move(w));
            }
        }
    }
}

bool watch_sink::owes() const {
    std::lock_guard lock(mutex_);
    if (closed_) return false;
    const auto started = [&](std::uint64_t sub) {
        const auto it = subs_.find(sub);
        return it != subs_.end() && it->second.created <= started_;
    };
    if (std::any_of(queue_.begin(), queue_.end(), [&](const item& q) { return started(q.sub); })) return true;
    return std::any_of(subs_.begin(), subs_.end(), [&](const auto& entry) {
        const auto& s = entry.second;
        if (s.created > started_) return false;
        return s.m == mode::behind || s.m == mode::resync_asked ||
               (s.m == mode::needs_resync && !s.world.expired());
    });
}

void watch_sink::close() {
    std::vector<std::pair<std::uint64_t, std::shared_ptr<hosted_world>>> gone;
    {
        std::lock_guard lock(mutex_);
        closed_ = true;
        for (auto& [id, s] : subs_)
            if (auto w = s.world.lock()) gone.emplace_back(id, std::move(w));
        subs_.clear();
        queue_.clear();
        queue_bytes_ = 0;
        wake_ = nullptr;
    }
    for (auto& [sub_id, hosted] : gone) {
        asio::post(hosted->strand(), [world = hosted, self = shared_from_this(), sub = sub_id] {
            (void)world->watches().unsubscribe(self.get(), sub);
        });
    }
}

std::size_t watch_sink::size() const {
    std::lock_guard lock(mutex_);
    return subs_.size();
}

watch_sink::held_bytes watch_sink::held() const {
    std::lock_guard lock(mutex_);
    held_bytes h{queue_bytes_ + lines_bytes_, 0};
    for (const auto& [id, s] : subs_) h.backlogs += s.backlog.bytes();
    return h;
}

bool watch_sink::owes_resync() const {
    std::lock_guard lock(mutex_);
    return std::any_of(subs_.begin(), subs_.end(), [](const auto& kv) {
        return kv.second.m == mode::needs_resync || kv.second.m == mode::resync_asked;
    });
}

// --- watch_hub ----------------------------------------------------------------------------

namespace {
[[noreturn]] void throw_limit(const watch_sink& sink) {
    throw protocol::rpc_error(
        protocol::reason::limit_reached,
        "at most " + std::to_string(sink.size()) + " watches per connection (--max-watches)",
        {{"limit", sink.size()}});
}
}  // namespace

watch_hub::~watch_hub() {
    release_all();
}

void watch_hub::release_all() noexcept {
    if (budget_ && !keys_.empty()) budget_->release(keys_.size());
    keys_.clear();
}

void watch_hub::reserve_view(const std::string& key, const std::shared_ptr<watch_sink>& sink) {
    if (!budget_) budget_ = sink->budget();
    if (!budget_ || keys_.contains(key)) return;  // a view already diffed: joining it costs nothing
    const auto refuse = [](std::size_t limit, const std::string& what) {
        throw protocol::rpc_error(
            protocol::reason::limit_reached,
            "at most " + std::to_string(limit) + what +
                ": watch an existing query (same query, fields and every) or unwatch one",
            {{"limit", limit}});
    };
    if (keys_.size() >= budget_->max_views_per_world)
        refuse(budget_->max_views_per_world, " distinct watch views in a world (--max-watch-views)");
    if (!budget_->claim())
        refuse(budget_->max_views_total, " distinct watch views in the server (--max-watch-views-total)");
    keys_.emplace(key, 0);
}

void watch_hub::drop_empty() {
    for (auto it = groups_.begin(); it != groups_.end();) {
        if (!(*it)->subs.empty()) {
            ++it;
            continue;
        }
        if ((*it)->stalled) --stalled_;
        const auto k = keys_.find((*it)->view->key());
        if (k != keys_.end() && --k->second == 0) {
            keys_.erase(k);
            if (budget_) budget_->release();
        }
        it = groups_.erase(it);
    }
}

nlohmann::json watch_hub::figures() const {
    std::size_t subscribers = 0;
    for (const auto& g : groups_) subscribers += g->subs.size();
    return {{"views", keys_.size()},
            {"subscribers", subscribers},
            {"stalled", stalled_},
            {"deferred", deferred_}};
}

watch_hub::group& watch_hub::place(std::unique_ptr<world::watch_view> view, subscriber s,
                                   const world::world& w, std::string& state) {
    view->rebase(w, state);
    for (auto& g : groups_) {
        if (g->view->key() == view->key() && g->base_version == version_) {
            g->subs.push_back(std::move(s));
            return *g;
        }
    }
    ++keys_[view->key()];  // reserve_view (or the twin it splits from) made its key
    auto g = std::make_unique<group>();
    g->view = std::move(view);
    g->subs.push_back(std::move(s));
    g->base_version = version_;
    groups_.push_back(std::move(g));
    return *groups_.back();
}

std::string watch_hub::subscribe(const world::world& w, const std::shared_ptr<watch_sink>& sink,
                                 std::weak_ptr<hosted_world> self, const nlohmann::json& query,
                                 const std::optional<std::vector<std::string>>& fields, std::uint64_t every) {
    auto view = std::make_unique<world::watch_view>(w, query, fields, every);  // throws on bad input
    const auto id = sink->add(std::move(self));
    if (!id) throw_limit(*sink);
    try {
        reserve_view(view->key(), sink);
    } catch (...) {
        (void)sink->remove(*id);
        throw;
    }
    std::string state;
    place(std::move(view), {sink, *id}, w, state);
    return "{\"subscription\":" + std::to_string(*id) + ",\"tick\":" + std::to_string(w.tick()) +
           ",\"entities\":" + state + "}";
}

std::string watch_hub::subscribe_entity(const world::world& w, const std::shared_ptr<watch_sink>& sink,
                                        std::weak_ptr<hosted_world> self, world::entity_id e,
                                        const std::optional<std::vector<std::string>>& components,
                                        bool names_only) {
    w.registry().check(e);
    auto view = std::make_unique<world::watch_view>(w, e, components, names_only);
    const auto id = sink->add(
        std::move(self), names_only ? watch_sink::format::brp_names : watch_sink::format::brp_components);
    if (!id) throw_limit(*sink);
    try {
        reserve_view(view->key(), sink);
    } catch (...) {
        (void)sink->remove(*id);
        throw;
    }
    std::string state;
    place(std::move(view), {sink, *id}, w, state);
    // The first answer: everything the entity has now, in BRP's shape.
    const auto entities = nlohmann::json::parse(state);
    const auto comps = entities.empty() ? nlohmann::json::object() : entities[0]["components"];
    nlohmann::json result;
    if (names_only) {
        result = {{"added", nlohmann::json::array()}, {"removed", nlohmann::json::array()}};
        for (const auto& [name, value] : comps.items()) result["added"].push_back(name);
    } else {
        result = {{"components", comps},
                  {"errors", nlohmann::json::object()},
                  {"removed", nlohmann::json::array()}};
    }
    return result.dump();
}

bool watch_hub::unsubscribe(const watch_sink* sink, std::uint64_t sub) {
    for (auto g = groups_.begin(); g != groups_.end(); ++g) {
        auto& subs = (*g)->subs;
        const auto it = std::find_if(subs.begin(), subs.end(), [&](const subscriber& s) {
            return s.sink.get() == sink && s.id == sub;
        });
        if (it == subs.end()) continue;
        subs.erase(it);
        if (subs.empty()) drop_empty();
        return true;
    }
    return false;
}

void watch_hub::resync(const world::world& w, const std::shared_ptr<watch_sink>& sink, std::uint64_t sub) {
    for (auto& g : groups_) {
        auto& subs = g->subs;
        const auto it = std::find_if(subs.begin(), subs.end(),
                                     [&](const subscriber& s) { return s.sink == sink && s.id == sub; });
        if (it == subs.end()) continue;
        // A view of its own, based now; it rejoins its twin at the next diff.
        auto view = std::make_unique<world::watch_view>(*g->view);
        subs.erase(it);
        std::string state;
        place(std::move(view), {sink, sub}, w, state);
        (void)sink->deliver_state(sub, w.tick(), state);
        drop_empty();
        return;
    }
}

void watch_hub::after_tick(const world::world& w) {
    ++version_;
    if (!groups_.empty()) publish(w, false);
}

void watch_hub::publish_now(const world::world& w) {
    if (!groups_.empty()) publish(w, true);
}

void watch_hub::publish(const world::world& w, bool all) {
    using clock = std::chrono::steady_clock;
    // After a tick, the tick with its watch work takes at most 30% of the tick period: diffs get
    // what the systems left of it, and at least a tenth of it (past that, the due views wait for
    // the next tick, first in line). Counted from the tick's start, so that a tick whose thread
    // lost its core for a few milliseconds (two cores, the network threads and the kernel's sends
    // beside it) diffs less rather than running long. A paused world's publish_now diffs every
    // view at once, as its watchers are promised changes right after the request that made them.
    const double share = 0.3 / w.tick_hz();
    const auto spend = std::chrono::duration_cast<clock::duration>(
        std::chrono::duration<double>(std::max(share - w.last_tick_ms() / 1000, share / 10)));
    const auto t0 = clock::now();
    // The subscribers' connections are woken together, after the publish, from a network thread.
    const watch_sink::wake_batch wakes(&handoff_);
    bool out_of_time = false;
    // Keys diffed: their twins diff too, and then merge. A set, not a list: a thousand players'
    // distinct near() views would otherwise cost a million key comparisons a tick.
    std::unordered_set<std::string_view> diffed;
    const std::size_t n = groups_.size();
    std::size_t resume = n;
    // near() views (a player's neighbourhood each) are answered from one grid of the world's
    // positions, kept from tick to tick and brought up to date at the first of them: each then
    // costs the entities around its centre, not the world. Cells of half the smallest radius: a
    // circle's cells hold about twice its area. The grid costs a walk of the world a tick (three
    // when entities came or went), so a few such views walk it instead.
    double cell = 0;
    std::size_t near_views = 0;
    for (const auto& g : groups_) {
        const auto r = g->view->near_radius();
        if (!r || *r <= 0) continue;
        cell = cell == 0 ? *r / 2 : std::min(cell, *r / 2);
        ++near_views;
    }
    if (near_views < 4) {
        cell = 0;
        grid_ = {};  // its buffers are the size of the world: not kept for views that are gone
    }
    std::optional<world::world::near_index> near_index;
    for (std::size_t k = 0; k < n; ++k) {
        const std::size_t i = (cursor_ + k) % n;
        auto& g = *groups_[i];
        if (!all && !g.owed && w.tick() % g.view->every() != 0) continue;
        const auto& key = g.view->key();
        // Out of time, only twins of views already diffed go on (their diff is the same). Asked
        // before wants(): the views that wait cost a flag each, not a lock of each subscriber.
        if (out_of_time && !diffed.contains(key)) {
            if (!g.owed) ++deferred_;
            g.owed = true;
            if (resume == n) resume = i;
            continue;
        }
        // Nobody reads it: every subscriber gets the whole state when it reads again.
        const bool stalled = std::none_of(g.subs.begin(), g.subs.end(),
                                          [](const subscriber& s) { return s.sink->wants(s.id); });
        if (stalled != g.stalled) {
            g.stalled = stalled;
            stalled ? ++stalled_ : --stalled_;
        }
        if (stalled) {
            g.owed = false;
            continue;
        }
        if (cell > 0 && !near_index && g.view->near_radius())
            near_index.emplace(w, std::max(cell, 0.5), &grid_);
        const auto d = g.view->diff(w);
        g.base_version = version_;
        g.owed = false;
        diffed.insert(key);
        if (d) std::erase_if(g.subs, [&](const subscriber& s) { return !s.sink->deliver(s.id, d); });
        if (!all && clock::now() - t0 >= spend) out_of_time = true;
    }
    cursor_ = resume == n ? 0 : resume;
    drop_empty();
    if (cursor_ >= groups_.size()) cursor_ = 0;
    // Twins whose bases are both current share one diff from now on (the first of them in the
    // list takes the others' subscribers).
    std::unordered_map<std::string_view, group*> first;
    for (auto& gp : groups_) {
        if (gp->base_version != version_) continue;
        const auto [at, fresh] = first.try_emplace(gp->view->key(), gp.get());
        if (fresh) continue;
        auto& into = at->second->subs;
        into.insert(into.end(), gp->subs.begin(), gp->subs.end());
        gp->subs.clear();
    }
    drop_empty();
    if (cursor_ >= groups_.size()) cursor_ = 0;
}

void watch_hub::world_replaced(const world::world& w) {
    end_all(w.tick(), "world_reloaded");
}

void watch_hub::end_all(std::uint64_t tick, std::string_view reason, std::string_view moved_to) {
    for (auto& g : groups_)
        for (auto& s : g->subs) s.sink->end(s.id, tick, reason, moved_to);
    groups_.clear();
    stalled_ = 0;
    release_all();
}

}  // namespace ecsd::net
