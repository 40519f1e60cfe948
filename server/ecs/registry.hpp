#pragma once
// The registry owns the entities, one storage per component type, the owning
// groups that keep hot component pairs aligned, the member sets that systems
// track (sets of the entities matching a query, kept current through signature changes), per-tick
// change records, and the queue of structural changes deferred while a walk
// is in progress (deletion deferred to the end of the frame).

#include <algorithm>
#include <array>
#include <functional>
#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <tuple>
#include <type_traits>
#include <unordered_map>
#include <utility>
#include <vector>

#include "ecs/entity_table.hpp"
#include "ecs/group.hpp"
#include "ecs/pool.hpp"
#include "ecs/query.hpp"

namespace ecsd::ecs {

namespace internal {
inline std::size_t next_type_seq() noexcept {
    static std::size_t counter = 0;
    return counter++;
}
/// @brief A process-wide number per C++ component type, used to find its id in a registry.
template <typename T>
inline const std::size_t type_seq = next_type_seq();
}  // namespace internal

template <typename T>
using storage_for = std::conditional_t<is_tag_v<T>, tag_pool, typed_pool<T>>;

class registry {
  public:
    /// @brief Upper bound on component types per registry (no fixed cap of 32 as in a 32-bit mask).
    static constexpr std::size_t max_component_types = 4096;

    registry() = default;
    registry(const registry&) = delete;
    registry& operator=(const registry&) = delete;

    // --- component types ---------------------------------------------------------
    /// @brief Registers a C++ component type (idempotent); empty structs become tags.
    template <typename T>
    component_id register_component() {
        const std::size_t seq = internal::type_seq<std::remove_const_t<T>>;
        if (seq < typed_ids_.size() && typed_ids_[seq] != null_index) return typed_ids_[seq];
        const auto id = next_id(component_traits<T>::name);
        if constexpr (is_tag_v<T>) {
            install(std::make_unique<tag_pool>(id, component_traits<T>::name));
        } else {
            install(std::make_unique<typed_pool<T>>(id));
        }
        if (typed_ids_.size() <= seq) typed_ids_.resize(seq + 1, null_index);
        typed_ids_[seq] = id;
        return id;
    }
    /// @brief Registers a run-time component. Empty fields make a tag.
    component_id register_dynamic(const std::string& name, const json& fields);

    [[nodiscard]] std::optional<component_id> find_component(std::string_view name) const;
    /// @brief The id of a component by name; throws no_such_component.
    [[nodiscard]] component_id component_by_name(std::string_view name) const;
    template <typename T>
    [[nodiscard]] component_id id_of() const {
        const std::size_t seq = internal::type_seq<std::remove_const_t<T>>;
        return seq < typed_ids_.size() ? typed_ids_[seq] : null_index;
    }
    /// @brief The id of a registered C++ type. Using a type that was never registered is a
    /// programming error, reported loudly (std::logic_error naming the type), never a pool
    /// looked up at null_index.
    template <typename T>
    [[nodiscard]] component_id registered_id() const {
        const component_id c = id_of<T>();
        if (c == null_index) [[unlikely]]
            throw_unregistered(component_traits<std::remove_const_t<T>>::name);
        return c;
    }
    [[nodiscard]] std::size_t component_count() const noexcept { return pools_.size(); }
    /// @brief Where a component's name falls among all the names (0 is the first): the order JSON
    /// objects of components are written in. Kept as components are registered, so a writer sorts
    /// an entity's few components by these numbers instead of comparing their names.
    [[nodiscard]] std::uint32_t name_rank(component_id c) const noexcept { return name_rank_[c]; }
    [[nodiscard]] pool& storage(component_id id) { return *pools_[id]; }
    [[nodiscard]] const pool& storage(component_id id) const { return *pools_[id]; }
    template <typename T>
    [[nodiscard]] storage_for<std::remove_const_t<T>>& storage() {
        return static_cast<storage_for<std::remove_const_t<T>>&>(*pools_[registered_id<T>()]);
    }
    template <typename T>
    [[nodiscard]] const storage_for<std::remove_const_t<T>>& storage() const {
        return static_cast<const storage_for<std::remove_const_t<T>>&>(*pools_[registered_id<T>()]);
    }

    /// @brief Turns per-value write stamps (the "changed" filter) on or off for every data pool.
    void track_writes(bool on);

    // --- entities ---------------------------------------------------------------
    [[nodiscard]] entity_id create() { return entities_.create(); }
    /// @brief Destroys an entity and its components; deferred while a walk is in progress.
    void destroy(entity_id e);
    /// @brief Destroys many entities (all must be live; an id given twice dies once). Faster than
    /// one call each: the change records grow once. Throws before changing anything.
    void destroy(std::span<const entity_id> ids);
    /// @brief Batches from this size on, when they are at least an eighth of the world, are
    /// destroyed by destroy_bulk(): below that, one swap-and-pop each costs less than closing up
    /// the pools they touch.
    static constexpr std::size_t bulk_destroy_min = 1024;
    [[nodiscard]] bool alive(entity_id e) const noexcept { return entities_.alive(e); }
    /// @brief Throws no_such_entity (saying whether the id is stale or never existed) unless alive.
    void check(entity_id e) const {
        if (entities_.alive(e)) [[likely]]
            return;
        throw_not_alive(e);
    }
    /// @brief What check() would say of an entity that is not alive (stale, or never was).
    [[nodiscard]] std::string why_not_alive(entity_id e) const;
    [[nodiscard]] std::size_t size() const noexcept { return entities_.alive_count(); }
    [[nodiscard]] const entity_table& entities() const noexcept { return entities_; }
    [[nodiscard]] entity_table& entities() noexcept { return entities_; }
    void reserve(std::size_t n);

    // --- typed components ----------------------------------------------------------
    /// @brief Adds a component (immediately; deferred during a walk). Throws component_exists.
    template <typename T>
    void emplace(entity_id e, T value = {}) {
        check(e);
        const component_id c = registered_id<T>();
        if (iterating_ > 0) {
            defer([this, e, v = std::move(value)]() mutable {
                if (alive(e) && !has<T>(e)) emplace<T>(e, std::move(v));
            });
            return;
        }
        const auto slot = index_of(e);
        auto& s = storage<T>();
        if (s.contains(slot)) throw_exists(e, c);
        if constexpr (is_tag_v<T>) {
            s.emplace(slot);
        } else {
            s.emplace(slot, std::move(value));
        }
        on_added(slot, c);
    }
    template <typename T>
    [[nodiscard]] bool has(entity_id e) const noexcept {
        const component_id c = id_of<T>();
        return alive(e) && c != null_index && pools_[c]->contains(index_of(e));
    }
    /// @brief The component of a live entity that has it (unchecked).
    template <typename T>
    [[nodiscard]] T& get(entity_id e) noexcept {
        return storage<T>().get(index_of(e));
    }
    template <typename T>
    [[nodiscard]] T* try_get(entity_id e) noexcept {
        if (!has<T>(e)) return nullptr;
        return &storage<T>().get(index_of(e));
    }
    /// @brief Marks a component as written this tick (what a change query sees as changed).
    template <typename T>
    void touch(entity_id e) noexcept {
        auto& s = storage<T>();
        s.mark_written(s.index(index_of(e)));
    }
    /// @brief Removes a component (immediately; deferred during a walk). Throws no_such_component.
    template <typename T>
    void remove(entity_id e) {
        const component_id c = registered_id<T>();
        check(e);
        const auto slot = index_of(e);
        auto& s = storage<T>();
        if (iterating_ > 0 || !s.contains(slot)) {  // deferred during a walk, or the error
            remove(e, c);
            return;
        }
        if (!plain(c)) before_removed(slot, c);
        s.erase_here(slot);  // remove(e, c) erases through the virtual hook; here the type is known
        on_removed(e, slot, c);
    }

    // --- components by id (the JSON face used by the server) ------------------------
    [[nodiscard]] bool has(entity_id e, component_id c) const noexcept {
        // The signature bit, not the pool's sparse page: the slot's word is the one alive() just
        // read, so a view asking about every component type reads one line, not one per type.
        return alive(e) && entities_.has(index_of(e), c);
    }
    /// @brief Adds a component from JSON; throws component_exists or invalid_value.
    void emplace_json(entity_id e, component_id c, const json& value);
    /// @brief Adds or replaces a component from JSON.
    void insert_json(entity_id e, component_id c, const json& value);
    void set_field_json(entity_id e, component_id c, std::string_view field, const json& value);
    [[nodiscard]] json get_json(entity_id e, component_id c) const;
    /// @brief Removes a component; throws no_such_component when the entity lacks it.
    void remove(entity_id e, component_id c);
    /// @brief Component ids of a live entity, in id order.
    [[nodiscard]] std::vector<component_id> components_of(entity_id e) const;

    // --- owning groups: pools kept aligned so a pair walks as two packed arrays ---
    /// @brief Makes A and B an owning group (EnTT's full-owning group). Each pool has one owner.
    template <typename A, typename B>
    void own_group() {
        own_group_ids({registered_id<A>(), registered_id<B>()});
    }
    void own_group_ids(std::vector<component_id> owned);
    /// @brief Nests C in the owning group of A and B (own_group<A, B>() first): the members that
    /// also have C come first, C's pool aligned with them, so each_split_nested walks packed arrays.
    template <typename A, typename B, typename C>
    void nest_in_group() {
        nest_in_group_ids(registered_id<A>(), registered_id<C>());
    }
    void nest_in_group_ids(component_id owned, component_id nested);
    /// @brief Members of the group that owns c that also have its nested component, or -1.
    [[nodiscard]] long nested_size_of(component_id c) const noexcept;
    /// @brief Size of the group that owns the pool of `c`, or -1 when none does.
    [[nodiscard]] long group_size_of(component_id c) const noexcept;

    // --- member sets (systems) ------------------------------------------------------------
    /// @brief Starts keeping the set of entities matching q (all / any / none) current; a query
    /// already tracked gets the id of that set (the sets are shared, never removed). A query whose
    /// terms are exactly an owning group's components keeps no set: the group is its member set.
    int track(const query& q);
    /// @brief How many entities match the tracked query.
    [[nodiscard]] std::size_t member_count(int set_id) const noexcept;
    /// @brief True when the live slot matches the tracked query.
    [[nodiscard]] bool is_member(int set_id, std::uint32_t slot) const noexcept;
    /// @brief Calls f(slot) for every member, in no particular order.
    template <typename F>
    void for_each_member(int set_id, F&& f) const {
        const auto& w = *member_sets_[static_cast<std::size_t>(set_id)];
        if (w.group >= 0) {
            const auto& grp = groups_[static_cast<std::size_t>(w.group)];
            const pool& lead = *pools_[grp.owned()[0]];
            for (std::uint32_t i = 0; i < grp.size(); ++i) f(lead.slot_at(i));
            return;
        }
        for (std::size_t i = 0; i < w.members.size(); ++i) f(w.members.slot_at(i));
    }

    // --- walks -------------------------------------------------------------------
    /// @brief Calls f(entity_id, T&...) for every entity with all T. A const T is not stamped as
    /// written; a non-const one is (when write tracking is on). Uses an owning group when one fits.
    template <typename... T, typename F>
    void each(F&& f);
    /// @brief each<T...>, with an owning-group walk handed over as ranges of packed positions:
    /// split(n, range) must call range(begin, end) over pieces covering [0, n) (side by side is
    /// fine: the world runs them on its sim threads), so f may touch only the entity it is given.
    /// Walks that need no group run in one piece, here.
    template <typename... T, typename F, typename Split>
    void each_split(F&& f, Split&& split);
    /// @brief Walks every entity with A and B in two parts: with(A&, B&, C&) for those that also
    /// have C, without(A&, const B&) for the others (B is only read there: a mover without a
    /// RigidBody keeps its Velocity). When C is nested in A and B's owning group, both parts walk
    /// packed arrays; otherwise each entity's C is looked up. C is read, never stamped. Ranges go
    /// to split as in each_split (the C part first).
    template <typename A, typename B, typename C, typename With, typename Without, typename Split>
    void each_split_nested(With&& with, Without&& without, Split&& split);

    /// @brief Calls f(entity_id) for every entity matching a resolved query, in ascending id order.
    void for_each_match(const query& q, const std::function<void(entity_id)>& f) const;
    /// @brief Resolves names; throws no_such_component.
    [[nodiscard]] query resolve(const query_terms& terms) const;
    [[nodiscard]] bool matches(std::uint32_t slot, const query& q) const noexcept;

    /// @brief RAII marker of a walk in progress: structural changes made meanwhile are deferred.
    class walk_guard {
      public:
        explicit walk_guard(registry& r) : r_(r) { ++r_.iterating_; }
        ~walk_guard() { --r_.iterating_; }
        walk_guard(const walk_guard&) = delete;
        walk_guard& operator=(const walk_guard&) = delete;

      private:
        registry& r_;
    };
    /// @brief Queues a structural change to run at flush().
    void defer(std::function<void()> op) { deferred_.push_back(std::move(op)); }
    [[nodiscard]] std::size_t deferred_count() const noexcept { return deferred_.size(); }
    /// @brief Applies the deferred structural changes (end of tick).
    void flush();

    // --- ticks and change tracking -------------------------------------------------
    /// @brief Current write epoch; values written since change_floor() count as changed.
    [[nodiscard]] std::uint32_t epoch() const noexcept { return epoch_; }
    [[nodiscard]] std::uint32_t change_floor() const noexcept { return epoch_ - 1; }
    /// @brief Flushes deferred changes, then rotates the change records: what happened in the
    /// tick just ended stays visible until the end of the next one.
    void end_tick();
    /// @brief Entities destroyed in the last tick or since.
    [[nodiscard]] std::vector<entity_id> died() const;
    /// @brief What happened to one entity's components in the last tick or since, as change
    /// queries see it (added, changed: written or added, removed). For inspection, not hot paths.
    struct entity_changes {
        std::vector<component_id> added, changed, removed;
    };
    [[nodiscard]] entity_changes changes_of(entity_id e) const;

    // --- restore (persistence): rebuild a saved registry with its ids and dense orders ---
    /// @brief Resets the entity table: slot_count slots, the live ids, the free queue (slot order
    /// preserved, with each slot's next generation), and retired slots. The registry must be empty.
    void restore_entities(std::size_t slot_count, const std::vector<entity_id>& live,
                          const std::vector<std::pair<std::uint32_t, std::uint32_t>>& free_queue,
                          const std::vector<std::pair<std::uint32_t, std::uint32_t>>& retired);
    /// @brief Appends a component value in dense order, without hooks (validated; entity must be live).
    void restore_component(component_id c, entity_id e, const json& value);
    /// @brief The same from raw bytes (pool::raw_size() of them), for a live slot that lacks c.
    void restore_raw(component_id c, std::uint32_t slot, const std::byte* value);
    /// @brief Re-establishes owning groups (order-preserving for saved data) and member sets.
    void finish_restore();

    /// @brief Bumped by every structural change (component added or removed, entity destroyed,
    /// storage reserved): references into storages taken at version v stay valid while it is v.
    [[nodiscard]] std::uint64_t structure_version() const noexcept { return structure_version_; }

    /// @brief Bytes held by entity records, storages, write stamps, change records and member
    /// sets (capacity, not size): what the registry holds, not what it uses.
    [[nodiscard]] std::size_t memory_bytes() const;
    /// @brief Gives back the pages of its arrays' capacity that it does not use now, and of the
    /// sparse pages' arena (memory::release_unused). For a registry that has stopped growing or has
    /// shrunk: world::run_tick calls it once the registry has kept its shape for a second.
    void release_unused() noexcept;

    /// @brief The value and stamp arrays of the pools whose values were written since
    /// change_floor(), judged from a few stamps each: the arrays the next tick most likely writes
    /// again. A forked save copies these first (persist::background_save).
    [[nodiscard]] std::vector<const void*> arrays_written_lately() const;

  private:
    struct member_set {
        query q;
        entity_set members;  // empty when a group holds them
        int group = -1;      // the owning group whose components are exactly q's terms, or -1
    };

    component_id next_id(const std::string& name) const;
    void install(std::unique_ptr<pool> p);
    // Signature changes. Adding or removing a component in no owning group and no tracked query
    // (plain) changes only the signature, the storage and the change record, inline; groups and
    // member sets are kept out of line.
    [[nodiscard]] bool plain(component_id c) const noexcept {
        const pool& p = *pools_[c];
        return p.owner_group < 0 && p.nested_group < 0 && sets_by_component_[c].empty();
    }
    /// @brief After component c was stored for the slot.
    void on_added(std::uint32_t slot, component_id c) {
        ++structure_version_;
        entities_.set_bit(slot, c);
        pools_[c]->added[1].push_back(entities_.id_of(slot));
        if (!plain(c)) join(slot, c);
    }
    /// @brief After component c of entity e (at slot) was erased; before_removed() ran before it.
    void on_removed(entity_id e, std::uint32_t slot, component_id c) {
        ++structure_version_;
        entities_.clear_bit(slot, c);
        pools_[c]->removed[1].push_back(e);
        if (!plain(c)) update_member_sets(slot, c);
    }
    void join(std::uint32_t slot, component_id c);
    void before_removed(std::uint32_t slot, component_id c);
    void update_member_sets(std::uint32_t slot, component_id c);
    [[noreturn]] void throw_not_alive(entity_id e) const;
    void rebuild_members(member_set& w) const;
    [[nodiscard]] int group_over(const query& q) const;
    void hand_to_group(int set_id, int g);
    [[noreturn]] void throw_exists(entity_id e, component_id c) const;
    [[noreturn]] static void throw_unregistered(const char* type_name);
    void destroy_now(entity_id e);
    void destroy_bulk(std::span<const entity_id> ids);

    /// @brief Two packed arrays an owning group keeps aligned, as each<A, B> walks them.
    template <typename A, typename B>
    struct pair_walk {
        std::uint32_t n = 0;
        A* a = nullptr;
        B* b = nullptr;
        const std::uint32_t* slots = nullptr;
        std::array<pool::stamp*, 2> stamps{};  // the written pools' stamps, or null
        pool::stamp epoch = 0;
        void stamp(std::uint32_t begin, std::uint32_t end) const {
            for (auto* st : stamps)
                if (st) std::fill(st + begin, st + end, epoch);
        }
    };
    /// @brief The walk of A and B's owning group when one owns exactly these two pools (n == 0 and
    /// a == nullptr otherwise).
    template <typename A, typename B>
    [[nodiscard]] pair_walk<A, B> owned_pair();
    template <typename... T, typename F>
    void each_from_pool(component_id driver, F& f);
    template <typename... T, typename F, std::size_t... I>
    void each_from_pool(component_id driver, F& f, std::index_sequence<I...>);

    entity_table entities_;
    std::vector<std::unique_ptr<pool>> pools_;
    std::unordered_map<std::string, component_id> by_name_;
    std::vector<std::uint32_t> name_rank_;  // by component id (name_rank)
    std::vector<component_id> typed_ids_;
    std::vector<owning_group> groups_;
    std::vector<std::unique_ptr<member_set>> member_sets_;
    std::vector<std::vector<int>> sets_by_component_;
    std::vector<std::function<void()>> deferred_;
    id_list died_[2];
    std::uint32_t epoch_ = 2;
    int iterating_ = 0;
    bool tracking_ = true;
    std::uint64_t structure_version_ = 0;
};

// --- template definitions --------------------------------------------------------

template <typename A, typename B>
registry::pair_walk<A, B> registry::owned_pair() {
    pair_walk<A, B> w;
    const component_id a = id_of<A>(), b = id_of<B>();
    if (a == null_index || b == null_index) return w;
    const int g = pools_[a]->owner_group;
    if (g < 0 || g != pools_[b]->owner_group || groups_[static_cast<std::size_t>(g)].owned().size() != 2)
        return w;
    w.n = groups_[static_cast<std::size_t>(g)].size();
    w.a = storage<A>().data();
    w.b = storage<B>().data();
    w.slots = pools_[a]->slots();
    w.stamps = {(!std::is_const_v<A> && pools_[a]->tracks_writes()) ? pools_[a]->stamps() : nullptr,
                (!std::is_const_v<B> && pools_[b]->tracks_writes()) ? pools_[b]->stamps() : nullptr};
    w.epoch = static_cast<pool::stamp>(epoch_);
    return w;
}

template <typename... T, typename F>
void registry::each(F&& f) {
    // Invariant: an owning group's walk calls f from this frame, never through a closure. Once
    // each() is inlined, a plain function handed in (as users write each<P, V>(step)) is then a
    // known callee that gcc inlines into the loop; through each_split's range closure it stayed
    // one out-of-line call per entity (ecs_bench `update`, `vs_plain`).
    if constexpr (sizeof...(T) == 2) {
        walk_guard guard(*this);
        const auto w = owned_pair<T...>();
        if (w.a != nullptr) {
            if constexpr (std::is_invocable_v<F&, T&...>) {
                for (std::uint32_t i = 0; i < w.n; ++i) f(w.a[i], w.b[i]);
            } else {
                const entity_table& table = entities_;
                for (std::uint32_t i = 0; i < w.n; ++i) f(table.id_of(w.slots[i]), w.a[i], w.b[i]);
            }
            w.stamp(0, w.n);
            return;
        }
    }
    each_split<T...>(std::forward<F>(f), [](std::uint32_t n, auto&& range) { range(0U, n); });
}

template <typename... T, typename F, typename Split>
void registry::each_split(F&& f, Split&& split) {
    static_assert(sizeof...(T) >= 1, "each<T...> needs at least one component");
    walk_guard guard(*this);
    const std::array<component_id, sizeof...(T)> ids{id_of<T>()...};
    for (auto c : ids)
        if (c == null_index) return;  // a type never registered has no entities

    // An owning group that owns exactly these pools walks two packed arrays.
    if constexpr (sizeof...(T) == 2) {
        const auto w = owned_pair<T...>();
        if (w.a != nullptr) {
            const entity_table& table = entities_;
            split(w.n, [&](std::uint32_t begin, std::uint32_t end) {
                if constexpr (std::is_invocable_v<F&, T&...>) {
                    (void)table;
                    for (std::uint32_t i = begin; i < end; ++i) f(w.a[i], w.b[i]);
                } else {
                    for (std::uint32_t i = begin; i < end; ++i) f(table.id_of(w.slots[i]), w.a[i], w.b[i]);
                }
                w.stamp(begin, end);
            });
            return;
        }
    }
    std::size_t driver = 0;
    for (std::size_t i = 1; i < ids.size(); ++i)
        if (pools_[ids[i]]->size() < pools_[ids[driver]]->size()) driver = i;
    each_from_pool<T...>(ids[driver], f);
}

template <typename A, typename B, typename C, typename With, typename Without, typename Split>
void registry::each_split_nested(With&& with, Without&& without, Split&& split) {
    static_assert(std::is_const_v<C>, "the nested component is read, not written");
    const component_id a = id_of<A>(), b = id_of<B>(), c = id_of<C>();
    if (a == null_index || b == null_index) return;
    const int g = pools_[a]->owner_group;
    const bool grouped =
        g >= 0 && g == pools_[b]->owner_group && groups_[static_cast<std::size_t>(g)].owned().size() == 2;
    if (!grouped || c == null_index || groups_[static_cast<std::size_t>(g)].nested() != c) {
        if (c == null_index || storage<C>().empty()) {
            each_split<A, const B>([&](A& x, const B& y) { without(x, y); }, split);
            return;
        }
        const auto& cs = storage<C>();
        each_split<A, B>(
            [&](entity_id e, A& x, B& y) {
                const auto slot = index_of(e);
                if (cs.contains(slot))
                    with(x, y, cs.get(slot));
                else
                    without(x, static_cast<const B&>(y));
            },
            split);
        return;
    }
    walk_guard guard(*this);
    const auto& grp = groups_[static_cast<std::size_t>(g)];
    const std::uint32_t n = grp.size(), inner = grp.inner_size();
    A* pa = storage<A>().data();
    B* pb = storage<B>().data();
    C* pc = storage<C>().data();
    pool::stamp* sa = (!std::is_const_v<A> && pools_[a]->tracks_writes()) ? pools_[a]->stamps() : nullptr;
    pool::stamp* sb = (!std::is_const_v<B> && pools_[b]->tracks_writes()) ? pools_[b]->stamps() : nullptr;
    const auto ep = static_cast<pool::stamp>(epoch_);
    split(inner, [&](std::uint32_t begin, std::uint32_t end) {
        for (std::uint32_t i = begin; i < end; ++i) with(pa[i], pb[i], pc[i]);
        if (sa) std::fill(sa + begin, sa + end, ep);
        if (sb) std::fill(sb + begin, sb + end, ep);
    });
    split(n - inner, [&](std::uint32_t begin, std::uint32_t end) {
        for (std::uint32_t i = inner + begin; i < inner + end; ++i)
            without(pa[i], static_cast<const B&>(pb[i]));
        if (sa) std::fill(sa + inner + begin, sa + inner + end, ep);
    });
}

template <typename... T, typename F>
void registry::each_from_pool(component_id driver, F& f) {
    each_from_pool<T...>(driver, f, std::index_sequence_for<T...>{});
}

// Walks the driver's packed slots: the driver's own position is the index, each other pool is
// asked once (find: one sparse lookup that answers both "has it?" and "where?"), and the pools,
// their stamps and the epoch are read once before the walk, not per entity.
template <typename... T, typename F, std::size_t... I>
void registry::each_from_pool(component_id driver, F& f, std::index_sequence<I...>) {
    constexpr std::size_t k = sizeof...(T);
    const std::array<component_id, k> ids{id_of<T>()...};
    const auto stores = std::make_tuple(&storage<T>()...);
    const std::array<pool::stamp*, k> stamps{
        (!std::is_const_v<T> && pools_[ids[I]]->tracks_writes()) ? pools_[ids[I]]->stamps() : nullptr...};
    const auto ep = static_cast<pool::stamp>(epoch_);
    const std::uint32_t* slots = pools_[driver]->slots();
    const auto n = static_cast<std::uint32_t>(pools_[driver]->size());
    for (std::uint32_t i = 0; i < n; ++i) {
        const std::uint32_t slot = slots[i];
        std::array<std::uint32_t, k> pos{};
        if (!(((pos[I] = ids[I] == driver ? i : std::get<I>(stores)->find(slot)) != null_index) && ...))
            continue;
        ((stamps[I] != nullptr ? void(stamps[I][pos[I]] = ep) : void()), ...);
        if constexpr (std::is_invocable_v<F&, T&...>) {
            f(static_cast<T&>(std::get<I>(stores)->at(pos[I]))...);
        } else {
            f(entities_.id_of(slot), static_cast<T&>(std::get<I>(stores)->at(pos[I]))...);
        }
    }
}

}  // namespace ecsd::ecs
