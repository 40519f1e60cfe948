#include "hosted_world.hpp"

#include "world/world.hpp"

namespace ecsd::net {

hosted_world::hosted_world(asio::io_context& io, std::string name, std::shared_ptr<world::World> world)
    : name_(std::move(name)), strand_(asio::make_strand(io)), timer_(strand_), world_(std::move(world)) {}

void hosted_world::start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
        if (!self->world_ || self->stopped_) return;
        const auto now = std::chrono::steady_clock::now();
        self->world_->start_clock(now);
        self->arm(now);
    });
}

void hosted_world::stop() {
    asio::dispatch(strand_, [self = shared_from_this()] {
        self->stopped_ = true;
        self->timer_.cancel();
    });
}

void hosted_world::reschedule() {
    if (!world_ || stopped_) return;
    arm(std::chrono::steady_clock::now());
}

void hosted_world::arm(std::chrono::steady_clock::time_point now) {
    // A paused world needs no wake-ups; world.resume calls reschedule().
    if (world_->paused()) {
        timer_.cancel();
        return;
    }
    // advance() runs the ticks due at `now` and names the next deadline (absolute, so no drift).
    timer_.expires_at(world_->advance(now));
    timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) { self->on_timer(ec); });
}

void hosted_world::on_timer(const asio::error_code& ec) {
    // operation_aborted: stopped, or re-armed by reschedule() which already waits again.
    if (ec || stopped_) return;
    arm(std::chrono::steady_clock::now());
}

}  // namespace ecsd::net
