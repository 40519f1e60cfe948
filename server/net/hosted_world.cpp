#include "hosted_world.hpp"

// Placeholder until ecsd::world::World lands: a world with a strand and no tick.
namespace ecsd::net {

hosted_world::hosted_world(asio::io_context& io, std::string name, std::shared_ptr<world::World> world)
    : name_(std::move(name)), strand_(asio::make_strand(io)), timer_(strand_), world_(std::move(world)) {}

void hosted_world::start() {}

void hosted_world::stop() {
    asio::dispatch(strand_, [self = shared_from_this()] {
        self->stopped_ = true;
        self->timer_.cancel();
    });
}

void hosted_world::reschedule() {}
void hosted_world::arm() {}
void hosted_world::on_timer(const asio::error_code&) {}

}  // namespace ecsd::net
