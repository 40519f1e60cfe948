// World tick benchmark (issue 4): ms per tick, median and p99 over 600 ticks, for
//   movers:    100k and 1M entities with Position, Velocity, RigidBody under gravity
//   plain_1m:  the reference for movers_1m: the same arithmetic (gravity scaled by mass > 0 and
//              gravity_scale, semi-implicit Euler, values kept within +-1e15) over plain arrays of
//              the same structs, no ECS and no other system; the ratio is printed, not guessed
//   colliders: 10k and 100k circles (radius 0.5) on a jittered grid 0.9 m apart,
//              so each touches a few neighbours, with collision detection and response.
// Run from a Release build: build/release/bin/tick_bench [--json] [--ticks N]
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstring>
#include <functional>
#include <random>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "world/collision.hpp"
#include "world/world.hpp"

using ecsd::world::world;
using ecsd::world::world_settings;
using nlohmann::json;

namespace {
struct figures {
    double median_ms, p99_ms, mean_ms;
    double pairs = 0;  // touching pairs in the last tick (colliders)
};

// Times `ticks` calls of one_tick: median, p99 and mean in ms.
template <typename F>
figures time_ticks(int ticks, F one_tick) {
    std::vector<double> ms;
    ms.reserve(static_cast<std::size_t>(ticks));
    for (int i = 0; i < ticks; ++i) {
        const auto t0 = std::chrono::steady_clock::now();
        one_tick();
        ms.push_back(
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count());
    }
    double sum = 0;
    for (double m : ms) sum += m;
    std::sort(ms.begin(), ms.end());
    const auto at = [&](double q) {
        return ms[static_cast<std::size_t>(q * static_cast<double>(ms.size() - 1))];
    };
    return {at(0.5), at(0.99), sum / static_cast<double>(ms.size())};
}

figures measure(world& w, int ticks) {
    return time_ticks(ticks, [&] { w.run_tick(); });
}

world_settings bench_settings() {
    world_settings s;
    s.name = "bench";
    s.paused = true;
    return s;
}

figures movers(std::size_t n, int ticks) {
    world w(bench_settings());
    json list = json::array();
    auto& reg = w.registry();
    for (std::size_t i = 0; i < n; ++i) {
        const auto e = reg.create();
        reg.emplace<ecsd::world::Position>(e, {static_cast<double>(i % 1000), static_cast<double>(i / 1000)});
        reg.emplace<ecsd::world::Velocity>(e, {1, 0});
        reg.emplace<ecsd::world::RigidBody>(e);
    }
    return measure(w, ticks);
}

figures plain(std::size_t n, int ticks) {
    std::vector<ecsd::world::Position> pos(n);
    std::vector<ecsd::world::Velocity> vel(n, ecsd::world::Velocity{1, 0});
    std::vector<ecsd::world::RigidBody> body(n);
    for (std::size_t i = 0; i < n; ++i)
        pos[i] = {static_cast<double>(i % 1000), static_cast<double>(i / 1000)};
    const world_settings s = bench_settings();
    const double dt = 1.0 / s.tick_hz;
    const double gx = s.gravity_x * dt;
    const double gy = s.gravity_y * dt;
    static constexpr double limit = 1e15;  // as ecs::internal::max_number
    const auto bounded = [](double v) { return std::clamp(v, -limit, limit); };
    const auto f = time_ticks(ticks, [&] {
        for (std::size_t i = 0; i < n; ++i) {
            auto& p = pos[i];
            auto& v = vel[i];
            if (body[i].mass > 0) {
                v.x = bounded(v.x + gx * body[i].gravity_scale);
                v.y = bounded(v.y + gy * body[i].gravity_scale);
            }
            p.x = bounded(p.x + v.x * dt);
            p.y = bounded(p.y + v.y * dt);
        }
    });
    // Keep the result observable, or the loop could be dropped.
    volatile double sink = pos[n / 2].y;
    (void)sink;
    return f;
}

figures colliders(std::size_t n, int ticks) {
    world w(bench_settings());
    auto& reg = w.registry();
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> jitter(-0.05, 0.05), speed(-0.5, 0.5);
    const auto side = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
    for (std::size_t i = 0; i < n; ++i) {
        const auto e = reg.create();
        reg.emplace<ecsd::world::Position>(e, {static_cast<double>(i % side) * 0.9 + jitter(rng),
                                               static_cast<double>(i / side) * 0.9 + jitter(rng)});
        reg.emplace<ecsd::world::Velocity>(e, {speed(rng), speed(rng)});
        reg.emplace<ecsd::world::RigidBody>(e, {1, 0.5, 0});
        reg.emplace<ecsd::world::Collider>(e, {0.5, 1, 0xFFFFFFFFu});
    }
    w.run_tick();  // first contacts are added here: measure the steady state
    auto f = measure(w, ticks);
    f.pairs = static_cast<double>(w.state<ecsd::world::collision_detection_system>().pairs.size());
    return f;
}

json to_json(const figures& f) {
    json out = {{"median_ms", f.median_ms}, {"p99_ms", f.p99_ms}, {"mean_ms", f.mean_ms}};
    if (f.pairs > 0) out["contact_pairs"] = f.pairs;
    return out;
}
}  // namespace

int main(int argc, char** argv) {
    bool as_json = false;
    int ticks = 600;
    std::string only;  // run one case: movers_100k, movers_1m, plain_1m, colliders_10k, colliders_100k
    spdlog::set_level(spdlog::level::err);  // every tick of the 1M case overruns 60 Hz by design
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--json") == 0) {
            as_json = true;
        } else if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (std::strcmp(argv[i], "--ticks") == 0 && i + 1 < argc) {
            ticks = std::max(1, std::atoi(argv[++i]));
        } else {
            std::fprintf(stderr, "usage: tick_bench [--json] [--ticks N] [--case NAME]\n");
            return 2;
        }
    }
    const std::pair<const char*, std::function<figures()>> cases[] = {
        {"movers_100k", [&] { return movers(100'000, ticks); }},
        {"movers_1m", [&] { return movers(1'000'000, ticks); }},
        {"plain_1m", [&] { return plain(1'000'000, ticks); }},
        {"colliders_10k", [&] { return colliders(10'000, ticks); }},
        {"colliders_100k", [&] { return colliders(100'000, ticks); }},
    };
    std::vector<std::pair<std::string, figures>> results;
    for (const auto& [name, run] : cases)
        if (only.empty() || only == name) results.emplace_back(name, run());
    if (results.empty()) {
        std::fprintf(stderr, "tick_bench: no case named '%s'\n", only.c_str());
        return 2;
    }
    // movers_1m against its reference, when both ran.
    const auto find = [&](const char* name) -> const figures* {
        for (const auto& [n, f] : results)
            if (n == name) return &f;
        return nullptr;
    };
    const figures* ecs_case = find("movers_1m");
    const figures* reference = find("plain_1m");
    const double ratio = ecs_case && reference ? ecs_case->median_ms / reference->median_ms : 0;
    if (as_json) {
        json out = {{"ticks", ticks}, {"threads", 1}};
        for (const auto& [name, f] : results) out[name] = to_json(f);
        if (ratio > 0) out["movers_1m"]["reference"] = {{"case", "plain_1m"}, {"ratio", ratio}};
        std::puts(out.dump().c_str());
        return 0;
    }
    std::printf("%-16s %10s %10s %10s   (%d ticks each, 1 thread)\n", "case", "median ms", "p99 ms",
                "mean ms", ticks);
    for (const auto& [name, f] : results)
        std::printf("%-16s %10.3f %10.3f %10.3f\n", name.c_str(), f.median_ms, f.p99_ms, f.mean_ms);
    if (ratio > 0) std::printf("movers_1m / plain_1m (median): %.2fx\n", ratio);
    return 0;
}
