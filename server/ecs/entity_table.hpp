#pragma once
// Entity slots. Each slot is one 64-bit record: generation (21 bits), alive
// (1 bit) and the signature bits of the first 42 component types; a world
// with more types keeps the rest in overflow words. Freed slots wait in a
// FIFO queue (seed 000), which spreads generations evenly; a slot whose
// generation would wrap is retired so its ids are never handed out again.

#include <cstdint>
#include <stdexcept>
#include <vector>

#include "ecs/entity.hpp"
#include "ecs/huge_page_allocator.hpp"
#include "ecs/signature.hpp"

namespace ecsd::ecs {

class entity_table {
public:
    static constexpr unsigned generation_shift = 43;
    static constexpr std::uint64_t alive_bit = std::uint64_t{1} << 42;
    static constexpr std::uint64_t inline_mask = alive_bit - 1;

    /// @brief A new id: the oldest free slot with its next generation, or a new slot.
    [[nodiscard]] entity_id create() {
        std::uint32_t slot;
        if (free_head_ < free_.size()) {
            slot = free_[free_head_++];
            if (free_head_ == free_.size()) {
                free_.clear();
                free_head_ = 0;
            } else if (free_head_ > 4096 && free_head_ * 2 > free_.size()) {
                free_.erase(free_.begin(), free_.begin() + static_cast<std::ptrdiff_t>(free_head_));
                free_head_ = 0;
            }
            words_[slot] |= alive_bit;
        } else {
            slot = static_cast<std::uint32_t>(words_.size());
            if (slot == null_index) throw std::length_error("entity slots exhausted");
            words_.push_back((std::uint64_t{1} << generation_shift) | alive_bit);
            if (overflow_words_) overflow_.resize(overflow_.size() + overflow_words_, 0);
        }
        ++alive_;
        return make_entity(slot, generation(slot));
    }

    /// @brief Frees a live slot: bumps its generation and queues it, or retires it.
    void destroy(std::uint32_t slot) {
        const std::uint32_t gen = generation(slot);
        if (gen >= max_generation) {
            words_[slot] = std::uint64_t{gen} << generation_shift;  // dead for good
            ++retired_;
        } else {
            words_[slot] = std::uint64_t{gen + 1} << generation_shift;
            free_.push_back(slot);
        }
        for (std::size_t w = 0; w < overflow_words_; ++w) overflow_[slot * overflow_words_ + w] = 0;
        --alive_;
    }

    [[nodiscard]] bool alive(entity_id e) const noexcept {
        const std::uint32_t slot = index_of(e);
        if (slot >= words_.size()) return false;
        const std::uint64_t w = words_[slot];
        return (w & alive_bit) && (w >> generation_shift) == generation_of(e);
    }
    [[nodiscard]] bool slot_alive(std::uint32_t slot) const noexcept {
        return slot < words_.size() && (words_[slot] & alive_bit);
    }
    /// @brief True when the id was handed out once and has since died.
    [[nodiscard]] bool stale(entity_id e) const noexcept {
        const std::uint32_t slot = index_of(e);
        if (slot >= words_.size() || generation_of(e) < 1 || alive(e)) return false;
        const std::uint32_t g = generation(slot);
        return generation_of(e) < g || (g == max_generation && generation_of(e) == g);
    }
    [[nodiscard]] std::uint32_t generation(std::uint32_t slot) const noexcept {
        return static_cast<std::uint32_t>(words_[slot] >> generation_shift);
    }
    /// @brief The live id of a slot.
    [[nodiscard]] entity_id id_of(std::uint32_t slot) const noexcept { return make_entity(slot, generation(slot)); }

    // --- signatures ----------------------------------------------------------
    void set_bit(std::uint32_t slot, component_id c) noexcept {
        if (c < inline_bits) {
            words_[slot] |= std::uint64_t{1} << c;
        } else {
            const auto b = c - inline_bits;
            overflow_[slot * overflow_words_ + b / 64] |= std::uint64_t{1} << (b % 64);
        }
    }
    void clear_bit(std::uint32_t slot, component_id c) noexcept {
        if (c < inline_bits) {
            words_[slot] &= ~(std::uint64_t{1} << c);
        } else {
            const auto b = c - inline_bits;
            overflow_[slot * overflow_words_ + b / 64] &= ~(std::uint64_t{1} << (b % 64));
        }
    }
    [[nodiscard]] bool has(std::uint32_t slot, component_id c) const noexcept {
        if (c < inline_bits) return (words_[slot] >> c) & 1;
        const auto b = c - inline_bits;
        return (overflow_[slot * overflow_words_ + b / 64] >> (b % 64)) & 1;
    }
    /// @brief Every component bit of a slot, calling f(component_id) in id order.
    template <typename F>
    void for_each_component(std::uint32_t slot, F&& f) const {
        std::uint64_t w = words_[slot] & inline_mask;
        while (w) {
            f(static_cast<component_id>(__builtin_ctzll(w)));
            w &= w - 1;
        }
        for (std::size_t i = 0; i < overflow_words_; ++i) {
            std::uint64_t o = overflow_[slot * overflow_words_ + i];
            while (o) {
                f(static_cast<component_id>(inline_bits + i * 64 + __builtin_ctzll(o)));
                o &= o - 1;
            }
        }
    }
    /// @brief all ⊆ sig, none ∩ sig = ∅, and (any empty or any ∩ sig ≠ ∅).
    [[nodiscard]] bool matches(std::uint32_t slot, const component_mask& all, const component_mask& any,
                               const component_mask& none) const noexcept {
        const std::uint64_t w = words_[slot] & inline_mask;
        if ((w & all.inline_word()) != all.inline_word()) return false;
        if (w & none.inline_word()) return false;
        bool any_hit = any.empty() || (w & any.inline_word());
        const std::uint64_t* o = overflow_words_ ? &overflow_[slot * overflow_words_] : nullptr;
        for (std::size_t i = 0; i < all.overflow().size(); ++i) {
            const std::uint64_t have = i < overflow_words_ ? o[i] : 0;
            if ((have & all.overflow()[i]) != all.overflow()[i]) return false;
        }
        for (std::size_t i = 0; i < none.overflow().size() && i < overflow_words_; ++i)
            if (o[i] & none.overflow()[i]) return false;
        for (std::size_t i = 0; !any_hit && i < any.overflow().size() && i < overflow_words_; ++i)
            any_hit = (o[i] & any.overflow()[i]) != 0;
        return any_hit;
    }

    /// @brief Grows every slot's overflow to cover `types` component ids.
    void ensure_types(std::size_t types) {
        const std::size_t need = types > inline_bits ? (types - inline_bits + 63) / 64 : 0;
        if (need <= overflow_words_) return;
        std::vector<std::uint64_t> grown(words_.size() * need, 0);
        for (std::size_t s = 0; s < words_.size(); ++s)
            for (std::size_t w = 0; w < overflow_words_; ++w) grown[s * need + w] = overflow_[s * overflow_words_ + w];
        overflow_ = std::move(grown);
        overflow_words_ = need;
    }

    void reserve(std::size_t n) {
        words_.reserve(n);
        overflow_.reserve(n * overflow_words_);
    }

    /// @brief Room in the free queue for n more slots (a bulk destroy).
    void reserve_free(std::size_t n) { reserve_more(free_, n); }

    [[nodiscard]] std::size_t alive_count() const noexcept { return alive_; }
    [[nodiscard]] std::size_t slot_count() const noexcept { return words_.size(); }
    [[nodiscard]] std::size_t retired_count() const noexcept { return retired_; }
    [[nodiscard]] std::size_t free_count() const noexcept { return free_.size() - free_head_; }
    [[nodiscard]] std::size_t bytes() const noexcept {
        return words_.capacity() * sizeof(std::uint64_t) + overflow_.capacity() * sizeof(std::uint64_t) +
               free_.capacity() * sizeof(std::uint32_t);
    }

    // --- persistence: the allocator state, so ids stay unique across restarts
    /// @brief Free slots in queue order.
    [[nodiscard]] std::vector<std::uint32_t> free_queue() const {
        return {free_.begin() + static_cast<std::ptrdiff_t>(free_head_), free_.end()};
    }
    /// @brief Rebuilds the table: `generations[slot]` for every slot (all dead), the free queue, and
    /// how many slots are retired. Live slots are then marked with revive().
    void restore(const std::vector<std::uint32_t>& generations, const std::vector<std::uint32_t>& free_queue,
                 std::size_t retired) {
        words_.clear();
        for (auto g : generations) words_.push_back(std::uint64_t{g} << generation_shift);
        overflow_.assign(words_.size() * overflow_words_, 0);
        free_.assign(free_queue.begin(), free_queue.end());
        free_head_ = 0;
        alive_ = 0;
        retired_ = retired;
    }
    /// @brief Marks a restored slot live with its generation.
    void revive(std::uint32_t slot) {
        words_[slot] |= alive_bit;
        ++alive_;
    }

private:
    std::vector<std::uint64_t, huge_page_allocator<std::uint64_t>> words_;
    std::vector<std::uint64_t> overflow_;
    std::size_t overflow_words_ = 0;
    std::vector<std::uint32_t, huge_page_allocator<std::uint32_t>> free_;
    std::size_t free_head_ = 0;
    std::size_t alive_ = 0;
    std::size_t retired_ = 0;
};

}  // namespace ecsd::ecs
