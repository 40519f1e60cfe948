#pragma once
// Allocator for the big packed arrays. On these VMs the first touch of a fresh
// 4 KiB page costs ~10 us, so large blocks come straight from mmap with
// MADV_HUGEPAGE (2 MiB pages: 512x fewer faults); small ones use operator new.

#include <sys/mman.h>

#include <algorithm>
#include <cstddef>
#include <new>

namespace ecsd::ecs {

namespace internal {
inline constexpr std::size_t huge_page = std::size_t{2} << 20;

[[nodiscard]] inline void* allocate_block(std::size_t bytes) {
    if (bytes < huge_page) return ::operator new(bytes);
    const std::size_t rounded = (bytes + huge_page - 1) & ~(huge_page - 1);
    void* p = ::mmap(nullptr, rounded, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (p == MAP_FAILED) throw std::bad_alloc();
    ::madvise(p, rounded, MADV_HUGEPAGE);
    return p;
}

inline void free_block(void* p, std::size_t bytes) noexcept {
    if (bytes < huge_page) {
        ::operator delete(p);
        return;
    }
    ::munmap(p, (bytes + huge_page - 1) & ~(huge_page - 1));
}
}  // namespace internal

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
