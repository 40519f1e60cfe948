// watch_bench: what world.watch costs and delivers. It creates a world ticking at --hz, spawns
// --entities movers (Position + Velocity, so every one changes every tick), opens --watchers
// connections that each watch "Position, Velocity" on it, read on --threads threads with poll(2),
// and measures for --seconds. A second phase adds --stalled watchers that read their initial answer
// and then nothing, and measures again, so their effect on the tick, the others and the server's
// memory shows. Prints figures for people, or one JSON object with --json.
//
//   watch_bench                                   # starts the ecsd next to it on a free port
//   watch_bench --watchers 10 --entities 100000 --hz 20 --seconds 10 --json
//   watch_bench --port 7777 --server-pid "$(pidof ecsd)"   # a running ecsd (CPU and RSS need the pid)
//
// Tick p50/p99 come from world.info's last_tick_total_ms (the systems and the watch work: diffs
// computed, encoded and published), sampled once per tick period during the run; the systems alone
// (last_tick_ms) are reported apart, and the interval between one watcher's notifications shows the
// tick as a client sees it.
// "Entity updates" are the entity items (entered, changed, left) of the notifications, counted in the
// raw bytes without parsing them; the clients share the machine with the server. --count-only makes
// the clients cheaper still: they count lines and bytes only, and entity updates are estimated as
// notifications x --entities (every mover changes every tick).
//
// --aoi R is interest management at game scale: each watcher watches "Position, Velocity,
// near(E, R)" about its own mover E, so no two queries are alike. The movers are spread over a
// square sized so that about 100 of them are within R of any point (side = sqrt(entities * pi) *
// R / 10), inside bounds that turn them back. A second phase then replaces the watchers by as many
// identical watches of one region of the same size (near(0, 0, R): one shared encoding), and the
// two are printed side by side. With --count-only, entity updates are estimated as each watcher's
// notifications x the entities its initial answer held (all of them move every tick).
//
//   watch_bench --watchers 1000 --entities 100000 --hz 60 --aoi 10 --count-only
#include <fcntl.h>
#include <netdb.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <sys/ioctl.h>
#include <sys/socket.h>
#include <sys/types.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cerrno>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <mutex>
#include <numbers>
#include <random>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <vector>

#include <CLI/CLI.hpp>
#include <nlohmann/json.hpp>

#include "ecsd/protocol/jsonrpc.hpp"

namespace {

using clock_type = std::chrono::steady_clock;
using nlohmann::json;

struct options {
    std::string host = "127.0.0.1";
    int port = 0;  // 0: start ecsd
    std::string ecsd;
    int server_pid = 0;
    std::vector<std::string> server_args;
    std::string world = "watch_bench";
    double hz = 60;
    int entities = 1000;
    int watchers = 100;
    int stalled = 1;
    double seconds = 10;
    double warmup = 1;
    int threads = 2;
    bool as_json = false;
    bool count_only = false;  // count bytes and lines, skip the scan for entity items
    double aoi = 0;           // > 0: each watcher watches near() about its own mover, this radius
};

[[noreturn]] void fail(const std::string& what) {
    throw std::runtime_error(what);
}

// --- sockets ---------------------------------------------------------------------------------------------

int connect_to(const std::string& host, int port) {
    addrinfo hints{};
    hints.ai_family = AF_UNSPEC;
    hints.ai_socktype = SOCK_STREAM;
    addrinfo* found = nullptr;
    if (getaddrinfo(host.c_str(), std::to_string(port).c_str(), &hints, &found) != 0 || found == nullptr) {
        fail("cannot resolve " + host);
    }
    const int fd = socket(found->ai_family, SOCK_STREAM | SOCK_CLOEXEC, 0);
    const bool ok = fd >= 0 && connect(fd, found->ai_addr, found->ai_addrlen) == 0;
    freeaddrinfo(found);
    if (!ok) {
        fail("cannot connect to " + host + ":" + std::to_string(port) + ": " + std::strerror(errno));
    }
    const int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
    return fd;
}

void send_all(int fd, const std::string& text) {
    std::size_t done = 0;
    while (done < text.size()) {
        const auto n = send(fd, text.data() + done, text.size() - done, MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) {
            continue;
        }
        if (n <= 0) {
            fail(std::string("send: ") + std::strerror(errno));
        }
        done += static_cast<std::size_t>(n);
    }
}

/// @brief A blocking JSON-RPC connection for setup and world.info; skips notifications.
class control {
  public:
    control(const std::string& host, int port) : fd_(connect_to(host, port)) {}
    control(const control&) = delete;
    control& operator=(const control&) = delete;
    ~control() { close(fd_); }

    json call(const std::string& method, const json& params) {
        const auto id = next_id_++;
        send_all(fd_, ecsd::protocol::make_request(id, method, params) + "\n");
        for (;;) {
            auto message = json::parse(read_line());
            if (message.contains("id") && message["id"] == id) {
                if (message.contains("error")) {
                    fail(method + ": " + message["error"].dump());
                }
                return message["result"];
            }
        }
    }

    std::string read_line() {
        for (;;) {
            if (const auto nl = buffer_.find('\n'); nl != std::string::npos) {
                std::string line = buffer_.substr(0, nl);
                buffer_.erase(0, nl + 1);
                return line;
            }
            std::array<char, 65536> chunk{};
            const auto n = recv(fd_, chunk.data(), chunk.size(), 0);
            if (n < 0 && errno == EINTR) {
                continue;
            }
            if (n <= 0) {
                fail("the server closed the control connection");
            }
            buffer_.append(chunk.data(), static_cast<std::size_t>(n));
        }
    }

  private:
    int fd_;
    std::string buffer_;
    std::int64_t next_id_ = 1;
};

// --- watchers --------------------------------------------------------------------------------------------

/// @brief One watcher connection. Its reader thread alone touches the parsing state; the counters are
///        atomics that the main thread reads between phases.
struct watcher {
    int fd = -1;
    std::atomic<std::uint64_t> notifications{0};
    std::atomic<std::uint64_t> updates{0};
    std::atomic<std::uint64_t> bytes{0};
    std::atomic<std::uint64_t> coalesced{0};
    std::atomic<std::uint64_t> resyncs{0};
    std::atomic<std::uint64_t> last_tick{0};
    std::atomic<std::uint64_t> initial{0};  // entities in the initial answer
    std::atomic<bool> answered{false};
    std::atomic<bool> refused{false};  // its world.watch got an error
    std::atomic<bool> closed{false};

    // The probe (the first watcher) also keeps the times between its notifications: the tick as a
    // client sees it, delivery included.
    bool probe = false;
    bool count_only = false;  // --count-only: no scan for entity items (updates are estimated)
    std::mutex intervals_mutex;
    std::vector<double> intervals_ms;
    clock_type::time_point last_arrival{};

    // Parsing state of the line being read (streamed: a line may be megabytes).
    std::string head;  // the first bytes of the line: method or id, subscription, tick
    std::string tail;  // the last bytes seen, for a pattern split across reads
    std::uint64_t line_entities = 0;
    std::uint64_t line_bytes = 0;

    static constexpr std::string_view pattern = "\"entity\":";
    static constexpr std::size_t head_size = 160;

    void feed(const char* p, std::size_t n) {
        while (n > 0) {
            const auto* nl = static_cast<const char*>(std::memchr(p, '\n', n));
            const std::size_t take = nl != nullptr ? static_cast<std::size_t>(nl - p) : n;
            scan(p, take);
            if (nl == nullptr) {
                return;
            }
            end_line();
            p = nl + 1;
            n -= take + 1;
        }
    }

  private:
    void scan(const char* p, std::size_t n) {
        line_bytes += n;
        if (head.size() < head_size) {
            head.append(p, std::min(n, head_size - head.size()));
        }
        // --count-only skips the scan for notifications, not for the initial answer (its size
        // is what each notification is estimated to carry in --aoi runs).
        if (count_only && answered.load(std::memory_order_relaxed)) {
            return;
        }
        // A pattern starting in the tail and ending in this piece.
        if (!tail.empty()) {
            std::string joint = tail;
            joint.append(p, std::min(n, pattern.size() - 1));
            for (std::size_t at = joint.find(pattern); at != std::string::npos && at < tail.size();
                 at = joint.find(pattern, at + 1)) {
                ++line_entities;
            }
        }
        std::string_view text(p, n);
        for (auto at = text.find(pattern); at != std::string_view::npos; at = text.find(pattern, at + 1)) {
            ++line_entities;
        }
        if (n >= pattern.size() - 1) {
            tail.assign(p + n - (pattern.size() - 1), pattern.size() - 1);
        } else {
            tail.append(p, n);
            if (tail.size() > pattern.size() - 1) {
                tail.erase(0, tail.size() - (pattern.size() - 1));
            }
        }
    }

    static std::uint64_t number_after(const std::string& text, std::string_view key) {
        const auto at = text.find(key);
        if (at == std::string::npos) {
            return 0;
        }
        return std::strtoull(text.c_str() + at + key.size(), nullptr, 10);
    }

    void end_line() {
        const bool notification =
            head.find("\"method\"") != std::string::npos && head.find("\"method\"") < head.find("\"params\"");
        const auto tick = number_after(head, "\"tick\":");
        if (notification) {
            notifications.fetch_add(1, std::memory_order_relaxed);
            updates.fetch_add(line_entities, std::memory_order_relaxed);
            bytes.fetch_add(line_bytes + 1, std::memory_order_relaxed);
            if (head.find("\"coalesced\"") != std::string::npos) {
                coalesced.fetch_add(1, std::memory_order_relaxed);
            }
            if (head.find("\"resync\"") != std::string::npos) {
                resyncs.fetch_add(1, std::memory_order_relaxed);
            }
            if (probe) {
                const auto now = clock_type::now();
                if (last_arrival != clock_type::time_point{}) {
                    const std::lock_guard lock(intervals_mutex);
                    intervals_ms.push_back(
                        std::chrono::duration<double, std::milli>(now - last_arrival).count());
                }
                last_arrival = now;
            }
        } else if (head.find("\"error\"") != std::string::npos) {
            if (!refused.exchange(true)) {
                std::fprintf(stderr, "watch_bench: a watcher got an error: %s\n", head.c_str());
            }
            answered.store(true, std::memory_order_release);
        } else {
            initial.store(line_entities, std::memory_order_relaxed);
            answered.store(true, std::memory_order_release);
        }
        if (tick > last_tick.load(std::memory_order_relaxed)) {
            last_tick.store(tick, std::memory_order_relaxed);
        }
        head.clear();
        tail.clear();
        line_entities = 0;
        line_bytes = 0;
    }
};

/// @brief Reads its share of the watchers with poll(2) until told to stop.
void reader(std::vector<watcher*> mine, const std::atomic<bool>& stop) {
    std::vector<pollfd> fds;
    for (auto* w : mine) {
        fds.push_back({w->fd, POLLIN, 0});
    }
    std::vector<char> buffer(1 << 20);
    while (!stop.load(std::memory_order_relaxed)) {
        const int ready = poll(fds.data(), fds.size(), 100);
        if (ready <= 0) {
            continue;
        }
        for (std::size_t i = 0; i < fds.size(); ++i) {
            if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
                continue;
            }
            const auto n = recv(fds[i].fd, buffer.data(), buffer.size(), MSG_DONTWAIT);
            if (n > 0) {
                mine[i]->feed(buffer.data(), static_cast<std::size_t>(n));
            } else if (n == 0 || (errno != EAGAIN && errno != EINTR)) {
                mine[i]->closed.store(true);
                fds[i].fd = -1;
            }
        }
    }
}

std::string watch_request(const std::string& world, const std::string& query = "Position, Velocity") {
    return ecsd::protocol::make_request(1, "world.watch", {{"world", world}, {"query", query}}) + "\n";
}

/// @brief near() about a mover (its id) or about a point, as the query text has it.
std::string near_query(const std::string& about, double r) {
    return "Position, Velocity, near(" + about + ", " + std::to_string(r) + ")";
}

// --- the server process ----------------------------------------------------------------------------------

/// @brief An ecsd this program started: on a free port, stopped at the end.
class child_server {
  public:
    child_server(const std::string& binary, const std::vector<std::string>& extra) {
        std::array<int, 2> out{};
        if (pipe(out.data()) != 0) {
            fail("pipe");
        }
        pid_ = fork();
        if (pid_ < 0) {
            fail("fork");
        }
        if (pid_ == 0) {
            dup2(out[1], STDOUT_FILENO);
            close(out[0]);
            close(out[1]);
            std::vector<std::string> args{binary, "--port", "0", "--log-level", "error"};
            args.insert(args.end(), extra.begin(), extra.end());
            std::vector<char*> argv;
            for (auto& a : args) {
                argv.push_back(a.data());
            }
            argv.push_back(nullptr);
            execv(binary.c_str(), argv.data());
            std::perror(("watch_bench: cannot run " + binary).c_str());
            _exit(127);
        }
        close(out[1]);
        std::string text;
        std::array<char, 256> chunk{};
        for (;;) {
            const auto n = read(out[0], chunk.data(), chunk.size());
            if (n <= 0) {
                fail("ecsd (" + binary + ") exited before listening");
            }
            text.append(chunk.data(), static_cast<std::size_t>(n));
            const auto at = text.find("listening on ");
            if (at != std::string::npos && text.find('\n', at) != std::string::npos) {
                const auto line = text.substr(at, text.find('\n', at) - at);
                port_ = std::stoi(line.substr(line.rfind(':') + 1));
                break;
            }
        }
        stdout_ = out[0];  // kept open so ecsd never writes into a closed pipe
    }
    child_server(const child_server&) = delete;
    child_server& operator=(const child_server&) = delete;
    ~child_server() {
        kill(pid_, SIGTERM);
        int status = 0;
        waitpid(pid_, &status, 0);
        close(stdout_);
    }
    [[nodiscard]] int port() const { return port_; }
    [[nodiscard]] pid_t pid() const { return pid_; }

  private:
    pid_t pid_ = -1;
    int port_ = 0;
    int stdout_ = -1;
};

/// @brief utime + stime of `pid` in seconds, or -1.
double cpu_seconds(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/stat");
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    const auto paren = text.rfind(')');
    if (pid <= 0 || paren == std::string::npos) {
        return -1;
    }
    std::istringstream fields(text.substr(paren + 2));
    std::string field;
    unsigned long long utime = 0;
    unsigned long long stime = 0;
    for (int i = 3; fields >> field; ++i) {  // field 3 is the state
        if (i == 14) {
            utime = std::stoull(field);
        } else if (i == 15) {
            stime = std::stoull(field);
            break;
        }
    }
    return static_cast<double>(utime + stime) / static_cast<double>(sysconf(_SC_CLK_TCK));
}

/// @brief VmRSS of `pid` in KiB, or 0.
long rss_kib(int pid) {
    std::ifstream in("/proc/" + std::to_string(pid) + "/status");
    for (std::string line; std::getline(in, line);) {
        if (line.starts_with("VmRSS:")) {
            return std::stol(line.substr(6));
        }
    }
    return 0;
}

std::string own_directory() {
    std::array<char, 4096> path{};
    const auto n = readlink("/proc/self/exe", path.data(), path.size() - 1);
    if (n <= 0) {
        return ".";
    }
    std::string text(path.data(), static_cast<std::size_t>(n));
    return text.substr(0, text.rfind('/'));
}

double percentile(std::vector<double> v, double p) {
    if (v.empty()) {
        return 0;
    }
    const auto k = static_cast<std::size_t>(p / 100.0 * static_cast<double>(v.size() - 1));
    std::nth_element(v.begin(), v.begin() + static_cast<std::ptrdiff_t>(k), v.end());
    return v[k];
}

// --- one measured phase ----------------------------------------------------------------------------------

struct totals {
    std::uint64_t notifications = 0, updates = 0, bytes = 0, coalesced = 0, resyncs = 0;
    std::uint64_t estimated = 0;  // sum of notifications x the entities of each one's initial answer
};

totals sum(const std::vector<std::unique_ptr<watcher>>& watchers) {
    totals t;
    for (const auto& w : watchers) {
        t.notifications += w->notifications.load();
        t.updates += w->updates.load();
        t.bytes += w->bytes.load();
        t.coalesced += w->coalesced.load();
        t.resyncs += w->resyncs.load();
        t.estimated += w->notifications.load() * w->initial.load();
    }
    return t;
}

json measure(const options& o, control& ctl, const std::vector<std::unique_ptr<watcher>>& watchers, int pid,
             int stalled_fd) {
    std::this_thread::sleep_for(std::chrono::duration<double>(o.warmup));
    const json params = {{"world", o.world}};
    const auto info0 = ctl.call("world.info", params);
    const auto cpu0 = cpu_seconds(pid);
    const auto own0 = cpu_seconds(static_cast<int>(getpid()));
    const auto rss0 = rss_kib(pid);
    const auto t0 = sum(watchers);
    {
        const std::lock_guard lock(watchers.front()->intervals_mutex);
        watchers.front()->intervals_ms.clear();
    }
    const auto start = clock_type::now();
    const auto period = std::chrono::duration<double>(1.0 / o.hz);
    std::vector<double> tick_ms;     // systems and watch work
    std::vector<double> systems_ms;  // systems only
    std::uint64_t sampled_tick = info0.value("tick", std::uint64_t{0});
    while (clock_type::now() - start < std::chrono::duration<double>(o.seconds)) {
        std::this_thread::sleep_for(period);
        const auto info = ctl.call("world.info", params);
        if (info.value("tick", std::uint64_t{0}) != sampled_tick) {
            sampled_tick = info.value("tick", std::uint64_t{0});
            tick_ms.push_back(info.value("last_tick_total_ms", 0.0));
            systems_ms.push_back(info.value("last_tick_ms", 0.0));
        }
    }
    const auto info1 = ctl.call("world.info", params);
    const double elapsed = std::chrono::duration<double>(clock_type::now() - start).count();
    const auto t1 = sum(watchers);
    std::vector<double> intervals;
    {
        const std::lock_guard lock(watchers.front()->intervals_mutex);
        intervals.swap(watchers.front()->intervals_ms);
    }
    const auto cpu1 = cpu_seconds(pid);
    const auto own1 = cpu_seconds(static_cast<int>(getpid()));
    const auto rss1 = rss_kib(pid);

    // Lag: the world's tick now against the newest tick each watcher has seen.
    const auto world_tick = info1.value("tick", std::uint64_t{0});
    std::uint64_t max_lag = 0;
    std::uint64_t closed = 0;
    for (const auto& w : watchers) {
        const auto seen = w->last_tick.load();
        max_lag = std::max(max_lag, world_tick > seen ? world_tick - seen : 0);
        closed += w->closed.load() ? 1 : 0;
    }
    const auto ticks = world_tick - info0.value("tick", std::uint64_t{0});
    // --count-only does not scan for entity items: every mover changes every tick, so each
    // notification is taken to carry --entities of them (reported as an estimate).
    const auto updates = !o.count_only ? t1.updates - t0.updates
                         : o.aoi > 0
                             ? t1.estimated - t0.estimated
                             : (t1.notifications - t0.notifications) * static_cast<std::uint64_t>(o.entities);
    json r = {
        {"seconds", elapsed},
        {"ticks_per_s", static_cast<double>(ticks) / elapsed},
        {"tick_ms",
         {{"p50", percentile(tick_ms, 50)},
          {"p99", percentile(tick_ms, 99)},
          {"max", tick_ms.empty() ? 0.0 : *std::max_element(tick_ms.begin(), tick_ms.end())},
          {"samples", tick_ms.size()}}},
        {"systems_tick_ms",
         {{"p50", percentile(systems_ms, 50)},
          {"p99", percentile(systems_ms, 99)},
          {"max", systems_ms.empty() ? 0.0 : *std::max_element(systems_ms.begin(), systems_ms.end())}}},
        {"notification_interval_ms",
         {{"p50", percentile(intervals, 50)},
          {"p99", percentile(intervals, 99)},
          {"max", intervals.empty() ? 0.0 : *std::max_element(intervals.begin(), intervals.end())}}},
        {"skipped_ticks",
         info1.value("skipped_ticks", std::uint64_t{0}) - info0.value("skipped_ticks", std::uint64_t{0})},
        {"overruns", info1.value("overruns", std::uint64_t{0}) - info0.value("overruns", std::uint64_t{0})},
        {"notifications_per_s", static_cast<double>(t1.notifications - t0.notifications) / elapsed},
        {"entity_updates_per_s", static_cast<double>(updates) / elapsed},
        {"bytes_per_s", static_cast<double>(t1.bytes - t0.bytes) / elapsed},
        {"coalesced_notifications", t1.coalesced - t0.coalesced},
        {"resyncs", t1.resyncs - t0.resyncs},
        {"max_lag_ticks", max_lag},
        {"watchers_closed", closed},
        {"bench_cpu_percent", 100.0 * (own1 - own0) / elapsed},  // the clients share the machine
        {"entity_updates_estimated", o.count_only},
    };
    if (cpu0 >= 0 && cpu1 >= 0) {
        r["server_cpu_s"] = cpu1 - cpu0;
        r["server_cpu_percent"] = 100.0 * (cpu1 - cpu0) / elapsed;
        r["server_cpu_ns_per_update"] =
            updates == 0 ? 0.0 : (cpu1 - cpu0) * 1e9 / static_cast<double>(updates);
    }
    if (rss0 > 0) {
        r["server_rss_kib"] = rss1;
        r["server_rss_growth_kib"] = rss1 - rss0;
    }
    if (stalled_fd >= 0) {
        int unread = 0;
        ioctl(stalled_fd, FIONREAD, &unread);
        pollfd p{stalled_fd, POLLRDHUP, 0};
        poll(&p, 1, 0);
        r["stalled_unread_bytes"] = unread;  // what the kernel holds for it on the client side
        r["stalled_closed_by_server"] = (p.revents & (POLLRDHUP | POLLHUP)) != 0;
    }
    return r;
}

void print_phase(const char* title, const json& r) {
    std::printf("%s\n", title);
    std::printf(
        "  ticks/s %.2f   tick with watch work p50 %.3f ms  p99 %.3f ms  max %.3f ms (%zu samples)   "
        "skipped %llu  overruns %llu\n",
        r["ticks_per_s"].get<double>(), r["tick_ms"]["p50"].get<double>(), r["tick_ms"]["p99"].get<double>(),
        r["tick_ms"]["max"].get<double>(), r["tick_ms"]["samples"].get<std::size_t>(),
        r["skipped_ticks"].get<unsigned long long>(), r["overruns"].get<unsigned long long>());
    std::printf("  systems alone p50 %.3f ms  p99 %.3f ms  max %.3f ms\n",
                r["systems_tick_ms"]["p50"].get<double>(), r["systems_tick_ms"]["p99"].get<double>(),
                r["systems_tick_ms"]["max"].get<double>());
    std::printf("  one watcher's notification interval p50 %.2f ms  p99 %.2f ms  max %.2f ms\n",
                r["notification_interval_ms"]["p50"].get<double>(),
                r["notification_interval_ms"]["p99"].get<double>(),
                r["notification_interval_ms"]["max"].get<double>());
    std::printf("  notifications/s %.0f   entity updates/s %.0f   %.1f MB/s   coalesced %llu  resyncs %llu\n",
                r["notifications_per_s"].get<double>(), r["entity_updates_per_s"].get<double>(),
                r["bytes_per_s"].get<double>() / 1e6, r["coalesced_notifications"].get<unsigned long long>(),
                r["resyncs"].get<unsigned long long>());
    std::printf("  max lag %llu ticks   watchers closed %llu\n", r["max_lag_ticks"].get<unsigned long long>(),
                r["watchers_closed"].get<unsigned long long>());
    if (r.contains("server_cpu_s")) {
        std::printf("  server CPU %.2f s (%.0f%%), %.0f ns per entity update\n",
                    r["server_cpu_s"].get<double>(), r["server_cpu_percent"].get<double>(),
                    r["server_cpu_ns_per_update"].get<double>());
    }
    std::printf("  watch_bench's own CPU (the clients) %.0f%%\n", r["bench_cpu_percent"].get<double>());
    if (r.contains("server_rss_kib")) {
        std::printf("  server RSS %ld KiB (%+ld KiB during the phase)\n", r["server_rss_kib"].get<long>(),
                    r["server_rss_growth_kib"].get<long>());
    }
    if (r.contains("stalled_unread_bytes")) {
        std::printf("  stalled watcher: %d bytes unread in its socket, closed by the server: %s\n",
                    r["stalled_unread_bytes"].get<int>(),
                    r["stalled_closed_by_server"].get<bool>() ? "yes" : "no");
    }
}

int run(const options& o) {
    std::unique_ptr<child_server> server;
    int port = o.port;
    int pid = o.server_pid;
    if (port == 0) {
        auto args = o.server_args;
        if (o.aoi > 0) {  // one distinct view per watcher (and per stalled one): past the defaults
            const auto views = std::to_string(o.watchers + o.stalled + 16);
            // Connections: the shared phase opens its watchers while the server may still be
            // closing the distinct phase's.
            const auto connections = std::to_string(2 * (o.watchers + o.stalled) + 64);
            args.insert(args.begin(), {"--max-watch-views", views, "--max-watch-views-total", views,
                                       "--max-connections", connections});
        }
        server = std::make_unique<child_server>(o.ecsd.empty() ? own_directory() + "/ecsd" : o.ecsd, args);
        port = server->port();
        pid = server->pid();
    }
    control ctl(o.host, port);

    // The world, paused while it fills, with movers that all change every tick.
    try {
        (void)ctl.call("world.destroy", {{"world", o.world}});
    } catch (const std::exception&) {
        // it did not exist
    }
    // --aoi: a square where about 100 movers are within R of any point, with edges that bounce.
    const double half =
        o.aoi > 0 ? std::sqrt(static_cast<double>(o.entities) * std::numbers::pi) * o.aoi / 20 : 1000;
    json create = {{"world", o.world}, {"tick_hz", o.hz}, {"gravity", 0}, {"paused", true}};
    if (o.aoi > 0) {
        create["bounds"] = {{"left", -half}, {"right", half}, {"bottom", -half}, {"top", half}};
    }
    (void)ctl.call("world.create", create);
    std::mt19937 rng(12345);
    std::uniform_real_distribution<double> place(-half, half);
    std::uniform_real_distribution<double> speed(-5, 5);
    std::vector<std::uint64_t> ids;
    for (int done = 0; done < o.entities;) {
        const int batch = std::min(5000, o.entities - done);
        json list = json::array();
        for (int i = 0; i < batch; ++i) {
            list.push_back({{"Position", {{"x", place(rng)}, {"y", place(rng)}}},
                            {"Velocity", {{"x", speed(rng) + 0.5}, {"y", speed(rng)}}}});
        }
        const auto made = ctl.call("world.spawn_entities", {{"world", o.world}, {"entities", list}});
        for (const auto& id : made["entities"]) {
            ids.push_back(id.get<std::uint64_t>());
        }
        done += batch;
    }
    // What watcher i watches: everything, near() about its own mover, or near() about one point.
    const auto request_for = [&](int i, bool shared) {
        if (o.aoi <= 0) {
            return watch_request(o.world);
        }
        const auto about =
            shared ? std::string("0, 0") : std::to_string(ids[static_cast<std::size_t>(i) % ids.size()]);
        return watch_request(o.world, near_query(about, o.aoi));
    };

    // The watchers, then the readers.
    std::vector<std::unique_ptr<watcher>> watchers;
    std::atomic<bool> stop{false};
    std::vector<std::thread> readers;
    const int threads = std::max(1, std::min(o.threads, o.watchers));
    const auto open_watchers = [&](bool shared) {
        for (int i = 0; i < o.watchers; ++i) {
            auto w = std::make_unique<watcher>();
            w->fd = connect_to(o.host, port);
            send_all(w->fd, request_for(i, shared));
            w->probe = watchers.empty();
            w->count_only = o.count_only;
            watchers.push_back(std::move(w));
        }
        stop = false;
        for (int t = 0; t < threads; ++t) {
            std::vector<watcher*> mine;
            for (std::size_t i = static_cast<std::size_t>(t); i < watchers.size();
                 i += static_cast<std::size_t>(threads)) {
                mine.push_back(watchers[i].get());
            }
            readers.emplace_back(reader, std::move(mine), std::cref(stop));
        }
        const auto answered_by = clock_type::now() + std::chrono::seconds(120);
        while (!std::all_of(watchers.begin(), watchers.end(),
                            [](const auto& w) { return w->answered.load(); })) {
            if (clock_type::now() > answered_by) {
                fail("not every watcher got its initial answer");
            }
            std::this_thread::sleep_for(std::chrono::milliseconds(10));
        }
        if (std::any_of(watchers.begin(), watchers.end(), [](const auto& w) { return w->refused.load(); })) {
            fail("a watcher's world.watch was refused (its error is above)");
        }
    };
    const auto close_watchers = [&]() {
        stop = true;
        for (auto& r : readers) {
            r.join();
        }
        readers.clear();
        for (const auto& w : watchers) {
            close(w->fd);
        }
        watchers.clear();
    };
    open_watchers(false);
    (void)ctl.call("world.resume", {{"world", o.world}});

    json report = {{"watchers", o.watchers},
                   {"entities", o.entities},
                   {"hz", o.hz},
                   {"reader_threads", threads},
                   {"server", server ? "started" : o.host + ":" + std::to_string(port)}};
    if (o.aoi > 0) {
        std::uint64_t in_view = 0;
        for (const auto& w : watchers) {
            in_view += w->initial.load();
        }
        report["aoi"] = {{"radius", o.aoi},
                         {"side_m", 2 * half},
                         {"mean_entities_in_view", static_cast<double>(in_view) / o.watchers}};
    }
    report["keeping_up"] = measure(o, ctl, watchers, pid, -1);
    if (!o.as_json) {
        std::printf("watch_bench: %d watchers x %d movers at %.0f Hz, %.0f s per phase, %d reader threads\n",
                    o.watchers, o.entities, o.hz, o.seconds, threads);
        if (o.aoi > 0) {
            std::printf(
                "aoi: movers over a %.0f m square; each watcher watches near(its own mover, %g): "
                "%.1f entities in view on average\n",
                2 * half, o.aoi, report["aoi"]["mean_entities_in_view"].get<double>());
        }
        print_phase(o.aoi > 0 ? "all watchers reading, distinct near() watches:" : "all watchers reading:",
                    report["keeping_up"]);
        std::fflush(stdout);
    }

    if (o.stalled > 0) {
        // Stalled watchers: read the initial answer, then nothing more.
        std::vector<int> stalled;
        for (int i = 0; i < o.stalled; ++i) {
            const int fd = connect_to(o.host, port);
            send_all(fd, request_for(o.watchers + i, false));
            std::string line;
            std::array<char, 65536> chunk{};
            while (line.find('\n') == std::string::npos) {
                const auto n = recv(fd, chunk.data(), chunk.size(), 0);
                if (n <= 0) {
                    fail("a stalled watcher lost its connection before its answer");
                }
                // Keep only what is after the newline: it stays unread from now on anyway.
                line.assign(chunk.data(), static_cast<std::size_t>(n));
            }
            stalled.push_back(fd);
        }
        report["stalled_watchers"] = o.stalled;
        report["with_stalled"] = measure(o, ctl, watchers, pid, stalled.front());
        if (!o.as_json) {
            std::printf("\n");
            print_phase(("with " + std::to_string(o.stalled) +
                         " stalled watcher(s) (the figures are for the others):")
                            .c_str(),
                        report["with_stalled"]);
        }
        for (const int fd : stalled) {
            close(fd);
        }
    }
    if (o.aoi > 0) {
        // The same world and as many watchers, all watching one region of the same size: one
        // shared encoding, the reference for what distinct views cost.
        close_watchers();
        open_watchers(true);
        std::uint64_t in_view = 0;
        for (const auto& w : watchers) {
            in_view += w->initial.load();
        }
        report["shared"] = measure(o, ctl, watchers, pid, -1);
        report["shared"]["mean_entities_in_view"] = static_cast<double>(in_view) / o.watchers;
        const auto per_update = [](const json& r) { return r.value("server_cpu_ns_per_update", 0.0); };
        const double shared_ns = per_update(report["shared"]);
        report["distinct_over_shared_cpu_per_update"] =
            shared_ns > 0 ? per_update(report["keeping_up"]) / shared_ns : 0.0;
        if (!o.as_json) {
            std::printf("\n");
            print_phase(("shared: " + std::to_string(o.watchers) + " identical watches of near(0, 0, " +
                         std::to_string(o.aoi) + "), " +
                         std::to_string(report["shared"]["mean_entities_in_view"].get<double>()) +
                         " entities in view:")
                            .c_str(),
                        report["shared"]);
            std::printf("\ndistinct / shared server CPU per entity update: %.2fx\n",
                        report["distinct_over_shared_cpu_per_update"].get<double>());
        }
    }
    close_watchers();
    try {
        (void)ctl.call("world.destroy", {{"world", o.world}});
    } catch (const std::exception&) {
        // best effort
    }
    if (o.as_json) {
        std::printf("%s\n", report.dump().c_str());
    }
    std::fflush(stdout);
    return 0;
}

}  // namespace

int main(int argc, char** argv) {
    options o;
    CLI::App app{"watch_bench: world.watch throughput, lag and cost, with and without a stalled watcher"};
    app.add_option("--host", o.host, "server address (with --port)")->capture_default_str();
    app.add_option("--port", o.port,
                   "port of a running ecsd; without it, watch_bench starts one on a free port");
    app.add_option("--ecsd", o.ecsd, "ecsd binary to start (default: the ecsd next to watch_bench)");
    app.add_option("--server-arg", o.server_args, "extra argument for the started ecsd (repeatable)")
        ->allow_extra_args(false);
    app.add_option("--server-pid", o.server_pid, "pid of the running ecsd (--port), for CPU time and RSS");
    app.add_option("--world", o.world, "world to create (destroyed first if it exists)")
        ->capture_default_str();
    app.add_option("--hz", o.hz, "tick rate of the world")
        ->capture_default_str()
        ->check(CLI::Range(1.0, 1000.0));
    app.add_option("--entities", o.entities, "moving entities")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000000));
    app.add_option("--watchers", o.watchers, "watcher connections")
        ->capture_default_str()
        ->check(CLI::Range(1, 10000));
    app.add_option("--stalled", o.stalled,
                   "watchers that stop reading, in a second phase (0: no second phase)")
        ->capture_default_str()
        ->check(CLI::Range(0, 100));
    app.add_option("--seconds", o.seconds, "seconds measured per phase")
        ->capture_default_str()
        ->check(CLI::PositiveNumber);
    app.add_option("--warmup", o.warmup, "seconds before each phase is measured")
        ->capture_default_str()
        ->check(CLI::NonNegativeNumber);
    app.add_option("--threads", o.threads, "reader threads (poll)")
        ->capture_default_str()
        ->check(CLI::Range(1, 64));
    app.add_flag("--json", o.as_json, "print one JSON object of figures");
    app.add_flag("--count-only", o.count_only,
                 "the cheapest clients: count notification lines and bytes without scanning them for "
                 "entity items (entity updates are then estimated as notifications x --entities)");
    app.add_option("--aoi", o.aoi,
                   "interest management: each watcher watches near() about its own mover with this radius "
                   "(metres; the world is laid out for about 100 movers in range), then as many identical "
                   "watches of one region are measured beside it (0: every watcher watches everything)")
        ->capture_default_str()
        ->check(CLI::Range(0.0, 1e6));
    CLI11_PARSE(app, argc, argv);
    signal(SIGPIPE, SIG_IGN);
    try {
        return run(o);
    } catch (const std::exception& e) {
        std::fprintf(stderr, "watch_bench: %s\n", e.what());
        return 1;
    }
}
