// World tick benchmark (issue 4): ms per tick, median and p99 over 600 ticks, for
//   movers:    100k and 1M entities with Position, Velocity, RigidBody under gravity
//   plain_100k, plain_1m: the references for the movers: the same arithmetic (gravity scaled by
//              mass > 0 and gravity_scale, semi-implicit Euler, values kept within +-1e15) over
//              plain arrays of the same structs, no ECS and no other system; the ratio is printed
//   colliders: 10k and 100k circles (radius 0.5) on a jittered grid 0.9 m apart,
//              so each touches a few neighbours, with collision detection and response.
//   plain_grid_10k, plain_grid_100k: the reference for the colliders: the same bodies, the same
//              movement, a uniform grid by counting sort, the same pair search (own cell and four
//              forward cells) and the same response arithmetic, over plain arrays on one thread,
//              with no ECS, no Contacts written and no other system
//   scripted_chase_10k: 10,000 monsters steer toward the nearest of 4 players each tick, a Lua
//              system (world.define_system) through the script API, every built-in but cleanup off
//   plain_lua_chase_10k: its reference, the same arithmetic in plain Lua over plain Lua tables
//   budgeted_lua_chase_10k: the same, with the count hook every script run has for its instruction
//              budget set (Lua then checks the hook before every instruction): the interpreter's
//              floor under the sandbox. scripted / budgeted is the binding's own cost.
//   builtin_chase_10k: the same chase written in C++ over the registry, for scale
//   near_views_100k: issue 46's distinct near() watches without the network: 100,000 movers in a
//              square where about 100 are within 10 m of any point (as watch_bench --aoi 10 lays
//              them out), and per tick the world's tick, then one grid of positions and the diff of
//              1,000 watch views "Position, Velocity, near(E, 10)", each about its own mover E, as
//              the watch hub publishes them. Printed beside it: the tick alone (bounded_movers_100k)
//              and the tick with the grid alone (near_grid_100k).
//   near_views_rotating_100k: the same views, 100 of them diffed per tick in turn, as the server's
//              watch budget lets through (each view's state out of cache when its turn comes, as
//              in the server): (this - near_grid_100k) / 100 is one view's diff.
//   proxy_model_chase_10k: the same chase script (chase_script, unchanged) over a stand-in `w`
//              whose handles hold userdata proxies with C __index/__newindex over plain C++
//              arrays: what a binding without copies into tables and back would cost at least
//              (no undo log, no checks, no change stamps). A model for issue 42's next step.
// Every world case runs once per thread count of --threads (default: 1 and every core), so the
// figures at one thread and at all cores come from one run; the plain_ references are one thread.
// Run from a Release build: build/release/bin/tick_bench [--json] [--systems] [--ticks N]
//   [--threads 1,2] [--case NAME[,NAME...]]; pin it with taskset to measure one core. --systems
//   prints each world case's systems' median and p99 (their own stats) to stderr.
#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <memory>
#include <numbers>
#include <random>
#include <string>
#include <thread>
#include <vector>

#include <lua.hpp>
#include <nlohmann/json.hpp>
#include <spdlog/spdlog.h>

#include "world/collision.hpp"
#include "world/position_grid.hpp"
#include "world/watch_view.hpp"
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

bool print_systems = false;     // --systems
const char* current_case = "";  // its name, for --systems

figures measure(world& w, int ticks) {
    const auto f = time_ticks(ticks, [&] { w.run_tick(); });
    if (print_systems) {  // to stderr: the table and --json on stdout stay as they are
        std::fprintf(stderr, "%s, %u thread(s), each system over the last %d ticks:\n", current_case,
                     w.threads(), std::min(ticks, 256));
        for (const auto& d : w.systems())
            if (d.stats.runs() > 0)
                std::fprintf(stderr, "  %-24s median %8.3f ms  p99 %8.3f ms\n", d.name.c_str(),
                             d.stats.quantile(0.5), d.stats.quantile(0.99));
    }
    return f;
}

world_settings bench_settings(unsigned threads = 1) {
    world_settings s;
    s.name = "bench";
    s.paused = true;
    s.threads = threads;
    return s;
}

figures movers(std::size_t n, int ticks, unsigned threads) {
    world w(bench_settings(threads));
    json list = json::array();
    auto& reg = w.registry();
    for (std::size_t i = 0; i < n; ++i) {
        const auto e = reg.create();
        const std::size_t row = i / 1000;
        reg.emplace<ecsd::world::Position>(e, {static_cast<double>(i % 1000), static_cast<double>(row)});
        reg.emplace<ecsd::world::Velocity>(e, {1, 0});
        reg.emplace<ecsd::world::RigidBody>(e);
    }
    return measure(w, ticks);
}

figures plain(std::size_t n, int ticks) {
    std::vector<ecsd::world::Position> pos(n);
    std::vector<ecsd::world::Velocity> vel(n, ecsd::world::Velocity{1, 0});
    std::vector<ecsd::world::RigidBody> body(n);
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t row = i / 1000;
        pos[i] = {static_cast<double>(i % 1000), static_cast<double>(row)};
    }
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

figures colliders(std::size_t n, int ticks, unsigned threads) {
    world w(bench_settings(threads));
    auto& reg = w.registry();
    std::mt19937 rng(42);
    std::uniform_real_distribution<double> jitter(-0.05, 0.05), speed(-0.5, 0.5);
    const auto side = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
    for (std::size_t i = 0; i < n; ++i) {
        const auto e = reg.create();
        const std::size_t row = i / side;
        reg.emplace<ecsd::world::Position>(e, {static_cast<double>(i % side) * 0.9 + jitter(rng),
                                               static_cast<double>(row) * 0.9 + jitter(rng)});
        reg.emplace<ecsd::world::Velocity>(e, {speed(rng), speed(rng)});
        reg.emplace<ecsd::world::RigidBody>(e, {1, 0.5, 0});
        reg.emplace<ecsd::world::Collider>(e, {0.5, 1, 0xFFFFFFFFu});
    }
    w.run_tick();  // first contacts are added here: measure the steady state
    auto f = measure(w, ticks);
    f.pairs = static_cast<double>(w.state<ecsd::world::collision_detection_system>().pairs.size());
    return f;
}

figures plain_grid(std::size_t n, int ticks) {
    using ecsd::world::Position;
    using ecsd::world::Velocity;
    std::vector<Position> pos(n);
    std::vector<Velocity> vel(n);
    std::mt19937 rng(42);  // the same bodies as colliders()
    std::uniform_real_distribution<double> jitter(-0.05, 0.05), speed(-0.5, 0.5);
    const auto side = static_cast<std::size_t>(std::ceil(std::sqrt(static_cast<double>(n))));
    for (std::size_t i = 0; i < n; ++i) {
        const std::size_t row = i / side;
        pos[i] = {static_cast<double>(i % side) * 0.9 + jitter(rng),
                  static_cast<double>(row) * 0.9 + jitter(rng)};
        vel[i] = {speed(rng), speed(rng)};
    }
    const double r = 0.5, inv = 1.0, restitution = 0.5, gravity_scale = 0;  // RigidBody{1, 0.5, 0}
    const world_settings s = bench_settings();
    const double dt = 1.0 / s.tick_hz;
    const double gx = s.gravity_x * dt, gy = s.gravity_y * dt;
    struct body {
        double x, y;
        std::int64_t cx, cy;
        std::uint32_t index;
    };
    std::vector<body> sorted(n), by_cell(n);
    std::vector<std::uint32_t> start, fill, cell_of(n);
    std::vector<std::pair<std::uint32_t, std::uint32_t>> pairs;
    const auto one_tick = [&] {
        for (std::size_t i = 0; i < n; ++i) {  // movement
            vel[i].x += gx * gravity_scale;
            vel[i].y += gy * gravity_scale;
            pos[i].x += vel[i].x * dt;
            pos[i].y += vel[i].y * dt;
        }
        const double cell = 2 * r;  // detection: a dense grid by counting sort
        std::int64_t min_x = INT64_MAX, min_y = INT64_MAX, max_x = INT64_MIN, max_y = INT64_MIN;
        for (std::size_t i = 0; i < n; ++i) {
            const auto cx = static_cast<std::int64_t>(std::floor(pos[i].x / cell));
            const auto cy = static_cast<std::int64_t>(std::floor(pos[i].y / cell));
            sorted[i] = {pos[i].x, pos[i].y, cx, cy, static_cast<std::uint32_t>(i)};
            min_x = std::min(min_x, cx), max_x = std::max(max_x, cx);
            min_y = std::min(min_y, cy), max_y = std::max(max_y, cy);
        }
        const std::int64_t width = max_x - min_x + 1;
        const auto cells = static_cast<std::uint32_t>(width * (max_y - min_y + 1));
        const auto cell_index = [&](std::int64_t cx, std::int64_t cy) -> std::uint32_t {
            if (cx < min_x || cx > max_x || cy < min_y || cy > max_y) return cells;
            return static_cast<std::uint32_t>((cy - min_y) * width + (cx - min_x));
        };
        start.assign(std::size_t{cells} + 2, 0);
        for (std::size_t i = 0; i < n; ++i)
            ++start[(cell_of[i] = cell_index(sorted[i].cx, sorted[i].cy)) + 1];
        for (std::uint32_t k = 0; k <= cells; ++k) start[k + 1] += start[k];
        fill.assign(start.begin(), start.end() - 1);
        for (std::size_t i = 0; i < n; ++i) by_cell[fill[cell_of[i]]++] = sorted[i];
        pairs.clear();
        static constexpr std::int64_t forward[4][2] = {{1, 0}, {-1, 1}, {0, 1}, {1, 1}};
        const auto touch = [&](const body& a, const body& b) {
            const double dx = b.x - a.x, dy = b.y - a.y;
            return dx * dx + dy * dy < (2 * r) * (2 * r);
        };
        for (std::uint32_t i = 0; i < n; ++i) {
            const auto& a = by_cell[i];
            for (auto j = i + 1; j < start[cell_index(a.cx, a.cy) + 1]; ++j)
                if (touch(a, by_cell[j])) pairs.emplace_back(a.index, by_cell[j].index);
            for (const auto& d : forward) {
                const auto k = cell_index(a.cx + d[0], a.cy + d[1]);
                for (auto j = start[k]; j < start[k + 1]; ++j)
                    if (touch(a, by_cell[j])) pairs.emplace_back(a.index, by_cell[j].index);
            }
        }
        for (const auto& [i, j] : pairs) {  // response: the arithmetic of collision_response_system
            Position& pa = pos[i];
            Position& pb = pos[j];
            double nx = pb.x - pa.x, ny = pb.y - pa.y;
            const double d = std::sqrt(nx * nx + ny * ny);
            if (d > 0) {
                nx /= d;
                ny /= d;
            } else {
                nx = 1;
                ny = 0;
            }
            const double depth = 2 * r - d;
            if (depth > 0) {
                pa.x -= nx * depth * inv / (inv + inv);
                pa.y -= ny * depth * inv / (inv + inv);
                pb.x += nx * depth * inv / (inv + inv);
                pb.y += ny * depth * inv / (inv + inv);
            }
            const double rel = (vel[j].x - vel[i].x) * nx + (vel[j].y - vel[i].y) * ny;
            if (rel >= 0) continue;
            const double impulse = -(1 + restitution) * rel / (inv + inv);
            vel[i].x -= impulse * inv * nx;
            vel[i].y -= impulse * inv * ny;
            vel[j].x += impulse * inv * nx;
            vel[j].y += impulse * inv * ny;
        }
    };
    one_tick();  // as colliders(): measure the steady state
    auto f = time_ticks(ticks, one_tick);
    f.pairs = static_cast<double>(pairs.size());
    volatile double sink = pos[n / 2].y;  // keep the result observable
    (void)sink;
    return f;
}

// --- the chase (issue 42): 10,000 monsters steer toward the nearest of 4 players each tick ---------
constexpr int chase_monsters = 10'000;
constexpr int chase_players = 4;

// The system as a client defines it (world.define_system, query "AI, Position, Velocity").
constexpr const char* chase_script = R"lua(
return function(w)
  local px, py, n = {}, {}, 0
  for p in w:each("Player, Position") do
    n = n + 1
    px[n], py[n] = p.Position.x, p.Position.y
  end
  local sqrt = math.sqrt
  for e in w:each() do
    local pos, vel = e.Position, e.Velocity
    local x, y = pos.x, pos.y
    local best, bx, by = math.huge, 0, 0
    for i = 1, n do
      local dx, dy = px[i] - x, py[i] - y
      local d = dx * dx + dy * dy
      if d < best then best, bx, by = d, dx, dy end
    end
    if best > 0 then
      local k = 2 / sqrt(best)
      vel.x, vel.y = bx * k, by * k
    end
  end
end
)lua";

// The same arithmetic over plain Lua tables: the floor the binding is measured against.
constexpr const char* plain_chase = R"lua(
local monsters, players = {}, {}
for i = 0, 9999 do monsters[i + 1] = {x = i % 100, y = i // 100, vx = 0, vy = 0} end
for i = 1, 4 do players[i] = {x = 25 * i, y = 50} end
return function()
  local px, py, n = {}, {}, 0
  for i = 1, #players do
    n = n + 1
    px[n], py[n] = players[i].x, players[i].y
  end
  local sqrt = math.sqrt
  for j = 1, #monsters do
    local m = monsters[j]
    local x, y = m.x, m.y
    local best, bx, by = math.huge, 0, 0
    for i = 1, n do
      local dx, dy = px[i] - x, py[i] - y
      local d = dx * dx + dy * dy
      if d < best then best, bx, by = d, dx, dy end
    end
    if best > 0 then
      local k = 2 / sqrt(best)
      m.vx, m.vy = bx * k, by * k
    end
  end
end
)lua";

/// @brief A world of the chase's monsters and players with every built-in system but cleanup off,
/// so a tick is the chase alone.
void chase_world(world& w) {
    auto& reg = w.registry();
    for (int i = 0; i < chase_monsters; ++i) {
        const auto e = reg.create();
        reg.emplace<ecsd::world::Position>(e, {static_cast<double>(i % 100), static_cast<double>(i / 100)});
        reg.emplace<ecsd::world::Velocity>(e, {0, 0});
        reg.emplace<ecsd::world::AI>(e);
    }
    for (int i = 1; i <= chase_players; ++i) {
        const auto e = reg.create();
        reg.emplace<ecsd::world::Position>(e, {25.0 * i, 50});
        reg.emplace<ecsd::world::Player>(e);
    }
    for (const auto& s : w.list_systems())
        if (s["name"] != "cleanup") w.set_system_enabled(s["name"], false);
}

figures scripted_chase(int ticks) {
    auto limits = ecsd::world::current_script_limits();
    limits.instructions = 100'000'000;
    ecsd::world::set_script_limits(limits);
    world w(bench_settings());
    chase_world(w);
    ecsd::world::script_source src;
    src.name = "chase";
    src.query = "AI, Position, Velocity";
    src.source = chase_script;
    w.define_system(src);
    w.run_tick();  // the first run builds the handle's tables
    auto f = measure(w, ticks);
    for (const auto& s : w.systems())
        if (s.name == "chase" && !s.error.empty())
            std::fprintf(stderr, "chase failed: %s\n", s.error.c_str());
    return f;
}

// What a script run pays for its instruction budget: Lua calls a count hook's check before every
// VM instruction once any count hook is set, however large its count.
void budget_hook(lua_State* /*lua*/, lua_Debug* /*ar*/) {}

figures plain_lua_chase(int ticks, bool budgeted) {
    lua_State* lua = luaL_newstate();
    luaL_openlibs(lua);
    if (luaL_loadstring(lua, plain_chase) != LUA_OK || lua_pcall(lua, 0, 1, 0) != LUA_OK) {
        std::fprintf(stderr, "plain_lua_chase: %s\n", lua_tostring(lua, -1));
        lua_close(lua);
        return {};
    }
    const int fn = luaL_ref(lua, LUA_REGISTRYINDEX);
    if (budgeted) lua_sethook(lua, budget_hook, LUA_MASKCOUNT, 100'000'000);
    const auto f = time_ticks(ticks, [&] {
        lua_rawgeti(lua, LUA_REGISTRYINDEX, fn);
        lua_call(lua, 0, 0);
    });
    lua_close(lua);
    return f;
}

// --- the proxy model: handles whose components are userdata over the arrays -----------------------
namespace proxy_model {
struct mover {
    double x, y, vx, vy;
};
struct proxy {
    std::vector<mover>* rows;
    std::size_t row;
    bool velocity;  // Velocity's x and y are vx and vy
};
const char* key_x = nullptr;  // interned: a key compares by address
const char* key_y = nullptr;

int index(lua_State* lua) {
    const auto* p = static_cast<const proxy*>(lua_touserdata(lua, 1));
    const char* k = lua_tostring(lua, 2);
    const mover& m = (*p->rows)[p->row];
    if (k == key_x)
        lua_pushnumber(lua, p->velocity ? m.vx : m.x);
    else if (k == key_y)
        lua_pushnumber(lua, p->velocity ? m.vy : m.y);
    else
        lua_pushnil(lua);
    return 1;
}

int newindex(lua_State* lua) {
    const auto* p = static_cast<const proxy*>(lua_touserdata(lua, 1));
    const char* k = lua_tostring(lua, 2);
    int is_number = 0;
    const double v = lua_tonumberx(lua, 3, &is_number);
    if (is_number == 0) return luaL_error(lua, "%s must be a number", lua_tostring(lua, 2));
    mover& m = (*p->rows)[p->row];
    if (k == key_x) (p->velocity ? m.vx : m.x) = v;
    if (k == key_y) (p->velocity ? m.vy : m.y) = v;
    return 0;
}

// Upvalues: the handle, its two proxies, the next row.
int step(lua_State* lua) {
    auto* pos = static_cast<proxy*>(lua_touserdata(lua, lua_upvalueindex(2)));
    auto* vel = static_cast<proxy*>(lua_touserdata(lua, lua_upvalueindex(3)));
    const auto row = static_cast<std::size_t>(lua_tointeger(lua, lua_upvalueindex(4)));
    if (row >= pos->rows->size()) return 0;
    pos->row = vel->row = row;
    lua_pushinteger(lua, static_cast<lua_Integer>(row + 1));
    lua_replace(lua, lua_upvalueindex(4));
    lua_pushvalue(lua, lua_upvalueindex(1));
    lua_pushinteger(lua, static_cast<lua_Integer>(row));
    lua_setfield(lua, -2, "id");
    return 1;
}

// w:each([query]): the players for "Player, Position", else the monsters.
int each(lua_State* lua) {
    auto* rows = static_cast<std::vector<mover>*>(
        lua_touserdata(lua, lua_isnoneornil(lua, 2) ? lua_upvalueindex(1) : lua_upvalueindex(2)));
    lua_createtable(lua, 0, 3);
    const int handle = lua_gettop(lua);
    for (const bool velocity : {false, true}) {
        auto* p = static_cast<proxy*>(lua_newuserdatauv(lua, sizeof(proxy), 0));
        *p = proxy{rows, 0, velocity};
        luaL_setmetatable(lua, "proxy_model");
        lua_pushvalue(lua, -1);
        lua_setfield(lua, handle, velocity ? "Velocity" : "Position");
    }
    lua_pushinteger(lua, 0);
    lua_pushcclosure(lua, step, 4);
    return 1;
}

}  // namespace proxy_model

figures proxy_model_chase(int ticks) {
    std::vector<proxy_model::mover> monsters;
    std::vector<proxy_model::mover> players;
    for (int i = 0; i < chase_monsters; ++i) monsters.push_back({i % 100 * 1.0, i / 100 * 1.0, 0, 0});
    for (int i = 1; i <= chase_players; ++i) players.push_back({25.0 * i, 50, 0, 0});
    lua_State* lua = luaL_newstate();
    luaL_openlibs(lua);
    lua_pushliteral(lua, "x");
    proxy_model::key_x = lua_tostring(lua, -1);
    lua_pushliteral(lua, "y");
    proxy_model::key_y = lua_tostring(lua, -1);
    lua_rawsetp(lua, LUA_REGISTRYINDEX, &proxy_model::key_y);  // kept alive, so the addresses stay
    lua_rawsetp(lua, LUA_REGISTRYINDEX, &proxy_model::key_x);
    luaL_newmetatable(lua, "proxy_model");
    lua_pushcfunction(lua, proxy_model::index);
    lua_setfield(lua, -2, "__index");
    lua_pushcfunction(lua, proxy_model::newindex);
    lua_setfield(lua, -2, "__newindex");
    lua_pop(lua, 1);
    if (luaL_loadstring(lua, chase_script) != LUA_OK || lua_pcall(lua, 0, 1, 0) != LUA_OK) {
        std::fprintf(stderr, "proxy_model_chase: %s\n", lua_tostring(lua, -1));
        lua_close(lua);
        return {};
    }
    const int fn = luaL_ref(lua, LUA_REGISTRYINDEX);
    lua_createtable(lua, 0, 1);  // w
    lua_pushlightuserdata(lua, &monsters);
    lua_pushlightuserdata(lua, &players);
    lua_pushcclosure(lua, proxy_model::each, 2);
    lua_setfield(lua, -2, "each");
    const int w = luaL_ref(lua, LUA_REGISTRYINDEX);
    const auto f = time_ticks(ticks, [&] {
        lua_rawgeti(lua, LUA_REGISTRYINDEX, fn);
        lua_rawgeti(lua, LUA_REGISTRYINDEX, w);
        if (lua_pcall(lua, 1, 0, 0) != LUA_OK) {
            std::fprintf(stderr, "proxy_model_chase: %s\n", lua_tostring(lua, -1));
            lua_pop(lua, 1);
        }
    });
    lua_close(lua);
    if (monsters[0].vx == 0 && monsters[0].vy == 0)
        std::fprintf(stderr, "proxy_model_chase: no monster moved\n");
    return f;
}

// The world of near_views_100k: movers in a bounded square, about 100 within 10 m of any point.
std::unique_ptr<world> bounded_movers_world(std::size_t n, std::vector<ecsd::ecs::entity_id>& ids,
                                            unsigned threads) {
    world_settings s = bench_settings(threads);
    s.gravity_y = 0;
    const double half = std::sqrt(static_cast<double>(n) * std::numbers::pi) * 10 / 20;
    s.bounds.left = -half;
    s.bounds.right = half;
    s.bounds.bottom = -half;
    s.bounds.top = half;
    auto made = std::make_unique<world>(s);
    world& w = *made;
    std::mt19937 rng(12345);
    std::uniform_real_distribution<double> place(-half, half), speed(-5, 5);
    auto& reg = w.registry();
    for (std::size_t i = 0; i < n; ++i) {
        const auto e = reg.create();
        reg.emplace<ecsd::world::Position>(e, {place(rng), place(rng)});
        reg.emplace<ecsd::world::Velocity>(e, {speed(rng) + 0.5, speed(rng)});
        ids.push_back(e);
    }
    return made;
}

figures bounded_movers(std::size_t n, int ticks, unsigned threads) {
    std::vector<ecsd::ecs::entity_id> ids;
    const auto w = bounded_movers_world(n, ids, threads);
    return measure(*w, ticks);
}

// The same world's tick and the grid of its positions that near() views are answered from.
figures near_grid(std::size_t n, int ticks, unsigned threads) {
    std::vector<ecsd::ecs::entity_id> ids;
    const auto made = bounded_movers_world(n, ids, threads);
    world& w = *made;
    ecsd::world::position_grid grid;
    return time_ticks(ticks, [&] {
        w.run_tick();
        const world::near_index index(w, 5, &grid);
    });
}

figures near_views(std::size_t n, std::size_t views, int ticks, unsigned threads, std::size_t per_tick = 0) {
    std::vector<ecsd::ecs::entity_id> ids;
    const auto made = bounded_movers_world(n, ids, threads);
    world& w = *made;
    std::vector<std::unique_ptr<ecsd::world::watch_view>> list;
    std::string base;
    for (std::size_t i = 0; i < views; ++i) {
        const json q = "Position, Velocity, near(" + std::to_string(ids[i]) + ", 10)";
        list.push_back(std::make_unique<ecsd::world::watch_view>(w, q, std::nullopt, 1));
        base.clear();
        list.back()->rebase(w, base);
    }
    ecsd::world::position_grid grid;
    std::size_t bytes = 0;
    std::size_t next = 0;
    const auto f = time_ticks(ticks, [&] {
        w.run_tick();
        const world::near_index index(w, 5, &grid);
        if (per_tick == 0) {
            for (auto& v : list)
                if (const auto d = v->diff(w)) bytes += d->body.size();
            return;
        }
        for (std::size_t k = 0; k < per_tick; ++k) {
            if (const auto d = list[next % list.size()]->diff(w)) bytes += d->body.size();
            ++next;
        }
    });
    volatile std::size_t sink = bytes;  // the diffs are used
    (void)sink;
    return f;
}

figures builtin_chase(int ticks) {
    world w(bench_settings());
    chase_world(w);
    auto& reg = w.registry();
    std::vector<ecsd::world::Position> players;
    return time_ticks(ticks, [&] {
        players.clear();
        const auto& tagged = reg.storage<ecsd::world::Player>();
        for (std::size_t i = 0; i < tagged.size(); ++i)
            players.push_back(reg.storage<ecsd::world::Position>().get(tagged.slot_at(i)));
        reg.each<const ecsd::world::AI, const ecsd::world::Position, ecsd::world::Velocity>(
            [&](ecsd::ecs::entity_id, const ecsd::world::AI&, const ecsd::world::Position& p,
                ecsd::world::Velocity& v) {
                double best = HUGE_VAL, bx = 0, by = 0;
                for (const auto& q : players) {
                    const double dx = q.x - p.x, dy = q.y - p.y;
                    const double d = dx * dx + dy * dy;
                    if (d < best) best = d, bx = dx, by = dy;
                }
                if (best > 0) {
                    const double k = 2 / std::sqrt(best);
                    v.x = bx * k;
                    v.y = by * k;
                }
            });
    });
}

json to_json(const figures& f) {
    json out = {{"median_ms", f.median_ms}, {"p99_ms", f.p99_ms}, {"mean_ms", f.mean_ms}};
    if (f.pairs > 0) out["contact_pairs"] = f.pairs;
    return out;
}

std::vector<unsigned> parse_threads(const char* text) {
    std::vector<unsigned> out;
    std::string item;
    for (const char* p = text;; ++p) {
        if (*p == ',' || *p == '\0') {
            const int n = std::atoi(item.c_str());
            if (n < 1 || n > 64) return {};
            if (std::find(out.begin(), out.end(), static_cast<unsigned>(n)) == out.end())
                out.push_back(static_cast<unsigned>(n));
            item.clear();
            if (*p == '\0') break;
        } else {
            item += *p;
        }
    }
    return out;
}
}  // namespace

int main(int argc, char** argv) {
    bool as_json = false;
    int ticks = 600;
    std::string only;  // cases to run, comma-separated: movers_100k, plain_100k, movers_1m, plain_1m,
                       // colliders_10k, plain_grid_10k, ...
    const unsigned cores = std::max(1U, std::thread::hardware_concurrency());
    std::vector<unsigned> thread_counts =
        cores > 1 ? std::vector<unsigned>{1, cores} : std::vector<unsigned>{1};
    spdlog::set_level(spdlog::level::err);  // every tick of the 1M case overruns 60 Hz by design
    for (int i = 1; i < argc; ++i) {
        if (std::strcmp(argv[i], "--json") == 0) {
            as_json = true;
        } else if (std::strcmp(argv[i], "--systems") == 0) {
            print_systems = true;
        } else if (std::strcmp(argv[i], "--case") == 0 && i + 1 < argc) {
            only = argv[++i];
        } else if (std::strcmp(argv[i], "--ticks") == 0 && i + 1 < argc) {
            ticks = std::max(1, std::atoi(argv[++i]));
        } else if (std::strcmp(argv[i], "--threads") == 0 && i + 1 < argc) {
            thread_counts = parse_threads(argv[++i]);
            if (thread_counts.empty()) {
                std::fprintf(stderr, "tick_bench: --threads takes counts from 1 to 64, such as 1,2\n");
                return 2;
            }
        } else {
            std::fprintf(stderr,
                         "usage: tick_bench [--json] [--systems] [--ticks N] [--threads N[,N...]] [--case "
                         "NAME[,NAME...]]\n");
            return 2;
        }
    }
    struct result {
        std::string name;
        unsigned threads;
        figures f;
    };
    const std::pair<const char*, std::function<figures(unsigned)>> cases[] = {
        {"movers_100k", [&](unsigned t) { return movers(100'000, ticks, t); }},
        {"plain_100k", [&](unsigned) { return plain(100'000, ticks); }},
        {"movers_1m", [&](unsigned t) { return movers(1'000'000, ticks, t); }},
        {"plain_1m", [&](unsigned) { return plain(1'000'000, ticks); }},
        {"colliders_10k", [&](unsigned t) { return colliders(10'000, ticks, t); }},
        {"plain_grid_10k", [&](unsigned) { return plain_grid(10'000, ticks); }},
        {"colliders_100k", [&](unsigned t) { return colliders(100'000, ticks, t); }},
        {"plain_grid_100k", [&](unsigned) { return plain_grid(100'000, ticks); }},
        {"scripted_chase_10k", [&](unsigned) { return scripted_chase(ticks); }},
        {"plain_lua_chase_10k", [&](unsigned) { return plain_lua_chase(ticks, false); }},
        {"budgeted_lua_chase_10k", [&](unsigned) { return plain_lua_chase(ticks, true); }},
        {"builtin_chase_10k", [&](unsigned) { return builtin_chase(ticks); }},
        {"bounded_movers_100k", [&](unsigned t) { return bounded_movers(100'000, ticks, t); }},
        {"near_grid_100k", [&](unsigned t) { return near_grid(100'000, ticks, t); }},
        {"near_views_100k", [&](unsigned t) { return near_views(100'000, 1000, ticks, t); }},
        {"near_views_rotating_100k", [&](unsigned t) { return near_views(100'000, 1000, ticks, t, 100); }},
        {"proxy_model_chase_10k", [&](unsigned) { return proxy_model_chase(ticks); }},
    };
    std::vector<result> results;
    for (const auto& [name, run] : cases) {
        if (!only.empty() && ("," + only + ",").find("," + std::string(name) + ",") == std::string::npos)
            continue;
        current_case = name;
        if (std::strncmp(name, "plain_", 6) == 0 || std::strstr(name, "chase") != nullptr) {
            // the references, and the chase (scripts run on the world's thread), run on one thread
            results.push_back({name, 1, run(1)});
            continue;
        }
        for (unsigned t : thread_counts) results.push_back({name, t, run(t)});
    }
    if (results.empty()) {
        std::fprintf(stderr, "tick_bench: no case named '%s'\n", only.c_str());
        return 2;
    }
    // Cases against their references, when both ran: movers_N / plain_N, colliders_N / plain_grid_N.
    const auto reference_of = [](const std::string& name) -> std::string {
        if (name.starts_with("movers_")) return "plain_" + name.substr(7);
        if (name.starts_with("colliders_")) return "plain_grid_" + name.substr(10);
        if (name.starts_with("scripted_chase_")) return "plain_lua_chase_" + name.substr(15);
        if (name.starts_with("budgeted_lua_chase_")) return "plain_lua_chase_" + name.substr(19);
        if (name.starts_with("proxy_model_chase_")) return "plain_lua_chase_" + name.substr(18);
        return {};
    };
    const auto find_reference = [&](const result& r) -> const result* {
        const auto ref = reference_of(r.name);
        for (const auto& x : results)
            if (!ref.empty() && x.name == ref) return &x;
        return nullptr;
    };
    const auto ratio = [&](const result& r) {
        const auto* ref = find_reference(r);
        return ref ? r.f.median_ms / ref->f.median_ms : 0.0;
    };
    if (as_json) {
        json out = {{"ticks", ticks}, {"cores", cores}, {"cases", json::array()}};
        for (const auto& r : results) {
            json c = to_json(r.f);
            c["case"] = r.name;
            c["threads"] = r.threads;
            if (ratio(r) > 0) c["reference"] = {{"case", find_reference(r)->name}, {"ratio", ratio(r)}};
            out["cases"].push_back(std::move(c));
        }
        std::puts(out.dump().c_str());
        return 0;
    }
    std::printf("%-16s %7s %10s %10s %10s %12s   (%d ticks each)\n", "case", "threads", "median ms", "p99 ms",
                "mean ms", "/ reference", ticks);
    for (const auto& r : results) {
        std::printf("%-16s %7u %10.3f %10.3f %10.3f", r.name.c_str(), r.threads, r.f.median_ms, r.f.p99_ms,
                    r.f.mean_ms);
        if (ratio(r) > 0) std::printf(" %11.2fx (%s)", ratio(r), find_reference(r)->name.c_str());
        std::printf("\n");
    }
    // The binding's own cost: the script against the same arithmetic under the same budget hook.
    const result* scripted = nullptr;
    const result* budgeted = nullptr;
    for (const auto& r : results) {
        if (r.name == "scripted_chase_10k") scripted = &r;
        if (r.name == "budgeted_lua_chase_10k") budgeted = &r;
    }
    if (scripted != nullptr && budgeted != nullptr && budgeted->f.median_ms > 0)
        std::printf("scripted_chase_10k / budgeted_lua_chase_10k: %.2fx\n",
                    scripted->f.median_ms / budgeted->f.median_ms);
    return 0;
}
