// ECS core benchmark (issue 3): 1,000,000 entities with Position{float x,y} and
// Velocity{float x,y}. Run by hand from a Release build:
//   build/release/bin/ecs_bench --benchmark_repetitions=7 --benchmark_report_aggregates_only=true
// Cases: create, plain_loop (update's reference: two std::vectors, no ECS), update (owning group,
// the systems' path; it also prints its best pass against the plain loop's), update_view (smallest
// pool + lookups), update_members (a tracked member set + lookups), add_remove,
// destroy (one batch call) and destroy_each; the *_tracked variants keep per-value write stamps for
// changed().
#include <algorithm>
#include <chrono>
#include <fstream>
#include <memory>
#include <string>
#include <vector>

#include <benchmark/benchmark.h>

#include "ecs/registry.hpp"

namespace {
struct Position {
    float x = 0, y = 0;
};
struct Velocity {
    float x = 0, y = 0;
};
struct Mass {
    float kg = 1;
};
constexpr std::size_t entity_count = 1'000'000;
constexpr float dt = 1.0f / 60.0f;
}  // namespace

namespace ecsd::ecs {
template <>
struct component_traits<Position> {
    static constexpr const char* name = "Position";
    static constexpr auto fields = std::make_tuple(field("x", &Position::x), field("y", &Position::y));
};
template <>
struct component_traits<Velocity> {
    static constexpr const char* name = "Velocity";
    static constexpr auto fields = std::make_tuple(field("x", &Velocity::x), field("y", &Velocity::y));
};
template <>
struct component_traits<Mass> {
    static constexpr const char* name = "Mass";
    static constexpr auto fields = std::make_tuple(field("kg", &Mass::kg));
};
}  // namespace ecsd::ecs

using ecsd::ecs::entity_id;
using ecsd::ecs::registry;

namespace {
enum class layout { group, plain };

std::unique_ptr<registry> make_world(layout l, bool tracked) {
    auto reg = std::make_unique<registry>();
    reg->register_component<Position>();
    reg->register_component<Velocity>();
    reg->register_component<Mass>();
    reg->track_writes(tracked);
    if (l == layout::group) reg->own_group<Position, Velocity>();
    return reg;
}

// Reserves the entity table and the two pools the benchmark fills (not Mass).
void reserve_pair(registry& reg) {
    reg.entities().reserve(entity_count);
    reg.storage<Position>().reserve(entity_count);
    reg.storage<Velocity>().reserve(entity_count);
}

void populate(registry& reg) {
    for (std::size_t i = 0; i < entity_count; ++i) {
        const entity_id e = reg.create();
        reg.emplace<Position>(e, {static_cast<float>(i), 0});
        reg.emplace<Velocity>(e, {1, 0});
    }
}

void physics_step(Position& p, Velocity& v) {
    v.y -= 9.8f * dt;
    p.x += v.x * dt;
    p.y += v.y * dt;
}

// Resident memory of this process in bytes (VmRSS), or 0 when unknown.
double rss_bytes() {
    std::ifstream status("/proc/self/status");
    std::string key;
    while (status >> key) {
        if (key == "VmRSS:") {
            double kib = 0;
            status >> kib;
            return kib * 1024;
        }
        status.ignore(4096, '\n');
    }
    return 0;
}

// bytes_per_entity is the registry's own count (memory_bytes()); rss_bytes_per_entity is the
// process's VmRSS grown while the world was made and populated: the two should agree.
void create(benchmark::State& state, bool tracked, bool reserve) {
    double bytes = 0;
    double rss = 0;
    for (auto _ : state) {
        state.PauseTiming();
        const double rss_before = rss_bytes();
        state.ResumeTiming();
        auto reg = make_world(layout::group, tracked);
        if (reserve) reserve_pair(*reg);
        populate(*reg);
        state.PauseTiming();
        bytes = static_cast<double>(reg->memory_bytes()) / entity_count;
        rss = std::max(rss, (rss_bytes() - rss_before) / entity_count);
        reg.reset();
        state.ResumeTiming();
    }
    state.counters["bytes_per_entity"] = bytes;
    state.counters["rss_bytes_per_entity"] = rss;
}
void BM_create(benchmark::State& state) {
    create(state, false, true);
}
void BM_create_unreserved(benchmark::State& state) {
    create(state, false, false);
}
void BM_create_tracked(benchmark::State& state) {
    create(state, true, true);
}

// The reference for update: the same step over two plain arrays, no ECS. Best of `runs` passes, in ms.
double plain_loop_ms(int runs) {
    std::vector<Position> pos(entity_count);
    std::vector<Velocity> vel(entity_count, Velocity{1, 0});
    for (std::size_t i = 0; i < entity_count; ++i) pos[i].x = static_cast<float>(i);
    double best = 1e300;
    for (int r = 0; r < runs; ++r) {
        const auto start = std::chrono::steady_clock::now();
        for (std::size_t i = 0; i < entity_count; ++i) physics_step(pos[i], vel[i]);
        benchmark::ClobberMemory();
        best = std::min(
            best,
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    benchmark::DoNotOptimize(pos.data());
    return best;
}

void BM_plain_loop(benchmark::State& state) {
    std::vector<Position> pos(entity_count);
    std::vector<Velocity> vel(entity_count, Velocity{1, 0});
    for (std::size_t i = 0; i < entity_count; ++i) pos[i].x = static_cast<float>(i);
    for (auto _ : state) {
        for (std::size_t i = 0; i < entity_count; ++i) physics_step(pos[i], vel[i]);
        benchmark::ClobberMemory();
    }
    benchmark::DoNotOptimize(pos.data());
}

// Guard: `update` hands each() a plain function, as users do; each() must inline it (an out-of-line
// call per entity costs about 3x). The case prints its best pass beside the plain loop's best, taken
// in the same run: `vs_plain` should stay near 1.
void update(benchmark::State& state, layout l, bool tracked) {
    auto reg = make_world(l, tracked);
    reserve_pair(*reg);
    populate(*reg);
    double best = 1e300;
    for (auto _ : state) {
        const auto start = std::chrono::steady_clock::now();
        reg->each<Position, Velocity>(physics_step);
        benchmark::ClobberMemory();
        best = std::min(
            best,
            std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - start).count());
    }
    const double plain = plain_loop_ms(20);
    state.counters["best_ms"] = best;
    state.counters["plain_loop_ms"] = plain;
    state.counters["vs_plain"] = best / plain;
    state.counters["bytes_per_entity"] = static_cast<double>(reg->memory_bytes()) / entity_count;
}
void BM_update(benchmark::State& state) {
    update(state, layout::group, false);
}
void BM_update_tracked(benchmark::State& state) {
    update(state, layout::group, true);
}
void BM_update_view(benchmark::State& state) {
    update(state, layout::plain, false);
}

// A system that walks its own member set and looks both components up (the classic ECS article's way).
void BM_update_members(benchmark::State& state) {
    auto reg = make_world(layout::plain, false);
    const int members = reg->track(reg->resolve(ecsd::ecs::parse_query("Position, Velocity")));
    populate(*reg);
    auto& pos = reg->storage<Position>();
    auto& vel = reg->storage<Velocity>();
    for (auto _ : state) {
        reg->for_each_member(members,
                             [&](std::uint32_t slot) { physics_step(pos.get(slot), vel.get(slot)); });
        benchmark::ClobberMemory();
    }
}

void BM_add_remove(benchmark::State& state) {
    auto reg = make_world(layout::group, false);
    populate(*reg);
    std::vector<entity_id> ids;
    reg->each<Position>([&](entity_id e, Position&) { ids.push_back(e); });
    for (auto _ : state) {
        for (auto e : ids) reg->emplace<Mass>(e, {2});
        for (auto e : ids) reg->remove<Mass>(e);
        reg->end_tick();  // as the world does: change records are kept for one tick only
    }
}

// Destroys all 1M: in one batch call (the spells' and world.despawn_entities' path) or one call each.
void destroy_all(benchmark::State& state, bool batch) {
    for (auto _ : state) {
        state.PauseTiming();
        auto reg = make_world(layout::group, false);
        populate(*reg);
        std::vector<entity_id> ids;
        ids.reserve(entity_count);
        reg->each<Position>([&](entity_id e, Position&) { ids.push_back(e); });
        state.ResumeTiming();
        if (batch) {
            reg->destroy(ids);
        } else {
            for (auto e : ids) reg->destroy(e);
        }
        reg->end_tick();
        state.PauseTiming();
        if (reg->size() != 0) state.SkipWithError("entities left after destroy");
        reg.reset();
        state.ResumeTiming();
    }
}
void BM_destroy(benchmark::State& state) {
    destroy_all(state, true);
}
void BM_destroy_each(benchmark::State& state) {
    destroy_all(state, false);
}
}  // namespace

BENCHMARK(BM_create)->Name("create")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_create_unreserved)->Name("create_unreserved")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_create_tracked)->Name("create_tracked")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_plain_loop)->Name("plain_loop")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_update)->Name("update")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_update_tracked)->Name("update_tracked")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_update_view)->Name("update_view")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_update_members)->Name("update_members")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_remove)->Name("add_remove")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_destroy_each)->Name("destroy_each")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_destroy)->Name("destroy")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
