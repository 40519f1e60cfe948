#pragma once
// Game logic written in Lua 5.4: the systems and spells clients define (world.define_system,
// world.define_spell). One Lua state per world that has scripts, created with its first one; every
// script runs on the world's own thread, serially, between the built-in systems, never on the sim
// worker threads, so a tick computes the same state at any thread count.
//
// A script reaches nothing but its world: each chunk gets its own environment with the safe base
// functions, string (pattern functions guarded against unbounded backtracking), table, math (random
// is the world's deterministic generator) and utf8; no io, os, require, debug, package, load,
// dofile, string.dump or collectgarbage. Each run has an instruction budget (a count hook), the
// world's scripts share a memory cap (the state's allocator), and a run that fails leaves nothing
// of its writes behind: field writes are undone from an undo log, structural changes (spawned
// components, adds, removes, despawns) are queued and applied only when the run returns.
// docs/scripting.md describes the API; docs/protocol.md the methods and what a failed run leaves.

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <string_view>
#include <vector>

#include "ecs/registry.hpp"
#include "world/components.hpp"
#include "world/systems.hpp"

struct lua_State;

namespace ecsd::world {

class world;
struct system_def;

/// @brief What scripts may use; the server's flags set the defaults (set_script_limits).
struct script_limits {
    /// @brief Lua VM instructions one run of a system (or one cast of a spell) may execute.
    std::uint64_t instructions = 1'000'000;
    /// @brief Bytes the Lua state of one world may hold: every script of the world together.
    std::size_t memory_bytes = std::size_t{64} << 20;
    /// @brief Systems and spells one world may define.
    std::size_t max_scripts = 64;
    /// @brief Bytes of one script's source.
    std::size_t max_source_bytes = std::size_t{64} << 10;
};

/// @brief Sets the limits every world's scripts get from now on (ecsd calls it once, at start-up,
/// from --script-instructions, --script-memory, --max-scripts and --max-script-bytes).
void set_script_limits(const script_limits& limits) noexcept;
[[nodiscard]] script_limits current_script_limits() noexcept;

/// @brief A user system's phase from its name: input, simulation, collision or post (cleanup is
/// the world's own); throws ecs_error(invalid_params).
[[nodiscard]] system_phase script_phase(std::string_view text);

/// @brief One script as a client defined it (what snapshots, exports and world.list_systems carry).
struct script_source {
    enum class kind : std::uint8_t { system, spell, action };
    kind what = kind::system;
    std::string name;
    std::string query;                              // systems: the entities w:each() walks
    system_phase phase = system_phase::simulation;  // systems
    int order = 0;                                  // systems: place within the phase
    std::uint32_t every = 1;                        // systems: run on ticks divisible by this
    std::string source;
};

/// @brief The Lua state of one world and its scripts. The world owns it (world::scripts()).
class script_host {
  public:
    script_host(world& w, script_limits limits);
    ~script_host();
    script_host(const script_host&) = delete;
    script_host& operator=(const script_host&) = delete;

    /// @brief Compiles a script and runs its chunk once (which must return the function). Throws
    /// ecs_error(invalid_params) with the line and column of a syntax error, or the chunk's error.
    /// Returns the compiled script's handle for the world to keep in its system or spell entry.
    [[nodiscard]] std::shared_ptr<void> compile(const script_source& src);
    /// @brief Runs a user system once (its `every` already checked by the caller). On failure the
    /// system is disabled with the reason in s.error and logged; its writes of this run are undone.
    void run_system(system_def& s);
    /// @brief Casts a Lua spell; throws ecs_error (the spell failed, nothing of it applied).
    void cast(const std::shared_ptr<void>& script, ecs::entity_id caster, ecs::entity_id target,
              double amount);
    /// @brief Calls an action with the caller's identity and its args; returns its return value
    /// (null for none). Throws ecs_error(action_failed) with the script's message, or what JSON
    /// cannot hold of its return value; then nothing of the call applied.
    nlohmann::json call(const std::shared_ptr<void>& script, const std::string& caller,
                        const nlohmann::json& args);
    /// @brief The source a compiled script was made from.
    [[nodiscard]] static const script_source& source_of(const std::shared_ptr<void>& script);
    /// @brief Bytes the Lua state holds now.
    [[nodiscard]] std::size_t memory_used() const noexcept;
    [[nodiscard]] const script_limits& limits() const noexcept;

    struct impl;

  private:
    std::unique_ptr<impl> impl_;
};

}  // namespace ecsd::world
