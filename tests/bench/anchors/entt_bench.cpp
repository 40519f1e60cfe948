// EnTT doing ecs_bench's work: the same 1M entities with float Position and Velocity, an owning
// group over the pair, and the same create, update_view, add_remove, destroy_each and destroy.
// Not part of the build (EnTT is no Debian package): scripts/bench-vs-entt.sh compiles it against
// an EnTT checkout you give it and runs it beside ecs_bench, pinned to one core.
#include <vector>

#include <benchmark/benchmark.h>
#include <entt/entt.hpp>
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
constexpr std::size_t N = 1'000'000;
constexpr float dt = 1.0f / 60.0f;
void populate(entt::registry& r) {
    for (std::size_t i = 0; i < N; ++i) {
        auto e = r.create();
        r.emplace<Position>(e, static_cast<float>(i), 0.f);
        r.emplace<Velocity>(e, 1.f, 0.f);
    }
}
void BM_create(benchmark::State& s) {
    for (auto _ : s) {
        auto r = std::make_unique<entt::registry>();
        r->group<Position, Velocity>();
        r->storage<entt::entity>().reserve(N);
        r->storage<Position>().reserve(N);
        r->storage<Velocity>().reserve(N);
        populate(*r);
        s.PauseTiming();
        r.reset();
        s.ResumeTiming();
    }
}
void BM_update_view(benchmark::State& s) {
    entt::registry r;
    populate(r);
    auto v = r.view<Position, Velocity>();
    for (auto _ : s) {
        v.each([](Position& p, Velocity& ve) {
            ve.y -= 9.8f * dt;
            p.x += ve.x * dt;
            p.y += ve.y * dt;
        });
        benchmark::ClobberMemory();
    }
}
void BM_add_remove(benchmark::State& s) {
    entt::registry r;
    r.group<Position, Velocity>();
    populate(r);
    std::vector<entt::entity> ids(r.view<Position>().begin(), r.view<Position>().end());
    for (auto _ : s) {
        for (auto e : ids) r.emplace<Mass>(e, 2.f);
        for (auto e : ids) r.remove<Mass>(e);
    }
}
void destroy_all(benchmark::State& s, bool batch) {
    for (auto _ : s) {
        s.PauseTiming();
        auto r = std::make_unique<entt::registry>();
        r->group<Position, Velocity>();
        populate(*r);
        std::vector<entt::entity> ids(r->view<Position>().begin(), r->view<Position>().end());
        s.ResumeTiming();
        if (batch)
            r->destroy(ids.begin(), ids.end());
        else
            for (auto e : ids) r->destroy(e);
        s.PauseTiming();
        r.reset();
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
BENCHMARK(BM_create)->Name("entt/create")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_update_view)->Name("entt/update_view")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_add_remove)->Name("entt/add_remove")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_destroy_each)->Name("entt/destroy_each")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK(BM_destroy)->Name("entt/destroy")->Unit(benchmark::kMillisecond)->UseRealTime();
BENCHMARK_MAIN();
