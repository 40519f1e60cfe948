#include "world/world.hpp"

#include <algorithm>
#include <cmath>

#include <spdlog/spdlog.h>

#include "ecs/state_hasher.hpp"
#include "ecs/value_codec.hpp"
#include "world/collision.hpp"
#include "world/script.hpp"
#include "world/systems.hpp"

namespace ecsd::world {

using ecs::ecs_error;
using ecs::reason;

namespace {
void check_settings(const world_settings& s) {
    if (!(s.tick_hz >= 1 && s.tick_hz <= 1000))
        throw ecs_error(reason::invalid_value, "tick_hz must be between 1 and 1000");
    if (!(std::fabs(s.gravity_x) <= 1e6) || !(std::fabs(s.gravity_y) <= 1e6))
        throw ecs_error(reason::invalid_value, "gravity components must be between -1e6 and 1e6 m/s^2");
    const auto& b = s.bounds;
    if (b.left && b.right && !(*b.left < *b.right))
        throw ecs_error(reason::invalid_value, "bounds: left must be less than right");
    if (b.bottom && b.top && !(*b.bottom < *b.top))
        throw ecs_error(reason::invalid_value, "bounds: bottom must be less than top");
    if (s.threads > world_settings::max_threads)
        throw ecs_error(reason::invalid_value,
                        "threads must be between 1 and " + std::to_string(world_settings::max_threads));
}
}  // namespace

json world_bounds::to_json() const {
    json out = json::object();
    const auto put = [&](const char* key, const std::optional<double>& v) {
        out[key] = v ? json(*v) : json(nullptr);
    };
    put("left", left);
    put("right", right);
    put("bottom", bottom);
    put("top", top);
    return out;
}

world_bounds world_bounds::from_json(const json& j) {
    if (j.is_null()) return {};
    if (!j.is_object())
        throw ecs_error(reason::invalid_params,
                        "bounds must be an object {left, right, bottom, top} of numbers");
    world_bounds b;
    for (const auto& [key, value] : j.items()) {
        std::optional<double>* side = key == "left"     ? &b.left
                                      : key == "right"  ? &b.right
                                      : key == "bottom" ? &b.bottom
                                      : key == "top"    ? &b.top
                                                        : nullptr;
        if (side == nullptr)
            throw ecs_error(reason::invalid_params,
                            "bounds: unknown side '" + key + "' (left, right, bottom, top)");
        if (value.is_null()) continue;  // open on that side
        if (!value.is_number() || !(std::fabs(value.get<double>()) <= ecs::internal::max_number))
            throw ecs_error(reason::invalid_value,
                            "bounds." + key + ": expected a number between -1e15 and 1e15 or null");
        *side = value.get<double>();
    }
    return b;
}

// Checked before anything is built from them: the clock divides by tick_hz (a snapshot's 0 was UB).
world::world(world_settings settings)
    : settings_((check_settings(settings), std::move(settings))), clock_(settings_.tick_hz) {
    [this]<typename... T>(type_list<T...>) { (reg_.register_component<T>(), ...); }(builtin_components{});
    // Movers walk Position and Velocity as two aligned packed arrays, those with a RigidBody first
    // with their RigidBody aligned too (a nested group).
    reg_.own_group<Position, Velocity>();
    reg_.nest_in_group<Position, Velocity, RigidBody>();
    install_builtin_systems();
    install_builtin_spells();
    clock_.restart(clock::now());
}

world::~world() {
    // Scripts hold references into the Lua state, which scripts_ closes: they go first.
    systems_.clear();
    spells_.clear();
}

void world::set_default_threads(unsigned n) noexcept {
    default_threads_ = std::clamp(n, 1U, world_settings::max_threads);
}

sim_workers& world::workers() {
    if (!workers_ || workers_->threads() != threads()) workers_ = std::make_unique<sim_workers>(threads());
    return *workers_;
}

std::string_view phase_name(system_phase p) noexcept {
    switch (p) {
        case system_phase::input:
            return "input";
        case system_phase::simulation:
            return "simulation";
        case system_phase::collision:
            return "collision";
        case system_phase::post:
            return "post";
        case system_phase::cleanup:
            return "cleanup";
    }
    return "?";
}

void world::install_builtin_systems() {
    [this]<typename... S>(type_list<S...>) { (add_system<S>(), ...); }(builtin_systems{});
}

template <typename S>
void world::add_system() {
    system_def s;
    s.name = S::name;
    s.phase = S::when;
    s.run = &S::run;
    s.key = &system_key<S>;
    if constexpr (requires { typename S::state; }) s.state = std::make_shared<typename S::state>();
    if constexpr (std::is_same_v<typename S::terms, every_entity>) {
        s.signature = "*";
    } else {
        ecs::query q;
        [&]<typename... T>(type_list<T...>) {
            ((s.signature += (s.signature.empty() ? "" : ", ") + std::string(ecs::component_traits<T>::name)),
             ...);
            ((q.all.set(reg_.registered_id<T>()), q.all_ids.push_back(reg_.registered_id<T>())), ...);
        }(typename S::terms{});
        s.member_set = reg_.track(q);
    }
    // Phases run in order; within one, systems run in the order they were installed.
    const auto after =
        std::find_if(systems_.begin(), systems_.end(), [](const system_def& d) { return d.phase > S::when; });
    systems_.insert(after, std::move(s));
}

void world::add_spell(std::string name, std::string description, spell_fn fn) {
    spells_.push_back({std::move(name), std::move(description), std::move(fn), nullptr});
}

// --- running ------------------------------------------------------------------------------

void world::time_system(system_def& s) {
    const auto t0 = clock::now();
    if (s.user)
        scripts_->run_system(s);
    else
        s.run(*this);
    s.stats.record(std::chrono::duration<double, std::milli>(clock::now() - t0).count());
}

void world::release_when_at_rest() {
    // Arrays grow by doubling, into huge pages resident in full, so a world that has spawned its
    // entities holds up to a huge page of unused capacity per array (about 1 B an entity at 1M).
    // Once its shape has held for a second of ticks, that goes back to the kernel: once per shape,
    // and never while entities come and go every tick, where the pages would fault straight back.
    const std::uint64_t shape = reg_.structure_version();
    if (shape != shape_seen_) {
        shape_seen_ = shape;
        shape_since_ = tick_;
    } else if (shape != shape_released_ && static_cast<double>(tick_ - shape_since_) >= settings_.tick_hz) {
        reg_.release_unused();
        shape_released_ = shape;
        ++memory_releases_;
    }
}

void world::run_tick() {
    const auto t0 = clock::now();
    for (auto& s : systems_) {
        // cleanup cannot be disabled (set_system_enabled); a user system may run every n ticks.
        if (s.enabled && (s.every <= 1 || tick_ % s.every == 0)) time_system(s);
    }
    ++tick_;
    last_tick_ms_ = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    if (last_tick_ms_ > 1000.0 / settings_.tick_hz) {
        ++overruns_;
        // At most one line a second, so a world that is always late does not flood the log.
        const auto now = clock::now();
        if (now - last_overrun_log_ >= std::chrono::seconds(1)) {
            spdlog::warn("world '{}': tick {} took {:.2f} ms (budget {:.2f} ms); {} overruns in all",
                         settings_.name, tick_, last_tick_ms_, 1000.0 / settings_.tick_hz, overruns_);
            last_overrun_log_ = now;
        }
    }
    release_when_at_rest();
    if (after_tick) after_tick(*this);
    // With what runs after the systems (watch diffs computed and published): the tick's whole cost.
    last_tick_total_ms_ = std::chrono::duration<double, std::milli>(clock::now() - t0).count();
    tick_stats_.record(last_tick_total_ms_);
}

std::uint64_t world::step(std::uint64_t n) {
    for (std::uint64_t i = 0; i < n; ++i) run_tick();
    return tick_;
}

void world::resume(clock::time_point now) noexcept {
    settings_.paused = false;
    clock_.restart(now);
}

world::clock::time_point world::advance(clock::time_point now) {
    if (settings_.paused) return now + clock_.period();
    const auto before = clock_.skipped_ticks();
    const int due = clock_.due(now);
    if (clock_.skipped_ticks() != before)
        spdlog::warn("world '{}': fell behind, skipped {} ticks ({} in all)", settings_.name,
                     clock_.skipped_ticks() - before, clock_.skipped_ticks());
    for (int i = 0; i < due; ++i) {
        run_tick();
        clock_.advance();
    }
    return clock_.next_deadline();
}

json world::info() const {
    return {{"world", settings_.name},
            {"tick", tick_},
            {"tick_hz", settings_.tick_hz},
            {"paused", settings_.paused},
            {"threads", threads()},
            {"gravity", {{"x", settings_.gravity_x}, {"y", settings_.gravity_y}}},
            {"bounds", settings_.bounds.to_json()},
            {"entities", reg_.size()},
            {"component_types", reg_.component_count()},
            {"overruns", overruns_},
            {"skipped_ticks", clock_.skipped_ticks()},
            {"skipped_seconds", static_cast<double>(clock_.skipped_ticks()) / settings_.tick_hz},
            {"last_tick_ms", last_tick_ms_},
            {"last_tick_total_ms", last_tick_total_ms_},
            {"tick_p50_ms", tick_stats_.quantile(0.5)},
            {"tick_p99_ms", tick_stats_.quantile(0.99)},
            {"max_entities", settings_.max_entities},
            {"spell_failures", [&] {
                 json out = json::array();
                 for (const auto& f : spell_failures_)
                     out.push_back(
                         {{"tick", f.tick}, {"caster", f.caster}, {"spell", f.spell}, {"error", f.error}});
                 return out;
             }()}};
}

std::uint64_t world::state_hash() const {
    ecs::state_hasher h;
    const auto& table = reg_.entities();
    for (std::uint32_t slot = 0; slot < table.slot_count(); ++slot) {
        if (!table.slot_alive(slot)) continue;
        h.add_u64(table.id_of(slot));
        // Names, not ids: the hash must not depend on registration order.
        std::vector<const ecs::pool*> comps;
        table.for_each_component(slot, [&](ecs::component_id c) { comps.push_back(&reg_.storage(c)); });
        std::sort(comps.begin(), comps.end(), [](auto* a, auto* b) { return a->name() < b->name(); });
        for (const auto* p : comps) {
            h.add_string(p->name());
            p->hash_value(slot, h);
        }
    }
    return h.value();
}

// --- systems --------------------------------------------------------------------------------

system_def& world::system(const std::string& name) {
    for (auto& s : systems_)
        if (s.name == name) return s;
    throw ecs_error(reason::no_such_system, "no system named '" + name + "'");
}

json world::list_systems() const {
    json out = json::array();
    int order = 0;
    for (const auto& s : systems_) {
        out.push_back({{"name", s.name},
                       {"phase", phase_name(s.phase)},
                       {"order", order++},
                       {"enabled", s.enabled},
                       {"signature", s.signature},
                       {"members", s.member_set >= 0 ? reg_.member_count(s.member_set) : reg_.size()},
                       {"runs", s.stats.runs()},
                       {"last_ms", s.stats.last_ms()},
                       {"p50_ms", s.stats.quantile(0.5)},
                       {"p99_ms", s.stats.quantile(0.99)}});
        if (s.user) {  // a client's Lua system: where it asked to be, and why it stopped if it did
            auto& row = out.back();
            row["lua"] = true;
            row["phase_order"] = s.order;
            row["every"] = s.every;
            row["error"] = s.error.empty() ? json(nullptr) : json(s.error);
        }
    }
    return out;
}

void world::set_system_enabled(const std::string& name, bool enabled) {
    auto& s = system(name);
    if (s.name == "cleanup" && !enabled)
        throw ecs_error(reason::invalid_value,
                        "cleanup cannot be disabled: deferred destruction depends on it");
    s.enabled = enabled;
    if (enabled) s.error.clear();  // a user system disabled by a failed run gets another chance
}

void world::run_system(const std::string& name) {
    auto& s = system(name);
    time_system(s);
    reg_.flush();  // a system run on demand finishes its deferred changes at once
}

json world::system_entities(const std::string& name, std::size_t limit, std::size_t offset) const {
    for (const auto& s : systems_) {
        if (s.name != name) continue;
        std::vector<entity_id> ids;
        if (s.member_set >= 0) {
            reg_.for_each_member(s.member_set,
                                 [&](std::uint32_t slot) { ids.push_back(reg_.entities().id_of(slot)); });
        } else {
            reg_.for_each_match(ecs::query{}, [&](entity_id e) { ids.push_back(e); });
        }
        std::sort(ids.begin(), ids.end());
        json page = json::array();
        for (std::size_t i = offset; i < ids.size() && page.size() < limit; ++i) page.push_back(ids[i]);
        return {{"system", name}, {"entities", page}, {"total", ids.size()}};
    }
    throw ecs_error(reason::no_such_system, "no system named '" + name + "'");
}

// --- spells -----------------------------------------------------------------------------------

json world::list_spells() const {
    json out = json::array();
    for (const auto& s : spells_) {
        out.push_back({{"name", s.name}, {"description", s.description}});
        if (s.script) out.back()["lua"] = true;
    }
    return out;
}

const spell_def* world::find_spell(const std::string& name) const {
    for (const auto& s : spells_)
        if (s.name == name) return &s;
    return nullptr;
}

std::uint64_t world::cast_spell(entity_id caster, const std::string& spell, entity_id target, double amount) {
    reg_.check(caster);
    if (!find_spell(spell)) throw ecs_error(reason::no_such_spell, "no spell named '" + spell + "'");
    if (target != ecs::null_entity) reg_.check(target);
    if (!std::isfinite(amount) || amount < 0) throw ecs_error(reason::invalid_value, "amount must be >= 0");
    // One spell per caster per tick (MagicInput is one component): a second is refused in words a
    // caster understands, never queued silently over the first.
    if (reg_.has<MagicInput>(caster))
        throw ecs_error(reason::limit_reached,
                        "caster " + std::to_string(caster) + " already casts '" +
                            reg_.get<MagicInput>(caster).spell + "' at tick " + std::to_string(tick_ + 1) +
                            ": one spell per caster per tick; cast the next one after that tick");
    reg_.emplace<MagicInput>(caster, {spell, {target}, amount});
    return tick_ + 1;
}

void world::record_spell_failure(entity_id caster, const std::string& spell, const std::string& error) {
    spdlog::info("world '{}': spell '{}' cast by {} failed: {}", settings_.name, spell, caster, error);
    spell_failures_.push_back({tick_, caster, spell, error});
    if (spell_failures_.size() > 32) spell_failures_.erase(spell_failures_.begin());
}

}  // namespace ecsd::world
