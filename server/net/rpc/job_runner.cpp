#include "rpc/job_runner.hpp"

#include <algorithm>
#include <chrono>

#include "hosting/hosted_world.hpp"

namespace ecsd::net {

std::optional<job_result> job_runner::next(dispatcher& d, world_job& job, clock::time_point& now) {
    const auto elapsed_ns = [&now] {
        const auto t0 = now;
        now = clock::now();
        return static_cast<std::uint64_t>((now - t0) / std::chrono::nanoseconds(1));
    };
    if (!has(job.method->flags, method_flags::in_slices)) {
        auto r = d.run(job);
        d.note_done(*job.method, job.params, elapsed_ns(), r.is_error, job.connection, job.typed_params());
        if (!r.is_error && has(job.method->flags, method_flags::mutating)) job.world->note_mutation();
        return r;
    }
    if (ticks_left_ == 0) {
        ticks_left_ = job.params.value("ticks", std::uint64_t{1});
        ticks_asked_ = ticks_left_;
        slice_ticks_ = 1;
        spent_ns_ = 0;
    }
    const std::uint64_t n = std::min(ticks_left_, slice_ticks_);
    job.params["ticks"] = n;  // each slice is journaled as the step it ran
    auto r = d.run(job);
    const auto took_ns = elapsed_ns();
    spent_ns_ += took_ns;
    const double took = static_cast<double>(took_ns) / 1e9;
    ticks_left_ = r.is_error ? 0 : ticks_left_ - n;
    job.world->note_mutation();
    if (ticks_left_ == 0) {
        job.params["ticks"] = ticks_asked_;  // counted once, as the client asked for it
        d.note_done(*job.method, job.params, spent_ns_, r.is_error, job.connection);
        return r;
    }
    // Aim the next slice at the slice time; grow at most 4x a time.
    const double fit =
        took > 0 ? static_cast<double>(n) * slice_seconds / took : 4.0 * static_cast<double>(n);
    slice_ticks_ = std::clamp<std::uint64_t>(static_cast<std::uint64_t>(fit), 1, 4 * n);
    return std::nullopt;
}

}  // namespace ecsd::net
