#include "hosting/hosted_world.hpp"

#include <spdlog/spdlog.h>

#include "hosting/world_log.hpp"
#include "memory/blocks.hpp"
#include "memory/forked_save.hpp"
#include "world/world.hpp"

namespace ecsd::net {

hosted_world::hosted_world(asio::io_context& io, std::string name, std::shared_ptr<world::world> world)
    : name_(std::move(name)),
      strand_(asio::make_strand(io)),
      timer_(strand_),
      world_(std::move(world)),
      autosave_timer_(strand_),
      save_poll_timer_(strand_) {}

hosted_world::~hosted_world() = default;

void hosted_world::set_log(std::unique_ptr<world_log> log, double autosave_seconds) {
    log_ = std::move(log);
    autosave_seconds_ = autosave_seconds;
}

void hosted_world::hook_ticks() {
    // defer, not post: from a network thread it queues the wakes on that same thread, to run once
    // the tick's handler returns, instead of waking the other network thread in the tick's middle.
    watches_.set_handoff(
        [ex = strand_.get_inner_executor()](std::function<void()> f) { asio::defer(ex, std::move(f)); });
    world_->after_tick = [this](world::world& w) {
        watches_.after_tick(w);
        note_figures(w);
    };
    note_figures(*world_);
}

void hosted_world::note_figures(const world::world& w) noexcept {
    figures_.entities.store(w.registry().size(), std::memory_order_relaxed);
    figures_.memory_bytes.store(w.registry().memory_bytes(), std::memory_order_relaxed);
    figures_.tick.store(w.tick(), std::memory_order_relaxed);
}

void hosted_world::drop_log(bool remove_files) {
    if (log_ && remove_files) log_->remove_files();
    log_.reset();
    spares_.reset();
    autosave_timer_.cancel();
    save_poll_timer_.cancel();
}

void hosted_world::replace_world(std::shared_ptr<world::world> world) {
    world_ = std::move(world);
    ++state_version_;
    hook_ticks();
    watches_.world_replaced(*world_);
    world_->start_clock(std::chrono::steady_clock::now());
    reschedule();
}

void hosted_world::arm_autosave() {
    if (!log_ || autosave_seconds_ <= 0 || stopped_) return;
    autosave_timer_.expires_after(std::chrono::duration_cast<std::chrono::steady_clock::duration>(
        std::chrono::duration<double>(autosave_seconds_)));
    autosave_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (ec || self->stopped_ || !self->log_) return;
        self->arm_autosave();
        // A save still being written when the next is due: that one is skipped, not queued.
        if (self->log_->background_save_running()) return;
        // First, on a network thread, the memory the child will copy the world's arrays into
        // (memory::spare_blocks: fresh memory can be slow to touch, and the world's thread must
        // not wait for it).
        asio::post(self->strand_.get_inner_executor(), [self] {
            auto spares = std::make_unique<memory::spare_blocks>(memory::spare_blocks::prepare());
            asio::post(self->strand_, [self, spares = std::move(spares)]() mutable {
                if (self->stopped_ || !self->log_) return;
                self->spares_ = std::move(spares);
                // A ticking world forks right after its next tick, which leaves the child a whole
                // period to take its copy of the world's arrays before the tick after that writes
                // them (see take_private_copies in memory/forked_save.cpp); a world that does
                // not tick forks now.
                if (self->world_->paused() || self->sealed_) {
                    self->start_autosave();
                } else {
                    self->autosave_due_ = true;
                }
            });
        });
    });
}

void hosted_world::start_autosave() {
    autosave_due_ = false;
    if (!log_ || stopped_) return;
    // A save still being written when the next is due: that one is skipped, not queued.
    if (log_->background_save_running()) return;
    auto spares = spares_ ? std::move(*spares_) : memory::spare_blocks{};
    spares_.reset();
    try {
        if (log_->start_background_save(*world_, std::move(spares))) poll_save();
    } catch (const std::exception& e) {
        spdlog::error("world '{}': autosave failed: {}", name_, e.what());
    }
}

void hosted_world::poll_save() {
    save_poll_timer_.expires_after(std::chrono::milliseconds(10));
    save_poll_timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) {
        if (ec || !self->log_) return;
        if (!self->log_->finish_background_save()) {
            self->poll_save();
            return;
        }
        // Off the strand (any of the network threads): huge pages back where the child, late, let
        // this world's next tick split them (see memory::restore_huge_pages).
        asio::post(self->strand_.get_inner_executor(), [] { (void)memory::restore_huge_pages(); });
    });
}

void hosted_world::start() {
    asio::dispatch(strand_, [self = shared_from_this()] {
        if (!self->world_ || self->stopped_) return;
        const auto now = std::chrono::steady_clock::now();
        self->hook_ticks();
        self->world_->start_clock(now);
        self->arm(now);
        self->arm_autosave();
    });
}

void hosted_world::stop(std::string_view reason, std::string moved_to, std::function<void()> then) {
    asio::dispatch(strand_, [self = shared_from_this(), why = std::string(reason), to = std::move(moved_to),
                             then = std::move(then)] {
        if (self->world_ && !self->stopped_) self->watches_.end_all(self->world_->tick(), why, to);
        self->stopped_ = true;
        self->timer_.cancel();
        self->autosave_timer_.cancel();
        if (then) then();
    });
}

void hosted_world::probe() {
    asio::post(strand_, [self = shared_from_this()] {
        if (!self->world_ || self->world_->paused() || self->sealed_)
            self->stamp_beat(std::chrono::steady_clock::now());
    });
}

void hosted_world::seal() {
    sealed_ = true;
    timer_.cancel();
    stamp_beat(std::chrono::steady_clock::now());
}

void hosted_world::unseal() {
    if (!sealed_) return;
    sealed_ = false;
    if (!world_ || stopped_) return;
    // The ticks it missed while sealed are not run: it goes on from now at its rate.
    world_->start_clock(std::chrono::steady_clock::now());
    reschedule();
}

void hosted_world::publish_if_paused() {
    if (world_ && world_->paused() && !watches_.empty()) watches_.publish_now(*world_);
}

void hosted_world::reschedule() {
    if (!world_ || stopped_) return;
    arm(std::chrono::steady_clock::now());
}

void hosted_world::arm(std::chrono::steady_clock::time_point now) {
    stamp_beat(now);
    // A paused or sealed world needs no wake-ups; world.resume and unseal() call reschedule().
    if (world_->paused() || sealed_) {
        timer_.cancel();
        return;
    }
    // advance() runs the ticks due at `now` and names the next deadline (absolute, so no drift).
    const auto before = world_->tick();
    timer_.expires_at(world_->advance(now));
    if (log_ && world_->tick() != before) {
        try {
            log_->record_tick(world_->tick());  // replay runs the same ticks to reach the same state
        } catch (const std::exception&) {
            // Logged once per episode by world_log; nothing was written and the sequence number did
            // not advance. A missed mark loses no request: each record carries its own tick.
        }
    }
    if (autosave_due_ && world_->tick() != before) start_autosave();
    timer_.async_wait([self = shared_from_this()](const asio::error_code& ec) { self->on_timer(ec); });
}

void hosted_world::on_timer(const asio::error_code& ec) {
    // operation_aborted: stopped, or re-armed by reschedule() which already waits again.
    if (ec || stopped_) return;
    arm(std::chrono::steady_clock::now());
}

}  // namespace ecsd::net
