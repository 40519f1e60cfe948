#pragma once
// An owning group: pools kept aligned so that the first `size()` packed positions of every owned
// pool hold the same entities in the same order (EnTT's full-owning group). A walk over the group
// reads two packed arrays side by side. Every piece of group upkeep lives here: the registry calls
// enter / leave / rebuild from its signature hooks and never moves group members itself.
//
// A group may nest one more component (EnTT's nested groups): the members that also have it come
// first, in [0, inner_size()), and that component's pool is aligned with the owned ones over that
// prefix. Movers with a RigidBody then walk three packed arrays, and those without one the rest of
// the group, with no lookup per entity.

#include <cstdint>
#include <memory>
#include <span>
#include <utility>
#include <vector>

#include "ecs/entity_table.hpp"
#include "ecs/pool.hpp"

namespace ecsd::ecs {

class owning_group {
  public:
    using pools = std::span<const std::unique_ptr<pool>>;

    explicit owning_group(std::vector<component_id> owned) : owned_(std::move(owned)) {}

    /// @brief The nested component, or null_index.
    [[nodiscard]] component_id nested() const noexcept { return nested_; }
    /// @brief Members that also have the nested component: the prefix [0, inner_size()).
    [[nodiscard]] std::uint32_t inner_size() const noexcept { return inner_; }

    /// @brief The owned component ids, in the order the group was made.
    [[nodiscard]] const std::vector<component_id>& owned() const noexcept { return owned_; }
    /// @brief How many entities the group holds: the aligned prefix of every owned pool.
    [[nodiscard]] std::uint32_t size() const noexcept { return size_; }

    /// @brief True when the slot has every owned component (it belongs in the group).
    [[nodiscard]] bool complete(const entity_table& entities, std::uint32_t slot) const noexcept {
        for (auto c : owned_)
            if (!entities.has(slot, c)) return false;
        return true;
    }
    /// @brief complete() for a slot with no overflow bits, from its inline signature word.
    [[nodiscard]] bool complete_inline(std::uint32_t signature) const noexcept {
        for (auto c : owned_)
            if (c >= inline_bits || ((signature >> c) & 1) == 0) return false;
        return true;
    }
    /// @brief True when the slot is inside the aligned prefix (the slot must be in the lead pool).
    [[nodiscard]] bool holds(pools p, std::uint32_t slot) const noexcept {
        return p[owned_[0]]->index(slot) < size_;
    }

    /// @brief True when the slot is in the nested prefix.
    [[nodiscard]] bool holds_inner(pools p, std::uint32_t slot) const noexcept {
        return nested_ != null_index && p[nested_]->contains(slot) && p[nested_]->index(slot) < inner_;
    }

    /// @brief Moves a slot that just became complete to the end of the prefix, in every pool, and
    /// on into the nested prefix when it has the nested component.
    void enter(pools p, std::uint32_t slot) {
        for (auto c : owned_) p[c]->swap_positions(p[c]->index(slot), size_);
        ++size_;
        if (nested_ != null_index && p[nested_]->contains(slot)) enter_inner(p, slot);
    }
    /// @brief Moves a slot out of the prefix, in every pool, before one of its owned components
    /// goes (the pool's swap-and-pop then only touches positions past the prefix).
    void leave(pools p, std::uint32_t slot) {
        if (holds_inner(p, slot)) leave_inner(p, slot);
        --size_;
        for (auto c : owned_) p[c]->swap_positions(p[c]->index(slot), size_);
    }
    /// @brief Moves a member that has just gained the nested component into the nested prefix.
    void enter_inner(pools p, std::uint32_t slot) {
        for (auto c : owned_) p[c]->swap_positions(p[c]->index(slot), inner_);
        p[nested_]->swap_positions(p[nested_]->index(slot), inner_);
        ++inner_;
    }
    /// @brief Moves a member out of the nested prefix (before its nested component goes, or it
    /// leaves the group). It stays a member: [inner_size(), size()) are the members without it.
    void leave_inner(pools p, std::uint32_t slot) {
        --inner_;
        for (auto c : owned_) p[c]->swap_positions(p[c]->index(slot), inner_);
        p[nested_]->swap_positions(p[nested_]->index(slot), inner_);
    }
    /// @brief leave() for a slot whose owned components all go at once (a destroyed entity). When
    /// every owned pool holds group members only, the pools' own swap-and-pop keeps them aligned
    /// (each moves the same last entity into the same hole), so no group swap is needed. (Out of
    /// the nested prefix first: the last entity that swap-and-pop moves is never in it then.)
    void leave_all(pools p, std::uint32_t slot) {
        if (holds_inner(p, slot)) leave_inner(p, slot);
        for (auto c : owned_) {
            if (p[c]->size() != size_) {
                leave(p, slot);
                return;
            }
        }
        --size_;
    }
    /// @brief After a bulk destroy closed its holes keeping order (sparse_set::compact): members
    /// and nested members left in step in every pool, so the prefixes only shrink.
    void shrink(std::uint32_t members_gone, std::uint32_t inner_gone) noexcept {
        size_ -= members_gone;
        inner_ -= inner_gone;
    }
    /// @brief Realigns from scratch, keeping the lead pool's order among members (a new group, or
    /// storages restored from a snapshot).
    void rebuild(pools p) {
        size_ = 0;
        inner_ = 0;
        const pool& lead = *p[owned_[0]];
        for (std::size_t i = 0; i < lead.size(); ++i) {
            const auto slot = lead.slot_at(i);
            bool all = true;
            for (auto c : owned_) all = all && p[c]->contains(slot);
            if (!all) continue;
            for (auto c : owned_) p[c]->swap_positions(p[c]->index(slot), size_);
            ++size_;
        }
        // Then the nested prefix, in the members' order: an already aligned layout (a snapshot's
        // dense orders) stays as it is.
        if (nested_ == null_index) return;
        for (std::uint32_t i = 0; i < size_; ++i) {
            const auto slot = lead.slot_at(i);
            if (p[nested_]->contains(slot)) enter_inner(p, slot);
        }
    }
    /// @brief Nests component c (see the top of this file) and realigns.
    void nest(pools p, component_id c) {
        nested_ = c;
        rebuild(p);
    }

  private:
    std::vector<component_id> owned_;
    std::uint32_t size_ = 0;
    component_id nested_ = null_index;
    std::uint32_t inner_ = 0;
};

}  // namespace ecsd::ecs
