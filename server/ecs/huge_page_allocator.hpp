#pragma once
// Allocator for the big packed arrays. The first touch of every fresh 4 KiB page is a page fault,
// so large blocks come straight from mmap with MADV_HUGEPAGE (2 MiB pages: 512x fewer faults); from 16 MiB
// up, all but the last 2 MiB, which a vector fills last (see allocate_block). Middle-sized ones (from 256
// KiB, such as a 1M-entity pool's one-byte write stamps) are mapped on their own too, in 4 KiB pages, so that
// a forked save can take its copy of them (see mapped_blocks); small ones use operator new.

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <new>

namespace ecsd::ecs {

namespace internal {
inline constexpr std::size_t huge_page = std::size_t{2} << 20;

/// The blocks allocate_block() mapped, so that a forked child (a background save) can take a copy
/// of its own of each and stop sharing them with the parent (persist/background_save.cpp). Lock-free,
/// because the child may be forked while another thread is in the middle of an update; it then
/// misses at most the block being added (still shared, so copied on write as before) and never
/// sees a block that is unmapped, since a block leaves the list before it is unmapped.
struct mapped_block {
    std::atomic<void*> addr{nullptr};  // nullptr: free; claimed(): being filled in
    std::atomic<std::size_t> bytes{0};
};
inline void* claimed() noexcept {
    static char mark;
    return &mark;
}
inline constexpr std::size_t max_mapped_blocks = 4096;  // beyond that, blocks go untracked
inline std::array<mapped_block, max_mapped_blocks>& mapped_blocks() noexcept {
    static std::array<mapped_block, max_mapped_blocks> blocks;
    return blocks;
}
inline void note_mapped(void* p, std::size_t bytes) noexcept {
    for (auto& b : mapped_blocks()) {
        void* expected = nullptr;
        if (b.addr.compare_exchange_strong(expected, claimed(), std::memory_order_acq_rel)) {
            b.bytes.store(bytes, std::memory_order_relaxed);
            b.addr.store(p, std::memory_order_release);
            return;
        }
    }
}
inline void note_unmapped(void* p) noexcept {
    for (auto& b : mapped_blocks()) {
        if (b.addr.load(std::memory_order_relaxed) == p) {
            b.addr.store(nullptr, std::memory_order_release);
            return;
        }
    }
}

/// @brief `rounded` bytes (a multiple of 2 MiB) of fresh memory aligned to 2 MiB, so huge pages back
/// all of it (mmap only promises 4 KiB: the part before the first 2 MiB boundary would be small
/// pages, a fault each on first touch and after a fork), or nullptr. One huge page more is mapped
/// and the ends beyond the aligned block unmapped.
[[nodiscard]] inline void* map_aligned(std::size_t rounded) noexcept {
    void* got =
        ::mmap(nullptr, rounded + huge_page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (got == MAP_FAILED) return nullptr;
    auto* raw = static_cast<char*>(got);
    const std::size_t head = (huge_page - reinterpret_cast<std::uintptr_t>(raw) % huge_page) % huge_page;
    char* p = raw + head;
    if (head > 0) ::munmap(raw, head);
    if (head < huge_page) ::munmap(p + rounded, huge_page - head);
    ::madvise(p, rounded, MADV_HUGEPAGE);
    return p;
}

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

/// @brief `rounded` bytes (a mapped_size()) of fresh memory laid out as such a block is: on a 2 MiB
/// boundary and in huge pages when a multiple of 2 MiB, in small pages otherwise; or nullptr. A
/// forked save maps its copies of the world's blocks with it too (whole, in one mapping, as mremap
/// needs: allocate_block() then leaves the world's own tails in small pages).
[[nodiscard]] inline void* map_block(std::size_t rounded) noexcept {
    if (rounded % huge_page == 0) return map_aligned(rounded);
    void* got = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return got == MAP_FAILED ? nullptr : got;
}

[[nodiscard]] inline void* allocate_block(std::size_t bytes) {
    if (bytes < mapped_from) return ::operator new(bytes);
    const std::size_t rounded = mapped_size(bytes);
    void* p = map_block(rounded);
    if (p == nullptr) throw std::bad_alloc();
    // A vector's block ends in capacity it has not used yet, and a huge page is resident in full from
    // its first byte, so the last one would hold unused capacity as resident memory. The last 2 MiB of a big
    // block are left in small pages, resident only as far as they are written (a grown vector's copy fills
    // the first half, so the tail is reached only as it fills up). Not in smaller blocks: a vector growing
    // one push at a time fills each of them whole on its way, and a small-page tail then costs 512 faults for
    // nothing.
    if (rounded >= small_tail_from)
        ::madvise(static_cast<char*>(p) + rounded - huge_page, huge_page, MADV_NOHUGEPAGE);
    note_mapped(p, rounded);
    return p;
}

inline void free_block(void* p, std::size_t bytes) noexcept {
    if (bytes < mapped_from) {
        ::operator delete(p);
        return;
    }
    note_unmapped(p);
    ::munmap(p, mapped_size(bytes));
}
}  // namespace internal

/// @brief Calls f(address, bytes) for each big block mapped now. For a forked child
/// (persist::background_save), which replaces each with a private copy so that the parent's
/// writes stop costing a page copy each.
template <typename F>
void for_each_mapped_block(F&& f) {
    for (auto& b : internal::mapped_blocks()) {
        void* a = b.addr.load(std::memory_order_acquire);
        if (a != nullptr && a != internal::claimed()) f(a, b.bytes.load(std::memory_order_relaxed));
    }
}

/// @brief Asks the kernel to map each big block in huge pages again where a fork left it in small
/// ones, and returns how many blocks the kernel says are in huge pages now.
///
/// A background save's child shares the parent's huge pages until it has taken its own copies. If
/// the parent writes one of them first (the child was descheduled past the next tick), the kernel
/// splits the parent's mapping of those 2 MiB into 512 small pages, and it stays so: each later fork
/// copies 512 page-table entries for it instead of one, and each later write after a fork faults 512
/// times.
///
/// MADV_COLLAPSE (Linux 6.1) copies such a range back into a huge page; on a range already in one it
/// only looks, which is cheap. It can take milliseconds for a split block, so
/// call it off the world's strand once a save has ended: the world may write on meanwhile (the
/// kernel makes a writer wait for the 2 MiB being copied), and a block freed meanwhile makes it fail
/// harmlessly. Where the kernel has no MADV_COLLAPSE or no huge page to give, nothing changes.
inline std::size_t restore_huge_pages() noexcept {
    // Linux's value; Debian 12's glibc headers predate it (<linux/mman.h> has it, but clashes with them).
    constexpr int madv_collapse = 25;
    std::size_t collapsed = 0;
    for_each_mapped_block([&collapsed](void* at, std::size_t bytes) {
        if (bytes % internal::huge_page != 0) return;  // a middle-sized block, in small pages by design
        // A big block's last 2 MiB are in small pages by design too (see allocate_block).
        const std::size_t huge = bytes >= internal::small_tail_from ? bytes - internal::huge_page : bytes;
        if (::madvise(at, huge, madv_collapse) == 0) ++collapsed;
    });
    return collapsed;
}

/// @brief Makes room for `more` elements, growing at least geometrically so that repeated small
/// batches stay amortized O(1) while one big batch grows the vector once.
template <typename Vector>
void reserve_more(Vector& v, std::size_t more) {
    if (v.capacity() - v.size() >= more) return;
    v.reserve(std::max(v.size() + more, 2 * v.capacity()));
}

/// @brief std::allocator replacement that backs large arrays with huge pages.
template <typename T>
struct huge_page_allocator {
    using value_type = T;
    huge_page_allocator() noexcept = default;
    template <typename U>
    huge_page_allocator(const huge_page_allocator<U>&) noexcept {}  // NOLINT(google-explicit-constructor)

    [[nodiscard]] T* allocate(std::size_t n) {
        return static_cast<T*>(internal::allocate_block(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept { internal::free_block(p, n * sizeof(T)); }

    template <typename U>
    bool operator==(const huge_page_allocator<U>&) const noexcept {
        return true;
    }
};

}  // namespace ecsd::ecs
