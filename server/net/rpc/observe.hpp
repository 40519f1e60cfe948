#pragma once
// What an operator asks a running server, as Redis answers INFO commandstats, SLOWLOG and MONITOR:
// per-method call counts and latency percentiles, the slowest recent requests, and a live feed of
// every request. All three are written from any strand: counters are relaxed atomics, the slow
// log and the monitor list take a mutex only on their rare paths.

#include <array>
#include <atomic>
#include <cstdint>
#include <deque>
#include <memory>
#include <mutex>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>

namespace ecsd::net {

class method_table;
class watch_sink;

/// @brief Calls, errors and a latency histogram per method (handler time, as Redis's commandstats).
class request_stats {
  public:
    explicit request_stats(std::size_t methods);

    /// @brief Counts one call of method number `method` (its row in the table) that took `ns`.
    void record(std::size_t method, std::uint64_t ns, bool error) noexcept;

    /// @brief {name: {calls, errors, total_ms, p50_us, p99_us, max_us}} for every method called so far.
    [[nodiscard]] nlohmann::json to_json(const method_table& table) const;

    /// @brief The latency at quantile `q` (0..1) of a histogram, in microseconds (bucket midpoint).
    [[nodiscard]] static double quantile_us(const std::array<std::uint64_t, 256>& buckets,
                                            std::uint64_t count, double q);
    /// @brief The histogram bucket of a duration: four per power of two, so within ±12%.
    [[nodiscard]] static std::size_t bucket_of(std::uint64_t ns) noexcept;

  private:
    struct row {
        std::atomic<std::uint64_t> calls{0};
        std::atomic<std::uint64_t> errors{0};
        std::atomic<std::uint64_t> total_ns{0};
        std::atomic<std::uint64_t> max_ns{0};
        std::array<std::atomic<std::uint64_t>, 256> buckets{};
    };
    std::vector<std::unique_ptr<row>> rows_;
};

/// @brief The slowest recent requests (Redis's SLOWLOG): those whose handler took at least the
/// threshold, newest first, at most `max_len` of them.
class slow_log {
  public:
    slow_log(std::uint64_t threshold_us, std::size_t max_len)
        : threshold_ns_(threshold_us * 1000), max_len_(max_len) {}

    /// @brief True when a request of `ns` belongs in the log (checked before building an entry).
    [[nodiscard]] bool wants(std::uint64_t ns) const noexcept { return max_len_ > 0 && ns >= threshold_ns_; }
    /// @brief Adds a request; `params` is shown at most 256 characters long.
    void add(std::uint64_t ns, std::string_view method, const nlohmann::json& params,
             std::uint64_t connection);
    /// @brief {entries: [{id, time, duration_us, method, params, connection}], len, threshold_us, max_len}.
    [[nodiscard]] nlohmann::json to_json(std::size_t count) const;
    void reset();

  private:
    struct entry {
        std::uint64_t id;
        double time;  // Unix seconds
        double duration_us;
        std::string method;
        std::string params;
        std::uint64_t connection;
    };
    std::uint64_t threshold_ns_;
    std::size_t max_len_;
    mutable std::mutex mutex_;
    std::deque<entry> entries_;  // newest first
    std::uint64_t next_id_ = 0;
};

/// @brief Connections that asked for server.monitor, and the feed of requests they receive.
class monitor_hub {
  public:
    [[nodiscard]] bool active() const noexcept { return count_.load(std::memory_order_relaxed) > 0; }
    /// @brief Connection `connection` receives, through its sink, every later request of the others.
    void add(std::uint64_t connection, const std::shared_ptr<watch_sink>& sink);
    /// @brief Stops the feed to `connection`; false when it had none.
    bool remove(std::uint64_t connection);
    /// @brief One request, as the monitors see it (the dispatcher hides a secret method's params).
    void publish(std::uint64_t connection, std::string_view peer, std::string_view method,
                 const nlohmann::json& params);

  private:
    mutable std::mutex mutex_;
    std::vector<std::pair<std::uint64_t, std::weak_ptr<watch_sink>>> sinks_;
    std::atomic<std::size_t> count_{0};
};

}  // namespace ecsd::net
