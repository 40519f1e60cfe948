#include "persist/journal.hpp"

#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "persist/atomic_file.hpp"
#include "persist/snapshot.hpp"

using namespace ecsd::persist;
namespace fs = std::filesystem;

namespace {
fs::path fresh_dir(const std::string& name) {
    const auto dir = fs::temp_directory_path() / ("ecsd_persist_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    return dir;
}
std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}
}  // namespace

TEST(Crc32, MatchesZlib) { EXPECT_EQ(crc32("123456789"), 0xCBF43926u); }

TEST(Journal, AppendsAndReadsBack) {
    const auto dir = fresh_dir("append");
    {
        journal_writer w(dir / "j", fsync_policy::always);
        w.append({{"seq", 1}, {"tick", 0}, {"method", "world.spawn_entity"}, {"params", {{"components", json::object()}}}});
        w.append({{"seq", 2}, {"tick", 1}});
    }
    const auto got = read_journal(dir / "j");
    ASSERT_EQ(got.records.size(), 2u);
    EXPECT_EQ(got.records[0]["method"], "world.spawn_entity");
    EXPECT_EQ(got.records[1]["tick"], 1);
    EXPECT_FALSE(got.torn_tail);
    EXPECT_TRUE(read_journal(dir / "missing").records.empty());
}

TEST(Journal, TruncatedAtEveryOffsetOfTheLastRecordLoadsTheValidPrefix) {
    const auto dir = fresh_dir("torn");
    {
        journal_writer w(dir / "j", fsync_policy::never);
        for (int i = 1; i <= 3; ++i) w.append({{"seq", i}, {"tick", i}, {"method", "world.step"}, {"params", {{"ticks", i}}}});
    }
    const std::string full = read_all(dir / "j");
    const auto last_start = full.rfind('\n', full.size() - 2) + 1;
    for (auto cut = last_start; cut < full.size(); ++cut) {
        std::ofstream(dir / "cut", std::ios::binary | std::ios::trunc) << full.substr(0, cut);
        const auto got = read_journal(dir / "cut");
        ASSERT_EQ(got.records.size(), 2u) << "cut at " << cut;
        EXPECT_EQ(got.valid_bytes, last_start);
        EXPECT_EQ(got.torn_tail, cut != last_start) << "cut at " << cut;
    }
}

TEST(Journal, CorruptionBeforeTheEndStopsWithFileAndOffset) {
    const auto dir = fresh_dir("corrupt");
    {
        journal_writer w(dir / "j", fsync_policy::never);
        for (int i = 1; i <= 3; ++i) w.append({{"seq", i}, {"tick", i}});
    }
    std::string data = read_all(dir / "j");
    const auto second = data.find('\n') + 1;
    data[second + 12] = data[second + 12] == '1' ? '2' : '1';  // flip a byte inside record 2
    std::ofstream(dir / "j", std::ios::binary | std::ios::trunc) << data;
    try {
        (void)read_journal(dir / "j");
        FAIL();
    } catch (const persist_error& e) {
        EXPECT_NE(std::string(e.what()).find((dir / "j").string()), std::string::npos);
        EXPECT_NE(std::string(e.what()).find("offset " + std::to_string(second)), std::string::npos) << e.what();
    }
}

TEST(Journal, TruncateEmptiesIt) {
    const auto dir = fresh_dir("truncate");
    journal_writer w(dir / "j", fsync_policy::everysec);
    w.append({{"seq", 1}, {"tick", 0}});
    EXPECT_GT(w.bytes(), 0u);
    w.truncate();
    EXPECT_EQ(fs::file_size(dir / "j"), 0u);
    w.append({{"seq", 2}, {"tick", 0}});
    EXPECT_EQ(read_journal(dir / "j").records.size(), 1u);
}

TEST(FsyncPolicy, ParsesTheThreeNames) {
    EXPECT_EQ(parse_fsync_policy("always"), fsync_policy::always);
    EXPECT_EQ(parse_fsync_policy("everysec"), fsync_policy::everysec);
    EXPECT_EQ(parse_fsync_policy("never"), fsync_policy::never);
    EXPECT_THROW((void)parse_fsync_policy("sometimes"), std::invalid_argument);
}

TEST(AtomicFile, ReplacesAndLeavesNoTempBehind) {
    const auto dir = fresh_dir("atomic");
    write_file_atomically(dir / "s.json", "old");
    write_file_atomically(dir / "s.json", "new contents");
    EXPECT_EQ(read_all(dir / "s.json"), "new contents");
    EXPECT_FALSE(fs::exists(temp_path_for(dir / "s.json")));
    std::ofstream(temp_path_for(dir / "s.json")) << "half a snapshot";  // as a crash mid-save leaves it
    EXPECT_EQ(remove_stale_temp_files(dir), 1u);
    EXPECT_EQ(read_all(dir / "s.json"), "new contents");
}
