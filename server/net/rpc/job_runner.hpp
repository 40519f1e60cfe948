#pragma once
// Runs one world job on its world's strand, a slice at a time for in_slices methods.

#include <chrono>
#include <cstdint>
#include <optional>

#include "rpc/dispatcher.hpp"

namespace ecsd::net {

/// @brief Runs one world job on its strand, a slice at a time for in_slices methods (world.step):
/// call next() on the world's strand until it returns the result, posting again in between so
/// ticks and other requests run. Notes every change to the world's watchers.
class job_runner {
  public:
    /// @brief How long one slice aims to take.
    static constexpr double slice_seconds = 0.004;
    using clock = std::chrono::steady_clock;
    /// @brief The result, or nullopt when slices remain. `now` is when the job (or slice) starts,
    /// and on return when it ended: one clock read a job, for its own time and the batch's slice.
    std::optional<job_result> next(dispatcher& d, world_job& job, clock::time_point& now);

  private:
    std::uint64_t ticks_left_ = 0;
    std::uint64_t ticks_asked_ = 0;
    std::uint64_t slice_ticks_ = 0;
    std::uint64_t spent_ns_ = 0;  // handler time of every slice so far
};

}  // namespace ecsd::net
