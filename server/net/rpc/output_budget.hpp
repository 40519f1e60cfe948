#pragma once
// The server-wide bound on output (--max-output-total): bytes queued for clients and not yet
// sent, over every connection, TCP and HTTP alike. --max-output-bytes bounds one connection; this
// bounds them all together, so many clients that stop reading cannot take the machine's memory
// between them. Each connection keeps an account here and reports what it holds unsent whenever
// that changes; once the total passes the bound, the slowest readers are dropped until what the
// rest hold is back under 7/8 of it: the reader whose unsent bytes, times the time since its
// output last moved, is largest goes first. A client that reads keeps its output moving and is dropped only
// when nobody slower is left.
//
// Watch backlogs hold diffs that subscribers of one view share: those count once in the total,
// through `shared` (hosting/watch.hpp's held_diffs), not once per connection. A connection's
// backlogs still weigh in full when the slowest is chosen, and are taken as freed by its drop: a
// drop that frees less is followed by another at the next report past the bound.
#include <algorithm>
#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <vector>

namespace ecsd::net {

class output_budget {
  public:
    using clock = std::chrono::steady_clock;

    /// @brief One connection's share. Its connection updates it from its own strand only.
    struct account {
        std::atomic<std::size_t> unsent{0};    // its own bytes: in the total
        std::atomic<std::size_t> backlogs{0};  // its watch backlogs in full, maybe shared: its weight
        std::atomic<clock::rep> moved{0};      // the last write progress, or when the output began to wait
        bool dropping = false;       // under the budget's lock: asked to close, its bytes go when it has
        std::function<void()> drop;  // posts the connection's close to its strand
    };

    /// @brief `shared`: bytes held for many connections at once, counted once (null: none).
    explicit output_budget(std::size_t limit, std::function<std::size_t()> shared = {})
        : limit_(limit), shared_(std::move(shared)) {}

    /// @brief A new connection's account; `drop` must only post (it runs under the budget's lock).
    [[nodiscard]] std::shared_ptr<account> open(std::function<void()> drop) {
        auto a = std::make_shared<account>();
        a->drop = std::move(drop);
        std::lock_guard lock(mutex_);
        accounts_.push_back(a);
        return a;
    }

    /// @brief The connection closed: its bytes leave the total.
    void close(const std::shared_ptr<account>& a) {
        std::lock_guard lock(mutex_);
        total_.fetch_sub(a->unsent.exchange(0, std::memory_order_relaxed), std::memory_order_relaxed);
        a->backlogs.store(0, std::memory_order_relaxed);
        std::erase(accounts_, a);
    }

    /// @brief The connection holds `bytes` of its own unsent now, and `backlogs` bytes of watch
    /// backlogs (counted in the total through `shared`); `moved`: a write has just completed.
    /// Past the bound, drops the slowest readers (maybe this one). Takes the lock only then.
    void update(account& a, std::size_t bytes, std::size_t backlogs, bool moved) {
        const auto old = a.unsent.exchange(bytes, std::memory_order_relaxed);
        const auto old_backlogs = a.backlogs.exchange(backlogs, std::memory_order_relaxed);
        const auto held = old + old_backlogs;
        if (moved || (held == 0 && bytes + backlogs > 0))
            a.moved.store(clock::now().time_since_epoch().count(), std::memory_order_relaxed);
        if (bytes <= old) {
            total_.fetch_sub(old - bytes, std::memory_order_relaxed);
            if (backlogs <= old_backlogs) return;  // the shared bytes may have grown: asked below
        } else {
            total_.fetch_add(bytes - old, std::memory_order_relaxed);
        }
        if (total() <= limit_) return;
        std::lock_guard lock(mutex_);
        enforce();
    }

    /// @brief Bytes unsent over all connections, shared bytes once.
    [[nodiscard]] std::size_t total() const noexcept {
        return total_.load(std::memory_order_relaxed) + (shared_ ? shared_() : 0);
    }
    [[nodiscard]] std::size_t limit() const noexcept { return limit_; }
    /// @brief Connections dropped to keep the bound.
    [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

  private:
    void enforce() {
        // What connections already asked to close will free does not count: they are going.
        const auto now = clock::now().time_since_epoch().count();
        std::size_t held = total();
        std::vector<std::pair<double, account*>> slow;
        for (const auto& a : accounts_) {
            const auto unsent =
                a->unsent.load(std::memory_order_relaxed) + a->backlogs.load(std::memory_order_relaxed);
            if (a->dropping) {
                held -= std::min(held, unsent);
            } else if (unsent > 0) {
                const auto since = clock::duration(now - a->moved.load(std::memory_order_relaxed));
                const double still = std::chrono::duration<double>(since).count();
                slow.emplace_back(static_cast<double>(unsent) * (std::max(still, 0.0) + 0.1), a.get());
            }
        }
        if (held <= limit_) return;
        // Down to 7/8 of the bound, not just under it: otherwise every next write past it would
        // scan all connections again to drop one more.
        const std::size_t target = limit_ - limit_ / 8;
        std::sort(slow.begin(), slow.end(), [](const auto& x, const auto& y) { return x.first > y.first; });
        for (const auto& [score, a] : slow) {
            if (held <= target) break;
            a->dropping = true;
            held -= std::min(held, a->unsent.load(std::memory_order_relaxed) +
                                       a->backlogs.load(std::memory_order_relaxed));
            dropped_.fetch_add(1, std::memory_order_relaxed);
            a->drop();
        }
    }

    const std::size_t limit_;
    const std::function<std::size_t()> shared_;
    std::atomic<std::size_t> total_{0};  // the accounts' own bytes
    std::atomic<std::uint64_t> dropped_{0};
    std::mutex mutex_;
    std::vector<std::shared_ptr<account>> accounts_;
};

}  // namespace ecsd::net
