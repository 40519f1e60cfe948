#include "rpc/auth_limiter.hpp"

#include <algorithm>

namespace ecsd::net {

std::optional<double> auth_limiter::locked(const std::string& address, clock::time_point now) {
    std::lock_guard lock(mutex_);
    auto until = server_.until;
    if (const auto it = by_address_.find(address); it != by_address_.end())
        until = std::max(until, it->second.until);
    if (now >= until) return std::nullopt;
    return std::chrono::duration<double>(until - now).count();
}

double auth_limiter::entry::fail(clock::time_point now, int free) {
    // A quiet hour forgives past lockouts.
    if (now - last > std::chrono::hours(1)) *this = entry{};
    last = now;
    if (++failures < free) return 0;
    failures = 0;
    const double seconds = std::min(300.0, static_cast<double>(1U << std::min(lockouts, 9)));
    ++lockouts;
    until = now + std::chrono::duration_cast<clock::duration>(std::chrono::duration<double>(seconds));
    return seconds;
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
    const double mine = by_address_[address].fail(now, free_failures);
    return std::max(mine, server_.fail(now, server_free_failures));
}

void auth_limiter::succeeded(const std::string& address) {
    std::lock_guard lock(mutex_);
    by_address_.erase(address);
}

std::optional<double> action_limiter::take(const std::string& identity, clock::time_point now) {
    if (rate_ <= 0) return std::nullopt;
    const double burst = std::max(rate_, 1.0);
    const std::lock_guard lock(mutex_);
    if (by_identity_.size() >= max_entries && !by_identity_.contains(identity)) by_identity_.clear();
    auto [it, fresh] = by_identity_.try_emplace(identity);
    auto& b = it->second;
    if (fresh) {
        b.tokens = burst;
    } else {
        b.tokens = std::min(burst, b.tokens + rate_ * std::chrono::duration<double>(now - b.last).count());
    }
    b.last = now;
    if (b.tokens >= 1.0) {
        b.tokens -= 1.0;
        return std::nullopt;
    }
    return (1.0 - b.tokens) / rate_;
}

}  // namespace ecsd::net
