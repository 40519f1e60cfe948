#include "transport/connection_manager.hpp"

#include <vector>

#include "transport/connection.hpp"

namespace ecsd::net {

void connection_manager::start(const std::shared_ptr<connection>& c) {
    {
        std::lock_guard lock(mutex_);
        connections_.insert(c);
    }
    c->start();
}

void connection_manager::remove(const std::shared_ptr<connection>& c) {
    std::lock_guard lock(mutex_);
    connections_.erase(c);
}

void connection_manager::shutdown_all() {
    std::vector<std::shared_ptr<connection>> all;
    {
        std::lock_guard lock(mutex_);
        all.assign(connections_.begin(), connections_.end());
    }
    for (auto& c : all) c->shutdown();
}

bool connection_manager::evict_stalled(std::int64_t stalled_before_ns) {
    std::shared_ptr<connection> victim;
    {
        std::lock_guard lock(mutex_);
        std::int64_t oldest = stalled_before_ns + 1;
        for (const auto& c : connections_) {
            const auto since = c->stalled_since();
            if (since > 0 && since < oldest) {
                oldest = since;
                victim = c;
            }
        }
    }
    if (!victim) return false;
    victim->evict();
    return true;
}

std::size_t connection_manager::size() const {
    std::lock_guard lock(mutex_);
    return connections_.size();
}

}  // namespace ecsd::net
