#include "hosting/world_directory.hpp"

#include <atomic>
#include <stdexcept>

#include "ecsd/protocol/errors.hpp"
#include "hosting/hosted_world.hpp"

namespace ecsd::net {

world_claim& world_claim::operator=(world_claim&& other) noexcept {
    if (this != &other) {
        release();
        dir_ = other.dir_;
        name_ = std::move(other.name_);
        other.dir_ = nullptr;
    }
    return *this;
}

void world_claim::release() noexcept {
    if (dir_ == nullptr) return;
    {
        std::lock_guard lock(dir_->mutex_);
        dir_->claimed_.erase(name_);
    }
    dir_ = nullptr;
}

void world_directory::check_room_locked(const std::string& name) const {
    if (worlds_.contains(name) || retiring_.contains(name) || claimed_.contains(name)) {
        throw protocol::rpc_error(protocol::reason::world_exists, "world '" + name + "' exists",
                                  {{"world", name}});
    }
    if (worlds_.size() + claimed_.size() >= max_worlds_) {
        throw protocol::rpc_error(protocol::reason::limit_reached,
                                  "at most " + std::to_string(max_worlds_) + " worlds",
                                  {{"limit", max_worlds_}});
    }
}

void world_directory::check_room(const std::string& name) const {
    std::lock_guard lock(mutex_);
    check_room_locked(name);
}

world_claim world_directory::claim(const std::string& name) {
    std::lock_guard lock(mutex_);
    check_room_locked(name);
    claimed_.insert(name);
    return world_claim(this, name);
}

std::shared_ptr<hosted_world> world_directory::add(std::string name, std::shared_ptr<world::world> world) {
    auto hosted = std::make_shared<hosted_world>(io_, std::move(name), std::move(world));
    add_hosted(hosted);
    return hosted;
}

void world_directory::add_hosted(std::shared_ptr<hosted_world> hosted) {
    auto name_claim = claim(hosted->name());
    add_hosted(std::move(hosted), std::move(name_claim));
}

void world_directory::add_hosted(std::shared_ptr<hosted_world> hosted, world_claim claim) {
    if (claim.dir_ != this || claim.name_ != hosted->name())
        throw std::logic_error("world_directory::add_hosted: the claim is not for world '" + hosted->name() +
                               "'");
    // Before any other thread can find it. (Unit tests host names without a world.)
    if (const auto w = hosted->world_ptr()) w->set_default_threads(sim_threads_);
    {
        // The claim turns into the world in one step: the name is never free in between.
        std::lock_guard lock(mutex_);
        claimed_.erase(hosted->name());
        claim.dir_ = nullptr;
        worlds_.emplace(hosted->name(), hosted);
    }
    hosted->start();
}

std::shared_ptr<hosted_world> world_directory::find(std::string_view name) const {
    std::lock_guard lock(mutex_);
    auto it = worlds_.find(name);
    return it == worlds_.end() ? nullptr : it->second;
}

std::shared_ptr<hosted_world> world_directory::remove(std::string_view name, std::string moved_to) {
    std::shared_ptr<hosted_world> gone;
    {
        std::lock_guard lock(mutex_);
        auto it = worlds_.find(name);
        if (it == worlds_.end()) return nullptr;
        gone = std::move(it->second);
        worlds_.erase(it);
        retiring_.insert(gone->name());
    }
    if (moved_to.empty())
        gone->stop();
    else
        gone->stop("world_moved", std::move(moved_to));
    // Its files go on its strand, after any request already queued there; until then the
    // name cannot be reused, so a new world never shares a journal with the old one.
    asio::post(gone->strand(), [this, gone] {
        gone->drop_log(/*remove_files=*/true);
        std::lock_guard lock(mutex_);
        retiring_.erase(gone->name());
    });
    return gone;
}

std::vector<std::string> world_directory::names() const {
    std::lock_guard lock(mutex_);
    std::vector<std::string> out;
    out.reserve(worlds_.size());
    for (const auto& [name, w] : worlds_) out.push_back(name);
    return out;
}

std::vector<std::shared_ptr<hosted_world>> world_directory::all() const {
    std::lock_guard lock(mutex_);
    std::vector<std::shared_ptr<hosted_world>> out;
    out.reserve(worlds_.size());
    for (const auto& [name, w] : worlds_) out.push_back(w);
    return out;
}

std::size_t world_directory::size() const {
    std::lock_guard lock(mutex_);
    return worlds_.size();
}

void world_directory::stop_all(std::function<void()> then) {
    auto worlds = all();
    if (worlds.empty()) {
        then();
        return;
    }
    struct countdown {
        std::atomic<std::size_t> left{0};
        std::function<void()> then;
    };
    auto c = std::make_shared<countdown>();
    c->left.store(worlds.size(), std::memory_order_relaxed);
    c->then = std::move(then);
    for (auto& w : worlds)
        w->stop("server_shutdown", {}, [c] {
            if (c->left.fetch_sub(1, std::memory_order_acq_rel) == 1) c->then();
        });
}

}  // namespace ecsd::net
