#pragma once
// The threads a world's tick may use (world_settings::threads). A fixed team: the thread that
// runs the tick plus threads - 1 workers that sleep between jobs. parallel_for cuts [0, n) into
// one contiguous piece per thread (the caller takes the first) and returns when all are done, so
// a system that writes only its own element's data, or gathers into one buffer per piece and joins
// them in piece order, computes exactly what one thread would: the tick stays deterministic
// whatever the thread count. The ECS core knows nothing of this; the world owns the scheduling.

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>
#include <thread>
#include <type_traits>
#include <vector>

namespace ecsd::world {

class sim_workers {
  public:
    /// @brief A range of the job: run(context, piece, begin, end). Must not throw.
    using range_fn = void (*)(void* context, unsigned piece, std::uint32_t begin, std::uint32_t end) noexcept;

    explicit sim_workers(unsigned threads);
    ~sim_workers();
    sim_workers(const sim_workers&) = delete;
    sim_workers& operator=(const sim_workers&) = delete;

    /// @brief Threads that run a job, the caller included (at least 1).
    [[nodiscard]] unsigned threads() const noexcept { return static_cast<unsigned>(workers_.size()) + 1; }
    /// @brief How many pieces parallel_for cuts n elements into, given the smallest piece worth a
    /// thread's wake-up: between 1 and threads().
    [[nodiscard]] unsigned pieces(std::uint32_t n, std::uint32_t min_piece) const noexcept;

    /// @brief Calls f(piece, begin, end) for pieces() contiguous ranges covering [0, n), side by
    /// side, and returns when every one has returned. Piece k covers the k-th range in order.
    template <typename F>
    void parallel_for(std::uint32_t n, std::uint32_t min_piece, F&& f) {
        const unsigned parts = pieces(n, min_piece);
        if (parts <= 1) {
            f(0U, std::uint32_t{0}, n);
            return;
        }
        using fn_type = std::remove_reference_t<F>;
        run(n, parts, const_cast<void*>(static_cast<const void*>(&f)),
            [](void* ctx, unsigned piece, std::uint32_t b, std::uint32_t e) noexcept {
                (*static_cast<fn_type*>(ctx))(piece, b, e);
            });
    }

  private:
    void run(std::uint32_t n, unsigned parts, void* context, range_fn fn);
    void work(unsigned index);
    [[nodiscard]] static std::uint32_t bound(std::uint32_t n, unsigned parts, unsigned k) noexcept {
        return static_cast<std::uint32_t>(static_cast<std::uint64_t>(n) * k / parts);
    }

    std::vector<std::thread> workers_;
    std::mutex m_;
    std::condition_variable wake_, done_;
    // The job being run, guarded by m_. generation_ and pending_ are also read without it, by a
    // thread that spins a moment before it sleeps (sim_workers.cpp says why).
    std::atomic<std::uint64_t> generation_{0};
    std::uint32_t n_ = 0;
    unsigned parts_ = 0;
    std::atomic<unsigned> pending_{0};
    void* context_ = nullptr;
    range_fn fn_ = nullptr;
    bool stop_ = false;
};

}  // namespace ecsd::world
