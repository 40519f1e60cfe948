#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <cstdint>
#include <filesystem>
#include <stdexcept>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "ecs/huge_page_allocator.hpp"
#include "memory/blocks.hpp"
#include "memory/forked_save.hpp"
#include "persist/atomic_file.hpp"

using namespace ecsd::persist;
using ecsd::memory::background_save;
using ecsd::memory::spare_blocks;
namespace fs = std::filesystem;
using namespace std::chrono_literals;

namespace {
background_save::state wait_for(background_save& bg, std::chrono::milliseconds limit = 10s) {
    const auto end = std::chrono::steady_clock::now() + limit;
    auto s = bg.poll();
    while (s == background_save::state::running && std::chrono::steady_clock::now() < end) {
        std::this_thread::sleep_for(2ms);
        s = bg.poll();
    }
    return s;
}

using big = std::vector<double, ecsd::ecs::huge_page_allocator<double>>;
using bytes = std::vector<std::uint8_t, ecsd::ecs::huge_page_allocator<std::uint8_t>>;

/// @brief A save that writes to `path` the sum of `values` and `stamps` as the child sees them,
/// after waiting `wait` (the parent writes meanwhile).
background_save::job sum_job(const big& values, const bytes& stamps, const fs::path& path,
                             std::chrono::milliseconds wait = 0ms) {
    return [&values, &stamps, path, wait] {
        std::this_thread::sleep_for(wait);
        double sum = 0;
        for (const double v : values) sum += v;
        for (const auto b : stamps) sum += b;
        const std::string text = std::to_string(static_cast<long long>(sum));
        write_file_atomically(path, text);
        return static_cast<std::uint64_t>(text.size());
    };
}

/// @brief The child saw 1M values of 7.0 and 1M stamps of 5 (the fork's), the parent its own 3.0s
/// and 9s written after the fork.
void expect_fork_sum_and_parent_values(const fs::path& path, const big& values, const bytes& stamps) {
    std::string written;
    ASSERT_TRUE(read_file_from(path, 0, written));
    EXPECT_EQ(written, std::to_string((7LL << 20) + (5LL << 20)));
    EXPECT_EQ(values.front(), 3.0);
    EXPECT_EQ(values.back(), 3.0);
    EXPECT_EQ(stamps.front(), 9);
    EXPECT_EQ(stamps.back(), 9);
}
}  // namespace

TEST(BackgroundSave, TheChildWritesTheMemoryAsItWasAtTheFork) {
    const auto path = fs::temp_directory_path() / ("ecsd_bgsave_" + std::to_string(::getpid()));
    std::vector<int> values(100000, 7);
    auto bg = background_save::start([&values, &path] {
        std::this_thread::sleep_for(150ms);  // the parent changes the values meanwhile
        std::string text;
        for (const int v : values) text += static_cast<char>('0' + v);
        write_file_atomically(path, text);
        return static_cast<std::uint64_t>(text.size());
    });
    std::fill(values.begin(), values.end(), 3);  // copy-on-write: the child still sees 7s
    EXPECT_EQ(bg->poll(), background_save::state::running);
    ASSERT_EQ(wait_for(*bg), background_save::state::done) << bg->error();
    EXPECT_EQ(bg->bytes(), 100000u);
    std::string written;
    ASSERT_TRUE(read_file_from(path, 0, written));
    EXPECT_EQ(written, std::string(100000, '7'));
    EXPECT_LT(bg->fork_ms(), 1000.0);
    fs::remove(path);
}

TEST(BackgroundSave, BigBlocksAreAlignedListedAndCopiedAsTheyWereAtTheFork) {
    const auto listed = [](const void* p) {
        bool found = false;
        for (const auto& [at, bytes] : ecsd::memory::mapped_blocks())
            found = found || (at == p && bytes % (std::size_t{2} << 20) == 0);
        return found;
    };
    const void* freed = nullptr;
    {
        big gone(600000, 1.0);
        freed = gone.data();
        EXPECT_EQ(reinterpret_cast<std::uintptr_t>(gone.data()) % (std::uintptr_t{2} << 20), 0u)
            << "a big block starts on a 2 MiB boundary, so huge pages back all of it";
        EXPECT_TRUE(listed(gone.data()));
    }
    EXPECT_FALSE(listed(freed)) << "a freed block leaves the list before it is unmapped";

    // A middle-sized block (a 1M-entity pool's one-byte stamps) is mapped and listed on its own,
    // in whole small pages; a small one comes from operator new and is not listed.
    const auto listed_in_small_pages = [](const void* p) {
        bool found = false;
        for (const auto& [at, n] : ecsd::memory::mapped_blocks())
            found = found || (at == p && n % 4096 == 0 && n < (std::size_t{2} << 20));
        return found;
    };
    bytes stamps(1 << 20, 5);
    EXPECT_TRUE(listed_in_small_pages(stamps.data()));
    const bytes small(1000, 1);
    EXPECT_FALSE(listed_in_small_pages(small.data()));

    // The child replaces each block with a copy of its own at the same address (first thing,
    // before the save runs); the parent writes at once. Whichever comes first, the child reads the
    // values of the fork and the parent its own.
    const auto path = fs::temp_directory_path() / ("ecsd_bgsave_big_" + std::to_string(::getpid()));
    big values(1 << 20, 7.0);
    ASSERT_TRUE(listed(values.data()));
    auto bg = background_save::start(sum_job(values, stamps, path, 100ms));
    std::fill(values.begin(), values.end(), 3.0);
    std::fill(stamps.begin(), stamps.end(), 9);
    ASSERT_EQ(wait_for(*bg), background_save::state::done) << bg->error();
    expect_fork_sum_and_parent_values(path, values, stamps);
    EXPECT_GE(bg->copied_bytes(), (std::uint64_t{8} << 20) + (std::uint64_t{1} << 20))
        << "the child reports the blocks it copied: at least the values' and the stamps'";
    EXPECT_GT(bg->copy_ms(), 0.0);
    EXPECT_LT(bg->copy_ms(), 60000.0);
    fs::remove(path);
}

TEST(BackgroundSave, TheChildCopiesIntoSparesMadeReadyAheadAndBothSidesKeepTheirValues) {
    big values(1 << 20, 7.0);  // 8 MiB, in huge pages
    bytes stamps(1 << 20, 5);  // 1 MiB, in small pages
    auto spares = spare_blocks::prepare();
    ASSERT_FALSE(spares.empty());
    EXPECT_GE(spares.bytes(), (std::size_t{8} << 20) + (std::size_t{1} << 20))
        << "one spare the size of each mapped block, the two above among them";

    const auto path = fs::temp_directory_path() / ("ecsd_bgsave_spares_" + std::to_string(::getpid()));
    const void* hot[] = {values.data()};
    auto bg = background_save::start(sum_job(values, stamps, path), hot, std::move(spares));
    EXPECT_TRUE(spares.empty());  // NOLINT(bugprone-use-after-move): handed to the save
    std::fill(values.begin(), values.end(), 3.0);
    std::fill(stamps.begin(), stamps.end(), 9);
    ASSERT_EQ(wait_for(*bg), background_save::state::done) << bg->error();
    expect_fork_sum_and_parent_values(path, values, stamps);
    EXPECT_GE(bg->copied_bytes(), (std::uint64_t{9} << 20));
    EXPECT_EQ(bg->spared_bytes(), bg->copied_bytes())
        << "no block was mapped between prepare() and the fork, so every copy went into a spare";
    fs::remove(path);
}

TEST(BackgroundSave, WithoutSparesTheChildCopiesIntoFreshMemory) {
    big values(1 << 20, 7.0);
    auto bg = background_save::start([] { return std::uint64_t{0}; });
    ASSERT_EQ(wait_for(*bg), background_save::state::done) << bg->error();
    EXPECT_GE(bg->copied_bytes(), (std::uint64_t{8} << 20));
    EXPECT_EQ(bg->spared_bytes(), 0u);
}

TEST(BackgroundSave, AnErrorInTheChildComesBackToTheParent) {
    auto bg =
        background_save::start([]() -> std::uint64_t { throw storage_error(ENOSPC, "write /x/y.tmp"); });
    ASSERT_EQ(wait_for(*bg), background_save::state::failed);
    EXPECT_NE(bg->error().find("write /x/y.tmp"), std::string::npos) << bg->error();
    EXPECT_NE(bg->error().find("No space left on device"), std::string::npos) << bg->error();
}

TEST(BackgroundSave, AbandonKillsAndReapsTheChild) {
    auto bg = background_save::start([]() -> std::uint64_t {
        std::this_thread::sleep_for(60s);
        return 0;
    });
    const pid_t pid = bg->pid();
    const auto t0 = std::chrono::steady_clock::now();
    bg->abandon();
    EXPECT_LT(std::chrono::steady_clock::now() - t0, 5s);
    EXPECT_EQ(bg->poll(), background_save::state::failed);
    EXPECT_EQ(::waitpid(pid, nullptr, WNOHANG), -1);  // reaped: no zombie left behind
    EXPECT_EQ(errno, ECHILD);
}

TEST(BackgroundSave, TheChildHoldsNoInheritedDescriptor) {
    // A connection the parent closes must look closed to its peer at once, not when the save ends.
    int fds[2];
    ASSERT_EQ(::socketpair(AF_UNIX, SOCK_STREAM, 0, fds), 0);
    auto bg = background_save::start([]() -> std::uint64_t {
        std::this_thread::sleep_for(2s);
        return 0;
    });
    ::close(fds[0]);
    timeval wait{1, 0};
    ::setsockopt(fds[1], SOL_SOCKET, SO_RCVTIMEO, &wait, sizeof wait);
    char byte = 0;
    EXPECT_EQ(::read(fds[1], &byte, 1), 0) << "the peer did not see the close (errno " << errno << ")";
    ::close(fds[1]);
    bg->abandon();
}
