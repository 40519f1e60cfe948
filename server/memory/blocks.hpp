#pragma once
// The memory module: every platform call ecsd makes about memory (mmap, madvise, mremap, fork) is in
// server/memory and nowhere else. This part maps the big blocks the ECS core's arrays live in.
//
// The first touch of every fresh 4 KiB page is a page fault, so large blocks come straight from mmap
// in 2 MiB huge pages (512x fewer faults); from 16 MiB up, all but the last 2 MiB, which a vector
// fills last (see allocate_block). Middle-sized ones (from 256 KiB, such as a big pool's one-byte
// write stamps) are mapped on their own too, in 4 KiB pages, so that a forked save can take its copy
// of them (forked_save.hpp); small ones use operator new. Every mapped block is listed, lock-free,
// for the forked save's child.

#include <cstddef>
#include <vector>

namespace ecsd::memory {

inline constexpr std::size_t huge_page = std::size_t{2} << 20;
inline constexpr std::size_t small_page = 4096;
/// Blocks from this size up keep their last huge page in small pages (see allocate_block).
inline constexpr std::size_t small_tail_from = 8 * huge_page;
/// Blocks from this size up are mapped (and listed) on their own; below it, operator new.
inline constexpr std::size_t mapped_from = std::size_t{256} << 10;

/// @brief The bytes mapped for a block of `bytes`: whole huge pages for a big block, whole small
/// pages for a middle-sized one (a huge page there would be resident in full, up to twice the block).
[[nodiscard]] constexpr std::size_t mapped_size(std::size_t bytes) noexcept {
    const std::size_t page = bytes >= huge_page ? huge_page : small_page;
    return (bytes + page - 1) & ~(page - 1);
}

/// @brief A block of at least `bytes`: mapped (huge pages from 2 MiB, 2 MiB aligned) and listed from
/// mapped_from up, else from operator new. Throws std::bad_alloc.
[[nodiscard]] void* allocate_block(std::size_t bytes);
/// @brief Gives back a block from allocate_block(bytes).
void free_block(void* p, std::size_t bytes) noexcept;

/// @brief Gives the kernel back the pages of an allocate_block(bytes) block past its first `used`
/// bytes, such as a vector's capacity it does not use now. What it held there reads as zeros after.
///
/// A vector grows by doubling, and the huge page holding its last element is resident in full: a
/// world of 1M entities holds about 1 B an entity that way. This splits that huge page, for good (it
/// stays in small pages, resident as far as written, as the vector grows through it), and gives
/// back whole huge pages past it (a vector that shrank). Splitting costs the kernel a page-table
/// page and the next writes there a fault per 4 KiB, so call it when the vector has stopped growing
/// (ecs::registry::release_unused). A block from operator new (under mapped_from) is left alone.
void release_unused(void* block, std::size_t used, std::size_t bytes) noexcept;

/// @brief `bytes` of zeros straight from the kernel, in small pages and not listed: resident only
/// where written, for a scratch table indexed by slot that few entities write. (calloc can hand back
/// freed memory that it then zeroes by writing, which makes every page resident.) Throws
/// std::bad_alloc.
[[nodiscard]] void* map_zeroed(std::size_t bytes);
/// @brief Gives back what map_zeroed(bytes) returned.
void unmap_zeroed(void* p, std::size_t bytes) noexcept;

/// @brief `bytes` mapped at `at`.
struct block {
    void* at;
    std::size_t bytes;
};
/// @brief The blocks allocate_block() has mapped now (a copy of the list).
[[nodiscard]] std::vector<block> mapped_blocks();

/// @brief Asks the kernel to map each big block in huge pages again where a fork left it in small
/// ones, and returns how many blocks the kernel says are in huge pages now.
///
/// A background save's child shares the parent's huge pages until it has taken its own copies. If
/// the parent writes one of them first (the child was descheduled past the next tick), the kernel
/// splits the parent's mapping of those 2 MiB into 512 small pages, and it stays so: each later fork
/// copies 512 page-table entries for it instead of one, and each later write after a fork faults 512
/// times. MADV_COLLAPSE (Linux 6.1) copies such a range back into a huge page; on a range already in
/// one it only looks. It can take milliseconds for a split block, so call it off the world's strand
/// once a save has ended: the world may write on meanwhile (the kernel makes a writer wait for the
/// 2 MiB being copied), and a block freed meanwhile makes it fail harmlessly. Where the kernel has
/// no MADV_COLLAPSE or no huge page to give, nothing changes.
std::size_t restore_huge_pages() noexcept;

}  // namespace ecsd::memory
