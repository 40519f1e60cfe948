// flecs doing ecs_bench's work: the same 1M entities with float Position and Velocity, and the
// same create, update_view, destroy_each and destroy (one batch: flecs's delete_with, which clears
// the tables that hold Position). Not part of the build (flecs is no Debian package):
// scripts/bench-vs-flecs.sh compiles it against a flecs checkout you give it and runs it beside
// ecs_bench, pinned to one core.
#include <flecs.h>

#include <memory>
#include <vector>

#include <benchmark/benchmark.h>
namespace {
struct Position {
    float x = 0, y = 0;
};
struct Velocity {
    float x = 0, y = 0;
};
constexpr std::size_t N = 1'000'000;
constexpr float dt = 1.0f / 60.0f;
std::unique_ptr<flecs::world> make_world() {
    auto w = std::make_unique<flecs::world>();
    w->component<Position>();
    w->component<Velocity>();
    w->dim(static_cast<std::int32_t>(N + 1024));  // reserve ids, as ecs_bench reserves
    return w;
}
void populate(flecs::world& w) {
    for (std::size_t i = 0; i < N; ++i)
        w.entity().set<Position>({static_cast<float>(i), 0.f}).set<Velocity>({1.f, 0.f});
}
std::vector<flecs::entity_t> ids_of(flecs::world& w) {
    std::vector<flecs::entity_t> ids;
    ids.reserve(N);
    w.each([&](flecs::entity e, const Position&) { ids.push_back(e.id()); });
    return ids;
}
void BM_create(benchmark::State& s) {
    for (auto _ : s) {
        s.PauseTiming();
        auto w = make_world();
        s.ResumeTiming();
        populate(*w);
        s.PauseTiming();
        w.reset();
        s.ResumeTiming();
    }
}
void BM_update_view(benchmark::State& s) {
    auto w = make_world();
    populate(*w);
    auto q = w->query_builder<Position, Velocity>().cached().build();  // flecs's cached query
    for (auto _ : s) {
        q.each([](Position& p, Velocity& ve) {
            ve.y -= 9.8f * dt;
            p.x += ve.x * dt;
            p.y += ve.y * dt;
        });
        benchmark::ClobberMemory();
    }
}
void destroy_all(benchmark::State& s, bool batch) {
    for (auto _ : s) {
        s.PauseTiming();
        auto w = make_world();
        populate(*w);
        const auto ids = ids_of(*w);
        s.ResumeTiming();
        if (batch)
            w->delete_with<Position>();
        else
            for (auto e : ids) ecs_delete(w->c_ptr(), e);
        s.PauseTiming();
        if (w->count<Position>() != 0) s.SkipWithError("entities left after destroy");
        w.reset();
        s.ResumeTiming();
    }
}
void BM_destroy(benchmark::State& s) {
    destroy_all(s, true);
}
void BM_destroy_each(benchmark::State& s) {
    destroy_all(s, false);
}
}  // namespace
BENCHMARK(BM_create)->Name("flecs/create")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_update_view)->Name("flecs/update_view")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_destroy_each)->Name("flecs/destroy_each")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_destroy)->Name("flecs/destroy")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
