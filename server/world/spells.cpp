// Spells: a table from spell name to function, read by the spells
// system from MagicInput components. Adding a spell is one function and one row
// in install_builtin_spells.
#include <algorithm>
#include <vector>

#include "world/systems.hpp"
#include "world/world.hpp"

namespace ecsd::world {

namespace {
entity_id target_of(entity_id caster, const MagicInput& in) {
    return in.target.id ? in.target.id : caster;
}

void require_alive(world& w, entity_id e) {
    w.registry().check(e);
}

/// @brief Destroys every entity with Health and AI.
void kill_all_monsters(world& w, entity_id, const MagicInput&) {
    auto& reg = w.registry();
    std::vector<entity_id> doomed;
    reg.each<const Health, const AI>([&](entity_id e, const Health&, const AI&) { doomed.push_back(e); });
    reg.destroy(doomed);
}

/// @brief The ice spell: the target loses its Velocity and is tagged Frozen.
void freeze(world& w, entity_id caster, const MagicInput& in) {
    auto& reg = w.registry();
    const entity_id t = target_of(caster, in);
    require_alive(w, t);
    if (reg.has<Velocity>(t)) reg.remove<Velocity>(t);
    if (!reg.has<Frozen>(t)) reg.emplace<Frozen>(t);
}

/// @brief Undoes freeze: removes Frozen and gives back a Velocity at rest.
void thaw(world& w, entity_id caster, const MagicInput& in) {
    auto& reg = w.registry();
    const entity_id t = target_of(caster, in);
    require_alive(w, t);
    if (reg.has<Frozen>(t)) reg.remove<Frozen>(t);
    if (!reg.has<Velocity>(t)) reg.emplace<Velocity>(t);
}

/// @brief The ghost power-up: the target passes through AI entities for `amount` seconds (default 5).
void ghost(world& w, entity_id caster, const MagicInput& in) {
    auto& reg = w.registry();
    const entity_id t = target_of(caster, in);
    require_alive(w, t);
    Ghost g{{"AI"}, in.amount > 0 ? in.amount : 5.0};
    if (auto* existing = reg.try_get<Ghost>(t)) {
        existing->remaining = g.remaining;
        reg.touch<Ghost>(t);
    } else {
        reg.emplace<Ghost>(t, std::move(g));
    }
}

/// @brief Restores `amount` hp (default: to max), never past max.
void heal(world& w, entity_id caster, const MagicInput& in) {
    auto& reg = w.registry();
    const entity_id t = target_of(caster, in);
    require_alive(w, t);
    auto* h = reg.try_get<Health>(t);
    if (!h) throw ecs::ecs_error(ecs::reason::no_such_component, "heal: the target has no Health");
    h->hp = in.amount > 0 ? std::min(h->max, h->hp + in.amount) : h->max;
    reg.touch<Health>(t);
}
}  // namespace

void world::install_builtin_spells() {
    add_spell("kill_all_monsters", "destroys every entity with Health and AI", kill_all_monsters);
    add_spell("freeze", "removes the target's Velocity and tags it Frozen", freeze);
    add_spell("thaw", "undoes freeze: removes Frozen, restores a Velocity at rest", thaw);
    add_spell("ghost", "the target passes through AI entities for `amount` seconds (default 5)", ghost);
    add_spell("heal", "restores `amount` hp (default: all) up to max", heal);
}

void spells_system::run(world& w) {
    auto& reg = w.registry();
    std::vector<std::pair<entity_id, MagicInput>> casts;
    w.walk<spells_system, const MagicInput>(
        [&](entity_id e, const MagicInput& in) { casts.emplace_back(e, in); });
    // Dense order depends on history; cast in id order so replays are identical.
    std::sort(casts.begin(), casts.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
    for (auto& [caster, input] : casts) {
        if (!reg.alive(caster)) continue;  // an earlier spell this tick destroyed the caster
        reg.remove<MagicInput>(caster);
        const spell_def* spell = w.find_spell(input.spell);
        if (!spell) {
            w.record_spell_failure(caster, input.spell, "no such spell");
            continue;
        }
        try {
            spell->cast(w, caster, input);
        } catch (const ecs::ecs_error& e) {
            w.record_spell_failure(caster, input.spell, e.what());
        }
    }
}

}  // namespace ecsd::world
