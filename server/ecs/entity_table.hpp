#pragma once
// Entity slots. Each slot has one 32-bit word: the generation (21 bits), the
// alive bit and the signature bits of the first 10 component types. A world with
// more types keeps their bits in overflow words (one per 32 more types), in pages
// of page_slots slots made the first time a slot of the page gets such a bit: an
// entity with only the first 10 types costs 4 bytes here (issue 16), and one with
// a later type pays one more cache line to test it. Freed slots wait in a FIFO
// queue, which spreads generations evenly; a slot whose generation would wrap is
// retired so its ids are never handed out again.

#include <algorithm>
#include <cstdint>
#include <memory>
#include <span>
#include <stdexcept>
#include <vector>

#include "ecs/entity.hpp"
#include "ecs/huge_page_allocator.hpp"
#include "ecs/signature.hpp"

namespace ecsd::ecs {

class entity_table {
  public:
    static constexpr unsigned generation_shift = inline_bits + 1;
    static constexpr std::uint32_t alive_bit = std::uint32_t{1} << inline_bits;
    static constexpr std::uint32_t inline_mask = alive_bit - 1;
    static_assert(generation_shift + generation_bits == 32,
                  "generation, alive bit and inline bits fill one word");

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
            head(slot) |= alive_bit;
        } else {
            if (slots_ == null_index) throw std::length_error("entity slots exhausted");
            slot = static_cast<std::uint32_t>(slots_++);
            words_.push_back((std::uint32_t{1} << generation_shift) | alive_bit);
        }
        ++alive_;
        return make_entity(slot, generation(slot));
    }

    /// @brief Frees a live slot: bumps its generation and queues it, or retires it.
    void destroy(std::uint32_t slot) {
        const std::uint32_t gen = generation(slot);
        if (gen >= max_generation) {
            head(slot) = gen << generation_shift;  // dead for good
            ++retired_;
        } else {
            head(slot) = (gen + 1) << generation_shift;
            free_.push_back(slot);
        }
        if (std::uint32_t* o = overflow(slot)) std::fill_n(o, extra_, 0U);
        --alive_;
    }

    /// @brief A bulk destroy's step: frees the longest run at the front of `ids` whose ids are
    /// consecutive, alive, and whose slots hold the same word (generation and inline signature)
    /// with no overflow bits, as destroy() would free them one by one. Returns how many it freed
    /// (0 when ids[0] is dead or has overflow bits) and their signature word in `signature`. One
    /// compare a slot says all of that, where destroy() per id reads and writes the queue's end
    /// and looks up the overflow page each time.
    std::size_t destroy_run(std::span<const entity_id> ids, std::uint32_t& signature) {
        const entity_id first = ids[0];
        const std::uint32_t slot0 = index_of(first);
        if (!alive(first) || !plain(slot0)) return 0;
        const std::uint32_t word = head(slot0);
        const std::size_t most = std::min<std::size_t>(ids.size(), slots_ - slot0);
        std::size_t n = 1;
        while (n < most && ids[n] == first + n && head(slot0 + static_cast<std::uint32_t>(n)) == word &&
               plain(slot0 + static_cast<std::uint32_t>(n)))
            ++n;
        signature = word & inline_mask;
        const std::uint32_t gen = word >> generation_shift;
        const std::uint32_t dead = (gen >= max_generation ? gen : gen + 1) << generation_shift;
        std::fill_n(words_.begin() + slot0, n, dead);
        if (gen >= max_generation) {
            retired_ += n;  // dead for good
        } else {
            for (std::uint32_t slot = slot0; slot < slot0 + n; ++slot) free_.push_back(slot);
        }
        alive_ -= n;
        return n;
    }

    [[nodiscard]] bool alive(entity_id e) const noexcept {
        const std::uint32_t slot = index_of(e);
        if (slot >= slots_) return false;
        const std::uint32_t w = head(slot);
        return (w & alive_bit) && (w >> generation_shift) == generation_of(e);
    }
    /// @brief Where the slot's word lies (null past the last slot): for a walk of scattered slots,
    /// such as a near() view's, to ask the cache for it ahead of alive() or has(). An address, not
    /// a prefetch: GCC drops a call whose only effect is __builtin_prefetch as having none.
    [[nodiscard]] const void* word_address(std::uint32_t slot) const noexcept {
        return slot < slots_ ? &words_[slot] : nullptr;
    }
    [[nodiscard]] bool slot_alive(std::uint32_t slot) const noexcept {
        return slot < slots_ && (head(slot) & alive_bit);
    }
    /// @brief True when the id was handed out once and has since died.
    [[nodiscard]] bool stale(entity_id e) const noexcept {
        const std::uint32_t slot = index_of(e);
        if (slot >= slots_ || generation_of(e) < 1 || alive(e)) return false;
        const std::uint32_t g = generation(slot);
        return generation_of(e) < g || (g == max_generation && generation_of(e) == g);
    }
    [[nodiscard]] std::uint32_t generation(std::uint32_t slot) const noexcept {
        return head(slot) >> generation_shift;
    }
    /// @brief The live id of a slot.
    [[nodiscard]] entity_id id_of(std::uint32_t slot) const noexcept {
        return make_entity(slot, generation(slot));
    }

    // --- signatures ----------------------------------------------------------
    /// @brief Sets a signature bit; a type past the first 10 may make its page's overflow words
    /// (bad_alloc then, with nothing changed).
    void set_bit(std::uint32_t slot, component_id c) {
        if (c < inline_bits) {
            head(slot) |= std::uint32_t{1} << c;
        } else {
            const auto b = c - inline_bits;
            overflow_made(slot)[b / overflow_word_bits] |= std::uint32_t{1} << (b % overflow_word_bits);
        }
    }
    void clear_bit(std::uint32_t slot, component_id c) noexcept {
        if (c < inline_bits) {
            head(slot) &= ~(std::uint32_t{1} << c);
        } else if (std::uint32_t* o = overflow(slot)) {
            const auto b = c - inline_bits;
            o[b / overflow_word_bits] &= ~(std::uint32_t{1} << (b % overflow_word_bits));
        }
    }
    [[nodiscard]] bool has(std::uint32_t slot, component_id c) const noexcept {
        if (c < inline_bits) return (head(slot) >> c) & 1;
        const std::uint32_t* o = overflow(slot);
        if (o == nullptr) return false;
        const auto b = c - inline_bits;
        return (o[b / overflow_word_bits] >> (b % overflow_word_bits)) & 1;
    }
    /// @brief Every component bit of a slot, calling f(component_id) in id order.
    template <typename F>
    void for_each_component(std::uint32_t slot, F&& f) const {
        std::uint32_t w = head(slot) & inline_mask;
        while (w) {
            f(static_cast<component_id>(__builtin_ctz(w)));
            w &= w - 1;
        }
        const std::uint32_t* o = overflow(slot);
        if (o == nullptr) return;
        for (std::size_t i = 0; i < extra_; ++i) {
            std::uint32_t bits = o[i];
            while (bits) {
                f(static_cast<component_id>(inline_bits + i * overflow_word_bits + __builtin_ctz(bits)));
                bits &= bits - 1;
            }
        }
    }
    /// @brief all ⊆ sig, none ∩ sig = ∅, and (any empty or any ∩ sig ≠ ∅).
    [[nodiscard]] bool matches(std::uint32_t slot, const component_mask& all, const component_mask& any,
                               const component_mask& none) const noexcept {
        const std::uint32_t w = head(slot) & inline_mask;
        if ((w & all.inline_word()) != all.inline_word()) return false;
        if (w & none.inline_word()) return false;
        bool any_hit = any.empty() || (w & any.inline_word());
        const std::uint32_t* o = overflow(slot);
        const std::size_t words = o != nullptr ? extra_ : 0;
        for (std::size_t i = 0; i < all.overflow().size(); ++i) {
            const std::uint32_t have = i < words ? o[i] : 0;
            if ((have & all.overflow()[i]) != all.overflow()[i]) return false;
        }
        for (std::size_t i = 0; i < none.overflow().size() && i < words; ++i)
            if (o[i] & none.overflow()[i]) return false;
        for (std::size_t i = 0; !any_hit && i < any.overflow().size() && i < words; ++i)
            any_hit = (o[i] & any.overflow()[i]) != 0;
        return any_hit;
    }

    /// @brief Widens the overflow words to cover `types` component ids (one more word per 32
    /// types); only the pages already made are copied.
    void ensure_types(std::size_t types) {
        const std::size_t extra =
            types > inline_bits ? (types - inline_bits + overflow_word_bits - 1) / overflow_word_bits : 0;
        if (extra <= extra_) return;
        for (auto& page : pages_) {
            if (!page) continue;
            auto wider = std::make_unique<std::uint32_t[]>(page_slots * extra);  // zeroed
            for (std::size_t s = 0; s < page_slots; ++s)
                std::copy_n(page.get() + s * extra_, extra_, wider.get() + s * extra);
            page = std::move(wider);
        }
        extra_ = extra;
    }

    void reserve(std::size_t n) { words_.reserve(n); }
    /// @brief Gives back the unused capacity of the slots' words (ecs::release_unused).
    void release_unused() noexcept { ecs::release_unused(words_); }

    [[nodiscard]] std::size_t alive_count() const noexcept { return alive_; }
    [[nodiscard]] std::size_t slot_count() const noexcept { return slots_; }
    [[nodiscard]] std::size_t retired_count() const noexcept { return retired_; }
    [[nodiscard]] std::size_t free_count() const noexcept { return free_.size() - free_head_; }
    /// @brief Room in the free queue for n more slots (a bulk destroy).
    void reserve_free(std::size_t n) { reserve_more(free_, n); }
    [[nodiscard]] std::size_t bytes() const noexcept {
        std::size_t made = 0;
        for (const auto& page : pages_) made += page ? 1 : 0;
        return words_.capacity() * sizeof(std::uint32_t) + free_.capacity() * sizeof(std::uint32_t) +
               pages_.capacity() * sizeof(pages_[0]) + made * page_slots * extra_ * sizeof(std::uint32_t);
    }
    /// @brief Slots per page of overflow words.
    static constexpr std::size_t page_slots = 4096;

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
        words_.reserve(generations.size());
        for (auto g : generations) words_.push_back(g << generation_shift);
        pages_.clear();
        slots_ = generations.size();
        free_.assign(free_queue.begin(), free_queue.end());
        free_head_ = 0;
        alive_ = 0;
        retired_ = retired;
    }
    /// @brief Marks a restored slot live with its generation.
    void revive(std::uint32_t slot) {
        head(slot) |= alive_bit;
        ++alive_;
    }

  private:
    [[nodiscard]] std::uint32_t& head(std::uint32_t slot) noexcept { return words_[slot]; }
    [[nodiscard]] std::uint32_t head(std::uint32_t slot) const noexcept { return words_[slot]; }
    // True when the slot has no overflow bit set (most worlds have no overflow words at all).
    [[nodiscard]] bool plain(std::uint32_t slot) const noexcept {
        if (extra_ == 0) return true;
        const std::uint32_t* o = overflow(slot);
        return o == nullptr || std::all_of(o, o + extra_, [](std::uint32_t w) { return w == 0; });
    }
    // The slot's overflow words, or null while its page has none (every bit there is 0).
    [[nodiscard]] std::uint32_t* overflow(std::uint32_t slot) const noexcept {
        const std::size_t page = slot / page_slots;
        if (page >= pages_.size() || !pages_[page]) return nullptr;
        return pages_[page].get() + (slot % page_slots) * extra_;
    }
    // The slot's overflow words, its page made (zeroed) if need be; only for a type id past the
    // first 10, which ensure_types has covered, so extra_ > 0.
    [[nodiscard]] std::uint32_t* overflow_made(std::uint32_t slot) {
        const std::size_t page = slot / page_slots;
        if (page >= pages_.size()) pages_.resize(page + 1);
        if (!pages_[page]) pages_[page] = std::make_unique<std::uint32_t[]>(page_slots * extra_);
        return pages_[page].get() + (slot % page_slots) * extra_;
    }

    std::vector<std::uint32_t, huge_page_allocator<std::uint32_t>> words_;  // one per slot
    std::vector<std::unique_ptr<std::uint32_t[]>> pages_;  // overflow words, page_slots slots a page
    std::size_t extra_ = 0;                                // overflow words per slot
    std::size_t slots_ = 0;
    std::vector<std::uint32_t, huge_page_allocator<std::uint32_t>> free_;
    std::size_t free_head_ = 0;
    std::size_t alive_ = 0;
    std::size_t retired_ = 0;
};

}  // namespace ecsd::ecs
