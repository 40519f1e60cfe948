#pragma once
// The 8 KiB pages of the sparse sets' slot-to-position arrays, cut from 2 MiB blocks in huge pages
// (memory::allocate_block) rather than from malloc's small pages.
//
// Why: a background save's fork copies a page-table entry for each small page of the process, and
// a large world holds many such pages. From malloc each is two small pages; from this arena 256 of
// them share one huge page and one entry. Being
// in mapped blocks, they are also among the blocks the saving child copies for itself (see
// memory/forked_save.cpp), so a spawn after a fork does not copy them page by page either.
//
// Resident memory is about what malloc's 8 KiB slabs took: a block is resident whole from its first
// page. A page is taken from the lowest block with room, so freed pages are reused before a new
// block is mapped, but sets that shrink can leave several blocks partly used. A block whose pages are
// all free is unmapped. Free pages are not poisoned for AddressSanitizer: the saving child copies
// whole blocks, free pages and all. One mutex: a set takes a page once per 2048 slots, so it is never
// contended in earnest.

#include <cstddef>
#include <cstdint>
#include <mutex>
#include <vector>

#include "ecs/huge_page_allocator.hpp"

namespace ecsd::ecs::internal {

class page_arena {
  public:
    static constexpr std::size_t page_bytes = std::size_t{8} << 10;
    static constexpr std::size_t pages_per_block = memory::huge_page / page_bytes;

    /// @brief The process's arena (all worlds share it).
    static page_arena& instance();

    /// @brief A page of page_bytes, aligned to them, its contents undefined. Throws std::bad_alloc.
    [[nodiscard]] void* allocate();
    /// @brief Gives back a page from allocate().
    void free(void* page) noexcept;

    /// @brief Gives back the pages of each block never handed out yet: a block is resident in full
    /// from its first page (memory::release_unused splits it).
    void release_unused() noexcept;

    /// @brief Blocks mapped now, and pages handed out (for tests and memory figures).
    [[nodiscard]] std::size_t blocks() const;
    [[nodiscard]] std::size_t pages_in_use() const;

  private:
    struct block {
        char* base;
        void* free_list;          // pages given back, each holding the next one's address
        std::uint32_t used;       // pages handed out and not given back
        std::uint32_t untouched;  // pages from here on were never handed out
    };
    mutable std::mutex m_;
    std::vector<block> blocks_;
};

/// @brief unique_ptr's deleter for a page_arena page.
struct arena_page_deleter {
    void operator()(std::uint32_t* p) const noexcept { page_arena::instance().free(p); }
};

}  // namespace ecsd::ecs::internal
