#include "ecs/page_arena.hpp"

#include <algorithm>
#include <new>

namespace ecsd::ecs::internal {

page_arena& page_arena::instance() {
    // Never destroyed: a set that outlives main() (a static) still gives its pages back into it.
    static auto* arena = new page_arena;
    return *arena;
}

void* page_arena::allocate() {
    const std::lock_guard lock(m_);
    // The lowest block with room, so that pages gather in few blocks and emptied ones can go.
    auto it = std::find_if(blocks_.begin(), blocks_.end(), [](const block& b) {
        return b.free_list != nullptr || b.untouched < pages_per_block;
    });
    if (it == blocks_.end()) {
        auto* base = static_cast<char*>(memory::allocate_block(memory::huge_page));  // throws bad_alloc
        block fresh{base, nullptr, 0, 0};
        it = blocks_.insert(std::upper_bound(blocks_.begin(), blocks_.end(), fresh,
                                             [](const block& a, const block& b) { return a.base < b.base; }),
                            fresh);
    }
    void* page = nullptr;
    if (it->free_list != nullptr) {
        page = it->free_list;
        it->free_list = *static_cast<void**>(page);
    } else {
        page = it->base + it->untouched * page_bytes;
        ++it->untouched;
    }
    ++it->used;
    return page;
}

void page_arena::free(void* page) noexcept {
    if (page == nullptr) return;
    const std::lock_guard lock(m_);
    auto* at = static_cast<char*>(page);
    char* base = at - reinterpret_cast<std::uintptr_t>(at) % memory::huge_page;  // blocks are 2 MiB aligned
    const auto it = std::lower_bound(blocks_.begin(), blocks_.end(), base,
                                     [](const block& b, const char* key) { return b.base < key; });
    if (it == blocks_.end() || it->base != base) return;  // not ours: cannot happen
    *static_cast<void**>(page) = it->free_list;
    it->free_list = page;
    if (--it->used > 0) return;
    // Empty: unmapped at once, as its huge page would be resident in full until reused.
    memory::free_block(it->base, memory::huge_page);
    blocks_.erase(it);
}

void page_arena::release_unused() noexcept {
    const std::lock_guard lock(m_);
    for (const auto& b : blocks_) memory::release_unused(b.base, b.untouched * page_bytes, memory::huge_page);
}

std::size_t page_arena::blocks() const {
    const std::lock_guard lock(m_);
    return blocks_.size();
}

std::size_t page_arena::pages_in_use() const {
    const std::lock_guard lock(m_);
    std::size_t n = 0;
    for (const auto& b : blocks_) n += b.used;
    return n;
}

}  // namespace ecsd::ecs::internal
