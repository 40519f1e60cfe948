// The Lua scripts of a world (script.hpp): the sandbox, the script API (w:each, w:spawn, handles),
// budgets, undo of failed runs, and the world's define / remove / restore of scripts.
//
// Lua reports errors with longjmp, which skips C++ destructors. So every function Lua calls here
// keeps its C++ objects in a scope that ends before it raises an error (the message waits in
// impl::error), and the calls into Lua made while C++ objects live are ones that cannot raise:
// raw gets, raw sets of keys a table already has, pushes of numbers and of strings already interned.
#include "world/script.hpp"

#include <algorithm>
#include <array>
#include <bit>
#include <cmath>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <unordered_set>

#include <lua.hpp>
#include <spdlog/spdlog.h>

#include "ecs/value_codec.hpp"
#include "world/world.hpp"

namespace ecsd::world {

using ecs::ecs_error;
using ecs::reason;

namespace {

std::mutex limits_mutex;
script_limits process_limits;  // guarded by limits_mutex

// Addresses used as hidden keys of a handle table (lua_rawsetp): invisible to string keys.
const char handle_key = 0;
const char shadow_key = 0;
const char copy_key = 0;

constexpr int max_json_depth = 16;
constexpr double pattern_steps = 1e8;  // worst-case backtracking a pattern call may need

/// @brief FNV-1a over text, mixed in: what seeds a run's generator.
std::uint64_t fnv(std::string_view text, std::uint64_t h = 0xcbf29ce484222325ULL) noexcept {
    for (const char c : text) {
        h ^= static_cast<unsigned char>(c);
        h *= 0x100000001b3ULL;
    }
    return h;
}
std::uint64_t splitmix(std::uint64_t& x) noexcept {
    std::uint64_t z = (x += 0x9e3779b97f4a7c15ULL);
    z = (z ^ (z >> 30U)) * 0xbf58476d1ce4e5b9ULL;
    z = (z ^ (z >> 27U)) * 0x94d049bb133111ebULL;
    return z ^ (z >> 31U);
}

bool valid_name(const std::string& n) {
    if (n.empty() || n.size() > 64) return false;
    return std::all_of(n.begin(), n.end(), [](char c) {
        return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || (c >= '0' && c <= '9') || c == '_';
    });
}

}  // namespace

void set_script_limits(const script_limits& limits) noexcept {
    const std::lock_guard lock(limits_mutex);
    process_limits = limits;
}

script_limits current_script_limits() noexcept {
    const std::lock_guard lock(limits_mutex);
    return process_limits;
}

// --- the compiled script -------------------------------------------------------------------------

namespace {
struct compiled_script {
    script_source src;
    lua_State* L = nullptr;  // the state that holds the refs
    int fn = LUA_NOREF;      // the function the chunk returned
    int w = LUA_NOREF;       // its `w` table (methods, dt, tick)
    ecs::query resolved;     // systems: the query w:each() walks
    compiled_script() = default;
    compiled_script(const compiled_script&) = delete;
    compiled_script& operator=(const compiled_script&) = delete;
    ~compiled_script() {
        // The state may be gone (world destroyed first): the host clears L before it closes.
        if (L != nullptr) {
            luaL_unref(L, LUA_REGISTRYINDEX, fn);
            luaL_unref(L, LUA_REGISTRYINDEX, w);
        }
    }
};
}  // namespace

// --- the host ------------------------------------------------------------------------------------

struct script_host::impl {
    /// @brief What one handle (an entity as a script sees it) stands for.
    struct handle_state {
        entity_id e = 0;
        std::uint32_t slot = 0;
        bool each = false;  // the iterator's reused handle (compares with storage, not a copy)
        int iter = -1;      // and its iterator's index
        bool open = true;
        std::vector<ecs::component_id> keys;  // components loaded into or assigned on the handle
    };
    struct iter_state {
        std::vector<std::uint32_t> slots;
        std::size_t pos = 0;
        int handle = -1;
        std::vector<ecs::component_id> comps;  // the query's components with tables on the handle
        bool restore = false;                  // a step replaced or removed one of them: put the tables back
        // The handle keeps the query's tables in its metatable (__index), not raw: a step need not
        // check that the script replaced one, because an assignment calls handle_newindex_mm,
        // which turns the handle into an ordinary one first (to_ordinary).
        bool fm = false;
    };
    struct pending_op {
        enum class kind : std::uint8_t { insert, remove, despawn, spawn, cast } k;
        entity_id e;
        ecs::component_id c;
        json value;
    };
    struct undo_entry {
        ecs::pool* p;
        std::uint32_t slot;
        std::size_t raw_at;  // bytes in undo_bytes, when raw_len > 0
        std::size_t raw_len;
        json old;  // otherwise the old value
    };
    struct codec {
        void (*fill)(impl&, ecs::pool&, std::uint32_t slot, int t) = nullptr;
        // Writes back the fields of table t that differ (from the copy table, or from storage).
        bool (*store)(impl&, ecs::pool&, std::uint32_t slot, int t, int copy, int names) = nullptr;
        // True when every field of table t still equals storage, compared without a copy (numbers
        // and text; false for other fields: store decides). The iterator's step asks this first.
        bool (*same)(impl&, ecs::pool&, std::uint32_t slot, int t) = nullptr;
        int names = LUA_NOREF;  // Lua array of the field names
        int name = LUA_NOREF;   // the component's name as a Lua string
        bool ready = false;
    };

    world& w;
    script_limits limits;
    lua_State* L = nullptr;
    std::size_t used = 0;
    bool oom = false;     // the allocator refused: the run is over (pcall in the script cannot catch it)
    bool killed = false;  // the instruction budget ran out: likewise
    bool running = false;
    std::uint64_t run_id = 0;  // counts runs: handles and iterators of an earlier run are closed
    std::uint64_t budget = 0;
    int env_base = LUA_NOREF;   // the template the environments copy from
    int handle_mt = LUA_NOREF;  // metatable of handles
    std::vector<codec> codecs;  // by component id

    // The run in progress.
    std::string what;  // "system 'regen'" for messages
    std::string error;
    std::vector<handle_state> handles;
    std::vector<int> open_gets;
    std::vector<iter_state> iters;
    std::vector<pending_op> ops;
    std::unordered_set<entity_id> casting;  // casters with a w:cast in ops (one per caster per tick)
    std::vector<undo_entry> undo;
    std::vector<std::byte> undo_bytes;
    std::vector<entity_id> spawned;
    std::array<std::uint64_t, 4> rng{};
    // w:near's grid: the run's positions sorted by cell (row, column), built by the first w:near of
    // a run and good until a Position is written. Once the run has written one, w:near scans (a
    // system that moves things and asks near() at each step would otherwise rebuild at each step).
    struct near_cell {
        std::int64_t cy, cx;
        std::uint32_t slot;
        bool operator<(const near_cell& o) const noexcept { return cy != o.cy ? cy < o.cy : cx < o.cx; }
    };
    std::vector<near_cell> grid;
    double grid_cell = 0;
    bool grid_built = false;
    bool positions_written = false;
    const compiled_script* current = nullptr;
    json scratch;
    // An action's call in progress (run_entry pushes them inside the protected call).
    std::string call_caller;
    const json* call_args = nullptr;

    impl(world& wd, script_limits l) : w(wd), limits(l) {}
    ecs::registry& reg() { return w.registry(); }
    // The world's checks, for the API functions (world befriends impl, not them).
    void check_components(const json& comps) const { (void)w.resolve_components(comps); }
    void check_name(const json& comps, entity_id self) const { w.check_name(comps, self); }
    void check_capacity(std::size_t more) const { w.check_capacity(more + spawned.size()); }

    static impl& of(lua_State* L) { return **static_cast<impl**>(lua_getextraspace(L)); }
    static void* alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize);
    void open();
    codec& codec_of(ecs::component_id c);
    void push_name(ecs::component_id c) { lua_rawgeti(L, LUA_REGISTRYINDEX, codec_of(c).name); }

    std::uint64_t next_random() noexcept {
        // xoshiro256**
        const std::uint64_t result = std::rotl(rng[1] * 5, 7) * 9;
        const std::uint64_t t = rng[1] << 17U;
        rng[2] ^= rng[0];
        rng[3] ^= rng[1];
        rng[1] ^= rng[2];
        rng[0] ^= rng[3];
        rng[2] ^= t;
        rng[3] = std::rotl(rng[3], 45);
        return result;
    }
    void seed(std::string_view name, std::uint64_t extra) {
        std::uint64_t x = fnv(name, fnv(w.name())) ^ (w.tick() * 0x9e3779b97f4a7c15ULL) ^ extra;
        for (auto& s : rng) s = splitmix(x);
    }
    void begin_run(const compiled_script& s, std::string label);
    void undo_run();
    void apply_ops();
    int run_protected(int nargs);
    bool flush(int h);
    bool flush_each(std::size_t iter, int ht, int tables);
    void to_ordinary(std::size_t iter, int ht);
    bool flush_gets();
    int new_handle(entity_id e, bool each);
    bool load_component(int h, ecs::component_id c, int shadow_idx);
};

namespace {

using impl = script_host::impl;

// --- Lua <-> JSON ------------------------------------------------------------------------------

/// @brief Pushes a JSON value (null as nil). Raises only when memory runs out, and its frames hold
/// no C++ object that needs destroying.
void push_json(lua_State* L, const json& j, int depth = 0) {
    luaL_checkstack(L, 3, "value too deep");
    switch (j.type()) {
        case json::value_t::boolean:
            lua_pushboolean(L, j.get<bool>() ? 1 : 0);
            return;
        case json::value_t::number_integer:
            lua_pushinteger(L, j.get<std::int64_t>());
            return;
        case json::value_t::number_unsigned: {
            const auto u = j.get<std::uint64_t>();
            if (u <= static_cast<std::uint64_t>(LUA_MAXINTEGER))
                lua_pushinteger(L, static_cast<lua_Integer>(u));
            else
                lua_pushnumber(L, static_cast<double>(u));
            return;
        }
        case json::value_t::number_float:
            lua_pushnumber(L, j.get<double>());
            return;
        case json::value_t::string: {
            const auto& s = j.get_ref<const std::string&>();
            lua_pushlstring(L, s.data(), s.size());
            return;
        }
        case json::value_t::array: {
            lua_createtable(L, static_cast<int>(j.size()), 0);
            lua_Integer i = 1;
            for (auto it = j.begin(); it != j.end(); ++it) {
                push_json(L, *it, depth + 1);
                lua_rawseti(L, -2, i++);
            }
            return;
        }
        case json::value_t::object: {
            lua_createtable(L, 0, static_cast<int>(j.size()));
            for (auto it = j.begin(); it != j.end(); ++it) {
                lua_pushlstring(L, it.key().data(), it.key().size());
                push_json(L, it.value(), depth + 1);
                lua_rawset(L, -3);
            }
            return;
        }
        default:
            lua_pushnil(L);
    }
}

/// @brief The Lua value at idx as JSON. Raw reads only (no metamethods, no allocation in Lua);
/// throws ecs_error(invalid_value) for what JSON cannot hold. An empty table is {} (or [] when
/// `empty_array`).
json to_json(lua_State* L, int idx, const std::string& where, bool empty_array = false, int depth = 0) {
    idx = lua_absindex(L, idx);
    switch (lua_type(L, idx)) {
        case LUA_TNIL:
            return nullptr;
        case LUA_TBOOLEAN:
            return lua_toboolean(L, idx) != 0;
        case LUA_TNUMBER: {
            if (lua_isinteger(L, idx) != 0) return static_cast<std::int64_t>(lua_tointeger(L, idx));
            const double d = lua_tonumber(L, idx);
            if (!std::isfinite(d)) throw ecs_error(reason::invalid_value, where + ": not a finite number");
            return d;
        }
        case LUA_TSTRING: {
            std::size_t n = 0;
            const char* s = lua_tolstring(L, idx, &n);
            if (n > ecs::internal::max_string_bytes)
                throw ecs_error(reason::invalid_value, where + ": a string longer than 65536 bytes");
            return std::string(s, n);
        }
        case LUA_TTABLE:
            break;
        default:
            throw ecs_error(reason::invalid_value,
                            where + ": a " + lua_typename(L, lua_type(L, idx)) + " has no JSON form");
    }
    if (depth >= max_json_depth) throw ecs_error(reason::invalid_value, where + ": nested too deep");
    const auto n = static_cast<lua_Integer>(lua_rawlen(L, idx));
    // An array when its keys are exactly 1..n.
    lua_Integer keys = 0;
    bool strings = true;
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        ++keys;
        if (lua_type(L, -2) != LUA_TSTRING) strings = false;
        lua_pop(L, 1);
    }
    if (keys == 0) return empty_array ? json::array() : json::object();
    if (n == keys) {
        json out = json::array();
        for (lua_Integer i = 1; i <= n; ++i) {
            lua_rawgeti(L, idx, i);
            try {
                out.push_back(to_json(L, -1, where, false, depth + 1));
            } catch (...) {
                lua_pop(L, 1);
                throw;
            }
            lua_pop(L, 1);
        }
        return out;
    }
    if (!strings)
        throw ecs_error(reason::invalid_value, where + ": a table mixes keys; JSON needs a list or names");
    json out = json::object();
    lua_pushnil(L);
    while (lua_next(L, idx) != 0) {
        std::size_t len = 0;
        const char* k = lua_tolstring(L, -2, &len);  // a string key: no conversion
        try {
            out[std::string(k, len)] = to_json(L, -1, where + "." + std::string(k, len), false, depth + 1);
        } catch (...) {
            lua_pop(L, 2);
            throw;
        }
        lua_pop(L, 1);
    }
    return out;
}

// --- component codecs ------------------------------------------------------------------------

template <typename M>
void push_field(impl& h, const M& v) {
    if constexpr (std::is_same_v<M, double>) {
        lua_pushnumber(h.L, v);
    } else if constexpr (std::is_same_v<M, std::string>) {
        lua_pushlstring(h.L, v.data(), v.size());
    } else {
        h.scratch = ecs::value_codec<M>::write(v);
        push_json(h.L, h.scratch);
    }
}

// By field name (lua_setfield, lua_getfield): Lua's string cache finds a C name by its address,
// and this measured faster than the codec's names array with raw sets. The tables a fill or a
// compare touches have no metatable, so no metamethod runs.
template <typename T>
void fill_typed(impl& h, ecs::pool& p, std::uint32_t slot, int t) {
    lua_State* L = h.L;  // NOLINT(readability-identifier-naming): the name Lua gives its state
    const T& v = static_cast<ecs::typed_pool<T>&>(p).get(slot);
    ecs::internal::for_each_field<T>([&](const auto& d) {
        using M = typename std::decay_t<decltype(d)>::value_type;
        if constexpr (std::is_same_v<M, std::string>) {
            // The table a step reuses often holds this very text (a kind, a team): no new string.
            std::size_t n = 0;
            const auto& text = v.*(d.member);
            const char* held = lua_getfield(L, t, d.name) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : nullptr;
            const bool same = held != nullptr && n == text.size() && std::memcmp(held, text.data(), n) == 0;
            lua_pop(L, 1);
            if (same) return;
        }
        push_field(h, v.*(d.member));
        lua_setfield(L, t, d.name);
    });
}

template <typename T>
bool commit_typed(impl& h, ecs::typed_pool<T>& tp, std::uint32_t slot, T next);

template <typename T>
bool same_typed(impl& h, ecs::pool& p, std::uint32_t slot, int t) {
    const T& cur = static_cast<ecs::typed_pool<T>&>(p).get(slot);
    lua_State* L = h.L;  // NOLINT(readability-identifier-naming): the name Lua gives its state
    bool same = true;
    ecs::internal::for_each_field<T>([&](const auto& d) {
        using M = typename std::decay_t<decltype(d)>::value_type;
        if (!same) return;
        const int type = lua_getfield(L, t, d.name);
        if constexpr (std::is_same_v<M, double>) {
            same = type == LUA_TNUMBER && lua_tonumber(L, -1) == cur.*(d.member);
        } else if constexpr (std::is_same_v<M, std::string>) {
            std::size_t n = 0;
            const char* text = type == LUA_TSTRING ? lua_tolstring(L, -1, &n) : nullptr;
            const auto& v = cur.*(d.member);
            same = text != nullptr && n == v.size() && std::memcmp(text, v.data(), n) == 0;
        } else {
            same = false;
        }
        lua_pop(L, 1);
    });
    return same;
}

void record_undo(impl& h, ecs::pool& p, std::uint32_t slot) {
    impl::undo_entry u{&p, slot, 0, 0, {}};
    if (const auto n = p.raw_size(); n > 0) {
        const auto* at =
            static_cast<const std::byte*>(p.value_array()) + static_cast<std::size_t>(p.index(slot)) * n;
        u.raw_at = h.undo_bytes.size();
        u.raw_len = n;
        h.undo_bytes.insert(h.undo_bytes.end(), at, at + n);
    } else {
        u.old = p.value_json(slot);
    }
    h.undo.push_back(std::move(u));
}

const char* lua_type_of(lua_State* L, int idx) {
    return lua_typename(L, lua_type(L, idx));
}

template <typename T>
bool store_typed(impl& h, ecs::pool& p, std::uint32_t slot, int t, int copy, int names) {
    auto& tp = static_cast<ecs::typed_pool<T>&>(p);
    lua_State* L = h.L;  // NOLINT(readability-identifier-naming): the name Lua gives its state
    const int top = lua_gettop(L);
    try {
        T next = tp.get(slot);
        bool changed = false;
        lua_Integer i = 0;
        ecs::internal::for_each_field<T>([&](const auto& d) {
            using M = typename std::decay_t<decltype(d)>::value_type;
            lua_rawgeti(L, names, ++i);
            lua_pushvalue(L, -1);
            lua_rawget(L, t);  // [name, value]
            if (copy != 0) {
                lua_pushvalue(L, -2);
                lua_rawget(L, copy);  // [name, value, as loaded]
                const bool same = lua_rawequal(L, -1, -2) != 0;
                lua_pop(L, 1);
                if (same) {
                    lua_pop(L, 2);
                    return;
                }
            }
            // Built only when needed: this runs for every field of every entity a system walks.
            const auto where = [&] { return std::string(ecs::component_traits<T>::name) + "." + d.name; };
            if constexpr (std::is_same_v<M, double>) {
                if (lua_type(L, -1) != LUA_TNUMBER)
                    throw ecs_error(reason::invalid_value,
                                    where() + ": expected a number, got " + lua_type_of(L, -1));
                const double x = lua_tonumber(L, -1);
                if (!std::isfinite(x) || std::fabs(x) > ecs::internal::max_number)
                    throw ecs_error(reason::invalid_value,
                                    where() + ": expected a number between -1e15 and 1e15");
                if (x != next.*(d.member)) {
                    next.*(d.member) = x;
                    changed = true;
                }
            } else {
                if constexpr (std::is_same_v<M, std::string>) {  // unchanged text: no JSON made
                    std::size_t n = 0;
                    const char* text = lua_type(L, -1) == LUA_TSTRING ? lua_tolstring(L, -1, &n) : nullptr;
                    const auto& cur = next.*(d.member);
                    if (text != nullptr && n == cur.size() && std::memcmp(text, cur.data(), n) == 0) {
                        lua_pop(L, 2);
                        return;
                    }
                }
                M value = ecs::value_codec<M>::read(to_json(L, -1, where(), true), where());
                if (!(value == next.*(d.member))) {
                    next.*(d.member) = std::move(value);
                    changed = true;
                }
            }
            lua_pop(L, 2);
        });
        if (!changed) return true;
        return commit_typed(h, tp, slot, std::move(next));
    } catch (const std::exception& e) {
        lua_settop(L, top);
        h.error = e.what();
        return false;
    }
}

/// @brief Checks a changed value and writes it, with its undo and change stamp. Throws ecs_error.
template <typename T>
bool commit_typed(impl& h, ecs::typed_pool<T>& tp, std::uint32_t slot, T next) {
    if constexpr (std::is_same_v<T, Contacts>)
        throw ecs_error(reason::invalid_value,
                        "Contacts is written by collision detection each tick, not by scripts");
    ecs::internal::check_value(next);
    if constexpr (std::is_same_v<T, Name>)
        h.check_name(json{{"Name", {{"name", next.name}}}}, h.reg().entities().id_of(slot));
    record_undo(h, tp, slot);
    tp.get(slot) = std::move(next);
    tp.mark_written(tp.index(slot));
    if constexpr (std::is_same_v<T, Position>) {
        h.positions_written = true;
        h.grid_built = false;
    }
    return true;
}

void fill_dynamic(impl& h, ecs::pool& p, std::uint32_t slot, int t) {
    const json& v = static_cast<const json*>(p.value_array())[p.index(slot)];
    lua_rawgeti(h.L, LUA_REGISTRYINDEX, h.codecs[p.id()].names);
    const int names = lua_gettop(h.L);
    const auto& fields = static_cast<ecs::dynamic_pool&>(p).schema().fields();
    for (std::size_t i = 0; i < fields.size(); ++i) {
        lua_rawgeti(h.L, names, static_cast<lua_Integer>(i) + 1);
        const auto it = v.find(fields[i].name);
        if (it == v.end())
            lua_pushnil(h.L);
        else
            push_json(h.L, *it);
        lua_rawset(h.L, t);
    }
    lua_pop(h.L, 1);
}

bool store_dynamic(impl& h, ecs::pool& p, std::uint32_t slot, int t, int copy, int names) {
    auto& dp = static_cast<ecs::dynamic_pool&>(p);
    lua_State* L = h.L;  // NOLINT(readability-identifier-naming): the name Lua gives its state
    const int top = lua_gettop(L);
    try {
        const json& cur = static_cast<const json*>(p.value_array())[p.index(slot)];
        json next = cur;
        const auto& fields = dp.schema().fields();
        for (std::size_t i = 0; i < fields.size(); ++i) {
            lua_rawgeti(L, names, static_cast<lua_Integer>(i) + 1);
            lua_pushvalue(L, -1);
            lua_rawget(L, t);
            if (copy != 0) {
                lua_pushvalue(L, -2);
                lua_rawget(L, copy);
                const bool same = lua_rawequal(L, -1, -2) != 0;
                lua_pop(L, 1);
                if (same) {
                    lua_pop(L, 2);
                    continue;
                }
            }
            next[fields[i].name] = to_json(L, -1, p.name() + "." + fields[i].name,
                                           fields[i].type == ecs::field_type::number_array);
            lua_pop(L, 2);
        }
        if (next == cur) return true;
        json made = dp.schema().make_value(next);
        record_undo(h, p, slot);
        dp.assign_json(slot, made);
        return true;
    } catch (const std::exception& e) {
        lua_settop(L, top);
        h.error = e.what();
        return false;
    }
}

template <typename... T>
void install_typed(impl& h, type_list<T...>) {
    (
        [&] {
            if constexpr (!ecs::is_tag_v<T>) {
                auto& c = h.codecs[h.reg().template registered_id<T>()];
                c.fill = &fill_typed<T>;
                c.store = &store_typed<T>;
                c.same = &same_typed<T>;
            }
        }(),
        ...);
}

// --- raising errors --------------------------------------------------------------------------

/// @brief Raises impl::error as a Lua error (no C++ object lives in this frame).
int raise(lua_State* L) {
    impl& h = impl::of(L);
    lua_pushlstring(L, h.error.data(), h.error.size());
    return lua_error(L);
}

/// @brief What a handle or an iterator keeps of itself: its index in this run, and the run, so a
/// handle or iterator a script kept from an earlier run reads as closed, never as another entity.
lua_Integer run_tag(const impl& h, std::size_t index) {
    return static_cast<lua_Integer>((h.run_id << 24U) | index);
}
int untag(const impl& h, lua_Integer tag) {
    const auto t = static_cast<std::uint64_t>(tag);
    if ((t >> 24U) != h.run_id) return -1;
    return static_cast<int>(t & 0xffffffU);
}

/// @brief The handle index stored in the handle table at idx (of this run), or -1.
int handle_index(lua_State* L, int idx) {
    if (lua_type(L, idx) != LUA_TTABLE) return -1;
    lua_rawgetp(L, idx, &handle_key);
    const int i = lua_isinteger(L, -1) != 0 ? untag(impl::of(L), lua_tointeger(L, -1)) : -1;
    lua_pop(L, 1);
    return i;
}

/// @brief An entity id from an argument: an integer, or a handle (its id).
bool entity_arg(lua_State* L, int idx, entity_id& out) {
    if (lua_isinteger(L, idx) != 0) {
        const lua_Integer v = lua_tointeger(L, idx);
        if (v < 0) return false;
        out = static_cast<entity_id>(v);
        return true;
    }
    const int hi = handle_index(L, idx);
    if (hi < 0) return false;
    impl& h = impl::of(L);
    if (static_cast<std::size_t>(hi) >= h.handles.size()) return false;
    out = h.handles[static_cast<std::size_t>(hi)].e;
    return out != 0;
}

// --- the script API --------------------------------------------------------------------------

int iter_step(lua_State* L);
int handle_newindex_mm(lua_State* L);

/// @brief __index of an iterator's components table: a component beyond the query. The handle
/// becomes an ordinary one (to_ordinary), which then answers. Upvalues: the handle, the iterator.
int iter_extra(lua_State* L) {
    impl& h = impl::of(L);
    const int tagged = untag(h, lua_tointeger(L, lua_upvalueindex(2)));
    if (tagged < 0 || static_cast<std::size_t>(tagged) >= h.iters.size())
        return 0;  // a handle of an earlier run reads nothing, as handle_index_mm
    h.to_ordinary(static_cast<std::size_t>(tagged), lua_upvalueindex(1));
    lua_pushvalue(L, 2);
    lua_gettable(L, lua_upvalueindex(1));
    return 1;
}

/// @brief Moves the iterator's tables off the handle into Q, the __index of the handle's own
/// metatable, whose __newindex is the ordinary handle's. [.., ht, .., tables]
void install_fm(lua_State* L, std::size_t idx, int ht, int tables) {
    impl& h = impl::of(L);
    lua_createtable(L, 0, static_cast<int>(h.iters[idx].comps.size()));
    const int q = lua_gettop(L);
    lua_Integer k = 0;
    for (const auto c : h.iters[idx].comps) {
        h.push_name(c);
        lua_rawgeti(L, tables, ++k);
        lua_rawset(L, q);
        h.push_name(c);
        lua_pushnil(L);
        lua_rawset(L, ht);
    }
    lua_createtable(L, 0, 1);
    lua_pushvalue(L, ht);
    lua_pushinteger(L, run_tag(h, idx));
    lua_pushcclosure(L, iter_extra, 2);
    lua_setfield(L, -2, "__index");
    lua_setmetatable(L, q);
    lua_createtable(L, 0, 3);
    lua_pushvalue(L, q);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, handle_newindex_mm);
    lua_setfield(L, -2, "__newindex");
    lua_pushliteral(L, "entity");  // as the ordinary handle's: getmetatable sees this, not the table
    lua_setfield(L, -2, "__metatable");
    lua_setmetatable(L, ht);
    lua_pop(L, 1);
    h.iters[idx].fm = true;
}

/// @brief w:each([query]): the system's query (or the one given) in id order, as one reused handle.
int api_each(lua_State* L) {
    impl& h = impl::of(L);
    if (h.current == nullptr) return luaL_error(L, "w:each() is only available while the script runs");
    const bool own = lua_isnoneornil(L, 2);
    const char* text = own ? nullptr : luaL_checkstring(L, 2);
    bool ok = true;
    std::size_t idx = 0;
    {
        try {
            impl::iter_state it;
            ecs::query q;
            if (own) {
                if (h.current->src.what != script_source::kind::system)
                    throw ecs_error(reason::invalid_params,
                                    "a spell has no query: pass one, w:each(\"Health\")");
                q = h.current->resolved;
            } else {
                const auto terms = ecs::parse_query(text);
                if (terms.near || !terms.where.empty() || terms.only)
                    throw ecs_error(reason::invalid_params,
                                    "w:each(query): near() and value filters are not supported here");
                q = h.reg().resolve(terms);
            }
            h.reg().for_each_match(q, [&](entity_id e) { it.slots.push_back(ecs::index_of(e)); });
            for (const auto c : q.all_ids) it.comps.push_back(c);
            std::sort(it.comps.begin(), it.comps.end());
            it.comps.erase(std::unique(it.comps.begin(), it.comps.end()), it.comps.end());
            h.iters.push_back(std::move(it));
            idx = h.iters.size() - 1;
        } catch (const std::exception& e) {
            h.error = e.what();
            ok = false;
        }
    }
    if (!ok) return raise(L);
    for (std::size_t k = 0; k < h.iters[idx].comps.size(); ++k) (void)h.codec_of(h.iters[idx].comps[k]);
    // The reused handle with one table per component of the query, refilled at each step.
    const int hi = h.new_handle(0, true);
    if (hi < 0) return raise(L);
    const int ht = lua_gettop(L);
    h.iters[idx].handle = hi;
    h.handles[static_cast<std::size_t>(hi)].iter = static_cast<int>(idx);
    try {
        h.handles[static_cast<std::size_t>(hi)].keys = h.iters[idx].comps;
    } catch (const std::exception& e) {
        h.error = e.what();
        ok = false;
    }
    if (!ok) return raise(L);
    lua_rawgetp(L, ht, &shadow_key);
    const int shadow = lua_gettop(L);
    // The same tables in query order, an upvalue of the step: found by position, not by name.
    lua_createtable(L, static_cast<int>(h.iters[idx].comps.size()), 0);
    const int tables = lua_gettop(L);
    lua_Integer k = 0;
    for (const auto c : h.iters[idx].comps) {
        lua_newtable(L);
        h.push_name(c);
        lua_pushvalue(L, -2);
        lua_rawset(L, shadow);
        h.push_name(c);
        lua_pushvalue(L, -2);
        lua_rawset(L, ht);
        lua_rawseti(L, tables, ++k);
    }
    lua_remove(L, shadow);
    install_fm(L, idx, ht, lua_gettop(L));
    lua_pushinteger(L, run_tag(h, idx));
    lua_insert(L, -2);
    lua_pushvalue(L, ht);
    lua_insert(L, -2);
    lua_pushcclosure(L, iter_step, 3);  // upvalues: the tag, the handle, the tables
    return 1;
}

int iter_step(lua_State* L) {
    impl& h = impl::of(L);
    const int tagged = untag(h, lua_tointeger(L, lua_upvalueindex(1)));
    if (tagged < 0) return 0;  // an iterator kept from an earlier run: it is over
    const auto idx = static_cast<std::size_t>(tagged);
    if (idx >= h.iters.size()) return 0;
    const int ht = lua_upvalueindex(2);
    const int tables = lua_upvalueindex(3);
    const int hi = h.iters[idx].handle;
    if (!h.handles[static_cast<std::size_t>(hi)].open) return 0;
    if (!h.flush_each(idx, ht, tables)) return raise(L);
    if (!h.flush_gets()) return raise(L);
    auto& reg = h.reg();
    // Components the last entity loaded beyond the query's leave the handle, and the query's
    // tables go back in place if the script replaced or removed one. Most steps skip this.
    auto& it = h.iters[idx];
    if (auto& hs = h.handles[static_cast<std::size_t>(hi)];
        !it.fm && (it.restore || hs.keys.size() != it.comps.size())) {
        it.restore = false;
        lua_rawgetp(L, ht, &shadow_key);
        const int shadow = lua_gettop(L);
        const auto& comps = it.comps;
        for (const auto c : hs.keys) {
            h.push_name(c);
            if (std::binary_search(comps.begin(), comps.end(), c)) {
                lua_pushvalue(L, -1);
                lua_rawget(L, shadow);
                lua_rawset(L, ht);  // the query's table back in place (a script may have replaced it)
            } else {
                lua_pushvalue(L, -1);
                lua_pushnil(L);
                lua_rawset(L, ht);
                lua_pushnil(L);
                lua_rawset(L, shadow);
            }
        }
        hs.keys.assign(comps.begin(), comps.end());
        lua_pop(L, 1);
    }
    while (it.pos < it.slots.size()) {
        const std::uint32_t slot = it.slots[it.pos++];
        if (!reg.entities().slot_alive(slot)) continue;
        auto& hs = h.handles[static_cast<std::size_t>(hi)];
        hs.slot = slot;
        hs.e = reg.entities().id_of(slot);
        lua_pushliteral(L, "id");
        lua_pushinteger(L, static_cast<lua_Integer>(hs.e));
        lua_rawset(L, ht);
        lua_Integer k = 0;
        for (const auto c : it.comps) {
            ++k;
            auto& cd = h.codecs[c];
            if (cd.fill == nullptr) continue;  // a tag: its table stays empty
            lua_rawgeti(L, tables, k);
            cd.fill(h, reg.storage(c), slot, lua_gettop(L));
            lua_pop(L, 1);
        }
        lua_pushvalue(L, ht);
        return 1;
    }
    h.handles[static_cast<std::size_t>(hi)].open = false;
    h.handles[static_cast<std::size_t>(hi)].e = 0;
    return 0;
}

/// @brief e.Name: loads a component the handle does not hold yet (nil when the entity lacks it).
int handle_index_mm(lua_State* L) {
    impl& h = impl::of(L);
    const int hi = handle_index(L, 1);
    if (hi < 0 || static_cast<std::size_t>(hi) >= h.handles.size()) return 0;
    if (lua_type(L, 2) != LUA_TSTRING) return 0;
    const char* key = lua_tostring(L, 2);
    const auto c = h.reg().find_component(key);
    if (!c) return luaL_error(L, "no component named '%s'", key);
    const auto& hs = h.handles[static_cast<std::size_t>(hi)];
    if (!hs.open || hs.e == 0)
        return luaL_error(
            L, "this handle is closed: a handle from w:get() lives until the iterator's next step");
    if (std::find(hs.keys.begin(), hs.keys.end(), *c) != hs.keys.end()) return 0;  // assigned nil this step
    if (!h.reg().has(hs.e, *c)) return 0;
    (void)h.codec_of(*c);
    lua_rawgetp(L, 1, &shadow_key);
    if (!h.load_component(1, *c, lua_gettop(L))) return raise(L);
    h.push_name(*c);
    lua_rawget(L, 1);
    return 1;
}

/// @brief e.Name = {...} adds or replaces, e.Name = nil removes (applied when the run returns).
int handle_newindex_mm(lua_State* L) {
    impl& h = impl::of(L);
    const int hi = handle_index(L, 1);
    if (hi < 0 || static_cast<std::size_t>(hi) >= h.handles.size()) return 0;
    if (lua_type(L, 2) != LUA_TSTRING) return luaL_error(L, "a handle's keys are component names");
    const char* key = lua_tostring(L, 2);
    const auto c = h.reg().find_component(key);
    if (!c) return luaL_error(L, "no component named '%s'", key);
    if (!lua_isnil(L, 3) && lua_type(L, 3) != LUA_TTABLE)
        return luaL_error(L, "%s must be set to a table (add or replace) or nil (remove)", key);
    auto& hs = h.handles[static_cast<std::size_t>(hi)];
    if (!hs.open || hs.e == 0)
        return luaL_error(
            L, "this handle is closed: a handle from w:get() lives until the iterator's next step");
    if (hs.iter >= 0) h.to_ordinary(static_cast<std::size_t>(hs.iter), 1);
    (void)h.codec_of(*c);
    bool ok = true;
    try {
        if (std::find(hs.keys.begin(), hs.keys.end(), *c) == hs.keys.end()) hs.keys.push_back(*c);
    } catch (const std::exception& e) {
        h.error = e.what();
        ok = false;
    }
    if (!ok) return raise(L);
    if (lua_istable(L, 3) || lua_isnil(L, 3)) lua_rawset(L, 1);  // nil: what an iterator's handle held
    return 0;
}

int api_get(lua_State* L) {
    impl& h = impl::of(L);
    entity_id e = 0;
    if (!entity_arg(L, 2, e)) return luaL_argerror(L, 2, "an entity id");
    if (!h.reg().alive(e)) return 0;
    if (h.new_handle(e, false) < 0) return raise(L);
    return 1;
}

int api_spawn(lua_State* L) {
    impl& h = impl::of(L);
    luaL_checktype(L, 2, LUA_TTABLE);
    entity_id id = 0;
    {
        try {
            json comps = to_json(L, 2, "spawn");
            h.check_components(comps);
            h.check_name(comps, 0);
            h.check_capacity(1);
            id = h.reg().create();
            h.spawned.push_back(id);
            h.ops.push_back({impl::pending_op::kind::spawn, id, 0, std::move(comps)});
        } catch (const std::exception& e) {
            h.error = e.what();
        }
    }
    if (id == 0) return raise(L);
    lua_pushinteger(L, static_cast<lua_Integer>(id));
    return 1;
}

int api_despawn(lua_State* L) {
    impl& h = impl::of(L);
    entity_id e = 0;
    if (!entity_arg(L, 2, e)) return luaL_argerror(L, 2, "an entity id or handle");
    if (!h.reg().alive(e)) return 0;
    bool ok = true;
    try {
        h.ops.push_back({impl::pending_op::kind::despawn, e, 0, {}});
    } catch (const std::exception& ex) {
        h.error = ex.what();
        ok = false;
    }
    if (!ok) return raise(L);
    return 0;
}

/// @brief w:cast(caster, spell [, target [, amount]]): the caster casts the spell as world.cast_spell
/// does; the spells system (first in the pipeline) runs it in the next tick. Checked now (a
/// refusal is the script's error), queued until the run returns like every structural change.
int api_cast(lua_State* L) {
    impl& h = impl::of(L);
    entity_id caster = 0;
    entity_id target = 0;
    if (!entity_arg(L, 2, caster)) return luaL_argerror(L, 2, "the caster: an entity id or handle");
    const char* spell = luaL_checkstring(L, 3);
    if (!lua_isnoneornil(L, 4) && !entity_arg(L, 4, target))
        return luaL_argerror(L, 4, "the target: an entity id or handle, or nil (the caster)");
    const double amount = luaL_optnumber(L, 5, 0.0);
    bool ok = true;
    {
        try {
            if (!h.reg().alive(caster))
                throw ecs_error(reason::no_such_entity,
                                "w:cast: the caster " + std::to_string(caster) + " is gone");
            if (target != 0 && !h.reg().alive(target))
                throw ecs_error(reason::no_such_entity,
                                "w:cast: the target " + std::to_string(target) + " is gone");
            if (h.w.find_spell(spell) == nullptr)
                throw ecs_error(reason::no_such_spell, std::string("w:cast: no spell named '") + spell + "'");
            if (!std::isfinite(amount) || amount < 0 || amount > ecs::internal::max_number)
                throw ecs_error(reason::invalid_value, "w:cast: amount must be a number from 0 to 1e15");
            // A set, not a scan of ops: a run may queue a cast for every entity it walks.
            if (h.casting.contains(caster) || h.reg().has<MagicInput>(caster))
                throw ecs_error(reason::limit_reached,
                                "w:cast: caster " + std::to_string(caster) +
                                    " already casts a spell next tick (one per caster per tick)");
            h.ops.push_back({impl::pending_op::kind::cast, caster, 0,
                             json{{"spell", spell}, {"target", target}, {"amount", amount}}});
            h.casting.insert(caster);
        } catch (const std::exception& e) {
            h.error = e.what();
            ok = false;
        }
    }
    if (!ok) return raise(L);
    return 0;
}

/// @brief Sorts the positions into cells of about r (at least 1/4096 of the positions' extent, so
/// that a first call with a tiny r does not make every later one walk a million cells).
void build_grid(impl& h, double r) {
    auto& pos = h.reg().storage<Position>();
    double lo_x = 0, hi_x = 0, lo_y = 0, hi_y = 0, most = 0;
    for (std::size_t i = 0; i < pos.size(); ++i) {
        const auto& p = pos.at(static_cast<std::uint32_t>(i));
        most = std::max({most, std::fabs(p.x), std::fabs(p.y)});
        lo_x = i == 0 ? p.x : std::min(lo_x, p.x);
        hi_x = i == 0 ? p.x : std::max(hi_x, p.x);
        lo_y = i == 0 ? p.y : std::min(lo_y, p.y);
        hi_y = i == 0 ? p.y : std::max(hi_y, p.y);
    }
    const double extent = std::max(hi_x - lo_x, hi_y - lo_y);
    // A cell index stays within +-1e15, far inside int64, whatever the positions (a snapshot may
    // restore one past max_number).
    h.grid_cell = std::max({r, extent / 4096, most / 1e15, 1e-9});
    h.grid.clear();
    h.grid.reserve(pos.size());
    for (std::size_t i = 0; i < pos.size(); ++i) {
        const auto& p = pos.at(static_cast<std::uint32_t>(i));
        h.grid.push_back({static_cast<std::int64_t>(std::floor(p.y / h.grid_cell)),
                          static_cast<std::int64_t>(std::floor(p.x / h.grid_cell)), pos.slot_at(i)});
    }
    std::sort(h.grid.begin(), h.grid.end());
    h.grid_built = true;
}

int api_near(lua_State* L) {
    impl& h = impl::of(L);
    const double x = luaL_checknumber(L, 2);
    const double y = luaL_checknumber(L, 3);
    const double r = luaL_checknumber(L, 4);
    if (!std::isfinite(x) || !std::isfinite(y) || !std::isfinite(r) || r < 0)
        return luaL_error(L, "w:near(x, y, r) needs finite numbers and r >= 0");
    bool ok = true;
    std::size_t n = 0;
    {
        try {
            auto& pos = h.reg().storage<Position>();
            std::vector<entity_id> found;
            const double r2 = r * r;
            const auto within = [&](std::uint32_t slot) {
                const auto& p = pos.get(slot);
                const double dx = p.x - x;
                const double dy = p.y - y;
                if (dx * dx + dy * dy <= r2) found.push_back(h.reg().entities().id_of(slot));
            };
            if (!h.grid_built && !h.positions_written) build_grid(h, r);
            // The cells the circle's box covers, when they are few beside the bodies; else a scan.
            const double cell = h.grid_cell;
            // Beyond it, a cell index could leave int64 (or x - r overflow): a scan answers.
            const double far = std::min(1e15 * h.grid_cell, 1e300);
            const bool use_grid =
                h.grid_built && std::fabs(x) <= far && std::fabs(y) <= far && r <= far &&
                (2 * r / cell + 2) * (2 * r / cell + 2) <= 4.0 * static_cast<double>(pos.size()) + 64;
            if (use_grid) {
                const auto y0 = static_cast<std::int64_t>(std::floor((y - r) / cell));
                const auto y1 = static_cast<std::int64_t>(std::floor((y + r) / cell));
                const auto x0 = static_cast<std::int64_t>(std::floor((x - r) / cell));
                const auto x1 = static_cast<std::int64_t>(std::floor((x + r) / cell));
                for (auto cy = y0; cy <= y1; ++cy) {
                    auto it = std::lower_bound(h.grid.begin(), h.grid.end(), impl::near_cell{cy, x0, 0});
                    for (; it != h.grid.end() && it->cy == cy && it->cx <= x1; ++it) within(it->slot);
                }
            } else {
                for (std::size_t i = 0; i < pos.size(); ++i) within(pos.slot_at(i));
            }
            std::sort(found.begin(), found.end());
            h.scratch = found;
            n = found.size();
        } catch (const std::exception& e) {
            h.error = e.what();
            ok = false;
        }
    }
    if (!ok) return raise(L);
    lua_createtable(L, static_cast<int>(n), 0);
    for (std::size_t i = 0; i < n; ++i) {
        lua_pushinteger(L, static_cast<lua_Integer>(h.scratch[i].get<entity_id>()));
        lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
    }
    return 1;
}

/// @brief random(), random(m), random(m, n) as math.random, from the run's generator; `first` is
/// the index of the first argument (2 for w:random, 1 for math.random).
int random_from(lua_State* L, int first) {
    impl& h = impl::of(L);
    const std::uint64_t r = h.next_random();
    const int args = lua_gettop(L) - first + 1;
    if (args <= 0) {
        lua_pushnumber(L, static_cast<double>(r >> 11U) * 0x1.0p-53);
        return 1;
    }
    lua_Integer lo = 1;
    lua_Integer hi = 0;
    if (args == 1) {
        hi = luaL_checkinteger(L, first);
    } else {
        lo = luaL_checkinteger(L, first);
        hi = luaL_checkinteger(L, first + 1);
    }
    luaL_argcheck(L, lo <= hi, first, "interval is empty");
    const auto span = static_cast<std::uint64_t>(hi) - static_cast<std::uint64_t>(lo) + 1;
    const std::uint64_t v = span == 0 ? r : r % span;                // span 0: the whole 64-bit range
    const std::uint64_t drawn = static_cast<std::uint64_t>(lo) + v;  // wraps as two's complement
    lua_pushinteger(L, static_cast<lua_Integer>(drawn));
    return 1;
}
int api_random(lua_State* L) {
    return random_from(L, 2);
}
int math_random(lua_State* L) {
    return random_from(L, 1);
}

// --- the sandbox ---------------------------------------------------------------------------------

void count_hook(lua_State* L, lua_Debug* /*ar*/) {
    impl& h = impl::of(L);
    h.killed = true;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, 1000);  // and again, should a pcall catch it
    luaL_error(L, "instruction budget exceeded (%I instructions a run)", static_cast<lua_Integer>(h.budget));
}

/// @brief pcall and xpcall that cannot catch the end of a run: a budget or memory error goes on.
int safe_pcall(lua_State* L) {
    luaL_checkany(L, 1);
    const int status = lua_pcall(L, lua_gettop(L) - 1, LUA_MULTRET, 0);
    impl& h = impl::of(L);
    if (h.killed || h.oom) return lua_error(L);
    luaL_checkstack(L, 1, nullptr);
    lua_pushboolean(L, status == LUA_OK ? 1 : 0);
    lua_insert(L, 1);
    return lua_gettop(L);
}
int safe_xpcall(lua_State* L) {
    const int n = lua_gettop(L);
    luaL_checktype(L, 2, LUA_TFUNCTION);
    lua_pushvalue(L, 1);
    lua_copy(L, 2, 1);
    lua_replace(L, 2);  // [handler, f, args...]
    const int status = lua_pcall(L, n - 2, LUA_MULTRET, 1);
    impl& h = impl::of(L);
    if (h.killed || h.oom) return lua_error(L);
    luaL_checkstack(L, 1, nullptr);
    lua_pushboolean(L, status == LUA_OK ? 1 : 0);
    lua_replace(L, 1);
    return lua_gettop(L);
}

/// @brief setmetatable without __gc: a finalizer would run outside any run's budget.
int safe_setmetatable(lua_State* L) {
    luaL_checktype(L, 1, LUA_TTABLE);
    if (!lua_isnoneornil(L, 2)) {
        luaL_checktype(L, 2, LUA_TTABLE);
        if (lua_getfield(L, 2, "__gc") != LUA_TNIL) return luaL_error(L, "__gc is not available to scripts");
        lua_pop(L, 1);
    }
    if (handle_index(L, 1) >= 0) return luaL_error(L, "a handle's metatable cannot change");
    if (luaL_getmetafield(L, 1, "__metatable") != LUA_TNIL)  // as Lua's own setmetatable
        return luaL_error(L, "cannot change a protected metatable");
    lua_settop(L, 2);
    lua_setmetatable(L, 1);
    return 1;
}

/// @brief Pattern functions refuse a call whose worst-case backtracking passes pattern_steps: Lua's
/// matcher runs in C, where the instruction hook never fires.
int guarded_pattern(lua_State* L) {
    std::size_t n = 0;
    std::size_t pn = 0;
    luaL_checklstring(L, 1, &n);
    const char* p = luaL_checklstring(L, 2, &pn);
    const bool plain = lua_toboolean(L, 4) != 0 && lua_tointeger(L, lua_upvalueindex(2)) == 1;  // find's 4th
    if (!plain) {
        if (pn > 256) return luaL_error(L, "pattern longer than 256 bytes");
        int quantifiers = 0;
        for (std::size_t i = 0; i < pn; ++i) {
            if (p[i] == '%') {
                ++i;
                continue;
            }
            if (p[i] == '*' || p[i] == '+' || p[i] == '-' || p[i] == '?') ++quantifiers;
        }
        const double cost = std::pow(static_cast<double>(n) + 1, quantifiers + 1);
        if (cost > pattern_steps)
            return luaL_error(L,
                              "pattern with %d repetitions on %d bytes may backtrack too long; "
                              "use fewer repetitions or a shorter subject",
                              quantifiers, static_cast<int>(n));
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/// @brief string.format without %p (an address: not the same from one run to the next).
int safe_format(lua_State* L) {
    std::size_t n = 0;
    const char* f = luaL_checklstring(L, 1, &n);
    for (std::size_t i = 0; i + 1 < n; ++i) {
        if (f[i] != '%') continue;
        std::size_t j = i + 1;
        while (j < n && std::strchr("-+ #0123456789.", f[j]) != nullptr) ++j;
        if (j < n && f[j] == 'p') return luaL_error(L, "string.format: %%p is not available to scripts");
        i = j;
    }
    lua_pushvalue(L, lua_upvalueindex(1));
    lua_insert(L, 1);
    lua_call(L, lua_gettop(L) - 1, LUA_MULTRET);
    return lua_gettop(L);
}

/// @brief pairs() in a fixed order (numbers, then strings, then booleans), so that a script that
/// walks a table with it computes the same thing in every run. Written in Lua: it counts against
/// the budget like the script's own code.
constexpr const char* prelude = R"lua(
local next, type, sort, error = next, type, table.sort, error
local rank = {number = 1, string = 2, boolean = 3}
local function before(a, b)
  local ta, tb = type(a), type(b)
  if ta ~= tb then return rank[ta] < rank[tb] end
  if ta == "boolean" then return (not a) and b end
  return a < b
end
return function(t)
  if type(t) ~= "table" then error("bad argument #1 to 'pairs' (table expected, got " .. type(t) .. ")", 2) end
  local keys, n = {}, 0
  for k in next, t do
    if not rank[type(k)] then
      error("pairs: a " .. type(k) .. " key has no fixed order; use ipairs, numbers or strings", 2)
    end
    n = n + 1
    keys[n] = k
  end
  sort(keys, before)
  local i = 0
  return function()
    i = i + 1
    local k = keys[i]
    if k ~= nil then return k, t[k] end
  end
end
)lua";

/// @brief Runs in the state, protected: libraries, the environment template, the handle metatable.
int open_state(lua_State* L) {
    impl& h = impl::of(L);
    luaL_requiref(L, "_G", luaopen_base, 1);
    luaL_requiref(L, LUA_STRLIBNAME, luaopen_string, 1);
    luaL_requiref(L, LUA_TABLIBNAME, luaopen_table, 1);
    luaL_requiref(L, LUA_MATHLIBNAME, luaopen_math, 1);
    luaL_requiref(L, LUA_UTF8LIBNAME, luaopen_utf8, 1);
    lua_settop(L, 0);

    lua_newtable(L);  // 1: the template environment
    const int env = 1;
    lua_pushglobaltable(L);  // 2
    for (const char* name : {"assert", "error", "ipairs", "next", "select", "tonumber", "tostring", "type",
                             "rawequal", "rawget", "rawset", "rawlen", "getmetatable", "_VERSION"}) {
        lua_getfield(L, 2, name);
        lua_setfield(L, env, name);
    }
    lua_pushcfunction(L, safe_pcall);
    lua_setfield(L, env, "pcall");
    lua_pushcfunction(L, safe_xpcall);
    lua_setfield(L, env, "xpcall");
    lua_pushcfunction(L, safe_setmetatable);
    lua_setfield(L, env, "setmetatable");
    if (luaL_loadbufferx(L, prelude, std::strlen(prelude), "=pairs", "t") != LUA_OK) return lua_error(L);
    lua_call(L, 0, 1);
    lua_setfield(L, env, "pairs");

    // string: a copy without dump, the pattern functions guarded, format without %p.
    lua_newtable(L);  // 3
    lua_getglobal(L, "string");
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, 3);
    }
    lua_pop(L, 1);
    lua_pushnil(L);
    lua_setfield(L, 3, "dump");
    for (const char* name : {"find", "match", "gmatch", "gsub"}) {
        lua_getfield(L, 3, name);
        lua_pushinteger(L, std::strcmp(name, "find") == 0 ? 1 : 0);
        lua_pushcclosure(L, guarded_pattern, 2);
        lua_setfield(L, 3, name);
    }
    lua_getfield(L, 3, "format");
    lua_pushcclosure(L, safe_format, 1);
    lua_setfield(L, 3, "format");
    // Strings' methods ("x"):find(...) go through the same guarded table; getmetatable("") is locked.
    lua_pushliteral(L, "");
    lua_getmetatable(L, -1);
    lua_pushvalue(L, 3);
    lua_setfield(L, -2, "__index");
    lua_pushboolean(L, 0);
    lua_setfield(L, -2, "__metatable");
    lua_pop(L, 2);
    lua_setfield(L, env, "string");

    for (const char* lib : {"table", "math", "utf8"}) {
        lua_newtable(L);
        lua_getglobal(L, lib);
        lua_pushnil(L);
        while (lua_next(L, -2) != 0) {
            lua_pushvalue(L, -2);
            lua_insert(L, -2);
            lua_rawset(L, -5);
        }
        lua_pop(L, 1);
        lua_setfield(L, env, lib);
    }
    lua_getfield(L, env, "math");
    lua_pushcfunction(L, math_random);
    lua_setfield(L, -2, "random");
    lua_pushnil(L);
    lua_setfield(L, -2, "randomseed");
    lua_pop(L, 1);
    lua_pushvalue(L, env);
    h.env_base = luaL_ref(L, LUA_REGISTRYINDEX);

    lua_newtable(L);  // the handle metatable
    lua_pushcfunction(L, handle_index_mm);
    lua_setfield(L, -2, "__index");
    lua_pushcfunction(L, handle_newindex_mm);
    lua_setfield(L, -2, "__newindex");
    lua_pushliteral(L, "entity");
    lua_setfield(L, -2, "__metatable");
    h.handle_mt = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_settop(L, 0);
    return 0;
}

/// @brief A new environment: a shallow copy of the template, its libraries copied too, so what one
/// script does to its globals or to `math` stays its own.
int make_env(lua_State* L) {
    impl& h = impl::of(L);
    lua_newtable(L);
    const int env = lua_gettop(L);
    lua_rawgeti(L, LUA_REGISTRYINDEX, h.env_base);
    lua_pushnil(L);
    while (lua_next(L, -2) != 0) {
        if (lua_istable(L, -1)) {  // a library: its own copy
            lua_newtable(L);
            lua_pushnil(L);
            while (lua_next(L, -3) != 0) {
                lua_pushvalue(L, -2);
                lua_insert(L, -2);
                lua_rawset(L, -4);
            }
            lua_replace(L, -2);
        }
        lua_pushvalue(L, -2);
        lua_insert(L, -2);
        lua_rawset(L, env);
    }
    lua_pop(L, 1);
    lua_pushvalue(L, env);
    lua_setfield(L, env, "_G");
    return 1;
}

/// @brief A script's `w`: the API functions (dt and tick are set before each run).
int make_w(lua_State* L) {
    lua_createtable(L, 0, 9);
    const std::array<luaL_Reg, 8> api{{{"each", api_each},
                                       {"cast", api_cast},
                                       {"spawn", api_spawn},
                                       {"despawn", api_despawn},
                                       {"get", api_get},
                                       {"near", api_near},
                                       {"random", api_random},
                                       {nullptr, nullptr}}};
    luaL_setfuncs(L, api.data(), 0);
    return 1;
}

/// @brief Error handler of a run: the message with the script's line in front when Lua's own
/// message has none (errors raised by C functions such as w:spawn).
int message_handler(lua_State* L) {
    const char* msg = lua_tostring(L, 1);
    if (msg == nullptr) {
        if (luaL_callmeta(L, 1, "__tostring") != 0 && lua_type(L, -1) == LUA_TSTRING) return 1;
        msg = lua_pushfstring(L, "(an error object of type %s)", luaL_typename(L, 1));
    }
    impl& h = impl::of(L);
    if (h.current != nullptr) {
        const std::string& name = h.current->src.name;
        const bool located = std::strncmp(msg, name.c_str(), name.size()) == 0 && msg[name.size()] == ':';
        if (!located) {
            lua_Debug ar;
            for (int level = 0; lua_getstack(L, level, &ar) != 0; ++level) {
                lua_getinfo(L, "Sl", &ar);
                if (ar.currentline > 0) {
                    lua_pushfstring(L, "%s:%d: %s", ar.short_src, ar.currentline, msg);
                    return 1;
                }
            }
        }
    }
    lua_pushstring(L, msg);
    return 1;
}

/// @brief Calls the script's function, then writes back what handles still hold.
int run_entry(lua_State* L) {
    impl& h = impl::of(L);
    // [fn, w, (caster id, target id, amount)]
    lua_pushliteral(L, "dt");
    lua_pushnumber(L, h.w.dt());
    lua_rawset(L, 2);
    lua_pushliteral(L, "tick");
    lua_pushinteger(L, static_cast<lua_Integer>(h.w.tick()));
    lua_rawset(L, 2);
    if (lua_gettop(L) == 4 && h.call_args != nullptr) {  // an action: the caller's identity and its args
        lua_pushlstring(L, h.call_caller.data(), h.call_caller.size());
        lua_replace(L, 3);
        push_json(L, *h.call_args);
        lua_replace(L, 4);
    }
    if (lua_gettop(L) == 5) {  // a spell: caster and target as w:get() gives them
        for (const int at : {3, 4}) {
            const auto e = static_cast<entity_id>(lua_tointeger(L, at));
            if (e != 0 && h.reg().alive(e)) {
                if (h.new_handle(e, false) < 0) return raise(L);
            } else {
                lua_pushnil(L);
            }
            lua_replace(L, at);
        }
    }
    lua_call(L, lua_gettop(L) - 1, 1);  // one result: an action's answer (systems' and spells' is dropped)
    for (std::size_t i = 0; i < h.handles.size(); ++i) {
        if (!h.handles[i].open || h.handles[i].e == 0) continue;
        // Handles are kept in the registry table by index while the run lasts.
        lua_rawgetp(L, LUA_REGISTRYINDEX, &handle_key);
        lua_rawgeti(L, -1, static_cast<lua_Integer>(i) + 1);
        if (!h.flush(lua_gettop(L))) return raise(L);
        lua_pop(L, 2);
    }
    return 1;
}

}  // namespace

// --- impl ----------------------------------------------------------------------------------------

void* script_host::impl::alloc(void* ud, void* ptr, std::size_t osize, std::size_t nsize) {
    auto* h = static_cast<impl*>(ud);
    const std::size_t old = ptr != nullptr ? osize : 0;
    if (nsize == 0) {
        std::free(ptr);  // NOLINT(cppcoreguidelines-no-malloc): Lua's allocator contract
        h->used -= old;
        return nullptr;
    }
    if (nsize > old && h->used + (nsize - old) > h->limits.memory_bytes) {
        h->oom = true;
        return nullptr;
    }
    void* p = std::realloc(ptr, nsize);  // NOLINT(cppcoreguidelines-no-malloc)
    if (p == nullptr) return nullptr;
    h->used = h->used - old + nsize;
    return p;
}

void script_host::impl::open() {
    L = lua_newstate(&impl::alloc, this);
    if (L == nullptr) throw ecs_error(reason::limit_reached, "cannot create a Lua state (memory cap)");
    *static_cast<impl**>(lua_getextraspace(L)) = this;
    lua_pushcfunction(L, open_state);
    if (lua_pcall(L, 0, 0, 0) != LUA_OK) {
        const std::string msg = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "?";
        lua_close(L);
        L = nullptr;
        throw ecs_error(reason::limit_reached, "cannot set up the Lua state: " + msg);
    }
    codecs.resize(ecs::registry::max_component_types);
    install_typed(*this, builtin_components{});
}

script_host::impl::codec& script_host::impl::codec_of(ecs::component_id c) {
    auto& cd = codecs[c];
    if (cd.ready) return cd;
    // Called from Lua-facing code before any C++ object is made: the pushes may raise on memory.
    const auto& p = reg().storage(c);
    lua_newtable(L);
    if (p.kind() == ecs::storage_kind::dynamic) {
        const auto& fields = static_cast<const ecs::dynamic_pool&>(p).schema().fields();
        for (std::size_t i = 0; i < fields.size(); ++i) {
            lua_pushlstring(L, fields[i].name.data(), fields[i].name.size());
            lua_rawseti(L, -2, static_cast<lua_Integer>(i) + 1);
        }
        cd.fill = &fill_dynamic;
        cd.store = &store_dynamic;
    } else if (p.kind() == ecs::storage_kind::typed) {
        const json fields = p.schema_fields();
        lua_Integer i = 0;
        for (const auto& f : fields) {
            const auto& n = f.at("name").get_ref<const std::string&>();
            lua_pushlstring(L, n.data(), n.size());
            lua_rawseti(L, -2, ++i);
        }
    }
    cd.names = luaL_ref(L, LUA_REGISTRYINDEX);
    lua_pushlstring(L, p.name().data(), p.name().size());
    cd.name = luaL_ref(L, LUA_REGISTRYINDEX);
    cd.ready = true;
    return cd;
}

int script_host::impl::new_handle(entity_id e, bool each) {
    const auto index = static_cast<int>(handles.size());
    if (index >= 0xffffff) {
        error = "more than 16777215 handles in one run";
        return -1;
    }
    try {
        handles.push_back({e, ecs::index_of(e), each, -1, true, {}});
        if (!each) open_gets.push_back(index);
    } catch (const std::exception& ex) {
        error = ex.what();
        return -1;
    }
    lua_createtable(L, 0, 4);
    const int ht = lua_gettop(L);
    lua_pushinteger(L, run_tag(*this, static_cast<std::size_t>(index)));
    lua_rawsetp(L, ht, &handle_key);
    lua_newtable(L);
    lua_rawsetp(L, ht, &shadow_key);
    if (!each) {
        lua_newtable(L);
        lua_rawsetp(L, ht, &copy_key);
    }
    lua_pushliteral(L, "id");
    lua_pushinteger(L, static_cast<lua_Integer>(e));
    lua_rawset(L, ht);
    lua_rawgeti(L, LUA_REGISTRYINDEX, handle_mt);
    lua_setmetatable(L, ht);
    // Remembered by index, so the end of the run finds every handle still open.
    lua_rawgetp(L, LUA_REGISTRYINDEX, &handle_key);
    lua_pushvalue(L, ht);
    lua_rawseti(L, -2, index + 1);
    lua_pop(L, 1);
    return index;
}

bool script_host::impl::load_component(int ht, ecs::component_id c, int shadow) {
    auto& hs = handles[static_cast<std::size_t>(handle_index(L, ht))];
    auto& cd = codecs[c];
    lua_newtable(L);
    const int t = lua_gettop(L);
    if (cd.fill != nullptr) cd.fill(*this, reg().storage(c), hs.slot, t);
    push_name(c);
    lua_pushvalue(L, t);
    lua_rawset(L, shadow);
    push_name(c);
    lua_pushvalue(L, t);
    lua_rawset(L, ht);
    if (!hs.each) {  // a copy of the values as loaded: only the fields a script changes are written
        lua_rawgetp(L, ht, &copy_key);
        const int copies = lua_gettop(L);
        lua_newtable(L);
        if (cd.fill != nullptr) cd.fill(*this, reg().storage(c), hs.slot, lua_gettop(L));
        push_name(c);
        lua_insert(L, -2);
        lua_rawset(L, copies);
        lua_pop(L, 1);
    }
    lua_pop(L, 1);
    try {
        hs.keys.push_back(c);
    } catch (const std::exception& e) {
        error = e.what();
        return false;
    }
    return true;
}

bool script_host::impl::flush(int ht) {
    ht = lua_absindex(L, ht);
    const int hi = handle_index(L, ht);
    if (hi < 0) return true;
    auto& hs = handles[static_cast<std::size_t>(hi)];
    if (!hs.open || hs.e == 0 || !reg().alive(hs.e)) return true;
    if (hs.iter >= 0) to_ordinary(static_cast<std::size_t>(hs.iter), ht);  // the tables raw, as read below
    const int top = lua_gettop(L);
    lua_rawgetp(L, ht, &shadow_key);
    const int shadow = lua_gettop(L);
    int copies = 0;
    if (!hs.each) {
        lua_rawgetp(L, ht, &copy_key);
        copies = lua_gettop(L);
    }
    for (std::size_t k = 0; k < hs.keys.size(); ++k) {
        const ecs::component_id c = hs.keys[k];
        auto& cd = codecs[c];
        push_name(c);
        lua_rawget(L, ht);  // what the script left
        const int v = lua_gettop(L);
        push_name(c);
        lua_rawget(L, shadow);  // what was loaded
        const int orig = lua_gettop(L);
        const bool has = reg().has(hs.e, c);
        bool ok = true;
        if (!lua_isnil(L, v) && lua_rawequal(L, v, orig) != 0) {
            if (has && cd.store != nullptr) {
                int copy = 0;
                if (copies != 0) {
                    push_name(c);
                    lua_rawget(L, copies);
                    copy = lua_istable(L, -1) ? lua_gettop(L) : 0;
                }
                lua_rawgeti(L, LUA_REGISTRYINDEX, cd.names);
                const int names = lua_gettop(L);
                ok = cd.store(*this, reg().storage(c), hs.slot, v, copy, names);
                if (ok && copy != 0) {  // what was written is what the next flush compares with
                    const auto n = static_cast<lua_Integer>(lua_rawlen(L, names));
                    for (lua_Integer i = 1; i <= n; ++i) {
                        lua_rawgeti(L, names, i);
                        lua_pushvalue(L, -1);
                        lua_rawget(L, v);
                        lua_rawset(L, copy);
                    }
                }
            }
        } else {
            try {
                if (lua_isnil(L, v)) {
                    if (has) ops.push_back({pending_op::kind::remove, hs.e, c, {}});
                } else {
                    json value = to_json(L, v, reg().storage(c).name());
                    if (value.is_array() && value.empty()) value = json::object();
                    const json one{{reg().storage(c).name(), value}};
                    check_components(one);
                    check_name(one, hs.e);
                    ops.push_back({pending_op::kind::insert, hs.e, c, std::move(value)});
                }
            } catch (const std::exception& e) {
                error = e.what();
                ok = false;
            }
        }
        lua_settop(L, shadow + (copies != 0 ? 1 : 0));
        if (!ok) {
            lua_settop(L, top);
            return false;
        }
    }
    lua_settop(L, top);
    return true;
}

bool script_host::impl::flush_each(std::size_t iter, int ht, int tables) {
    auto& it = iters[iter];
    auto& hs = handles[static_cast<std::size_t>(it.handle)];
    // Components loaded beyond the query's: the general flush, which knows them all.
    if (!it.fm && hs.keys.size() != it.comps.size()) return flush(ht);
    if (!hs.open || hs.e == 0 || !reg().alive(hs.e)) return true;
    const int top = lua_gettop(L);
    lua_Integer k = 0;
    for (const auto c : it.comps) {
        ++k;
        auto& cd = codecs[c];
        if (it.fm) {
            lua_rawgeti(L, tables, k);  // the handle cannot have lost it: see iter_state::fm
        } else {
            push_name(c);
            lua_rawget(L, ht);  // what the script left
            lua_rawgeti(L, tables, k);
            if (lua_rawequal(L, -1, -2) == 0) {
                // Replaced or removed: the general flush queues the change (and finds what this
                // loop wrote already unchanged); the step puts the query's tables back.
                lua_settop(L, top);
                it.restore = true;
                return flush(ht);
            }
        }
        // The query's components are present: the run defers every removal and despawn.
        if (cd.store != nullptr) {
            auto& pool = reg().storage(c);
            const int t = lua_gettop(L);
            if (cd.same == nullptr || !cd.same(*this, pool, hs.slot, t)) {
                lua_rawgeti(L, LUA_REGISTRYINDEX, cd.names);
                if (!cd.store(*this, pool, hs.slot, t, 0, lua_gettop(L))) {
                    lua_settop(L, top);
                    return false;
                }
            }
        }
        lua_settop(L, top);
    }
    return true;
}

void script_host::impl::to_ordinary(std::size_t iter, int ht) {
    // The query's tables raw on the handle, and the ordinary metatable: the general flush and
    // the step's restore then see what the script does to them.
    auto& it = iters[iter];
    if (!it.fm) return;
    it.fm = false;
    ht = lua_absindex(L, ht);
    lua_rawgetp(L, ht, &shadow_key);
    const int shadow = lua_gettop(L);
    for (const auto c : it.comps) {
        push_name(c);
        lua_pushvalue(L, -1);
        lua_rawget(L, shadow);
        lua_rawset(L, ht);
    }
    lua_pop(L, 1);
    lua_rawgeti(L, LUA_REGISTRYINDEX, handle_mt);
    lua_setmetatable(L, ht);
}

bool script_host::impl::flush_gets() {
    if (open_gets.empty()) return true;
    lua_rawgetp(L, LUA_REGISTRYINDEX, &handle_key);
    const int all = lua_gettop(L);
    for (const int i : open_gets) {
        if (!handles[static_cast<std::size_t>(i)].open) continue;
        lua_rawgeti(L, all, i + 1);
        if (!flush(lua_gettop(L))) {
            lua_settop(L, all - 1);
            return false;  // error is set; the caller raises it
        }
        lua_pop(L, 1);
    }
    open_gets.clear();
    lua_settop(L, all - 1);
    return true;
}

void script_host::impl::begin_run(const compiled_script& s, std::string label) {
    what = std::move(label);
    error.clear();
    handles.clear();
    open_gets.clear();
    iters.clear();
    ops.clear();
    casting.clear();
    undo.clear();
    undo_bytes.clear();
    spawned.clear();
    grid_built = false;  // other systems, and clients, move things between runs
    positions_written = false;
    current = &s;
    run_id = (run_id + 1) & 0xffffffffffULL;  // kept in 40 bits, beside a 24-bit index
    killed = false;
    oom = false;
}

void script_host::impl::undo_run() {
    for (auto it = undo.rbegin(); it != undo.rend(); ++it) {
        if (it->raw_len > 0) {
            auto* at = static_cast<std::byte*>(const_cast<void*>(it->p->value_array())) +
                       static_cast<std::size_t>(it->p->index(it->slot)) * it->raw_len;
            std::memcpy(at, undo_bytes.data() + it->raw_at, it->raw_len);
        } else {
            const ecs::restoring_scope restoring;  // the old value as it was, not as a client sends it
            it->p->assign_json(it->slot, it->old);
        }
    }
    for (const auto e : spawned)
        if (reg().alive(e)) reg().destroy(e);
    undo.clear();
    ops.clear();
    casting.clear();
    spawned.clear();
}

void script_host::impl::apply_ops() {
    auto& r = reg();
    for (auto& op : ops) {
        if (!r.alive(op.e)) continue;  // despawned by an earlier op of the same run
        try {
            switch (op.k) {
                case pending_op::kind::spawn: {
                    w.check_name(op.value, op.e);
                    for (const auto& [c, value] : w.resolve_components(op.value))
                        r.emplace_json(op.e, c, *value);
                    w.add_required(op.e);
                    break;
                }
                case pending_op::kind::insert: {
                    w.check_name(json{{r.storage(op.c).name(), op.value}}, op.e);
                    r.insert_json(op.e, op.c, op.value);
                    w.add_required(op.e);
                    break;
                }
                case pending_op::kind::remove:
                    if (r.has(op.e, op.c)) r.remove(op.e, op.c);
                    break;
                case pending_op::kind::despawn:
                    r.destroy(op.e);
                    break;
                case pending_op::kind::cast: {
                    // A target an earlier op of the run despawned: the cast is dropped, never
                    // turned on the caster (null would mean "the caster" to the spell).
                    const auto target = op.value["target"].get<entity_id>();
                    if (target != 0 && !r.alive(target)) break;
                    (void)w.cast_spell(op.e, op.value["spell"].get<std::string>(), target,
                                       op.value["amount"].get<double>());
                    break;
                }
            }
        } catch (const ecs_error& e) {
            // Only what the run could not see coming: two adds of one Name in one run.
            spdlog::warn("world '{}': {}: a change to entity {} was dropped: {}", w.name(), what, op.e,
                         e.what());
        }
    }
    ops.clear();
    casting.clear();
    undo.clear();
    spawned.clear();
}

int script_host::impl::run_protected(int nargs) {
    // Stack: [msgh, run_entry, fn, args...]
    lua_newtable(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &handle_key);
    budget = limits.instructions;
    lua_sethook(L, count_hook, LUA_MASKCOUNT, static_cast<int>(std::min<std::uint64_t>(budget, 0x7fffffff)));
    running = true;
    const int status = lua_pcall(L, nargs + 1, 1, 1);  // run_entry's one result, or the message
    running = false;
    lua_sethook(L, nullptr, 0, 0);
    lua_pushnil(L);
    lua_rawsetp(L, LUA_REGISTRYINDEX, &handle_key);
    return status;
}

// --- script_host -----------------------------------------------------------------------------

script_host::script_host(world& w, script_limits limits) : impl_(std::make_unique<impl>(w, limits)) {
    impl_->open();
}

script_host::~script_host() {
    if (impl_->L != nullptr) lua_close(impl_->L);
}

std::size_t script_host::memory_used() const noexcept {
    return impl_->used;
}

const script_limits& script_host::limits() const noexcept {
    return impl_->limits;
}

const script_source& script_host::source_of(const std::shared_ptr<void>& script) {
    return static_cast<const compiled_script*>(script.get())->src;
}

namespace {
/// @brief "regen:3: unexpected symbol near 'end'" → line 3 and the column of 'end' in that line.
std::string located_syntax_error(const std::string& name, const std::string& source, std::string msg) {
    const std::string prefix = name + ":";
    if (msg.rfind(prefix, 0) != 0) return msg;
    const auto colon = msg.find(':', prefix.size());
    if (colon == std::string::npos) return msg;
    const int line = std::atoi(msg.c_str() + prefix.size());
    std::string text = msg.substr(colon + 1);
    if (!text.empty() && text.front() == ' ') text.erase(0, 1);
    int column = 1;
    const auto near = text.rfind(" near '");
    std::size_t start = 0;
    for (int l = 1; l < line && start != std::string::npos; ++l) {
        start = source.find('\n', start);
        if (start != std::string::npos) ++start;
    }
    if (near != std::string::npos && start != std::string::npos) {
        const std::string token = text.substr(near + 7, text.size() - near - 8);
        const auto end = source.find('\n', start);
        const std::string row =
            source.substr(start, end == std::string::npos ? std::string::npos : end - start);
        const auto at = row.find(token);
        if (at != std::string::npos) column = static_cast<int>(at) + 1;
    } else if (start != std::string::npos) {
        const auto end = source.find('\n', start);
        column =
            static_cast<int>((end == std::string::npos ? source.size() : end) - start) + 1;  // end of line
    }
    return "syntax error at line " + std::to_string(line) + ", column " + std::to_string(column) + ": " +
           text;
}
}  // namespace

std::shared_ptr<void> script_host::compile(const script_source& src) {
    auto& h = *impl_;
    lua_State* L = h.L;  // NOLINT(readability-identifier-naming): the name Lua gives its state
    auto script = std::make_shared<compiled_script>();
    script->src = src;
    if (src.what == script_source::kind::system) {
        const auto terms = ecs::parse_query(src.query);
        if (terms.near || !terms.where.empty() || terms.only || terms.died || !terms.added.empty() ||
            !terms.changed.empty() || !terms.removed.empty())
            throw ecs_error(reason::invalid_params,
                            "query: a system's query takes components, !absent ones and A|B groups "
                            "(no near(), value filters or change filters)");
        script->resolved = h.reg().resolve(terms);
    }
    lua_settop(L, 0);
    const std::string chunkname = "=" + src.name;
    const int loaded = luaL_loadbufferx(L, src.source.data(), src.source.size(), chunkname.c_str(), "t");
    if (loaded != LUA_OK) {
        std::string msg = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "cannot load";
        lua_settop(L, 0);
        if (loaded == LUA_ERRMEM)
            throw ecs_error(reason::limit_reached, "the world's scripts reached their memory cap");
        throw ecs_error(reason::invalid_params,
                        src.name + ": " + located_syntax_error(src.name, src.source, msg));
    }
    // Its own environment as the chunk's _ENV, then the chunk runs once, under the budget.
    lua_pushcfunction(L, make_env);
    if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
        lua_settop(L, 0);
        throw ecs_error(reason::limit_reached, "the world's scripts reached their memory cap");
    }
    lua_pushvalue(L, -1);
    lua_setupvalue(L, 1, 1);  // [chunk, env]
    lua_pop(L, 1);
    const int chunk = lua_gettop(L);
    h.begin_run(*script, src.name);
    lua_pushcfunction(L, message_handler);
    lua_insert(L, chunk);  // [msgh, chunk]
    h.budget = h.limits.instructions;
    lua_sethook(L, count_hook, LUA_MASKCOUNT,
                static_cast<int>(std::min<std::uint64_t>(h.budget, 0x7fffffff)));
    const int status = lua_pcall(L, 0, 1, 1);
    lua_sethook(L, nullptr, 0, 0);
    h.current = nullptr;
    if (status != LUA_OK || !lua_isfunction(L, -1)) {
        std::string msg = status != LUA_OK
                              ? (lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "error")
                              : std::string("the chunk must return a function, got ") + luaL_typename(L, -1);
        if (status == LUA_ERRMEM || h.oom) msg = "the world's scripts reached their memory cap";
        lua_settop(L, 0);
        h.undo_run();
        lua_gc(L, LUA_GCCOLLECT);
        throw ecs_error(reason::invalid_params, src.name + ": " + msg);
    }
    script->fn = luaL_ref(L, LUA_REGISTRYINDEX);
    // w: the script's view of its world (its own table: what one script does to it stays its own).
    lua_pushcfunction(L, make_w);
    if (lua_pcall(L, 0, 1, 0) != LUA_OK) {
        lua_settop(L, 0);
        throw ecs_error(reason::limit_reached, "the world's scripts reached their memory cap");
    }
    script->w = luaL_ref(L, LUA_REGISTRYINDEX);
    script->L = L;
    lua_settop(L, 0);
    return script;
}

namespace {
/// @brief Pushes msgh, run_entry, the function and w (with dt and tick set): run_protected's stack.
void push_call(lua_State* L, const compiled_script& s) {
    lua_settop(L, 0);
    lua_pushcfunction(L, message_handler);
    lua_pushcfunction(L, run_entry);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s.fn);
    lua_rawgeti(L, LUA_REGISTRYINDEX, s.w);
}
}  // namespace

void script_host::run_system(system_def& s) {
    auto& h = *impl_;
    auto& script = *static_cast<compiled_script*>(s.state.get());
    h.begin_run(script, "system '" + s.name + "'");
    h.seed(s.name, 0);
    push_call(h.L, script);
    const int status = h.run_protected(1);
    h.current = nullptr;
    if (status == LUA_OK) {
        lua_settop(h.L, 0);
        h.apply_ops();
        return;
    }
    std::string msg = lua_tostring(h.L, -1) != nullptr ? lua_tostring(h.L, -1) : "error";
    if (status == LUA_ERRMEM || h.oom)
        msg = s.name + ": the world's scripts reached their memory cap (" +
              std::to_string(h.limits.memory_bytes) + " bytes)";
    lua_settop(h.L, 0);
    h.undo_run();
    lua_gc(h.L, LUA_GCCOLLECT);
    s.enabled = false;
    s.error = msg;
    spdlog::warn("world '{}': system '{}' disabled at tick {}: {}", h.w.name(), s.name, h.w.tick(), msg);
}

void script_host::cast(const std::shared_ptr<void>& ptr, entity_id caster, entity_id target, double amount) {
    auto& h = *impl_;
    auto& script = *static_cast<compiled_script*>(ptr.get());
    h.begin_run(script, "spell '" + script.src.name + "'");
    h.seed(script.src.name, caster);
    push_call(h.L, script);
    lua_State* L = h.L;  // NOLINT(readability-identifier-naming): the name Lua gives its state
    lua_pushinteger(L, static_cast<lua_Integer>(caster));
    lua_pushinteger(L, static_cast<lua_Integer>(target));
    lua_pushnumber(L, amount);
    const int status = h.run_protected(4);
    h.current = nullptr;
    if (status == LUA_OK) {
        lua_settop(L, 0);
        h.apply_ops();
        return;
    }
    std::string msg = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "error";
    if (status == LUA_ERRMEM || h.oom) msg = "the world's scripts reached their memory cap";
    lua_settop(L, 0);
    h.undo_run();
    lua_gc(L, LUA_GCCOLLECT);
    throw ecs_error(reason::invalid_value, msg);
}

json script_host::call(const std::shared_ptr<void>& ptr, const std::string& caller, const json& args) {
    auto& h = *impl_;
    auto& script = *static_cast<compiled_script*>(ptr.get());
    h.begin_run(script, "action '" + script.src.name + "'");
    // Deterministic: the same call in the same tick draws the same numbers, on replay too.
    h.seed(script.src.name, fnv(args.dump(), fnv(caller)));
    push_call(h.L, script);
    lua_State* L = h.L;  // NOLINT(readability-identifier-naming): the name Lua gives its state
    lua_pushnil(L);      // run_entry puts the caller and the args here, inside the protected call
    lua_pushnil(L);
    h.call_caller = caller;
    h.call_args = &args;
    const int status = h.run_protected(3);
    h.call_args = nullptr;
    h.current = nullptr;
    std::string msg;
    if (status == LUA_OK) {
        try {
            json answer = to_json(L, -1, "the action's return value", true);
            lua_settop(L, 0);
            h.apply_ops();
            return answer;
        } catch (const ecs_error& e) {
            msg = e.what();
        }
    } else {
        msg = lua_tostring(L, -1) != nullptr ? lua_tostring(L, -1) : "error";
        if (status == LUA_ERRMEM || h.oom) msg = "the world's scripts reached their memory cap";
    }
    lua_settop(L, 0);
    h.undo_run();
    lua_gc(L, LUA_GCCOLLECT);
    throw ecs_error(reason::action_failed, msg);
}

// --- the world's side ----------------------------------------------------------------------------

system_phase script_phase(std::string_view text) {
    for (const auto p :
         {system_phase::input, system_phase::simulation, system_phase::collision, system_phase::post})
        if (phase_name(p) == text) return p;
    throw ecs_error(reason::invalid_params, "phase must be input, simulation, collision or post");
}

script_host& world::script_state() {
    if (!scripts_) scripts_ = std::make_unique<script_host>(*this, current_script_limits());
    return *scripts_;
}

namespace {
void check_limits(const world& w, const script_source& src, bool replacing, const script_limits& limits) {
    if (!valid_name(src.name))
        throw ecs_error(reason::invalid_params, "a script's name is 1 to 64 letters, digits or _");
    if (ecs::internal::restoring()) return;  // a saved world keeps what it had
    if (src.source.size() > limits.max_source_bytes)
        throw ecs_error(reason::limit_reached, "a script's source is at most " +
                                                   std::to_string(limits.max_source_bytes) +
                                                   " bytes (--max-script-bytes)");
    std::size_t count = 0;
    for (const auto& s : w.systems()) count += s.user ? 1 : 0;
    count += static_cast<std::size_t>(std::count_if(w.spells().begin(), w.spells().end(),
                                                    [](const spell_def& d) { return d.script != nullptr; }));
    count += w.actions().size();
    if (!replacing && count >= limits.max_scripts)
        throw ecs_error(reason::limit_reached, "a world holds at most " + std::to_string(limits.max_scripts) +
                                                   " scripts (--max-scripts)");
}
}  // namespace

void world::define_system(const script_source& in) {
    script_source src = in;
    src.what = script_source::kind::system;
    const auto existing = std::find_if(systems_.begin(), systems_.end(),
                                       [&](const system_def& s) { return s.name == src.name; });
    if (existing != systems_.end() && !existing->user)
        throw ecs_error(reason::invalid_value, "'" + src.name + "' is a built-in system");
    if (src.phase == system_phase::cleanup)
        throw ecs_error(reason::invalid_params, "phase must be input, simulation, collision or post");
    if (src.order < -1000 || src.order > 1000)
        throw ecs_error(reason::invalid_params, "order must be between -1000 and 1000");
    if (src.every < 1 || src.every > 3600)
        throw ecs_error(reason::invalid_params, "every must be between 1 and 3600");
    check_limits(*this, src, existing != systems_.end(), current_script_limits());
    auto& host = script_state();
    auto compiled = host.compile(src);  // throws before anything changes
    const auto* script = static_cast<const compiled_script*>(compiled.get());

    system_def s;
    s.name = src.name;
    s.phase = src.phase;
    s.user = true;
    s.order = src.order;
    s.every = src.every;
    s.signature = src.query;
    s.state = std::move(compiled);
    ecs::query members;
    members.all = script->resolved.all;
    members.all_ids = script->resolved.all_ids;
    members.none = script->resolved.none;
    members.any = script->resolved.any;
    s.member_set = reg_.track(members);
    if (existing != systems_.end()) {
        s.enabled = existing->enabled;  // a reload keeps the switch; a failed run's error is cleared
        s.stats = existing->stats;
        systems_.erase(existing);
    }
    // Within a phase, systems run by order (built-ins are 0), then in the order they were defined.
    const auto after = std::find_if(systems_.begin(), systems_.end(), [&](const system_def& d) {
        return d.phase > s.phase || (d.phase == s.phase && d.order > s.order);
    });
    systems_.insert(after, std::move(s));
}

void world::remove_system(const std::string& name) {
    const auto it =
        std::find_if(systems_.begin(), systems_.end(), [&](const system_def& s) { return s.name == name; });
    if (it == systems_.end()) throw ecs_error(reason::no_such_system, "no system named '" + name + "'");
    if (!it->user) throw ecs_error(reason::invalid_value, "'" + name + "' is a built-in system and stays");
    systems_.erase(it);
}

void world::define_spell(const script_source& in) {
    script_source src = in;
    src.what = script_source::kind::spell;
    const auto existing =
        std::find_if(spells_.begin(), spells_.end(), [&](const spell_def& s) { return s.name == src.name; });
    if (existing != spells_.end() && !existing->script)
        throw ecs_error(reason::invalid_value, "'" + src.name + "' is a built-in spell");
    check_limits(*this, src, existing != spells_.end(), current_script_limits());
    auto& host = script_state();
    auto compiled = host.compile(src);
    spell_def d;
    d.name = src.name;
    d.description = "defined in Lua (world.define_spell)";
    d.script = compiled;
    d.cast = [compiled](world& w, entity_id caster, const MagicInput& input) {
        const entity_id target = input.target.id != 0 ? input.target.id : caster;
        w.scripts_->cast(compiled, caster, target, input.amount);
    };
    if (existing != spells_.end())
        *existing = std::move(d);
    else
        spells_.push_back(std::move(d));
}

void world::remove_spell(const std::string& name) {
    const auto it =
        std::find_if(spells_.begin(), spells_.end(), [&](const spell_def& s) { return s.name == name; });
    if (it == spells_.end()) throw ecs_error(reason::no_such_spell, "no spell named '" + name + "'");
    if (!it->script) throw ecs_error(reason::invalid_value, "'" + name + "' is a built-in spell and stays");
    spells_.erase(it);
}

void world::define_action(const script_source& in) {
    script_source src = in;
    src.what = script_source::kind::action;
    const auto existing = std::find_if(actions_.begin(), actions_.end(),
                                       [&](const action_def& a) { return a.name == src.name; });
    check_limits(*this, src, existing != actions_.end(), current_script_limits());
    auto compiled = script_state().compile(src);  // throws before anything changes
    if (existing != actions_.end()) {
        existing->script = std::move(compiled);  // a reload keeps the counts, clears the last error
        existing->last_error.clear();
        return;
    }
    action_def a;
    a.name = src.name;
    a.script = std::move(compiled);
    actions_.push_back(std::move(a));
}

void world::remove_action(const std::string& name) {
    const auto it =
        std::find_if(actions_.begin(), actions_.end(), [&](const action_def& a) { return a.name == name; });
    if (it == actions_.end()) throw ecs_error(reason::no_such_action, "no action named '" + name + "'");
    actions_.erase(it);
}

json world::call_action(const std::string& name, const std::string& caller, const json& args) {
    const auto it =
        std::find_if(actions_.begin(), actions_.end(), [&](const action_def& a) { return a.name == name; });
    if (it == actions_.end()) throw ecs_error(reason::no_such_action, "no action named '" + name + "'");
    const auto script = it->script;  // the action may not redefine itself, but keep it alive anyway
    try {
        auto answer = scripts_->call(script, caller, args);
        ++it->calls;
        return answer;
    } catch (const ecs_error& e) {
        ++it->failures;
        it->last_error = e.what();
        throw;
    }
}

json world::list_actions() const {
    json out = json::array();
    for (const auto& a : actions_) {
        json row{{"name", a.name}, {"calls", a.calls}, {"failures", a.failures}};
        if (!a.last_error.empty()) row["last_error"] = a.last_error;
        out.push_back(std::move(row));
    }
    return out;
}

json world::scripts_json() const {
    json out = json::array();
    const auto row = [](const script_source& src) {
        const char* kind = src.what == script_source::kind::system  ? "system"
                           : src.what == script_source::kind::spell ? "spell"
                                                                    : "action";
        json r{{"kind", kind}, {"name", src.name}, {"source", src.source}};
        if (src.what == script_source::kind::system) {
            r["query"] = src.query;
            r["phase"] = phase_name(src.phase);
            r["order"] = src.order;
            r["every"] = src.every;
        }
        return r;
    };
    for (const auto& s : systems_) {
        if (!s.user) continue;
        auto r = row(script_host::source_of(s.state));
        r["enabled"] = s.enabled;
        if (!s.error.empty()) r["error"] = s.error;
        out.push_back(std::move(r));
    }
    for (const auto& s : spells_)
        if (s.script) out.push_back(row(script_host::source_of(s.script)));
    for (const auto& a : actions_) out.push_back(row(script_host::source_of(a.script)));
    return out;
}

void world::restore_scripts(const json& list) {
    if (!list.is_array()) throw ecs_error(reason::invalid_value, "scripts must be an array");
    for (const auto& r : list) {
        script_source src;
        src.name = r.at("name").get<std::string>();
        src.source = r.at("source").get<std::string>();
        const auto kind = r.at("kind").get<std::string>();
        if (kind == "spell") {
            define_spell(src);
            continue;
        }
        if (kind == "action") {
            define_action(src);
            continue;
        }
        src.query = r.at("query").get<std::string>();
        src.phase = script_phase(r.at("phase").get<std::string>());
        src.order = r.value("order", 0);
        src.every = r.value("every", 1U);
        define_system(src);
        auto& s = system(src.name);
        s.enabled = r.value("enabled", true);
        s.error = r.value("error", std::string());
    }
}

}  // namespace ecsd::world
