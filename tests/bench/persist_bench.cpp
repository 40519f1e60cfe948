// Snapshot benchmark (issues 7 and 16): save and load time and file size for a world of N entities
// (default 1,000,000) with Position and Velocity, in each snapshot format (JSON, binary, binary with
// zstd) beside the raw component bytes, and the tick while it autosaves: the world ticks at 60 Hz
// for --seconds without saving, then as long again with a save every second, in-process (the way
// before issue 16: the tick waits for the whole save) and in a forked child (what ecsd's autosave
// does), writing JSON (before) and binary (now). Run from a Release build:
//   build/release/bin/persist_bench [--entities N] [--dir DIR] [--seconds S] [--json] [--replay-only]
// --replay-only measures the journal replay of N requests alone (to profile it: perf record).
#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <future>
#include <sstream>
#include <stdexcept>
#include <string>
#include <thread>
#include <utility>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "ecs/huge_page_allocator.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/world_directory.hpp"
#include "hosting/world_log.hpp"
#include "memory/forked_save.hpp"
#include "methods/methods.hpp"
#include "persist/atomic_file.hpp"
#include "persist/journal.hpp"
#include "persist/snapshot.hpp"
#include "persist/snapshot_binary.hpp"
#include "rpc/method_table.hpp"
#include "rpc/services.hpp"

using namespace ecsd;
using nlohmann::json;

namespace {
double ms_since(std::chrono::steady_clock::time_point t0) {
    return std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
}

double quantile(std::vector<double> v, double q) {
    if (v.empty()) return 0;
    std::sort(v.begin(), v.end());
    return v[std::min(v.size() - 1, static_cast<std::size_t>(q * static_cast<double>(v.size())))];
}

/// @brief How a world ticked at 60 Hz for a while, with or without saves every second.
struct tick_run {
    std::vector<double> ticks_ms;  ///< each tick, with the save work done on it
    std::size_t skipped = 0;       ///< deadlines passed while a tick was still running
    std::size_t saves = 0;
    std::vector<double> start_ms;  ///< each tick that started a save (with the fork, or the whole save)
    std::vector<double> forks_ms;  ///< each fork: how long the ticking thread was stopped by it
    double after_max_ms = 0;       ///< the slowest tick right after a fork (copy-on-write faults)
    double save_max_ms = 0;        ///< the longest save, from its start to its file on disk
    std::string error;
};

enum class save_mode { none, inline_save, fork_save };

/// @brief The sealed snapshot file of `format`, as world_log writes it.
std::string snapshot_file(const world::world& w, persist::snapshot_format format) {
    if (format == persist::snapshot_format::json_text)
        return persist::seal_snapshot(persist::snapshot_text(w, 0));
    return persist::binary_snapshot(w, 0, format == persist::snapshot_format::zstd);
}

tick_run tick_at_60hz(world::world& w, const std::filesystem::path& path, double seconds, save_mode mode,
                      persist::snapshot_format format = persist::snapshot_format::json_text) {
    using clock = std::chrono::steady_clock;
    const auto period = std::chrono::microseconds(16667);
    tick_run run;
    const auto start = clock::now();
    auto deadline = start;
    auto next_save = start + std::chrono::seconds(1);
    std::unique_ptr<memory::background_save> bg;
    clock::time_point bg_started{};
    bool after_fork = false;
    std::thread collapse;
    std::future<memory::spare_blocks> spares;  // made ready ahead of each save, as ecsd does
    const auto job = [&w, &path, format] {
        const std::string text = snapshot_file(w, format);
        persist::write_file_atomically(path, text);
        return static_cast<std::uint64_t>(text.size());
    };
    while (clock::now() - start < std::chrono::duration<double>(seconds)) {
        std::this_thread::sleep_until(deadline);
        const auto t0 = clock::now();
        bool starts_save = false;
        const auto state = bg ? bg->poll() : memory::background_save::state::running;
        if (bg && state != memory::background_save::state::running) {
            if (state == memory::background_save::state::failed) run.error = bg->error();
            run.save_max_ms = std::max(run.save_max_ms, ms_since(bg_started));
            bg.reset();
            // As ecsd does, off the ticking thread: huge pages back where a late child split them.
            if (collapse.joinable()) collapse.join();
            collapse = std::thread([] { (void)memory::restore_huge_pages(); });
        }
        w.run_tick();
        if (mode == save_mode::fork_save && !spares.valid() &&
            t0 >= next_save - std::chrono::milliseconds(300))
            spares = std::async(std::launch::async, memory::spare_blocks::prepare);
        // A save starts right after a tick, as ecsd's autosave does: the child then has a whole
        // period to take its copy of the world before the next tick writes it.
        if (mode != save_mode::none && t0 >= next_save && !bg) {
            starts_save = true;
            ++run.saves;
            next_save += std::chrono::seconds(1);
            if (mode == save_mode::inline_save) {
                (void)job();
                run.save_max_ms = std::max(run.save_max_ms, ms_since(t0));
            } else {
                bg_started = t0;
                // Spares not ready yet are not waited for (ecsd forks only once they are).
                const bool ready =
                    spares.valid() && spares.wait_for(std::chrono::seconds(0)) == std::future_status::ready;
                bg = memory::background_save::start(job, w.registry().arrays_written_lately(),
                                                    ready ? spares.get() : memory::spare_blocks{});
                run.forks_ms.push_back(bg->fork_ms());
            }
        }
        const double ms = ms_since(t0);
        run.ticks_ms.push_back(ms);
        if (starts_save) run.start_ms.push_back(ms);
        if (after_fork) run.after_max_ms = std::max(run.after_max_ms, ms);
        after_fork = starts_save && mode == save_mode::fork_save;
        deadline += period;
        for (auto now = clock::now(); now >= deadline + period; deadline += period) ++run.skipped;
    }
    if (bg) {  // let the last one finish, so its time is counted
        while (bg->poll() == memory::background_save::state::running)
            std::this_thread::sleep_for(std::chrono::milliseconds(5));
        run.save_max_ms = std::max(run.save_max_ms, ms_since(bg_started));
    }
    if (collapse.joinable()) collapse.join();
    return run;
}

/// @brief Journal replay through ecsd's own start-up path (net::load_world: the method table's
/// handlers): a paused world's snapshot and a journal of `records` requests, half spawns and half
/// mutations of what was spawned. Returns the seconds load_world took and, apart, the seconds
/// reading and checking the journal alone takes (persist::read_journal, a part of load_world).
std::pair<double, double> replay_seconds(const std::filesystem::path& dir, std::size_t records) {
    const std::string name = "replay";
    {
        world::world_settings s;
        s.name = name;
        s.paused = true;
        const world::world w(s);
        persist::write_file_atomically(net::world_log::snapshot_path(dir, name),
                                       persist::binary_snapshot(w, 0, false));
        const auto journal = net::world_log::journal_path(dir, name);
        std::filesystem::remove(journal);
        persist::journal_writer out(journal, persist::fsync_policy::never);
        std::uint64_t seq = 0;
        std::uint64_t first_id = std::uint64_t{1} << 32;  // generation 1, slot 0: the first id handed out
        for (std::size_t i = 0; i < records; ++i) {
            json params;
            std::string method;
            if (i % 2 == 0) {
                method = "world.spawn_entity";
                params = {
                    {"components",
                     {{"Position", {{"x", static_cast<double>(i)}, {"y", 1.5}}}, {"Velocity", {{"x", 1}}}}}};
            } else {
                method = "world.mutate_components";
                params = {{"entity", first_id + i / 2},
                          {"component", "Position"},
                          {"path", "x"},
                          {"value", static_cast<double>(i) * 0.5}};
            }
            out.append({{"seq", ++seq}, {"tick", 0}, {"method", method}, {"params", params}});
        }
    }
    auto t0 = std::chrono::steady_clock::now();
    (void)persist::read_journal(net::world_log::journal_path(dir, name));
    const double read_s = ms_since(t0) / 1000;
    net::server_config cfg;
    net::method_table methods;
    net::register_all_methods(methods);
    asio::io_context io;
    net::world_directory worlds(io, 16);
    net::server_services services(cfg, methods, worlds);
    t0 = std::chrono::steady_clock::now();
    const auto loaded = net::load_world(dir, name, io, net::replay_through(services));
    const double s = ms_since(t0) / 1000;
    if (loaded.replayed != records) throw std::runtime_error("replayed " + std::to_string(loaded.replayed));
    std::filesystem::remove(net::world_log::snapshot_path(dir, name));
    std::filesystem::remove(net::world_log::journal_path(dir, name));
    return {s, read_s};
}

json run_json(const tick_run& r) {
    return {{"ticks", r.ticks_ms.size()},
            {"tick_p50_ms", quantile(r.ticks_ms, 0.5)},
            {"tick_p99_ms", quantile(r.ticks_ms, 0.99)},
            {"tick_max_ms", quantile(r.ticks_ms, 1.0)},
            {"skipped", r.skipped},
            {"saves", r.saves},
            {"save_start_tick_p50_ms", quantile(r.start_ms, 0.5)},
            {"save_start_tick_max_ms", quantile(r.start_ms, 1.0)},
            {"tick_after_fork_max_ms", r.after_max_ms},
            {"fork_p50_ms", quantile(r.forks_ms, 0.5)},
            {"fork_max_ms", quantile(r.forks_ms, 1.0)},
            {"save_max_ms", r.save_max_ms}};
}
}  // namespace

int main(int argc, char** argv) {
    std::size_t n = 1'000'000;
    std::filesystem::path dir = std::filesystem::temp_directory_path() / "ecsd_persist_bench";
    bool as_json = false;
    bool replay_only = false;
    double seconds = 3;
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--entities") == 0 && i + 1 < argc)
            n = std::stoul(argv[++i]);
        else if (std::strcmp(argv[i], "--dir") == 0 && i + 1 < argc)
            dir = argv[++i];
        else if (std::strcmp(argv[i], "--seconds") == 0 && i + 1 < argc)
            seconds = std::stod(argv[++i]);
        else if (std::strcmp(argv[i], "--json") == 0)
            as_json = true;
        else if (std::strcmp(argv[i], "--replay-only") == 0)
            replay_only = true;
        else {
            std::fprintf(
                stderr,
                "usage: persist_bench [--entities N] [--dir DIR] [--seconds S] [--json] [--replay-only]\n");
            return 2;
        }
    }
    spdlog::set_level(spdlog::level::err);
    std::filesystem::create_directories(dir);
    if (replay_only) {
        const auto [replay_s, journal_read_s] = replay_seconds(dir, n);
        std::printf(
            "journal replay: %zu requests in %.0f ms: %.0f records/s (reading and checking alone: %.0f ms)\n",
            n, replay_s * 1000, static_cast<double>(n) / replay_s, journal_read_s * 1000);
        return 0;
    }
    const auto path = dir / "bench.snapshot";

    world::world_settings s;
    s.name = "bench";
    s.paused = true;
    world::world w(s);
    auto& reg = w.registry();
    for (std::size_t i = 0; i < n; ++i) {
        const auto e = reg.create();
        const std::size_t row = i / 1000;  // a grid of 1000 columns
        reg.emplace<world::Position>(e,
                                     {static_cast<double>(i % 1000) * 0.5, static_cast<double>(row) * 0.25});
        reg.emplace<world::Velocity>(e, {1.5, -0.25});
    }
    std::size_t rss_kb = 0;
    {
        std::ifstream status("/proc/self/status");
        for (std::string line; std::getline(status, line);)
            if (line.starts_with("VmRSS:")) rss_kb = std::stoul(line.substr(6));
    }
    // The tick while saving: the same world ticks on (movement moves every entity, so each tick
    // writes every Position page: the worst case for copy-on-write). First, while the process holds
    // only the world, as a server would.
    const auto tick_path = dir / "ticking.snapshot";
    const auto plain = tick_at_60hz(w, tick_path, seconds, save_mode::none);
    const auto inline_run = tick_at_60hz(w, tick_path, seconds, save_mode::inline_save);
    const auto fork_json_run =
        tick_at_60hz(w, tick_path, seconds, save_mode::fork_save, persist::snapshot_format::json_text);
    const auto fork_run =
        tick_at_60hz(w, tick_path, seconds, save_mode::fork_save, persist::snapshot_format::binary);
    std::filesystem::remove(tick_path);

    // Save and load in each format, as world_log does: build the sealed file, write it (fsync,
    // rename), read it back and rebuild the world.
    const auto hash_before = w.state_hash();
    struct format_run {
        persist::snapshot_format format;
        std::size_t bytes = 0;
        double serialize_ms = 0, write_ms = 0, read_ms = 0, rebuild_ms = 0;
        bool same = false;
    };
    std::vector<format_run> formats;
    for (const auto f : {persist::snapshot_format::json_text, persist::snapshot_format::binary,
                         persist::snapshot_format::zstd}) {
        format_run r{f};
        auto t0 = std::chrono::steady_clock::now();
        const std::string bytes = snapshot_file(w, f);
        r.serialize_ms = ms_since(t0);
        r.bytes = bytes.size();
        t0 = std::chrono::steady_clock::now();
        persist::write_file_atomically(path, bytes);
        r.write_ms = ms_since(t0);
        t0 = std::chrono::steady_clock::now();
        std::string back;
        persist::read_file_from(path, 0, back);
        std::unique_ptr<world::world> loaded;
        if (f == persist::snapshot_format::json_text) {
            const json doc = json::parse(back);
            r.read_ms = ms_since(t0);
            t0 = std::chrono::steady_clock::now();
            loaded = persist::from_snapshot(doc, path.string());
        } else {
            r.read_ms = ms_since(t0);
            t0 = std::chrono::steady_clock::now();
            loaded = persist::from_binary_snapshot(back, path.string());
        }
        r.rebuild_ms = ms_since(t0);
        r.same = loaded->state_hash() == hash_before;
        formats.push_back(r);
    }
    std::filesystem::remove(path);
    const bool same = std::all_of(formats.begin(), formats.end(), [](const format_run& r) { return r.same; });
    const std::size_t raw_bytes = n * (sizeof(world::Position) + sizeof(world::Velocity));

    const std::size_t replay_records = n;
    const auto [replay_s, journal_read_s] = replay_seconds(dir, replay_records);

    json by_format = json::object();
    for (const auto& r : formats)
        by_format[std::string(persist::format_name(r.format))] = {
            {"file_bytes", r.bytes},
            {"size_vs_raw", static_cast<double>(r.bytes) / static_cast<double>(raw_bytes)},
            {"save_ms", r.serialize_ms + r.write_ms},
            {"save_serialize_ms", r.serialize_ms},
            {"save_write_fsync_ms", r.write_ms},
            {"load_ms", r.read_ms + r.rebuild_ms},
            {"load_read_ms", r.read_ms},
            {"load_rebuild_ms", r.rebuild_ms},
            {"hash_equal", r.same}};
    const json out = {{"entities", n},
                      {"raw_component_bytes", raw_bytes},
                      {"formats", by_format},
                      {"hash_equal", same},
                      {"rss_bytes_while_ticking", rss_kb * 1024},
                      {"journal_replay_records", replay_records},
                      {"journal_replay_ms", replay_s * 1000},
                      {"journal_replay_records_per_s", static_cast<double>(replay_records) / replay_s},
                      {"journal_read_ms", journal_read_s * 1000},
                      {"tick_without_saving", run_json(plain)},
                      {"tick_saving_inline", run_json(inline_run)},
                      {"tick_saving_forked_json", run_json(fork_json_run)},
                      {"tick_saving_forked", run_json(fork_run)}};
    if (as_json) {
        std::puts(out.dump().c_str());
    } else {
        std::printf("%zu entities, Position+Velocity: %.1f MB of component values\n", n,
                    static_cast<double>(raw_bytes) / 1e6);
        std::printf("%-8s %10s %8s %9s %11s %12s %9s %11s %12s %5s\n", "format", "MB", "x raw", "save ms",
                    "(serialize", "write+fsync)", "load ms", "(read+parse", "rebuild)", "same");
        for (const auto& r : formats)
            std::printf("%-8s %10.1f %8.2f %9.0f %11.0f %12.0f %9.0f %11.0f %12.0f %5s\n",
                        std::string(persist::format_name(r.format)).c_str(),
                        static_cast<double>(r.bytes) / 1e6,
                        static_cast<double>(r.bytes) / static_cast<double>(raw_bytes),
                        r.serialize_ms + r.write_ms, r.serialize_ms, r.write_ms, r.read_ms + r.rebuild_ms,
                        r.read_ms, r.rebuild_ms, r.same ? "yes" : "NO");
        std::printf(
            "journal replay: %zu requests (spawns and mutations) in %.0f ms: %.0f records/s (reading and "
            "checking the journal alone: %.0f ms)\n",
            replay_records, replay_s * 1000, static_cast<double>(replay_records) / replay_s,
            journal_read_s * 1000);
        std::printf("\nticking at 60 Hz for %.0f s each, saving every second (process RSS %.0f MB):\n",
                    seconds, static_cast<double>(rss_kb) / 1024);
        std::printf("%-26s %6s %8s %8s %8s %8s %15s %10s %13s %9s\n", "", "ticks", "p50 ms", "p99 ms",
                    "max ms", "skipped", "save-tick p50/max", "next-tick", "fork p50/max", "save ms");
        const auto row = [](const char* name, const tick_run& r) {
            std::printf("%-26s %6zu %8.2f %8.2f %8.2f %8zu %8.2f/%6.2f %10.2f %6.2f/%6.2f %9.0f\n", name,
                        r.ticks_ms.size(), quantile(r.ticks_ms, 0.5), quantile(r.ticks_ms, 0.99),
                        quantile(r.ticks_ms, 1.0), r.skipped, quantile(r.start_ms, 0.5),
                        quantile(r.start_ms, 1.0), r.after_max_ms, quantile(r.forks_ms, 0.5),
                        quantile(r.forks_ms, 1.0), r.save_max_ms);
        };
        row("no save", plain);
        row("save in the tick (JSON)", inline_run);
        row("forked, JSON", fork_json_run);
        row("forked, binary (ecsd now)", fork_run);
        for (const auto* r : {&fork_json_run, &fork_run})
            if (!r->error.empty()) std::printf("forked save failed: %s\n", r->error.c_str());
    }
    return same && fork_run.error.empty() && fork_json_run.error.empty() ? 0 : 1;
}
