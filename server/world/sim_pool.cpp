#include "world/sim_pool.hpp"

#include <algorithm>

namespace ecsd::world {

sim_pool::sim_pool(unsigned threads) {
    const unsigned n = std::max(1U, threads);
    workers_.reserve(n - 1);
    for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
}

sim_pool::~sim_pool() {
    {
        const std::lock_guard lock(m_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

unsigned sim_pool::pieces(std::uint32_t n, std::uint32_t min_piece) const noexcept {
    const std::uint32_t by_size = n / std::max<std::uint32_t>(1, min_piece);
    return static_cast<unsigned>(std::clamp<std::uint32_t>(by_size, 1, threads()));
}

void sim_pool::run(std::uint32_t n, unsigned parts, void* context, range_fn fn) {
    {
        const std::lock_guard lock(m_);
        n_ = n;
        parts_ = parts;
        pending_ = parts - 1;
        context_ = context;
        fn_ = fn;
        ++generation_;
    }
    wake_.notify_all();
    fn(context, 0, 0, bound(n, parts, 1));
    std::unique_lock lock(m_);
    done_.wait(lock, [this] { return pending_ == 0; });
    fn_ = nullptr;
    context_ = nullptr;
}

void sim_pool::work(unsigned index) {
    std::uint64_t seen = 0;
    for (;;) {
        std::unique_lock lock(m_);
        wake_.wait(lock, [&] { return stop_ || generation_ != seen; });
        if (stop_) return;
        seen = generation_;
        if (index >= parts_) continue;  // a job cut into fewer pieces than there are threads
        const std::uint32_t begin = bound(n_, parts_, index), end = bound(n_, parts_, index + 1);
        void* const context = context_;
        const range_fn fn = fn_;
        lock.unlock();
        fn(context, index, begin, end);
        lock.lock();
        if (--pending_ == 0) done_.notify_one();
    }
}

}  // namespace ecsd::world
