#include "memory/blocks.hpp"

#include <sys/mman.h>

#include <algorithm>
#include <array>
#include <atomic>
#include <cstdint>
#include <new>

#include "memory/internal.hpp"

namespace ecsd::memory {

namespace {

constexpr std::size_t no_split = ~std::size_t{0};  // mapped_entry::split_at: no page split

/// One entry of the list of mapped blocks, so that a forked child (a background save) can take a
/// copy of its own of each and stop sharing them with the parent. Lock-free, because the child may
/// be forked while another thread is in the middle of an update; it then misses at most the block
/// being added (still shared, so copied on write as before) and never sees a block that is
/// unmapped, since a block leaves the list before it is unmapped.
struct mapped_entry {
    std::atomic<void*> addr{nullptr};  // nullptr: free; claimed(): being filled in
    std::atomic<std::size_t> bytes{0};
    std::atomic<std::size_t> split_at{no_split};  // the huge page release_unused() split, if any
};
void* claimed() noexcept {
    static char mark;
    return &mark;
}
constexpr std::size_t max_mapped_blocks = 4096;  // beyond that, blocks go untracked
std::array<mapped_entry, max_mapped_blocks>& entries() noexcept {
    static std::array<mapped_entry, max_mapped_blocks> blocks;
    return blocks;
}
void note_mapped(void* p, std::size_t bytes) noexcept {
    for (auto& b : entries()) {
        void* expected = nullptr;
        if (b.addr.compare_exchange_strong(expected, claimed(), std::memory_order_acq_rel)) {
            b.bytes.store(bytes, std::memory_order_relaxed);
            b.split_at.store(no_split, std::memory_order_relaxed);
            b.addr.store(p, std::memory_order_release);
            return;
        }
    }
}
mapped_entry* entry_of(const void* p) noexcept {
    for (auto& b : entries())
        if (b.addr.load(std::memory_order_acquire) == p) return &b;
    return nullptr;
}
void note_unmapped(void* p) noexcept {
    for (auto& b : entries()) {
        if (b.addr.load(std::memory_order_relaxed) == p) {
            b.addr.store(nullptr, std::memory_order_release);
            return;
        }
    }
}

}  // namespace

namespace internal {

void* map_aligned(std::size_t rounded) noexcept {
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

void* map_block(std::size_t rounded) noexcept {
    if (rounded % huge_page == 0) return map_aligned(rounded);
    void* got = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    return got == MAP_FAILED ? nullptr : got;
}

void unmap(void* p, std::size_t bytes) noexcept {
    ::munmap(p, bytes);
}

}  // namespace internal

void* map_zeroed(std::size_t bytes) {
    const std::size_t rounded = (std::max<std::size_t>(bytes, 1) + small_page - 1) & ~(small_page - 1);
    void* p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ::madvise(p, rounded, MADV_NOHUGEPAGE);  // a write makes 4 KiB resident, not 2 MiB
    return p;
}

void unmap_zeroed(void* p, std::size_t bytes) noexcept {
    if (p == nullptr) return;
    ::munmap(p, (std::max<std::size_t>(bytes, 1) + small_page - 1) & ~(small_page - 1));
}

void* allocate_block(std::size_t bytes) {
    if (bytes < mapped_from) return ::operator new(bytes);
    const std::size_t rounded = mapped_size(bytes);
    void* p = internal::map_block(rounded);
    if (p == nullptr) throw std::bad_alloc();
    // A vector's block ends in capacity it has not used yet, and a huge page is resident in full from
    // its first byte, so the last one would hold unused capacity as resident memory. The last 2 MiB of
    // a big block are left in small pages, resident only as far as they are written (a grown vector's
    // copy fills the first half, so the tail is reached only as it fills up). Not in smaller blocks: a
    // vector growing one push at a time fills each of them whole on its way, and a small-page tail
    // then costs 512 faults for nothing.
    if (rounded >= small_tail_from)
        ::madvise(static_cast<char*>(p) + rounded - huge_page, huge_page, MADV_NOHUGEPAGE);
    note_mapped(p, rounded);
    return p;
}

void free_block(void* p, std::size_t bytes) noexcept {
    if (bytes < mapped_from) {
        ::operator delete(p);
        return;
    }
    note_unmapped(p);
    ::munmap(p, mapped_size(bytes));
}

void release_unused(void* at, std::size_t used, std::size_t bytes) noexcept {
    if (bytes < mapped_from) return;  // from operator new: not ours to give back
    auto* p = static_cast<char*>(at);
    const std::size_t end = mapped_size(bytes);
    const std::size_t from = (used + small_page - 1) & ~(small_page - 1);
    mapped_entry* e = entry_of(at);
    // The page split last time, now used to its end (the vector grew through it): huge pages are
    // asked for again, and khugepaged makes it whole in its own time, resident as it already is.
    // So a vector that grows with pauses keeps at most one split page, not a trail of them.
    std::size_t split = e != nullptr ? e->split_at.load(std::memory_order_relaxed) : no_split;
    if (split != no_split && split + huge_page <= from) {
        ::madvise(p + split, huge_page, MADV_HUGEPAGE);
        split = no_split;
        e->split_at.store(no_split, std::memory_order_relaxed);
    }
    if (from >= end) return;
    // The huge page holding the last used bytes is resident in full. Released in part, the kernel
    // splits it into small pages; marked first, so that khugepaged does not make it whole (and
    // resident) again. A block's small tail (allocate_block) is in small pages already. Whole huge
    // pages past it go back as they are.
    const std::size_t in_huge = end % huge_page != 0 ? 0 : end >= small_tail_from ? end - huge_page : end;
    const std::size_t page = from & ~(huge_page - 1);
    if (from % huge_page != 0 && from < in_huge && page != split) {
        ::madvise(p + page, huge_page, MADV_NOHUGEPAGE);
        if (split != no_split) ::madvise(p + split, huge_page, MADV_HUGEPAGE);  // it shrank: one split page
        if (e != nullptr) e->split_at.store(page, std::memory_order_relaxed);
    }
    ::madvise(p + from, end - from, MADV_DONTNEED);
}

std::vector<block> mapped_blocks() {
    std::vector<block> out;
    for (auto& b : entries()) {
        void* a = b.addr.load(std::memory_order_acquire);
        if (a != nullptr && a != claimed()) out.push_back({a, b.bytes.load(std::memory_order_relaxed)});
    }
    return out;
}

std::size_t restore_huge_pages() noexcept {
    // Linux's value; Debian 12's glibc headers predate it (<linux/mman.h> has it, but clashes with them).
    constexpr int madv_collapse = 25;
    std::size_t collapsed = 0;
    for (auto& b : entries()) {
        void* at = b.addr.load(std::memory_order_acquire);
        if (at == nullptr || at == claimed()) continue;
        const std::size_t bytes = b.bytes.load(std::memory_order_relaxed);
        if (bytes % huge_page != 0) continue;  // a middle-sized block, in small pages by design
        // A big block's last 2 MiB are in small pages by design too (see allocate_block), and so is
        // the huge page release_unused() split: the kernel refuses to collapse such a range.
        const std::size_t huge = bytes >= small_tail_from ? bytes - huge_page : bytes;
        const std::size_t split = std::min(b.split_at.load(std::memory_order_relaxed), huge);
        auto* p = static_cast<char*>(at);
        bool ok = split == 0 || ::madvise(p, split, madv_collapse) == 0;
        if (split + huge_page < huge)
            ok = ::madvise(p + split + huge_page, huge - split - huge_page, madv_collapse) == 0 && ok;
        if (ok) ++collapsed;
    }
    return collapsed;
}

}  // namespace ecsd::memory
