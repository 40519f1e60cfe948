#include "world/sim_workers.hpp"

#include <algorithm>
#include <chrono>

namespace ecsd::world {

sim_workers::sim_workers(unsigned threads) {
    const unsigned n = std::max(1U, threads);
    workers_.reserve(n - 1);
    for (unsigned i = 1; i < n; ++i) workers_.emplace_back([this, i] { work(i); });
}

sim_workers::~sim_workers() {
    {
        const std::lock_guard lock(m_);
        stop_ = true;
    }
    wake_.notify_all();
    for (auto& t : workers_) t.join();
}

unsigned sim_workers::pieces(std::uint32_t n, std::uint32_t min_piece) const noexcept {
    const std::uint32_t by_size = n / std::max<std::uint32_t>(1, min_piece);
    return static_cast<unsigned>(std::clamp<std::uint32_t>(by_size, 1, threads()));
}

namespace {
// Waking a thread that sleeps on a condition variable is slow on a VM (the host wakes a halted
// vCPU), and a split tick calls parallel_for several times in a row: the caller waits for the
// other pieces, and a worker for the next job, spinning this long before they sleep. Pieces are
// large (world::min_piece), so the spin is a small share of a job, and being bounded it costs
// nothing once the tick is over.
constexpr auto spin_for = std::chrono::microseconds(100);

template <typename Done>
bool spin_until(Done&& done) {
    const auto until = std::chrono::steady_clock::now() + spin_for;
    for (unsigned k = 0;; ++k) {
        if (done()) return true;
        if ((k & 63U) == 63U && std::chrono::steady_clock::now() >= until) return false;
#if defined(__x86_64__) || defined(__i386__)
        __builtin_ia32_pause();
#endif
    }
}
}  // namespace

void sim_workers::run(std::uint32_t n, unsigned parts, void* context, range_fn fn) {
    {
        const std::lock_guard lock(m_);
        n_ = n;
        parts_ = parts;
        pending_.store(parts - 1, std::memory_order_relaxed);
        context_ = context;
        fn_ = fn;
        generation_.fetch_add(1, std::memory_order_release);
    }
    wake_.notify_all();
    fn(context, 0, 0, bound(n, parts, 1));
    if (!spin_until([this] { return pending_.load(std::memory_order_acquire) == 0; })) {
        std::unique_lock lock(m_);
        done_.wait(lock, [this] { return pending_.load(std::memory_order_acquire) == 0; });
    }
    const std::lock_guard lock(m_);
    fn_ = nullptr;
    context_ = nullptr;
}

void sim_workers::work(unsigned index) {
    std::uint64_t seen = 0;
    for (;;) {
        // A job that follows the last one closely is picked up without sleeping.
        (void)spin_until([&] { return generation_.load(std::memory_order_acquire) != seen; });
        std::unique_lock lock(m_);
        wake_.wait(lock, [&] { return stop_ || generation_.load(std::memory_order_relaxed) != seen; });
        if (stop_) return;
        seen = generation_.load(std::memory_order_relaxed);
        if (index >= parts_) continue;  // a job cut into fewer pieces than there are threads
        const std::uint32_t begin = bound(n_, parts_, index), end = bound(n_, parts_, index + 1);
        void* const context = context_;
        const range_fn fn = fn_;
        lock.unlock();
        fn(context, index, begin, end);
        if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
            // Under the lock, so that a caller about to sleep on done_ cannot miss it.
            const std::lock_guard done_lock(m_);
            done_.notify_one();
        }
    }
}

}  // namespace ecsd::world
