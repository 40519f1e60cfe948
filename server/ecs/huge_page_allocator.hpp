#pragma once
// The allocator of the big packed arrays: large blocks come from the memory module (huge pages,
// listed for the forked save's child: memory/blocks.hpp), small ones from operator new. The core
// makes no platform call of its own.

#include <algorithm>
#include <cstddef>
#include <vector>

#include "memory/blocks.hpp"

namespace ecsd::ecs {

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
        return static_cast<T*>(memory::allocate_block(n * sizeof(T)));
    }
    void deallocate(T* p, std::size_t n) noexcept { memory::free_block(p, n * sizeof(T)); }

    template <typename U>
    bool operator==(const huge_page_allocator<U>&) const noexcept {
        return true;
    }
};

/// @brief Gives back the pages of v's capacity past its size, where a big block holds them resident
/// (memory::release_unused: call it once v has stopped growing).
template <typename T>
void release_unused(std::vector<T, huge_page_allocator<T>>& v) noexcept {
    memory::release_unused(v.data(), v.size() * sizeof(T), v.capacity() * sizeof(T));
}

}  // namespace ecsd::ecs
