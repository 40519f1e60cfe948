#include "ecs/page_arena.hpp"

#include <algorithm>
#include <cstdint>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

using namespace ecsd::ecs;

TEST(PageArena, HandsOutDistinctAlignedPagesFromListedBlocksAndGivesEmptiedBlocksBack) {
    auto& arena = internal::page_arena::instance();
    const std::size_t blocks_before = arena.blocks();
    const std::size_t in_use_before = arena.pages_in_use();
    const auto listed_block_of = [](const void* p) {
        const auto at = reinterpret_cast<std::uintptr_t>(p);
        bool found = false;
        for (const auto& [b, n] : ecsd::memory::mapped_blocks()) {
            const auto base = reinterpret_cast<std::uintptr_t>(b);
            found = found || (at >= base && at < base + n && n == ecsd::memory::huge_page);
        }
        return found;
    };

    // Three blocks' worth of pages: each aligned, in a listed 2 MiB block (so a saving child copies
    // it), and writable whole without touching another.
    constexpr std::size_t n = 3 * internal::page_arena::pages_per_block;
    std::vector<void*> pages;
    for (std::size_t i = 0; i < n; ++i) {
        pages.push_back(arena.allocate());
        ASSERT_EQ(reinterpret_cast<std::uintptr_t>(pages.back()) % internal::page_arena::page_bytes, 0u);
        std::fill_n(static_cast<std::uint32_t*>(pages.back()), internal::page_arena::page_bytes / 4,
                    static_cast<std::uint32_t>(i));
    }
    EXPECT_EQ(arena.pages_in_use(), in_use_before + n);
    EXPECT_GE(arena.blocks(), blocks_before + 2);
    for (std::size_t i = 0; i < n; ++i) {
        ASSERT_TRUE(listed_block_of(pages[i])) << i;
        const auto* words = static_cast<const std::uint32_t*>(pages[i]);
        ASSERT_EQ(words[0], i);
        ASSERT_EQ(words[internal::page_arena::page_bytes / 4 - 1], i) << "no page overlaps another";
    }

    // A page given back is handed out again before any untouched one.
    void* again = pages[5];
    arena.free(again);
    EXPECT_EQ(arena.allocate(), again);

    // Emptied blocks are unmapped (and leave the list).
    for (void* p : pages) arena.free(p);
    EXPECT_EQ(arena.pages_in_use(), in_use_before);
    EXPECT_LE(arena.blocks(), blocks_before);
}

TEST(PageArena, WorldsOnTwoThreadsShareItSafely) {
    auto& arena = internal::page_arena::instance();
    const std::size_t in_use_before = arena.pages_in_use();
    const auto churn = [&arena](std::uint32_t mark) {
        std::vector<std::uint32_t*> mine;
        for (int round = 0; round < 20; ++round) {
            for (int i = 0; i < 300; ++i) {
                mine.push_back(static_cast<std::uint32_t*>(arena.allocate()));
                std::fill_n(mine.back(), internal::page_arena::page_bytes / 4, mark);
            }
            for (auto* p : mine)
                if (p[0] != mark || p[internal::page_arena::page_bytes / 4 - 1] != mark) return false;
            for (auto* p : mine) arena.free(p);
            mine.clear();
        }
        return true;
    };
    bool other_ok = false;
    std::thread other([&] { other_ok = churn(2); });
    const bool this_ok = churn(1);
    other.join();
    EXPECT_TRUE(this_ok);
    EXPECT_TRUE(other_ok) << "a page was handed to both threads";
    EXPECT_EQ(arena.pages_in_use(), in_use_before);
}
