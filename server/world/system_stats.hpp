#pragma once
// Timing figures of one system: last run, and rolling p50 / p99 over the
// last 256 runs.

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>

namespace ecsd::world {

class system_stats {
  public:
    void record(double ms) noexcept {
        last_ms_ = ms;
        samples_[runs_ % samples_.size()] = ms;
        ++runs_;
    }
    [[nodiscard]] double last_ms() const noexcept { return last_ms_; }
    [[nodiscard]] std::uint64_t runs() const noexcept { return runs_; }
    /// @brief The q-quantile (0..1) of the retained samples, 0 before any run.
    [[nodiscard]] double quantile(double q) const {
        const std::size_t n = std::min<std::uint64_t>(runs_, samples_.size());
        if (n == 0) return 0;
        std::array<double, 256> copy{};
        std::copy_n(samples_.begin(), n, copy.begin());
        const auto k = static_cast<std::size_t>(std::lround(q * static_cast<double>(n - 1)));
        std::nth_element(copy.begin(), copy.begin() + static_cast<std::ptrdiff_t>(k),
                         copy.begin() + static_cast<std::ptrdiff_t>(n));
        return copy[k];
    }

  private:
    std::array<double, 256> samples_{};
    double last_ms_ = 0;
    std::uint64_t runs_ = 0;
};

}  // namespace ecsd::world
