#pragma once
// Fixed-rate scheduling with absolute deadlines: deadline k is start + k*period,
// so rounding never accumulates and the rate does not drift over hours. When the
// world falls behind it catches up at most `max_catch_up` ticks per wake-up; time
// beyond that is skipped and counted, never silently lost.

#include <chrono>
#include <cstdint>

namespace ecsd::world {

class tick_clock {
  public:
    using clock = std::chrono::steady_clock;
    static constexpr int max_catch_up = 4;

    explicit tick_clock(double hz) { set_rate(hz); }

    void set_rate(double hz) {
        hz_ = hz;
        period_ = std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(1.0 / hz));
    }
    [[nodiscard]] clock::duration period() const noexcept { return period_; }

    /// @brief Restarts the schedule: the first tick is due one period after `now`.
    void restart(clock::time_point now) noexcept {
        origin_ = now;
        index_ = 1;
    }
    /// @brief origin + index/hz computed afresh (not by adding a rounded period), so no error accumulates.
    [[nodiscard]] clock::time_point next_deadline() const noexcept {
        return origin_ + std::chrono::duration_cast<clock::duration>(
                             std::chrono::duration<double>(static_cast<double>(index_) / hz_));
    }

    /// @brief How many ticks to run at `now` (at most max_catch_up); skips and counts the rest.
    [[nodiscard]] int due(clock::time_point now) noexcept {
        if (now < next_deadline()) return 0;
        const auto behind =
            static_cast<std::uint64_t>(std::chrono::duration<double>(now - next_deadline()).count() * hz_) +
            1;
        if (behind > static_cast<std::uint64_t>(max_catch_up)) {
            const std::uint64_t skip = behind - max_catch_up;
            skipped_ += skip;
            index_ += skip;
            return max_catch_up;
        }
        return static_cast<int>(behind);
    }
    /// @brief Marks one due tick as done.
    void advance() noexcept { ++index_; }

    [[nodiscard]] std::uint64_t skipped_ticks() const noexcept { return skipped_; }
    void set_skipped(std::uint64_t n) noexcept { skipped_ = n; }

  private:
    double hz_ = 60;
    clock::duration period_{};
    clock::time_point origin_{};
    std::uint64_t index_ = 1;
    std::uint64_t skipped_ = 0;
};

}  // namespace ecsd::world
