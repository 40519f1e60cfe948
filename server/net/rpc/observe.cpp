#include "rpc/observe.hpp"

#include <algorithm>
#include <bit>
#include <chrono>
#include <cmath>

#include "ecsd/protocol/jsonrpc.hpp"
#include "hosting/watch.hpp"
#include "rpc/method_table.hpp"

namespace ecsd::net {

using nlohmann::json;

// --- request_stats --------------------------------------------------------------------------

request_stats::request_stats(std::size_t methods) {
    rows_.reserve(methods);
    for (std::size_t i = 0; i < methods; ++i) rows_.push_back(std::make_unique<row>());
}

std::size_t request_stats::bucket_of(std::uint64_t ns) noexcept {
    if (ns < 4) return static_cast<std::size_t>(ns);
    const auto p = static_cast<std::size_t>(std::bit_width(ns) - 1);  // 2..63
    return 4 * p + static_cast<std::size_t>((ns >> (p - 2)) & 3U);
}

void request_stats::record(std::size_t method, std::uint64_t ns, bool error) noexcept {
    if (method >= rows_.size()) return;
    auto& r = *rows_[method];
    r.calls.fetch_add(1, std::memory_order_relaxed);
    if (error) r.errors.fetch_add(1, std::memory_order_relaxed);
    r.total_ns.fetch_add(ns, std::memory_order_relaxed);
    r.buckets[bucket_of(ns)].fetch_add(1, std::memory_order_relaxed);
    auto seen = r.max_ns.load(std::memory_order_relaxed);
    while (ns > seen && !r.max_ns.compare_exchange_weak(seen, ns, std::memory_order_relaxed)) {
    }
}

double request_stats::quantile_us(const std::array<std::uint64_t, 256>& buckets, std::uint64_t count,
                                  double q) {
    if (count == 0) return 0;
    const auto rank = static_cast<std::uint64_t>(q * static_cast<double>(count - 1)) + 1;
    std::uint64_t seen = 0;
    for (std::size_t i = 0; i < buckets.size(); ++i) {
        seen += buckets[i];
        if (seen < rank) continue;
        if (i < 4) return static_cast<double>(i) / 1000.0;
        const std::size_t p = i / 4;
        const double lower = static_cast<double>((4 + i % 4) * (std::uint64_t{1} << (p - 2)));
        const double width = static_cast<double>(std::uint64_t{1} << (p - 2));
        return (lower + width / 2) / 1000.0;
    }
    return 0;
}

json request_stats::to_json(const method_table& table) const {
    json out = json::object();
    const auto& methods = table.methods();
    for (std::size_t i = 0; i < rows_.size() && i < methods.size(); ++i) {
        const auto& r = *rows_[i];
        const auto calls = r.calls.load(std::memory_order_relaxed);
        if (calls == 0) continue;
        std::array<std::uint64_t, 256> buckets{};
        std::uint64_t counted = 0;
        for (std::size_t b = 0; b < buckets.size(); ++b)
            counted += buckets[b] = r.buckets[b].load(std::memory_order_relaxed);
        const auto round = [](double v) { return static_cast<double>(std::llround(v * 1000)) / 1000; };
        out[methods[i].name] = {
            {"calls", calls},
            {"errors", r.errors.load(std::memory_order_relaxed)},
            {"total_ms", round(static_cast<double>(r.total_ns.load(std::memory_order_relaxed)) / 1e6)},
            {"p50_us", round(quantile_us(buckets, counted, 0.50))},
            {"p99_us", round(quantile_us(buckets, counted, 0.99))},
            {"max_us", round(static_cast<double>(r.max_ns.load(std::memory_order_relaxed)) / 1e3)}};
    }
    return out;
}

// --- slow_log -------------------------------------------------------------------------------

void slow_log::add(std::uint64_t ns, std::string_view method, const json& params, std::uint64_t connection) {
    std::string shown = params.dump(-1, ' ', false, json::error_handler_t::replace);
    if (shown.size() > 256) shown = shown.substr(0, 253) + "...";
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    std::lock_guard lock(mutex_);
    entries_.push_front(
        {next_id_++, now, static_cast<double>(ns) / 1e3, std::string(method), std::move(shown), connection});
    if (entries_.size() > max_len_) entries_.pop_back();
}

json slow_log::to_json(std::size_t count) const {
    std::lock_guard lock(mutex_);
    json list = json::array();
    for (std::size_t i = 0; i < entries_.size() && i < count; ++i) {
        const auto& e = entries_[i];
        list.push_back({{"id", e.id},
                        {"time", e.time},
                        {"duration_us", e.duration_us},
                        {"method", e.method},
                        {"params", e.params},
                        {"connection", e.connection}});
    }
    return {{"entries", std::move(list)},
            {"len", entries_.size()},
            {"threshold_us", threshold_ns_ / 1000},
            {"max_len", max_len_}};
}

void slow_log::reset() {
    std::lock_guard lock(mutex_);
    entries_.clear();
}

// --- monitor_hub ----------------------------------------------------------------------------

void monitor_hub::add(std::uint64_t connection, const std::shared_ptr<watch_sink>& sink) {
    std::lock_guard lock(mutex_);
    for (auto& [id, s] : sinks_) {
        if (id == connection) return;  // already watching
    }
    sinks_.emplace_back(connection, sink);
    count_.store(sinks_.size(), std::memory_order_relaxed);
}

bool monitor_hub::remove(std::uint64_t connection) {
    std::lock_guard lock(mutex_);
    const auto before = sinks_.size();
    std::erase_if(sinks_, [&](const auto& s) { return s.first == connection; });
    count_.store(sinks_.size(), std::memory_order_relaxed);
    return sinks_.size() != before;
}

void monitor_hub::publish(std::uint64_t connection, std::string_view peer, std::string_view method,
                          const json& params) {
    json shown = params;  // a secret method's are hidden already (the dispatcher's hidden_params)
    const double now =
        std::chrono::duration<double>(std::chrono::system_clock::now().time_since_epoch()).count();
    const std::string text =
        protocol::make_notification("server.monitor", nlohmann::ordered_json{{"connection", connection},
                                                                             {"method", method},
                                                                             {"params", std::move(shown)},
                                                                             {"peer", peer},
                                                                             {"time", now}}) +
        "\n";
    std::lock_guard lock(mutex_);
    std::erase_if(sinks_, [&](const auto& s) {
        if (s.first == connection) return false;  // a monitor does not see its own requests
        const auto sink = s.second.lock();
        return !sink || !sink->push_line(text);
    });
    count_.store(sinks_.size(), std::memory_order_relaxed);
}

}  // namespace ecsd::net
