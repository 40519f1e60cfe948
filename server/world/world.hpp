#pragma once
// A world: a registry, the built-in components, an ordered pipeline of systems
// ticked at a fixed rate, the spell table and prefabs. Nothing here knows
// about sockets: the server calls these methods from the world's own strand.
// Every method that takes JSON validates all of its input before changing
// anything and throws ecs::ecs_error with a protocol reason on bad input.

#include <chrono>
#include <cstdint>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <span>
#include <stdexcept>
#include <string>
#include <string_view>
#include <type_traits>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "ecs/registry.hpp"
#include "world/components.hpp"
#include "world/script.hpp"
#include "world/sim_workers.hpp"
#include "world/system_stats.hpp"
#include "world/systems.hpp"
#include "world/tick_clock.hpp"

namespace ecsd::world {

using ecs::entity_id;
using ecs::json;

/// @brief Edges that keep movers inside the world; a side without a value is open. Y points up,
/// so `bottom` is a ground. A mover that crosses an edge is put back on it (its Collider's circle
/// touching it) and bounces with its RigidBody's restitution (1 without a RigidBody); a bounce
/// slower than two ticks of gravity stops, so bodies come to rest on the ground.
struct world_bounds {
    std::optional<double> left, right, bottom, top;
    [[nodiscard]] bool any() const noexcept { return left || right || bottom || top; }
    [[nodiscard]] json to_json() const;
    /// @brief Reads {left, right, bottom, top}, each a number or null; throws ecs_error on anything else.
    static world_bounds from_json(const json& j);
};

struct world_settings {
    std::string name = "default";
    double tick_hz = 60;
    double gravity_x = 0;
    double gravity_y = -9.81;
    world_bounds bounds;
    bool paused = false;
    std::size_t max_entities = 10'000'000;  // a spawn past this is limit_reached
    /// Threads a tick may use (1 to max_threads); 0: the server's default (ecsd --sim-threads).
    unsigned threads = 0;
    static constexpr unsigned max_threads = 64;
};

class world;
class position_grid;

/// @brief One stage of the tick pipeline, as installed from its system struct (systems.hpp).
struct system_def {
    std::string name;
    system_phase phase = system_phase::simulation;
    std::string signature;  // the query text of the entities it works on, derived from its terms
    bool enabled = true;
    void (*run)(world&) = nullptr;
    int member_set = -1;  // the registry's member set of the query (registry::track), or -1
    system_stats stats;
    const void* key = nullptr;    // identifies the system struct (world::state<S>)
    std::shared_ptr<void> state;  // the system's own state, when it declares one; a user system's script
    bool user = false;            // defined by a client in Lua (world.define_system)
    int order = 0;                // place within the phase: built-ins 0, user systems their `order`
    std::uint32_t every = 1;      // user systems: run on the ticks divisible by this
    std::string error;            // why a user system was disabled by a failed run; empty otherwise
};

/// @brief A spell: runs on the caster (and target) when the spells system reads a MagicInput.
using spell_fn = std::function<void(world&, entity_id caster, const MagicInput& input)>;

struct spell_def {
    std::string name;
    std::string description;
    spell_fn cast;
    std::shared_ptr<void> script;  // a spell defined in Lua (world.define_spell), or null
};

/// @brief An action: client-callable game logic in Lua (world.define_action, world.call_action).
struct action_def {
    std::string name;
    std::shared_ptr<void> script;
    std::uint64_t calls = 0;     // calls that applied
    std::uint64_t failures = 0;  // calls that raised (nothing of them applied)
    std::string last_error;      // the last failure's message
};

/// @brief A spell that could not be cast, kept for world.info (most recent last, bounded).
struct spell_failure {
    std::uint64_t tick;
    entity_id caster;
    std::string spell;
    std::string error;
};

class world {
  public:
    using clock = tick_clock::clock;

    explicit world(world_settings settings);
    ~world();
    world(const world&) = delete;
    world& operator=(const world&) = delete;

    // --- settings and state ---------------------------------------------------------
    [[nodiscard]] const std::string& name() const noexcept { return settings_.name; }
    [[nodiscard]] const world_settings& settings() const noexcept { return settings_; }
    [[nodiscard]] double tick_hz() const noexcept { return settings_.tick_hz; }
    /// @brief What the systems of the last tick took, in ms (after_tick sees its own tick's).
    [[nodiscard]] double last_tick_ms() const noexcept { return last_tick_ms_; }
    [[nodiscard]] double dt() const noexcept { return 1.0 / settings_.tick_hz; }
    [[nodiscard]] std::uint64_t tick() const noexcept { return tick_; }
    [[nodiscard]] bool paused() const noexcept { return settings_.paused; }
    [[nodiscard]] ecs::registry& registry() noexcept { return reg_; }
    [[nodiscard]] const ecs::registry& registry() const noexcept { return reg_; }
    /// @brief The state system S declares (`using state = ...`), kept between ticks; other
    /// systems read a system's state by naming it (collision response reads detection's pairs).
    template <typename S>
    [[nodiscard]] typename S::state& state() {
        for (auto& s : systems_)
            if (s.key == &system_key<S>) return *static_cast<typename S::state*>(s.state.get());
        throw std::logic_error("system " + std::string(S::name) + " is not installed");
    }
    /// @brief Walks the entities with components T... on behalf of system S: T... must be S's
    /// terms (const or not: a const T is read, not stamped as written). Checked at compile time,
    /// so a system's signature, derived from its terms, cannot drift from what it iterates.
    template <typename S, typename... T, typename F>
    void walk(F&& f) {
        static_assert(same_components<typename S::terms, std::remove_const_t<T>...>(),
                      "a system walks exactly the components its `terms` name");
        reg_.each<T...>(std::forward<F>(f));
    }
    /// @brief Walks S's two terms A and B in two parts, cut into pieces run side by side on the
    /// world's threads: with(A&, B&, const C&) for the entities that also have C (read only, not
    /// one of S's terms: a component S uses when it is there), without(A&, const B&) for the
    /// others. Each call must touch only the entity it is given. See registry::each_split_nested.
    /// On one thread the pieces are one, run inline (handed to the workers as a range, the compiler
    /// does not inline the loop whole).
    template <typename S, typename A, typename B, typename C, typename With, typename Without>
    void walk_split_nested(With&& with, Without&& without) {
        static_assert(same_components<typename S::terms, std::remove_const_t<A>, std::remove_const_t<B>>(),
                      "a system walks exactly the components its `terms` name");
        if (threads() == 1) {
            reg_.each_split_nested<A, B, C>(with, without,
                                            [](std::uint32_t n, auto&& range) { range(0U, n); });
            return;
        }
        reg_.each_split_nested<A, B, C>(with, without, [this](std::uint32_t n, auto&& range) {
            workers().parallel_for(n, min_piece,
                                   [&](unsigned, std::uint32_t b, std::uint32_t e) { range(b, e); });
        });
    }
    /// @brief The world's threads, for a system's own split work (see sim_workers::parallel_for).
    [[nodiscard]] sim_workers& workers();
    /// @brief Fewest elements worth waking another thread for.
    static constexpr std::uint32_t min_piece = 16384;

    // --- threads ------------------------------------------------------------------------
    /// @brief Threads a tick uses: settings().threads, or the default when that is 0.
    [[nodiscard]] unsigned threads() const noexcept {
        return settings_.threads != 0 ? settings_.threads : default_threads_;
    }
    /// @brief The server's default for a world that names no thread count (ecsd --sim-threads).
    void set_default_threads(unsigned n) noexcept;

    // --- running ----------------------------------------------------------------------
    /// @brief Runs one tick now: every enabled system in order, then the tick ends, then
    /// after_tick (if set) sees the finished tick.
    void run_tick();
    /// @brief Called at the end of every tick (the server publishes watch diffs here).
    std::function<void(world&)> after_tick;
    /// @brief Runs n ticks now, paused or not. Returns the new tick number.
    std::uint64_t step(std::uint64_t n);
    void pause() noexcept { settings_.paused = true; }
    /// @brief Resumes; the next tick is due one period after `now`.
    void resume(clock::time_point now) noexcept;
    /// @brief Runs the ticks due at `now` (bounded catch-up). Returns when to call again.
    clock::time_point advance(clock::time_point now);
    /// @brief Starts the schedule (the server calls this when it hosts the world).
    void start_clock(clock::time_point now) noexcept { clock_.restart(now); }

    [[nodiscard]] std::uint64_t overruns() const noexcept { return overruns_; }
    /// @brief How many times the registry gave back its unused capacity (release_when_at_rest).
    [[nodiscard]] std::uint64_t memory_releases() const noexcept { return memory_releases_; }
    [[nodiscard]] std::uint64_t skipped_ticks() const noexcept { return clock_.skipped_ticks(); }
    /// @brief Summary: tick, tick_hz, paused, gravity, entity count, overruns, skipped, timing.
    [[nodiscard]] json info() const;
    /// @brief Hash of every live entity's id and component values, in id order.
    [[nodiscard]] std::uint64_t state_hash() const;

    // --- systems ----------------------------------------------------------------------
    [[nodiscard]] json list_systems() const;
    [[nodiscard]] system_def& system(const std::string& name);
    void set_system_enabled(const std::string& name, bool enabled);
    /// @brief Runs one system once, now, outside the tick (a spell run as a system).
    void run_system(const std::string& name);
    [[nodiscard]] json system_entities(const std::string& name, std::size_t limit, std::size_t offset) const;

    // --- spells -----------------------------------------------------------------------
    [[nodiscard]] json list_spells() const;
    /// @brief Queues a MagicInput on the caster; returns the tick at which it takes effect.
    std::uint64_t cast_spell(entity_id caster, const std::string& spell, entity_id target, double amount);
    [[nodiscard]] const spell_def* find_spell(const std::string& name) const;
    void record_spell_failure(entity_id caster, const std::string& spell, const std::string& error);

    // --- scripts: systems and spells in Lua (world/script.cpp) ---------------------------
    /// @brief Adds a user system, or replaces the one of that name from the next tick on (hot
    /// reload). Throws invalid_params (a syntax error with its line and column, a bad query or
    /// phase), invalid_value (a built-in's name) or limit_reached (--max-scripts, --max-script-bytes).
    void define_system(const script_source& src);
    /// @brief Takes a user system out of the pipeline; no_such_system when there is none.
    void remove_system(const std::string& name);
    /// @brief Adds (or replaces) a spell written in Lua; cast_spell casts it like a built-in.
    void define_spell(const script_source& src);
    /// @brief Takes a Lua spell out; casts of it already queued fail at their tick (no such spell,
    /// in spell_failures), as a cast of any unknown spell does. Throws no_such_spell, or
    /// invalid_value for a built-in spell.
    void remove_spell(const std::string& name);
    /// @brief Adds (or replaces) an action written in Lua: its chunk returns
    /// function(w, caller, args). Throws as define_spell does.
    void define_action(const script_source& src);
    /// @brief Takes an action out; no_such_action when there is none.
    void remove_action(const std::string& name);
    /// @brief Runs an action now (the caller runs it on the world's strand, between two ticks, so
    /// it is atomic with respect to ticks and other writes) and returns what it returned. Throws
    /// no_such_action, or action_failed with the script's message (nothing of the call applied).
    json call_action(const std::string& name, const std::string& caller, const json& args);
    [[nodiscard]] json list_actions() const;
    [[nodiscard]] const std::vector<action_def>& actions() const noexcept { return actions_; }
    /// @brief Every script, user systems in pipeline order then spells and actions, with its state (what
    /// snapshots and exports carry).
    [[nodiscard]] json scripts_json() const;
    /// @brief Defines the scripts scripts_json() listed (a restored world); a system's saved
    /// enabled flag and error come back too.
    void restore_scripts(const json& list);
    /// @brief The Lua state of this world, or null before its first script.
    [[nodiscard]] const script_host* scripts() const noexcept { return scripts_.get(); }
    [[nodiscard]] const std::vector<spell_def>& spells() const noexcept { return spells_; }

    // --- entities and components as JSON (the protocol's world.* methods) ---------------
    /// @brief The live entity with this Name, or 0 (a scan of the named entities only).
    [[nodiscard]] entity_id find_named(std::string_view name) const;
    /// @brief An entity param as a client sends it: an id, or a Name. Throws no_such_entity for an
    /// unknown name (a stale or unknown id is left for the method to report).
    [[nodiscard]] entity_id entity_ref(const json& ref) const;

    entity_id spawn(const json& components);
    std::vector<entity_id> spawn_many(const json& list);
    void despawn(entity_id e);
    /// @brief Destroys every listed entity, or none when one is not live; returns how many died.
    std::size_t despawn_many(std::span<const entity_id> ids);
    [[nodiscard]] json get_components(entity_id e,
                                      const std::optional<std::vector<std::string>>& names) const;
    /// @brief The same object as get_components, written as JSON text (the hot read path).
    void write_components(entity_id e, const std::optional<std::vector<std::string>>& names,
                          ecs::json_text& w) const;
    void insert_components(entity_id e, const json& components);
    void mutate_component(entity_id e, const std::string& component, const std::string& path,
                          const json& value);
    void remove_components(entity_id e, const std::vector<std::string>& names);
    /// @brief Entities matching the query (text or {all, any, none, added, changed, removed}),
    /// with the requested fields: {"entities": [{"entity": id, "components": {...}}], "total": n}.
    [[nodiscard]] json query(const json& query, const std::optional<std::vector<std::string>>& fields,
                             std::size_t limit, std::size_t offset) const;
    /// @brief The same result as query(), written as JSON text (what world.query sends).
    void write_query(const json& query, const std::optional<std::vector<std::string>>& fields,
                     std::size_t limit, std::size_t offset, ecs::json_text& w) const;
    /// @brief A query (text or object) parsed into terms, with what near() implies added.
    [[nodiscard]] ecs::query_terms parse_terms(const json& query) const;
    /// @brief Calls f for every entity matching the query, in id order (near() applied here:
    /// the registry knows no Position). Under a near_index, a near() query without change filters
    /// is answered from its grid instead, in the same order: the entities around the point, not
    /// the world, are visited.
    void for_each_match(const ecs::query_terms& terms, const ecs::query& resolved,
                        const std::function<void(entity_id)>& f) const;
    /// @brief While alive, near() in for_each_match is answered from one grid of every Position
    /// (world/position_grid.hpp), brought up to date when it is made: for a moment when nothing
    /// moves, such as the watch hub's publishing after a tick, where many near() watches are
    /// diffed at once.
    class near_index {
      public:
        /// @brief Updates `reuse` when given (kept from the last tick: an update is one walk of
        /// the positions unless entities came or went), else builds a grid of its own.
        near_index(const world& w, double cell, position_grid* reuse = nullptr);
        ~near_index();
        near_index(const near_index&) = delete;
        near_index& operator=(const near_index&) = delete;

      private:
        const world& w_;
        std::unique_ptr<position_grid> own_;
        bool installed_ = false;
    };
    [[nodiscard]] json list_components(std::optional<entity_id> e) const;
    /// @brief One entity for a person debugging it: {entity, components, systems (whose signature
    /// it matches, in tick order), changes {added, changed, removed} in the last tick or since}.
    [[nodiscard]] json describe(entity_id e) const;
    void register_component(const std::string& name, const json& fields);

    // --- prefabs (named component sets) --------------------------------------------------
    void define_prefab(const std::string& name, const json& components);
    std::vector<entity_id> spawn_prefab(const std::string& name, std::size_t count, const json& overrides);
    [[nodiscard]] const std::map<std::string, json>& prefabs() const noexcept { return prefabs_; }

    // --- what persistence needs ------------------------------------------------------------
    /// @brief Run-time component definitions in registration order (name, fields).
    [[nodiscard]] const std::vector<std::pair<std::string, json>>& runtime_components() const noexcept {
        return runtime_defs_;
    }
    [[nodiscard]] const std::vector<system_def>& systems() const noexcept { return systems_; }
    void set_tick(std::uint64_t t) noexcept { tick_ = t; }
    void set_gravity(double x, double y) noexcept {
        settings_.gravity_x = x;
        settings_.gravity_y = y;
    }

  private:
    friend struct script_host::impl;
    template <typename S>
    static constexpr char system_key = 0;
    template <typename T, typename... U>
    static constexpr bool one_of = (std::is_same_v<T, U> || ...);
    template <typename Terms, typename... T>
    static constexpr bool same_components() {
        return []<typename... U>(type_list<U...>) {
            return sizeof...(U) == sizeof...(T) && (one_of<T, U...> && ...);
        }(Terms{});
    }
    /// @brief Installs system S after the systems of its phase and those before it.
    template <typename S>
    void add_system();
    void add_spell(std::string name, std::string description, spell_fn fn);
    void install_builtin_systems();
    void install_builtin_spells();
    /// @brief Resolves and validates {Name: value}; throws before anything changes.
    [[nodiscard]] std::vector<std::pair<ecs::component_id, const json*>> resolve_components(
        const json& components) const;
    void check_capacity(std::size_t more) const;
    /// @brief The names a batch of spawns is checked against: the world's, walked once for the
    /// whole batch when its first Name comes (not once per entity, which made a batch of n named
    /// entities cost n x named), and the batch's own so far.
    struct batch_names {
        bool walked = false;
        std::unordered_map<std::string_view, entity_id> owners;
        std::unordered_set<std::string> given;
    };
    /// @brief Throws invalid_value when `components` gives `self` a Name another live entity has,
    /// or one the same batch gave already (`batch`, added to as it goes).
    void check_name(const json& components, entity_id self, batch_names* batch = nullptr) const;
    /// @brief Adds the components another one needs: a RigidBody gets a Velocity {0, 0}.
    void add_required(entity_id e);
    /// @brief A new entity with resolved components (checked already) and what they require.
    entity_id create_resolved(const std::vector<std::pair<ecs::component_id, const json*>>& resolved);
    void time_system(system_def& s);

    world_settings settings_;
    ecs::registry reg_;
    std::vector<system_def> systems_;
    std::vector<spell_def> spells_;
    std::vector<spell_failure> spell_failures_;
    std::vector<action_def> actions_;
    std::map<std::string, json> prefabs_;
    std::vector<std::pair<std::string, json>> runtime_defs_;
    tick_clock clock_;
    unsigned default_threads_ = 1;
    std::unique_ptr<sim_workers> workers_;              // made at the first split walk, for threads()
    std::unique_ptr<script_host> scripts_;              // made with the first script
    mutable const position_grid* near_grid_ = nullptr;  // set by a near_index while it lives
    script_host& script_state();
    std::uint64_t tick_ = 0;
    std::uint64_t overruns_ = 0;
    double last_tick_ms_ = 0;        // the systems
    double last_tick_total_ms_ = 0;  // the systems and after_tick (watch diffs, publishing)
    system_stats tick_stats_;        // last_tick_total_ms over the last 256 ticks
    clock::time_point last_overrun_log_{};
    // The registry's shape (structure_version) as last seen, the tick it was first seen, and the
    // shape whose unused capacity was given back (see release_when_at_rest).
    std::uint64_t shape_seen_ = 0;
    std::uint64_t shape_since_ = 0;
    std::uint64_t shape_released_ = 0;
    std::uint64_t memory_releases_ = 0;
    void release_when_at_rest();
};

}  // namespace ecsd::world
