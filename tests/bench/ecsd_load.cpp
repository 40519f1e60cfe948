// ecsd_load: a load generator for ecsd in the spirit of redis-benchmark. N connections each keep
// `pipeline` requests in flight; every response is timed from the write that carried its
// request. Prints requests/s, latency percentiles and the server's CPU time per request (from
// server.info's cpu, read as the measured window opens and closes), or one JSON object with --json.
//
//   ecsd_load --port 7777 --connections 50 --pipeline 16 --duration 10
//   ecsd_load --method ping --json
//
// --method takes a preset (ping, get, get_missing, mutate, query, spawn; the world's entities are
// set up first) or any method name with --params.
#include <algorithm>
#include <array>
#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <deque>
#include <memory>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <asio.hpp>
#include <nlohmann/json.hpp>

#include "ecsd/protocol/jsonrpc.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using nlohmann::json;

struct options {
    std::string host = "127.0.0.1";
    std::uint16_t port = 7777;
    int connections = 50;
    int pipeline = 1;
    std::string method;  // a preset or a method name; empty: get when the server has worlds, else ping
    std::string params = "";
    std::string world = "default";
    double duration = 10;
    double warmup = 1;
    int threads = 1;
    bool as_json = false;
};

/// @brief Per-thread results, merged at the end.
struct tally {
    std::vector<std::uint32_t> latencies_us;
    std::uint64_t errors = 0;
    std::uint64_t responses = 0;
};

/// @brief One connection: keeps `depth` requests in flight, one write at a time.
class load_connection : public std::enable_shared_from_this<load_connection> {
  public:
    load_connection(asio::io_context& io, const std::string& line, int depth, tally& t,
                    const clock_type::time_point& measure_from, const std::atomic<bool>& stopping)
        : socket_(io),
          line_(line + "\n"),
          depth_(depth),
          tally_(t),
          measure_from_(measure_from),
          stopping_(stopping) {}

    void start(const asio::ip::tcp::endpoint& ep) {
        socket_.connect(ep);
        socket_.set_option(asio::ip::tcp::no_delay(true));
        for (int i = 0; i < depth_; ++i) queue_request();
        write();
        read();
    }

  private:
    void queue_request() {
        pending_ += line_;
        ++queued_;
    }

    void write() {
        if (writing_ || pending_.empty()) return;
        writing_ = true;
        in_write_.swap(pending_);
        pending_.clear();
        // The requests of one write share one send time: the moment it was issued.
        const auto now = clock_type::now();
        sent_.insert(sent_.end(), queued_, now);
        queued_ = 0;
        asio::async_write(socket_, asio::buffer(in_write_),
                          [self = shared_from_this()](const asio::error_code& ec, std::size_t) {
                              self->writing_ = false;
                              if (ec) return;
                              self->write();
                          });
    }

    void read() {
        socket_.async_read_some(asio::buffer(buf_),
                                [self = shared_from_this()](const asio::error_code& ec, std::size_t n) {
                                    if (ec) return;
                                    self->on_data(n);
                                });
    }

    void on_data(std::size_t n) {
        const auto now = clock_type::now();
        const char* p = buf_.data();
        const char* end = p + n;
        while (p < end) {
            const char* nl =
                static_cast<const char*>(std::memchr(p, '\n', static_cast<std::size_t>(end - p)));
            const std::size_t take = static_cast<std::size_t>((nl ? nl : end) - p);
            if (line_head_.size() < 64)
                line_head_.append(p, std::min<std::size_t>(take, 64 - line_head_.size()));
            if (!nl) break;
            finish_line(now);
            p = nl + 1;
        }
        if (!stopping_.load(std::memory_order_relaxed)) write();
        read();
    }

    void finish_line(clock_type::time_point now) {
        // ecsd writes {"jsonrpc":"2.0","id":<id>,"error":... for errors: look near the start.
        if (line_head_.find("\"error\"") != std::string::npos) ++tally_.errors;
        line_head_.clear();
        if (sent_.empty()) return;
        const auto sent = sent_.front();
        sent_.pop_front();
        if (sent >= measure_from_) {
            ++tally_.responses;
            tally_.latencies_us.push_back(static_cast<std::uint32_t>(
                std::chrono::duration_cast<std::chrono::microseconds>(now - sent).count()));
        }
        if (!stopping_.load(std::memory_order_relaxed)) queue_request();
    }

    asio::ip::tcp::socket socket_;
    std::string line_;
    int depth_;
    tally& tally_;
    const clock_type::time_point& measure_from_;
    const std::atomic<bool>& stopping_;
    std::string pending_, in_write_, line_head_;
    std::size_t queued_ = 0;  // requests in pending_
    std::deque<clock_type::time_point> sent_;
    std::array<char, 65536> buf_{};
    bool writing_ = false;
};

/// @brief One blocking request for setup (discover, spawn).
json call_once(const asio::ip::tcp::endpoint& ep, const std::string& method, const json& params) {
    asio::io_context io;
    asio::ip::tcp::socket s(io);
    s.connect(ep);
    asio::write(s, asio::buffer(ecsd::protocol::make_request(1, method, params) + "\n"));
    asio::streambuf sb;
    asio::read_until(s, sb, '\n');
    std::string line((std::istreambuf_iterator<char>(&sb)), std::istreambuf_iterator<char>());
    return json::parse(line.substr(0, line.find('\n')));
}

bool server_has(const asio::ip::tcp::endpoint& ep, const std::string& method) {
    const auto doc = call_once(ep, "rpc.discover", nullptr);
    for (const auto& m : doc["result"]["methods"]) {
        if (m["name"] == method) return true;
    }
    return false;
}

/// @brief Seconds of CPU the server has used (user + system), or a negative number when it does not say.
double server_cpu(const asio::ip::tcp::endpoint& ep) {
    try {
        const auto info = call_once(ep, "server.info", nullptr);
        const auto& cpu = info.at("result").at("cpu");
        return cpu.at("user_s").get<double>() + cpu.at("system_s").get<double>();
    } catch (const std::exception&) {
        return -1;
    }
}

/// @brief What one preset sends: its method and params, after creating what they name.
struct workload {
    std::string method;
    json params;
    bool errors_expected = false;  // get_missing: every answer is an error, by design
};

json spawn_params(const std::string& world) {
    return {{"world", world},
            {"components",
             {{"Position", {{"x", 1.0}, {"y", 2.0}}},
              {"Velocity", {{"x", 0.5}, {"y", 0.0}}},
              {"Health", {{"hp", 100}, {"max", 100}}}}}};
}

json spawn_one(const asio::ip::tcp::endpoint& ep, const std::string& world) {
    const auto spawned = call_once(ep, "world.spawn_entity", spawn_params(world));
    if (!spawned.contains("result")) throw std::runtime_error("world.spawn_entity failed: " + spawned.dump());
    return spawned["result"]["entity"];
}

/// @brief Resolves --method: a preset's method and params (creating the entities it needs), or the
/// method as given with --params.
workload make_workload(const asio::ip::tcp::endpoint& ep, const options& o) {
    std::string m = o.method;
    if (m.empty()) m = server_has(ep, "world.get_components") ? "get" : "ping";
    const std::string& w = o.world;
    if (m == "ping") return {"server.ping", json(), false};
    if (m == "get") return {"world.get_components", {{"world", w}, {"entity", spawn_one(ep, w)}}, false};
    if (m == "get_missing") {
        // A well-formed id that names no entity: one that was spawned and then despawned.
        const auto e = spawn_one(ep, w);
        const auto gone = call_once(ep, "world.despawn_entity", {{"world", w}, {"entity", e}});
        if (!gone.contains("result")) throw std::runtime_error("world.despawn_entity failed: " + gone.dump());
        return {"world.get_components", {{"world", w}, {"entity", e}}, true};
    }
    if (m == "mutate") {
        return {"world.mutate_components",
                {{"world", w},
                 {"entity", spawn_one(ep, w)},
                 {"component", "Position"},
                 {"path", "x"},
                 {"value", 3.5}},
                false};
    }
    if (m == "query") {
        // A page of 100 entities with 3 components each: spawn enough to fill it.
        const json q{{"world", w}, {"query", "Position, Velocity, Health"}, {"limit", 100}};
        const auto have = call_once(ep, "world.query", q);
        const auto n = have.contains("result") ? have["result"]["entities"].size() : std::size_t{0};
        for (auto i = n; i < 100; ++i) (void)spawn_one(ep, w);
        return {"world.query", q, false};
    }
    if (m == "spawn") return {"world.spawn_entity", spawn_params(w), false};
    return {m, o.params.empty() ? json() : json::parse(o.params), false};
}

std::uint32_t percentile(std::vector<std::uint32_t>& v, double p) {
    if (v.empty()) return 0;
    const auto k = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"ecsd_load: load generator for ecsd (like redis-benchmark)"};
    app.add_option("--host", o.host, "server address")->capture_default_str();
    app.add_option("--port", o.port, "server port")->capture_default_str();
    app.add_option("-c,--connections", o.connections, "parallel connections")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
    app.add_option("-P,--pipeline", o.pipeline, "requests in flight per connection")
        ->capture_default_str()
        ->check(CLI::Range(1, 4096));
    app.add_option("-m,--method", o.method,
                   "a preset: ping, get (world.get_components of a spawned entity), get_missing (of a "
                   "despawned one: every answer an error), mutate (world.mutate_components), query (a "
                   "world.query page of 100 entities with 3 components), spawn; or any method name with "
                   "--params. Default: get when the server has world methods, else ping");
    app.add_option("--params", o.params, "params object (JSON) for a method named by --method");
    app.add_option("--world", o.world, "world for world.* methods")->capture_default_str();
    app.add_option("-d,--duration", o.duration, "seconds measured")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--warmup", o.warmup, "seconds run before measuring")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app.add_option("--threads", o.threads, "client threads")->capture_default_str()->check(CLI::Range(1, 64));
    app.add_flag("--json", o.as_json, "print one JSON object of figures");
    CLI11_PARSE(app, argc, argv);

    asio::io_context resolver_io;
    asio::ip::tcp::resolver resolver(resolver_io);
    const auto ep = *resolver.resolve(o.host, std::to_string(o.port)).begin();

    workload work;
    try {
        work = make_workload(ep, o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ecsd_load: setup against %s:%u failed: %s\n", o.host.c_str(), o.port, e.what());
        return 1;
    }
    const std::string& method = work.method;
    const std::string line = ecsd::protocol::make_request(1, method, work.params);

    std::atomic<bool> stopping{false};
    const auto started = clock_type::now();
    const auto measure_from =
        started + std::chrono::duration_cast<clock_type::duration>(std::chrono::duration<double>(o.warmup));
    const auto measure_to = measure_from + std::chrono::duration_cast<clock_type::duration>(
                                               std::chrono::duration<double>(o.duration));

    std::vector<std::unique_ptr<asio::io_context>> ios;
    std::vector<tally> tallies(static_cast<std::size_t>(o.threads));
    for (int t = 0; t < o.threads; ++t) ios.push_back(std::make_unique<asio::io_context>(1));
    try {
        for (int i = 0; i < o.connections; ++i) {
            const auto t = static_cast<std::size_t>(i % o.threads);
            auto c = std::make_shared<load_connection>(*ios[t], line, o.pipeline, tallies[t], measure_from,
                                                       stopping);
            c->start(ep);
        }
    } catch (const std::exception& e) {
        std::fprintf(stderr, "ecsd_load: connecting failed: %s\n", e.what());
        return 1;
    }
    std::vector<std::thread> threads;
    for (auto& io : ios) {
        threads.emplace_back([&io, measure_to] { io->run_until(measure_to); });
    }
    // The server's CPU over the measured window, read on a connection of its own.
    std::this_thread::sleep_until(measure_from);
    const double cpu_from = server_cpu(ep);
    for (auto& th : threads) th.join();
    stopping = true;
    const double cpu_to = cpu_from < 0 ? -1 : server_cpu(ep);

    tally all;
    for (auto& t : tallies) {
        all.errors += t.errors;
        all.responses += t.responses;
        all.latencies_us.insert(all.latencies_us.end(), t.latencies_us.begin(), t.latencies_us.end());
    }
    const double rps = static_cast<double>(all.responses) / o.duration;
    const auto p50 = percentile(all.latencies_us, 50);
    const auto p99 = percentile(all.latencies_us, 99);
    const auto p999 = percentile(all.latencies_us, 99.9);
    const auto max =
        all.latencies_us.empty() ? 0U : *std::max_element(all.latencies_us.begin(), all.latencies_us.end());
    // Negative when the server does not report its CPU (an older ecsd).
    const double cpu_us = cpu_to < 0 || all.responses == 0
                              ? -1
                              : (cpu_to - cpu_from) * 1e6 / static_cast<double>(all.responses);
    if (o.as_json) {
        std::printf("%s\n", json{{"host", o.host},
                                 {"port", o.port},
                                 {"method", method},
                                 {"connections", o.connections},
                                 {"pipeline", o.pipeline},
                                 {"threads", o.threads},
                                 {"duration_s", o.duration},
                                 {"requests", all.responses},
                                 {"errors", all.errors},
                                 {"requests_per_s", rps},
                                 {"latency_us", {{"p50", p50}, {"p99", p99}, {"p99_9", p999}, {"max", max}}},
                                 {"server_cpu_us_per_request", cpu_us}}
                                .dump()
                                .c_str());
    } else {
        std::printf("ecsd_load %s:%u  method %s  connections %d  pipeline %d  threads %d  %.1f s\n",
                    o.host.c_str(), o.port, method.c_str(), o.connections, o.pipeline, o.threads, o.duration);
        std::printf("  %llu requests, %.0f requests/s, %llu errors\n",
                    static_cast<unsigned long long>(all.responses), rps,
                    static_cast<unsigned long long>(all.errors));
        std::printf("  latency p50 %.3f ms  p99 %.3f ms  p99.9 %.3f ms  max %.3f ms\n", p50 / 1000.0,
                    p99 / 1000.0, p999 / 1000.0, max / 1000.0);
        if (cpu_us >= 0) std::printf("  server CPU %.2f us per request\n", cpu_us);
    }
    std::fflush(stdout);
    std::_Exit(all.errors == 0 || work.errors_expected ? 0
                                                       : 2);  // skip tearing down connections still in flight
}
