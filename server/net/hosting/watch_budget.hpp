#pragma once
// The server-wide bound on watch views (distinct query, fields and pace: each costs one diff per
// tick, however many subscribe to it). Every connection's watch_sink holds the same budget; a
// world's watch_hub claims a view here when a key first appears in it and releases it when its
// last subscriber goes, so the count covers all worlds, whichever strands they run on.
#include <atomic>
#include <cstddef>

namespace ecsd::net {

struct watch_budget {
    std::size_t max_views_per_world = 256;  ///< --max-watch-views
    std::size_t max_views_total = 1024;     ///< --max-watch-views-total
    std::atomic<std::size_t> views{0};      ///< views open in all worlds

    /// @brief Takes one view; false (nothing taken) when the server holds max_views_total.
    bool claim() noexcept {
        auto n = views.load(std::memory_order_relaxed);
        do {
            if (n >= max_views_total) return false;
        } while (!views.compare_exchange_weak(n, n + 1, std::memory_order_relaxed));
        return true;
    }
    void release(std::size_t n = 1) noexcept { views.fetch_sub(n, std::memory_order_relaxed); }
};

}  // namespace ecsd::net
