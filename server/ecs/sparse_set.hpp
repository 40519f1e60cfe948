#pragma once
// A sparse set of entity slots: a paged sparse index (slot -> dense position)
// and a dense array of slots kept hole-free by swap-and-pop: removing B from
// A,B,C,D moves D into B's place, so the array stays A,D,C. Storages derive
// from it and move their data in step.

#include <algorithm>
#include <cstddef>
#include <cstdint>
#include <iterator>
#include <memory>
#include <vector>

#include "ecs/entity.hpp"
#include "ecs/huge_page_allocator.hpp"
#include "ecs/page_arena.hpp"

namespace ecsd::ecs {

/// @brief Entity ids in the order they were recorded, kept as runs: ids that follow each other
/// (a batch spawned, given a component or destroyed together) cost one run of two words however
/// long. Change records of a bulk tick grow to millions of ids; as runs they cost next to nothing,
/// and scattered ids still cost one word each (a run is only made of two or more).
///
/// Encoding: a word without the top bit is an id (ids use 53 bits); a word with it follows an id
/// and says that the run starting there holds `word & ~run_bit` consecutive ids.
class id_list {
    using words = std::vector<std::uint64_t, huge_page_allocator<std::uint64_t>>;

  public:
    static constexpr std::uint64_t run_bit = std::uint64_t{1} << 63;

    /// @brief Walks the ids, expanding runs.
    class const_iterator {
      public:
        using iterator_category = std::forward_iterator_tag;
        using value_type = entity_id;
        using difference_type = std::ptrdiff_t;
        using pointer = const entity_id*;
        using reference = entity_id;

        const_iterator() = default;
        const_iterator(const words* w, std::size_t at) : w_(w), at_(at) {}
        [[nodiscard]] entity_id operator*() const noexcept { return (*w_)[at_] + offset_; }
        const_iterator& operator++() noexcept {
            const std::size_t next = at_ + 1;
            if (next < w_->size() && ((*w_)[next] & run_bit) != 0) {
                // Inside a run: its first id is at at_, its length in the word after it.
                if (offset_ + 1 < ((*w_)[next] & ~run_bit)) {
                    ++offset_;
                    return *this;
                }
                at_ = next + 1;  // past the run and its length word
            } else {
                at_ = next;
            }
            offset_ = 0;
            return *this;
        }
        const_iterator operator++(int) noexcept {
            auto old = *this;
            ++*this;
            return old;
        }
        friend bool operator==(const const_iterator& a, const const_iterator& b) noexcept {
            return a.at_ == b.at_ && a.offset_ == b.offset_;
        }

      private:
        const words* w_ = nullptr;
        std::size_t at_ = 0;
        std::uint64_t offset_ = 0;
    };

    void push_back(entity_id e) {
        ++size_;
        const std::size_t n = w_.size();
        if (n >= 2 && (w_[n - 1] & run_bit) != 0 && w_[n - 2] + (w_[n - 1] & ~run_bit) == e) [[likely]] {
            ++w_[n - 1];  // the run goes on: the common case, kept small enough to inline
            return;
        }
        push_word(e);
    }
    /// @brief push_back() of first, first + 1, ..., first + count - 1, with the same words as a
    /// result, in one step instead of one read-modify-write of the last word per id.
    void append_run(entity_id first, std::uint64_t count) {
        if (count == 0) return;
        push_back(first);
        if (count == 1) return;
        size_ += count - 1;
        if ((w_.back() & run_bit) != 0) {
            w_.back() += count - 1;  // first joined a run (or started one with the id before it)
        } else {
            w_.push_back(run_bit | count);  // first stands alone: it starts a run of count
        }
    }
    void clear() noexcept {
        w_.clear();
        size_ = 0;
    }
    /// @brief Ids held (runs expanded).
    [[nodiscard]] std::size_t size() const noexcept { return size_; }
    [[nodiscard]] bool empty() const noexcept { return size_ == 0; }
    /// @brief Words allocated (8 bytes each): what memory_bytes() counts.
    [[nodiscard]] std::size_t capacity() const noexcept { return w_.capacity(); }
    [[nodiscard]] const_iterator begin() const noexcept { return {&w_, 0}; }
    [[nodiscard]] const_iterator end() const noexcept { return {&w_, w_.size()}; }

  private:
    [[gnu::noinline]] void push_word(entity_id e) {
        const std::size_t n = w_.size();
        if (n >= 1 && (w_[n - 1] & run_bit) == 0 && w_[n - 1] + 1 == e) {
            w_.push_back(run_bit | 2U);  // the last id starts a run
        } else {
            w_.push_back(e);
        }
    }

    words w_;
    std::size_t size_ = 0;
};

class sparse_set {
  public:
    /// Slots per sparse page: 8 KiB of indices, from the page arena (see page_arena.hpp for why
    /// not malloc). 8 KiB, not more, so that a set holding a few high slots costs little.
    static constexpr std::size_t page_size = internal::page_arena::page_bytes / sizeof(std::uint32_t);
    static_assert((page_size & (page_size - 1)) == 0, "a lookup shifts and masks");

    sparse_set() = default;
    sparse_set(const sparse_set&) = delete;
    sparse_set& operator=(const sparse_set&) = delete;
    virtual ~sparse_set() = default;

    /// @brief True when the slot is in the set.
    [[nodiscard]] bool contains(std::uint32_t slot) const noexcept {
        const std::size_t page = slot / page_size;
        return page < sparse_.size() && sparse_[page] && sparse_[page].get()[slot % page_size] != null_index;
    }
    /// @brief Where the slot's entry lies (null when its page is absent), to prefetch it ahead
    /// of contains() or index() (entity_table::word_address says why an address).
    [[nodiscard]] const void* entry_address(std::uint32_t slot) const noexcept {
        const std::size_t page = slot / page_size;
        return page < sparse_.size() && sparse_[page] ? sparse_[page].get() + slot % page_size : nullptr;
    }
    /// @brief Dense position of a slot that is in the set.
    [[nodiscard]] std::uint32_t index(std::uint32_t slot) const noexcept {
        return sparse_[slot / page_size].get()[slot % page_size];
    }
    /// @brief Dense position of the slot, or null_index.
    [[nodiscard]] std::uint32_t find(std::uint32_t slot) const noexcept {
        return contains(slot) ? index(slot) : null_index;
    }
    [[nodiscard]] std::size_t size() const noexcept { return dense_.size(); }
    [[nodiscard]] bool empty() const noexcept { return dense_.empty(); }
    /// @brief The packed array of slots, in dense order.
    [[nodiscard]] const std::uint32_t* slots() const noexcept { return dense_.data(); }
    [[nodiscard]] std::uint32_t slot_at(std::size_t pos) const noexcept { return dense_[pos]; }

    /// @brief Removes the slot by moving the last element into its place.
    void erase(std::uint32_t slot) { on_swap_and_pop(erase_slot(slot)); }

    /// @brief Exchanges two dense positions (used by owning groups).
    void swap_positions(std::uint32_t a, std::uint32_t b) {
        if (a == b) return;
        const std::uint32_t sa = dense_[a];
        const std::uint32_t sb = dense_[b];
        dense_[a] = sb;
        dense_[b] = sa;
        sparse_ref(sa) = b;
        sparse_ref(sb) = a;
        on_swap(a, b);
    }

    /// @brief Takes the slot out of the set but leaves a hole at its position, for compact() to
    /// close (a bulk destroy). Between the two, the set is not walkable.
    void punch(std::uint32_t slot) noexcept {
        const std::uint32_t pos = index(slot);
        dense_[pos] = null_index;
        sparse_ref(slot) = null_index;
        if (pos < first_hole_) first_hole_ = pos;
    }
    /// @brief Gives back the unused capacity of its arrays (ecs::release_unused).
    virtual void release_unused() noexcept { ecs::release_unused(dense_); }

    /// @brief Closes the holes punch() left, keeping the order of the rest: one pass from the first
    /// hole, where erasing the same slots one by one would have made a random move each.
    virtual void compact() {
        compact_with([](std::uint32_t, std::uint32_t) {});
    }

    void reserve(std::size_t n) {
        dense_.reserve(n);
        on_reserve(n);
    }

    /// @brief Bytes held (capacity): sparse pages plus the dense array.
    [[nodiscard]] virtual std::size_t memory_bytes() const noexcept {
        std::size_t pages = 0;
        for (const auto& p : sparse_) pages += p ? 1 : 0;
        return pages * page_size * sizeof(std::uint32_t) + sparse_.capacity() * sizeof(void*) +
               dense_.capacity() * sizeof(std::uint32_t);
    }

    void clear() {
        if (dense_.size() * 8 >= sparse_.size() * page_size) {
            sparse_.clear();  // a well-filled set: dropping its pages costs less than emptying them
        } else {
            for (std::uint32_t slot : dense_)
                if (slot != null_index) sparse_ref(slot) = null_index;
        }
        dense_.clear();
        first_hole_ = null_index;
        on_clear();
    }

  protected:
    /// @brief Appends the slot; the derived class appends its data right after.
    std::uint32_t push_slot(std::uint32_t slot) {
        const auto pos = static_cast<std::uint32_t>(dense_.size());
        const std::size_t page = slot / page_size;
        std::uint32_t* p = page < sparse_.size() && sparse_[page] ? sparse_[page].get() : ensure_page(page);
        p[slot % page_size] = pos;
        dense_.push_back(slot);
        return pos;
    }
    /// @brief The slot half of erase(): moves the last slot into the erased one's place and
    /// returns that position, for the derived class to move its data in step.
    std::uint32_t erase_slot(std::uint32_t slot) noexcept {
        const std::uint32_t pos = index(slot);
        const std::uint32_t last = dense_.back();
        dense_[pos] = last;
        sparse_ref(last) = pos;
        sparse_ref(slot) = null_index;
        dense_.pop_back();
        return pos;
    }
    /// @brief compact()'s walk: move(from, to) moves the derived class's data down; returns the
    /// new size, for it to drop its tail.
    template <typename Move>
    std::uint32_t compact_with(Move&& move) {
        const auto n = static_cast<std::uint32_t>(dense_.size());
        std::uint32_t out = first_hole_ < n ? first_hole_ : n;
        for (std::uint32_t in = out; in < n; ++in) {
            const std::uint32_t slot = dense_[in];
            if (slot == null_index) continue;
            dense_[out] = slot;
            sparse_ref(slot) = out;
            move(in, out);
            ++out;
        }
        dense_.resize(out);
        first_hole_ = null_index;
        return out;
    }
    virtual void on_swap_and_pop(std::uint32_t /*pos*/) {}
    virtual void on_swap(std::uint32_t /*a*/, std::uint32_t /*b*/) {}
    virtual void on_reserve(std::size_t /*n*/) {}
    virtual void on_clear() {}

  private:
    std::uint32_t& sparse_ref(std::uint32_t slot) noexcept {
        return sparse_[slot / page_size].get()[slot % page_size];
    }

    [[gnu::noinline]] std::uint32_t* ensure_page(std::size_t page) {
        if (page >= sparse_.size()) sparse_.resize(page + 1);
        if (!sparse_[page]) {
            sparse_[page] =
                page_ptr(static_cast<std::uint32_t*>(internal::page_arena::instance().allocate()));
            std::fill_n(sparse_[page].get(), page_size, null_index);
        }
        return sparse_[page].get();
    }

    using page_ptr = std::unique_ptr<std::uint32_t, internal::arena_page_deleter>;
    std::vector<page_ptr> sparse_;
    std::vector<std::uint32_t, huge_page_allocator<std::uint32_t>> dense_;
    std::uint32_t first_hole_ = null_index;  // lowest position punch() emptied, until compact()
};

/// @brief A plain set of slots, e.g. the members of a system's query.
class entity_set : public sparse_set {
  public:
    void insert(std::uint32_t slot) { push_slot(slot); }
};

}  // namespace ecsd::ecs
