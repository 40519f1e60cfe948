#include "ecs/huge_page_allocator.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <csignal>
#include <cstdint>
#include <cstdio>
#include <fstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "ecs/page_arena.hpp"

using namespace ecsd::ecs;

namespace {

/// One mapping of /proc/self/smaps: its range, resident kB and VmFlags.
struct mapping {
    std::uintptr_t begin = 0;
    std::uintptr_t end = 0;
    std::size_t rss_kb = 0;
    std::size_t huge_kb = 0;  // of it in huge pages (AnonHugePages)
    std::string flags;
};

/// The mappings that overlap [p, p + bytes).
std::vector<mapping> mappings_over(const void* p, std::size_t bytes) {
    const auto lo = reinterpret_cast<std::uintptr_t>(p);
    const auto hi = lo + bytes;
    std::vector<mapping> out;
    std::ifstream smaps("/proc/self/smaps");
    bool inside = false;
    for (std::string line; std::getline(smaps, line);) {
        unsigned long long b = 0;
        unsigned long long e = 0;
        char sep = 0;
        if (std::sscanf(line.c_str(), "%llx-%llx%c", &b, &e, &sep) == 3 &&
            sep == ' ') {  // a mapping's first line
            inside = b < hi && e > lo;
            if (inside)
                out.push_back({static_cast<std::uintptr_t>(b), static_cast<std::uintptr_t>(e), 0, 0, ""});
        } else if (inside && line.starts_with("Rss:")) {
            out.back().rss_kb = std::stoul(line.substr(4));
        } else if (inside && line.starts_with("AnonHugePages:")) {
            out.back().huge_kb = std::stoul(line.substr(14));
        } else if (inside && line.starts_with("VmFlags:")) {
            out.back().flags = line.substr(8) + " ";
        }
    }
    return out;
}

}  // namespace

TEST(HugePageAllocator, TheLastHugePageOfABlockIsResidentOnlyAsFarAsItIsWritten) {
    constexpr std::size_t mib = std::size_t{1} << 20;
    std::vector<double, huge_page_allocator<double>> values;
    values.reserve(16 * mib / sizeof(double));  // one block of 16 MiB: a pool's capacity
    values.resize(15 * mib / sizeof(double));   // written up to 1 MiB into its last 2 MiB
    const auto base = reinterpret_cast<std::uintptr_t>(values.data());
    const auto maps = mappings_over(values.data(), 16 * mib);
    ASSERT_FALSE(maps.empty());
    const auto& tail = maps.back();
    EXPECT_EQ(tail.begin, base + 14 * mib) << "the last 2 MiB are a mapping of their own";
    EXPECT_EQ(tail.end, base + 16 * mib);
    EXPECT_LE(tail.rss_kb, 1024u + 4u) << "the unwritten MiB of the tail is not resident";
    EXPECT_GE(tail.rss_kb, 1024u) << "the written MiB of the tail is";
    // Where the kernel has transparent huge pages, the rest asks for them and the tail does not.
    if (maps.front().flags.find(" hg ") != std::string::npos) {
        EXPECT_NE(tail.flags.find(" nh "), std::string::npos) << tail.flags;
    }
}

namespace {
/// Kilobytes of the mappings over [p, p + bytes): resident (rss_kb) or in huge pages (huge_kb).
std::size_t kb_over(const void* p, std::size_t bytes, std::size_t mapping::*field) {
    std::size_t kb = 0;
    for (const auto& m : mappings_over(p, bytes)) kb += m.*field;
    return kb;
}
std::size_t huge_kb_over(const void* p, std::size_t bytes) {
    return kb_over(p, bytes, &mapping::huge_kb);
}
std::size_t rss_kb_over(const void* p, std::size_t bytes) {
    return kb_over(p, bytes, &mapping::rss_kb);
}
}  // namespace

TEST(HugePageAllocator, RestoreHugePagesMendsWhatAWriteDuringAForkSplitAndKeepsEveryValue) {
    constexpr std::size_t mib = std::size_t{1} << 20;
    std::vector<std::uint64_t, huge_page_allocator<std::uint64_t>> values(4 * mib / sizeof(std::uint64_t));
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = i;
    const std::size_t huge_at_first = huge_kb_over(values.data(), 4 * mib);

    // A child shares the pages; the parent writes one value of each huge page while it does.
    int ready[2];
    ASSERT_EQ(::pipe(ready), 0);
    const pid_t child = ::fork();
    ASSERT_GE(child, 0);
    if (child == 0) {
        ::close(ready[0]);
        (void)::write(ready[1], "r", 1);
        ::pause();
        ::_exit(0);
    }
    ::close(ready[1]);
    char c = 0;
    ASSERT_EQ(::read(ready[0], &c, 1), 1);
    ::close(ready[0]);
    for (std::size_t i = 0; i < values.size(); i += 2 * mib / sizeof(std::uint64_t)) values[i] += 1;
    const std::size_t huge_split = huge_kb_over(values.data(), 4 * mib);
    ::kill(child, SIGKILL);
    ::waitpid(child, nullptr, 0);

    const std::size_t collapsed = ecsd::memory::restore_huge_pages();
    const std::size_t huge_after = huge_kb_over(values.data(), 4 * mib);
    for (std::size_t i = 0; i < values.size(); ++i)
        ASSERT_EQ(values[i], i % (2 * mib / sizeof(std::uint64_t)) == 0 ? i + 1 : i) << "at " << i;
    // Where the kernel backs the block with huge pages at all, the write split them, and where it
    // has MADV_COLLAPSE (Linux 6.1), they are back.
    if (huge_at_first == 4096) {
        EXPECT_LT(huge_split, huge_at_first) << "a write to a page shared with a child splits it";
        if (collapsed > 0) {
            EXPECT_EQ(huge_after, 4096u) << "restore_huge_pages mends the split";
        }
    }
    RecordProperty("huge_kb", std::to_string(huge_at_first) + " " + std::to_string(huge_split) + " " +
                                  std::to_string(huge_after) + " collapsed " + std::to_string(collapsed));
}

TEST(HugePageAllocator, ReleaseUnusedGivesBackTheCapacityPastTheSizeAndKeepsEveryValue) {
    constexpr std::size_t mib = std::size_t{1} << 20;
    constexpr std::size_t per_mib = mib / sizeof(std::uint64_t);
    std::vector<std::uint64_t, huge_page_allocator<std::uint64_t>> values;
    values.reserve(8 * per_mib);  // one block of 8 MiB, all of it in huge pages
    values.resize(7 * per_mib);   // written to 7 MiB, then shrunk to 5 MiB and a bit
    values.resize(5 * per_mib + 1000);
    for (std::size_t i = 0; i < values.size(); ++i) values[i] = i;
    const bool huge = huge_kb_over(values.data(), 8 * mib) > 0;
    EXPECT_GE(rss_kb_over(values.data(), 8 * mib), 7 * 1024u);

    release_unused(values);
    // What is used stays, to the next 4 KiB; the rest, a split huge page and a whole one, is gone.
    EXPECT_LE(rss_kb_over(values.data(), 8 * mib), 5 * 1024u + 12);
    EXPECT_GE(rss_kb_over(values.data(), 8 * mib), 5 * 1024u + 7);
    for (std::size_t i = 0; i < values.size(); ++i) ASSERT_EQ(values[i], i) << "at " << i;
    if (huge) {
        EXPECT_EQ(huge_kb_over(values.data(), 4 * mib), 4096u) << "the huge pages in use are left whole";
        const auto split = mappings_over(values.data() + 5 * per_mib, 1);
        ASSERT_EQ(split.size(), 1u);
        EXPECT_NE(split[0].flags.find(" nh "), std::string::npos)
            << "the split page is kept from being made whole again: " << split[0].flags;
    }

    // A forked save's mending (MADV_COLLAPSE, which the kernel refuses for the whole rest of a range
    // once it meets a page marked so) leaves the split page alone and the pages before it whole.
    (void)ecsd::memory::restore_huge_pages();
    EXPECT_LE(rss_kb_over(values.data(), 8 * mib), 5 * 1024u + 12);
    if (huge) {
        EXPECT_EQ(huge_kb_over(values.data(), 4 * mib), 4096u);
    }

    // The vector grows through the pages given back, which read as zeros first.
    const std::size_t before = values.size();
    values.resize(values.capacity());
    for (std::size_t i = before; i < values.size(); ++i) ASSERT_EQ(values[i], 0u) << "at " << i;
    for (std::size_t i = before; i < values.size(); ++i) values[i] = i;
    // Used through, the split page asks for huge pages again (khugepaged makes it whole).
    release_unused(values);
    if (huge) {
        const auto grown = mappings_over(values.data() + 5 * per_mib, 1);
        ASSERT_EQ(grown.size(), 1u);
        EXPECT_EQ(grown[0].flags.find(" nh "), std::string::npos) << grown[0].flags;
        EXPECT_NE(grown[0].flags.find(" hg "), std::string::npos) << grown[0].flags;
    }
}

TEST(PageArena, ReleaseUnusedGivesBackThePagesOfABlockNeverHandedOut) {
    auto& arena = internal::page_arena::instance();
    constexpr std::size_t page = internal::page_arena::page_bytes;
    // Pages until one opens a new block (the lowest with room is used first, so the blocks below it
    // are full), then three more in it.
    std::vector<void*> pages;
    for (std::size_t i = 0; i <= internal::page_arena::pages_per_block; ++i) {
        const std::size_t blocks = arena.blocks();
        pages.push_back(arena.allocate());
        if (arena.blocks() > blocks) break;
    }
    char* block = static_cast<char*>(pages.back());
    ASSERT_EQ(reinterpret_cast<std::uintptr_t>(block) % ecsd::memory::huge_page, 0u);
    for (int i = 0; i < 3; ++i) pages.push_back(arena.allocate());
    for (std::size_t i = 0; i < 4; ++i) std::fill_n(block + i * page, page, static_cast<char>('a' + i));
    const bool huge = huge_kb_over(block, ecsd::memory::huge_page) > 0;
    if (huge) {
        EXPECT_EQ(rss_kb_over(block, ecsd::memory::huge_page), 2048u);
    }

    arena.release_unused();
    EXPECT_LE(rss_kb_over(block, ecsd::memory::huge_page), 4 * page / 1024);
    for (std::size_t i = 0; i < 4; ++i) ASSERT_EQ(block[i * page + page - 1], static_cast<char>('a' + i));
    // The next page comes from the pages given back, and is as usable as any.
    auto* next = static_cast<char*>(arena.allocate());
    pages.push_back(next);
    EXPECT_EQ(next, block + 4 * page);
    std::fill_n(next, page, 'e');
    EXPECT_EQ(next[page - 1], 'e');
    EXPECT_EQ(block[page], 'b');
    for (void* p : pages) arena.free(p);
}
