#include "transport/auth_limiter.hpp"

#include <algorithm>

namespace ecsd::net {

std::optional<double> auth_limiter::locked(const std::string& address, clock::time_point now) {
    std::lock_guard lock(mutex_);
    const auto it = by_address_.find(address);
    if (it == by_address_.end() || now >= it->second.until) return std::nullopt;
    return std::chrono::duration<double>(it->second.until - now).count();
}

double auth_limiter::failed(const std::string& address, clock::time_point now) {
    std::lock_guard lock(mutex_);
    if (by_address_.size() >= max_entries && !by_address_.contains(address)) {
        // Forget addresses quiet for ten minutes; if that frees nothing, the oldest one.
        std::erase_if(by_address_,
                      [&](const auto& kv) { return now - kv.second.last > std::chrono::minutes(10); });
        if (by_address_.size() >= max_entries) {
            const auto oldest =
                std::min_element(by_address_.begin(), by_address_.end(),
                                 [](const auto& a, const auto& b) { return a.second.last < b.second.last; });
            by_address_.erase(oldest);
        }
    }
    auto& e = by_address_[address];
    // A quiet hour forgives past lockouts.
    if (now - e.last > std::chrono::hours(1)) e = entry{};
    e.last = now;
    if (++e.failures < free_failures) return 0;
    e.failures = 0;
    const double seconds = std::min(300.0, static_cast<double>(1U << std::min(e.lockouts, 9)));
    ++e.lockouts;
    e.until = now + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
    return seconds;
}

void auth_limiter::succeeded(const std::string& address) {
    std::lock_guard lock(mutex_);
    by_address_.erase(address);
}

}  // namespace ecsd::net
