#include "ecs/registry.hpp"

#include <stdexcept>
#include <unordered_set>

namespace ecsd::ecs {

namespace {
std::string id_text(entity_id e) {
    return std::to_string(e);
}
}  // namespace

// --- component types -------------------------------------------------------------

component_id registry::next_id(const std::string& name) const {
    if (name.empty() || name.size() > 64)
        throw ecs_error(reason::invalid_value, "component names are 1 to 64 characters");
    if (by_name_.count(name))
        throw ecs_error(reason::component_exists, "component type '" + name + "' already exists");
    if (pools_.size() >= max_component_types)
        throw ecs_error(reason::limit_reached,
                        "at most " + std::to_string(max_component_types) + " component types");
    return static_cast<component_id>(pools_.size());
}

void registry::install(std::unique_ptr<pool> p) {
    p->bind_epoch(&epoch_);
    p->track_writes(tracking_);
    by_name_.emplace(p->name(), p->id());
    // Ranks shift up past the new name (registration is rare; the ranks are read per entity).
    std::uint32_t rank = 0;
    for (std::size_t c = 0; c < pools_.size(); ++c) {
        if (pools_[c]->name() < p->name()) {
            ++rank;
        } else {
            ++name_rank_[c];
        }
    }
    name_rank_.push_back(rank);
    pools_.push_back(std::move(p));
    sets_by_component_.emplace_back();
    entities_.ensure_types(pools_.size());
}

component_id registry::register_dynamic(const std::string& name, const json& fields) {
    const auto id = next_id(name);
    auto schema = dynamic_schema::parse(name, fields);
    if (schema.is_tag()) {
        install(std::make_unique<tag_pool>(id, name));
    } else {
        install(std::make_unique<dynamic_pool>(id, std::move(schema)));
    }
    return id;
}

std::optional<component_id> registry::find_component(std::string_view name) const {
    if (auto it = by_name_.find(std::string(name)); it != by_name_.end()) return it->second;
    return std::nullopt;
}

component_id registry::component_by_name(std::string_view name) const {
    if (auto id = find_component(name)) return *id;
    throw ecs_error(reason::no_such_component, "no component type named '" + std::string(name) + "'");
}

void registry::track_writes(bool on) {
    tracking_ = on;
    for (auto& p : pools_) p->track_writes(on);
}

// --- entities --------------------------------------------------------------------

void registry::throw_not_alive(entity_id e) const {
    throw ecs_error(reason::no_such_entity, why_not_alive(e));
}

std::string registry::why_not_alive(entity_id e) const {
    if (entities_.stale(e)) return "entity " + id_text(e) + " is stale: it was destroyed";
    return "entity " + id_text(e) + " does not exist";
}

void registry::reserve(std::size_t n) {
    ++structure_version_;
    entities_.reserve(n);
    for (auto& p : pools_) p->reserve(n);
}

void registry::destroy(entity_id e) {
    check(e);
    if (iterating_ > 0) {
        defer([this, e] {
            if (alive(e)) destroy_now(e);
        });
        return;
    }
    destroy_now(e);
}

void registry::destroy(std::span<const entity_id> ids) {
    for (auto e : ids) check(e);  // all or nothing: a dead id changes nothing
    if (iterating_ > 0) {
        for (auto e : ids) destroy(e);
        return;
    }
    // (The change records need no room made: ids destroyed in order are one run.)
    entities_.reserve_free(ids.size());
    if (ids.size() >= bulk_destroy_min && ids.size() * 8 >= entities_.alive_count()) {
        destroy_bulk(ids);
        return;
    }
    for (auto e : ids)
        if (alive(e)) destroy_now(e);  // an id given twice dies once
}

// Many at once (a spell, a despawn of a large part of the world). A pool that loses every entity
// it holds is emptied whole (its sparse pages dropped). In any other pool each dying component
// leaves a hole, and the pool is then closed up in one ordered pass, instead of a swap-and-pop
// each, which moves a random last element and, in an owning group, swaps every owned pool besides.
// Closing up keeps the order of the rest, so an owning group's members stay aligned and its
// prefixes only shrink by the members that died. The change records are the ones destroy_now()
// would write, in the same order. Ids that come as runs (consecutive, one signature: what a query
// over a world made by spawns hands back) die a run at a time, so a run costs its records, counts
// and group shares once, and per id only its slot word and its place in the free queue.
namespace {
/// @brief Collects ids for an id_list and appends each run of consecutive ids at once: a bulk
/// destroy's records would otherwise read and write the list's last word once per id and pool.
class run_writer {
  public:
    explicit run_writer(id_list& list) : list_(&list) {}
    void push_run(entity_id first, std::uint64_t count) {
        if (count_ > 0 && first_ + count_ == first) {
            count_ += count;
            return;
        }
        flush();
        first_ = first;
        count_ = count;
    }
    void push(entity_id e) { push_run(e, 1); }
    void flush() {
        list_->append_run(first_, count_);
        count_ = 0;
    }

  private:
    id_list* list_;
    entity_id first_ = 0;
    std::uint64_t count_ = 0;
};
}  // namespace

void registry::destroy_bulk(std::span<const entity_id> ids) {
    ++structure_version_;
    std::vector<run_writer> removed;
    removed.reserve(pools_.size());
    for (auto& p : pools_) removed.emplace_back(p->removed[1]);
    run_writer died(died_[1]);
    std::vector<std::uint32_t> members_gone(groups_.size(), 0), inner_gone(groups_.size(), 0);
    std::vector<std::size_t> dying(pools_.size(), 0);  // per pool: how many of its entities die
    for (std::size_t at = 0; at < ids.size();) {
        // A run of consecutive ids with one signature dies in one step: its records, counts and
        // group shares are the run's, not one per id. Anything else dies one by one below.
        std::uint32_t signature = 0;
        const auto first = ids[at];
        const auto slot0 = index_of(first);
        if (const std::size_t n = entities_.destroy_run(ids.subspan(at), signature); n > 0) {
            const auto end = slot0 + static_cast<std::uint32_t>(n);
            for (std::size_t g = 0; g < groups_.size(); ++g) {
                const auto& grp = groups_[g];
                if (!grp.complete_inline(signature)) continue;
                members_gone[g] += static_cast<std::uint32_t>(n);
                if (grp.nested() == null_index) continue;
                for (auto slot = slot0; slot < end; ++slot)
                    inner_gone[g] += grp.holds_inner(pools_, slot) ? 1 : 0;
            }
            for (std::uint32_t w = signature; w != 0; w &= w - 1) {
                const auto c = static_cast<component_id>(__builtin_ctz(w));
                dying[c] += n;
                removed[c].push_run(first, n);
            }
            for (auto& w : member_sets_) {  // group-held sets have an empty `members`
                if (w->members.empty()) continue;
                for (auto slot = slot0; slot < end; ++slot)
                    if (w->members.contains(slot)) w->members.erase(slot);
            }
            died.push_run(first, n);
            at += n;
            continue;
        }
        const auto e = ids[at++];
        if (!alive(e)) continue;  // an id given twice dies once
        const auto slot = slot0;
        for (std::size_t g = 0; g < groups_.size(); ++g) {
            const auto& grp = groups_[g];
            if (!grp.complete(entities_, slot)) continue;
            ++members_gone[g];
            if (grp.holds_inner(pools_, slot)) ++inner_gone[g];
        }
        entities_.for_each_component(slot, [&](component_id c) {
            ++dying[c];
            removed[c].push(e);
        });
        for (auto& w : member_sets_)  // group-held sets have an empty `members`
            if (w->members.contains(slot)) w->members.erase(slot);
        entities_.destroy(slot);
        died.push(e);
    }
    for (auto& r : removed) r.flush();
    died.flush();
    for (std::size_t c = 0; c < pools_.size(); ++c) {
        pool& p = *pools_[c];
        if (dying[c] == 0) continue;
        if (dying[c] == p.size()) {
            p.clear();
            continue;
        }
        for (auto e : ids)  // all dead now; an id given twice was punched the first time
            if (p.contains(index_of(e))) p.punch(index_of(e));
        p.compact();
    }
    for (std::size_t g = 0; g < groups_.size(); ++g) groups_[g].shrink(members_gone[g], inner_gone[g]);
}

void registry::destroy_now(entity_id e) {
    ++structure_version_;
    const auto slot = index_of(e);
    // Leave owning groups first: a member has every owned component.
    for (auto& grp : groups_)
        if (grp.complete(entities_, slot)) grp.leave_all(pools_, slot);
    entities_.for_each_component(slot, [&](component_id c) {
        pool& p = *pools_[c];
        p.erase(slot);
        p.removed[1].push_back(e);
    });
    for (auto& w : member_sets_)  // an entity matching a query with no `all` can have no components
        if (w->members.contains(slot)) w->members.erase(slot);
    entities_.destroy(slot);  // clears the whole signature with the slot
    died_[1].push_back(e);
}

// --- components --------------------------------------------------------------------

void registry::throw_unregistered(const char* type_name) {
    throw std::logic_error(std::string("component type ") + type_name +
                           " is used but was never registered (register_component<T>() first)");
}

void registry::throw_exists(entity_id e, component_id c) const {
    throw ecs_error(reason::component_exists, "entity " + id_text(e) + " already has " + pools_[c]->name() +
                                                  " (use insert to replace it)");
}

void registry::emplace_json(entity_id e, component_id c, const json& value) {
    check(e);
    const auto slot = index_of(e);
    if (pools_[c]->contains(slot)) throw_exists(e, c);
    pools_[c]->validate(value);
    if (iterating_ > 0) {
        defer([this, e, c, value] {
            if (alive(e) && !has(e, c)) emplace_json(e, c, value);
        });
        return;
    }
    pools_[c]->emplace_json(slot, value);
    on_added(slot, c);
}

void registry::insert_json(entity_id e, component_id c, const json& value) {
    check(e);
    if (pools_[c]->contains(index_of(e))) {
        pools_[c]->assign_json(index_of(e), value);
    } else {
        emplace_json(e, c, value);
    }
}

void registry::set_field_json(entity_id e, component_id c, std::string_view field, const json& value) {
    check(e);
    if (!pools_[c]->contains(index_of(e)))
        throw ecs_error(reason::no_such_component, "entity " + id_text(e) + " has no " + pools_[c]->name());
    pools_[c]->set_field_json(index_of(e), field, value);
}

json registry::get_json(entity_id e, component_id c) const {
    check(e);
    if (!pools_[c]->contains(index_of(e)))
        throw ecs_error(reason::no_such_component, "entity " + id_text(e) + " has no " + pools_[c]->name());
    return pools_[c]->value_json(index_of(e));
}

void registry::remove(entity_id e, component_id c) {
    check(e);
    const auto slot = index_of(e);
    if (c == null_index || !pools_[c]->contains(slot))
        throw ecs_error(
            reason::no_such_component,
            "entity " + id_text(e) + " has no " + (c == null_index ? "such component" : pools_[c]->name()));
    if (iterating_ > 0) {
        defer([this, e, c] {
            if (has(e, c)) remove(e, c);
        });
        return;
    }
    if (!plain(c)) before_removed(slot, c);
    pools_[c]->erase(slot);
    on_removed(e, slot, c);
}

std::vector<component_id> registry::components_of(entity_id e) const {
    check(e);
    std::vector<component_id> out;
    entities_.for_each_component(index_of(e), [&](component_id c) { out.push_back(c); });
    return out;
}

// --- signature changes: groups, member sets, change records ----------------------------

// Groups and member sets after component c was added (on_added, for a component that is not plain).
void registry::join(std::uint32_t slot, component_id c) {
    if (const int g = pools_[c]->owner_group; g >= 0) {
        auto& grp = groups_[static_cast<std::size_t>(g)];
        if (grp.complete(entities_, slot) && !grp.holds(pools_, slot)) grp.enter(pools_, slot);
    } else if (const int n = pools_[c]->nested_group; n >= 0) {
        auto& grp = groups_[static_cast<std::size_t>(n)];
        if (grp.complete(entities_, slot) && grp.holds(pools_, slot)) grp.enter_inner(pools_, slot);
    }
    update_member_sets(slot, c);
}

void registry::before_removed(std::uint32_t slot, component_id c) {
    if (const int g = pools_[c]->owner_group; g >= 0) {
        auto& grp = groups_[static_cast<std::size_t>(g)];
        if (grp.holds(pools_, slot)) grp.leave(pools_, slot);
    } else if (const int n = pools_[c]->nested_group; n >= 0) {
        auto& grp = groups_[static_cast<std::size_t>(n)];
        if (grp.holds_inner(pools_, slot)) grp.leave_inner(pools_, slot);
    }
}

void registry::update_member_sets(std::uint32_t slot, component_id c) {
    for (int id : sets_by_component_[c]) {
        auto& w = *member_sets_[static_cast<std::size_t>(id)];
        const bool in = w.members.contains(slot);
        const bool should = matches(slot, w.q);
        if (should && !in) w.members.insert(slot);
        if (!should && in) w.members.erase(slot);
    }
}

void registry::rebuild_members(member_set& w) const {
    w.members.clear();
    if (w.group >= 0) return;  // the group is rebuilt on its own
    for (std::uint32_t slot = 0; slot < entities_.slot_count(); ++slot)
        if (entities_.slot_alive(slot) && matches(slot, w.q)) w.members.insert(slot);
}

void registry::own_group_ids(std::vector<component_id> owned) {
    for (auto c : owned) {
        if (c == null_index || c >= pools_.size())
            throw ecs_error(reason::no_such_component, "owning group over an unregistered component");
        if (pools_[c]->owner_group >= 0 || pools_[c]->nested_group >= 0)
            throw ecs_error(reason::invalid_value, pools_[c]->name() + " is already owned by a group");
    }
    ++structure_version_;
    const int g = static_cast<int>(groups_.size());
    for (auto c : owned) pools_[c]->owner_group = g;
    groups_.emplace_back(std::move(owned));
    groups_.back().rebuild(pools_);  // align the entities that already have every owned component
    for (std::size_t i = 0; i < member_sets_.size(); ++i)
        if (member_sets_[i]->group < 0 && group_over(member_sets_[i]->q) == g)
            hand_to_group(static_cast<int>(i), g);
}

// The owning group whose components are exactly q's `all`, with no other term, or -1. Its aligned
// prefix holds exactly q's matches, so tracking q needs no set of its own (8 B a member).
int registry::group_over(const query& q) const {
    if (!q.none.empty() || !q.any.empty()) return -1;
    for (std::size_t g = 0; g < groups_.size(); ++g) {
        component_mask owned;
        for (auto c : groups_[g].owned()) owned.set(c);
        if (owned == q.all) return static_cast<int>(g);
    }
    return -1;
}

void registry::hand_to_group(int set_id, int g) {
    auto& w = member_sets_[static_cast<std::size_t>(set_id)];
    auto held = std::make_unique<member_set>();  // a fresh entry gives the set's memory back
    held->q = std::move(w->q);
    held->group = g;
    w = std::move(held);
    for (auto& ids : sets_by_component_) std::erase(ids, set_id);
}

std::size_t registry::member_count(int set_id) const noexcept {
    const auto& w = *member_sets_[static_cast<std::size_t>(set_id)];
    return w.group >= 0 ? groups_[static_cast<std::size_t>(w.group)].size() : w.members.size();
}

bool registry::is_member(int set_id, std::uint32_t slot) const noexcept {
    const auto& w = *member_sets_[static_cast<std::size_t>(set_id)];
    if (w.group < 0) return w.members.contains(slot);
    const auto& grp = groups_[static_cast<std::size_t>(w.group)];
    return grp.complete(entities_, slot);
}

void registry::nest_in_group_ids(component_id owned, component_id nested) {
    if (owned >= pools_.size() || nested >= pools_.size())
        throw ecs_error(reason::no_such_component, "nested group over an unregistered component");
    const int g = pools_[owned]->owner_group;
    if (g < 0) throw ecs_error(reason::invalid_value, pools_[owned]->name() + " is owned by no group");
    auto& grp = groups_[static_cast<std::size_t>(g)];
    if (grp.nested() != null_index)
        throw ecs_error(reason::invalid_value,
                        "the group of " + pools_[owned]->name() + " already nests one");
    if (pools_[nested]->owner_group >= 0 || pools_[nested]->nested_group >= 0)
        throw ecs_error(reason::invalid_value, pools_[nested]->name() + " is already in a group");
    pools_[nested]->nested_group = g;
    grp.nest(pools_, nested);
    ++structure_version_;
}

long registry::nested_size_of(component_id c) const noexcept {
    const int g = pools_[c]->owner_group;
    if (g < 0 || groups_[static_cast<std::size_t>(g)].nested() == null_index) return -1;
    return static_cast<long>(groups_[static_cast<std::size_t>(g)].inner_size());
}

long registry::group_size_of(component_id c) const noexcept {
    const int g = pools_[c]->owner_group;
    return g < 0 ? -1 : static_cast<long>(groups_[static_cast<std::size_t>(g)].size());
}

int registry::track(const query& q) {
    // Systems with the same terms (movement and bounds both walk Position, Velocity) share one set:
    // a set costs 8 bytes per member.
    for (std::size_t i = 0; i < member_sets_.size(); ++i) {
        const auto& w = member_sets_[i]->q;
        if (w.all == q.all && w.none == q.none && w.any == q.any) return static_cast<int>(i);
    }
    const int id = static_cast<int>(member_sets_.size());
    auto& entry = *member_sets_.emplace_back(std::make_unique<member_set>());
    entry.q = q;
    entry.group = group_over(q);
    if (entry.group >= 0) return id;  // the group keeps the members
    std::unordered_set<component_id> mentioned;
    q.all.for_each([&](component_id c) { mentioned.insert(c); });
    q.none.for_each([&](component_id c) { mentioned.insert(c); });
    for (const auto& g : q.any) g.for_each([&](component_id c) { mentioned.insert(c); });
    for (auto c : mentioned) sets_by_component_[c].push_back(id);
    rebuild_members(entry);
    return id;
}

// --- restore ------------------------------------------------------------------------------

void registry::restore_entities(std::size_t slot_count, const std::vector<entity_id>& live,
                                const std::vector<std::pair<std::uint32_t, std::uint32_t>>& free_queue,
                                const std::vector<std::pair<std::uint32_t, std::uint32_t>>& retired) {
    if (entities_.alive_count() != 0)
        throw ecs_error(reason::invalid_value, "restore into a registry that has entities");
    std::vector<std::uint32_t> generations(slot_count, 0);
    const auto place = [&](std::uint32_t slot, std::uint32_t gen, const char* what) {
        if (slot >= slot_count || gen < 1 || gen > max_generation || generations[slot] != 0)
            throw ecs_error(reason::invalid_value, std::string("snapshot: bad or repeated ") + what +
                                                       " slot " + std::to_string(slot));
        generations[slot] = gen;
    };
    for (auto e : live) place(index_of(e), generation_of(e), "entity");
    std::vector<std::uint32_t> queue;
    for (auto [slot, gen] : free_queue) {
        place(slot, gen, "free");
        queue.push_back(slot);
    }
    for (auto [slot, gen] : retired) place(slot, gen, "retired");
    for (std::size_t s = 0; s < slot_count; ++s)
        if (generations[s] == 0)
            throw ecs_error(reason::invalid_value,
                            "snapshot: slot " + std::to_string(s) + " is unaccounted for");
    entities_.restore(generations, queue, retired.size());
    for (auto e : live) entities_.revive(index_of(e));
    ++structure_version_;
}

void registry::restore_component(component_id c, entity_id e, const json& value) {
    const restoring_scope restoring;  // a saved value loads as it was saved, whatever it is
    check(e);
    const auto slot = index_of(e);
    if (pools_[c]->contains(slot)) throw_exists(e, c);
    pools_[c]->emplace_json(slot, value);
    entities_.set_bit(slot, c);
    ++structure_version_;
}

void registry::restore_raw(component_id c, std::uint32_t slot, const std::byte* value) {
    if (!entities_.slot_alive(slot))
        throw ecs_error(reason::invalid_value, "snapshot: " + pools_[c]->name() + " lists slot " +
                                                   std::to_string(slot) + ", which holds no live entity");
    if (pools_[c]->contains(slot)) throw_exists(entities_.id_of(slot), c);
    pools_[c]->emplace_raw(slot, value);
    entities_.set_bit(slot, c);
}

void registry::finish_restore() {
    for (auto& grp : groups_) grp.rebuild(pools_);
    for (auto& w : member_sets_) rebuild_members(*w);
    ++structure_version_;
}

// --- ticks ------------------------------------------------------------------------------

void registry::flush() {
    // Ops may queue more ops (a deferred destroy inside a walk started by another op).
    while (!deferred_.empty()) {
        auto ops = std::move(deferred_);
        deferred_.clear();
        for (auto& op : ops) op();
    }
}

void registry::end_tick() {
    flush();
    // Swap rather than move so both buffers keep their capacity (no fresh pages per tick).
    for (auto& p : pools_) {
        std::swap(p->added[0], p->added[1]);
        p->added[1].clear();
        std::swap(p->removed[0], p->removed[1]);
        p->removed[1].clear();
    }
    std::swap(died_[0], died_[1]);
    died_[1].clear();
    if (++epoch_ == 0) {  // after 2^32 ticks: restart stamps rather than alias old ones
        epoch_ = 2;
        for (auto& p : pools_) p->reset_stamps();
    }
    for (auto& p : pools_) p->age_stamps();  // a stamp is a byte: keep its age from wrapping (pool.hpp)
}

std::vector<entity_id> registry::died() const {
    std::vector<entity_id> out(died_[0].begin(), died_[0].end());
    out.insert(out.end(), died_[1].begin(), died_[1].end());
    return out;
}

std::size_t registry::memory_bytes() const {
    std::size_t total = entities_.bytes();
    for (const auto& p : pools_) total += p->memory_bytes();  // change records included
    for (const auto& l : died_) total += l.capacity() * sizeof(entity_id);
    for (const auto& w : member_sets_) total += sizeof(*w) + w->members.memory_bytes();
    return total;
}

void registry::release_unused() noexcept {
    entities_.release_unused();
    for (const auto& p : pools_) p->release_unused();
    internal::page_arena::instance().release_unused();
}

std::vector<const void*> registry::arrays_written_lately() const {
    std::vector<const void*> out;
    const std::uint32_t floor = change_floor();
    for (const auto& p : pools_) {
        const std::size_t n = p->stamp_count();
        if (n == 0 || p->value_array() == nullptr) continue;
        constexpr std::size_t samples = 16;  // evenly spread, and the last position
        bool written = p->written_since(static_cast<std::uint32_t>(n - 1), floor);
        for (std::size_t i = 0; i < samples && !written; ++i)
            written = p->written_since(static_cast<std::uint32_t>(i * n / samples), floor);
        if (!written) continue;
        out.push_back(p->value_array());
        out.push_back(p->stamps());
    }
    return out;
}

}  // namespace ecsd::ecs
