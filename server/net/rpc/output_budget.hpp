#pragma once
// The server-wide bound on output (--max-output-total): bytes queued for clients and not yet
// sent, over every connection, TCP and HTTP alike. --max-output-bytes bounds one connection; this
// bounds them all together, so many clients that stop reading cannot take the machine's memory
// between them. Each connection keeps an account here and reports what it holds unsent whenever
// that changes; once the total passes the bound, the slowest readers are dropped until what the
// rest hold is back under 7/8 of it: the reader whose unsent bytes, times the time since its
// output last moved, is largest goes first. A client that reads keeps its output moving and is dropped only
// when nobody slower is left.
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
        std::atomic<std::size_t> unsent{0};
        std::atomic<clock::rep> moved{0};  // the last write progress, or when the output began to wait
        bool dropping = false;       // under the budget's lock: asked to close, its bytes go when it has
        std::function<void()> drop;  // posts the connection's close to its strand
    };

    explicit output_budget(std::size_t limit) : limit_(limit) {}

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
        std::erase(accounts_, a);
    }

    /// @brief The connection holds `bytes` unsent now; `moved`: a write has just completed.
    /// Past the bound, drops the slowest readers (maybe this one). Takes the lock only then.
    void update(account& a, std::size_t bytes, bool moved) {
        const auto old = a.unsent.exchange(bytes, std::memory_order_relaxed);
        if (moved || (old == 0 && bytes > 0))
            a.moved.store(clock::now().time_since_epoch().count(), std::memory_order_relaxed);
        if (bytes <= old) {
            total_.fetch_sub(old - bytes, std::memory_order_relaxed);
            return;
        }
        if (total_.fetch_add(bytes - old, std::memory_order_relaxed) + (bytes - old) <= limit_) return;
        std::lock_guard lock(mutex_);
        enforce();
    }

    /// @brief Bytes unsent over all connections.
    [[nodiscard]] std::size_t total() const noexcept { return total_.load(std::memory_order_relaxed); }
    [[nodiscard]] std::size_t limit() const noexcept { return limit_; }
    /// @brief Connections dropped to keep the bound.
    [[nodiscard]] std::uint64_t dropped() const noexcept { return dropped_.load(std::memory_order_relaxed); }

  private:
    void enforce() {
        // What connections already asked to close will free does not count: they are going.
        const auto now = clock::now().time_since_epoch().count();
        std::size_t held = total_.load(std::memory_order_relaxed);
        std::vector<std::pair<double, account*>> slow;
        for (const auto& a : accounts_) {
            const auto unsent = a->unsent.load(std::memory_order_relaxed);
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
            held -= std::min(held, a->unsent.load(std::memory_order_relaxed));
            dropped_.fetch_add(1, std::memory_order_relaxed);
            a->drop();
        }
    }

    const std::size_t limit_;
    std::atomic<std::size_t> total_{0};
    std::atomic<std::uint64_t> dropped_{0};
    std::mutex mutex_;
    std::vector<std::shared_ptr<account>> accounts_;
};

}  // namespace ecsd::net
