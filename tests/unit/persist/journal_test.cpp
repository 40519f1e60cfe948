#include "persist/journal.hpp"

#include <sys/resource.h>

#include <cerrno>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <system_error>
#include <vector>

#include <gtest/gtest.h>

#include "persist/atomic_file.hpp"
#include "persist/snapshot.hpp"

using namespace ecsd::persist;
namespace fs = std::filesystem;

namespace {
// The directories this process made, removed when it exits (each test runs in a process of its
// own under ctest, so /tmp does not collect one directory per test per run).
struct made_dirs {
    std::vector<fs::path> dirs;
    made_dirs() = default;
    made_dirs(const made_dirs&) = delete;
    made_dirs& operator=(const made_dirs&) = delete;
    ~made_dirs() {
        std::error_code ec;
        for (const auto& d : dirs) fs::remove_all(d, ec);
    }
};
fs::path fresh_dir(const std::string& name) {
    static made_dirs made;
    auto dir = fs::temp_directory_path() / ("ecsd_persist_" + name + "_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    fs::create_directories(dir);
    made.dirs.push_back(dir);
    return dir;
}
std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}
}  // namespace

TEST(Crc32, MatchesZlib) {
    EXPECT_EQ(crc32("123456789"), 0xCBF43926u);
}

TEST(Journal, AppendsAndReadsBack) {
    const auto dir = fresh_dir("append");
    {
        journal_writer w(dir / "j", fsync_policy::always);
        w.append({{"seq", 1},
                  {"tick", 0},
                  {"method", "world.spawn_entity"},
                  {"params", {{"components", json::object()}}}});
        w.append({{"seq", 2}, {"tick", 1}});
    }
    const auto got = read_journal(dir / "j");
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got.record(0)["method"], "world.spawn_entity");
    EXPECT_EQ(got.record(1)["tick"], 1);
    EXPECT_FALSE(got.torn_tail);
    EXPECT_TRUE(read_journal(dir / "missing").empty());
}

TEST(Journal, TruncatedAtEveryOffsetOfTheLastRecordLoadsTheValidPrefix) {
    const auto dir = fresh_dir("torn");
    {
        journal_writer w(dir / "j", fsync_policy::never);
        for (int i = 1; i <= 3; ++i)
            w.append({{"seq", i}, {"tick", i}, {"method", "world.step"}, {"params", {{"ticks", i}}}});
    }
    const std::string full = read_all(dir / "j");
    const auto last_start = full.rfind('\n', full.size() - 2) + 1;
    for (auto cut = last_start; cut < full.size(); ++cut) {
        std::ofstream(dir / "cut", std::ios::binary | std::ios::trunc) << full.substr(0, cut);
        const auto got = read_journal(dir / "cut");
        ASSERT_EQ(got.size(), 2u) << "cut at " << cut;
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
        EXPECT_NE(std::string(e.what()).find("offset " + std::to_string(second)), std::string::npos)
            << e.what();
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
    EXPECT_EQ(read_journal(dir / "j").size(), 1u);
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

namespace {
/// @brief Lowers RLIMIT_FSIZE while alive: writes past `bytes` fail (EFBIG) after a short write,
/// the way a full disk cuts a write short. SIGXFSZ is ignored so the write returns instead.
class file_size_limit {
  public:
    explicit file_size_limit(rlim_t bytes) {
        ::getrlimit(RLIMIT_FSIZE, &old_);
        old_handler_ = std::signal(SIGXFSZ, SIG_IGN);
        rlimit lower = old_;
        lower.rlim_cur = bytes;
        ::setrlimit(RLIMIT_FSIZE, &lower);
    }
    ~file_size_limit() {
        ::setrlimit(RLIMIT_FSIZE, &old_);
        std::signal(SIGXFSZ, old_handler_);
    }
    file_size_limit(const file_size_limit&) = delete;
    file_size_limit& operator=(const file_size_limit&) = delete;

  private:
    rlimit old_{};
    void (*old_handler_)(int) = nullptr;
};

json step_record(int seq) {
    return {{"seq", seq}, {"tick", seq}, {"method", "world.step"}, {"params", {{"ticks", 1}}}};
}
}  // namespace

TEST(Journal, AFailedAppendLeavesNoPartialRecordAndTheNextOneIsReadable) {
    const auto dir = fresh_dir("partial");
    journal_writer w(dir / "j", fsync_policy::always);
    w.append(step_record(1));
    const auto good = w.bytes();
    {
        file_size_limit limit(good + 20);  // room for 20 bytes of the next record: a short write
        try {
            w.append(step_record(2));
            FAIL() << "the append should fail";
        } catch (const storage_error& e) {
            EXPECT_NE(std::string(e.what()).find((dir / "j").string()), std::string::npos) << e.what();
            EXPECT_EQ(e.code().value(), EFBIG);
        }
        EXPECT_EQ(fs::file_size(dir / "j"), good);  // the 20 bytes were cut off again
        EXPECT_EQ(w.bytes(), good);
    }
    w.append(step_record(2));  // space is back
    const auto got = read_journal(dir / "j");
    ASSERT_EQ(got.size(), 2u);
    EXPECT_EQ(got.record(1)["seq"], 2);
    EXPECT_FALSE(got.torn_tail);
}

TEST(Journal, RollbackCutsTheLastRecordOff) {
    const auto dir = fresh_dir("rollback");
    journal_writer w(dir / "j", fsync_policy::always);
    w.append(step_record(1));
    const auto before = w.bytes();
    w.append(step_record(2));
    w.rollback(before);
    EXPECT_EQ(fs::file_size(dir / "j"), before);
    w.append(step_record(2));
    EXPECT_EQ(read_journal(dir / "j").size(), 2u);
}

TEST(Journal, ACompleteLastRecordWithAFlippedBitIsCorruptionNotATornTail) {
    const auto dir = fresh_dir("flipped_last");
    {
        journal_writer w(dir / "j", fsync_policy::never);
        for (int i = 1; i <= 3; ++i) w.append(step_record(i));
    }
    std::string data = read_all(dir / "j");
    const auto last = data.rfind('\n', data.size() - 2) + 1;
    data[last + 20] ^= 0x01;  // the newline is still there: this record was written whole
    std::ofstream(dir / "j", std::ios::binary | std::ios::trunc) << data;
    try {
        (void)read_journal(dir / "j");
        FAIL() << "a complete record that fails its checksum must not be dropped silently";
    } catch (const journal_error& e) {
        EXPECT_EQ(e.offset, last);
        EXPECT_EQ(e.records_lost, 1u);
        EXPECT_NE(std::string(e.what()).find("offset " + std::to_string(last)), std::string::npos)
            << e.what();
    }
}

TEST(Journal, ASequenceGapIsDetectedWithItsOffset) {
    const auto dir = fresh_dir("gap");
    {
        journal_writer w(dir / "j", fsync_policy::never);
        for (int i : {1, 2, 4, 5}) w.append(step_record(i));
    }
    const std::string data = read_all(dir / "j");
    const auto third = data.find('\n', data.find('\n') + 1) + 1;
    try {
        (void)read_journal(dir / "j");
        FAIL() << "a gap in sequence numbers must be detected";
    } catch (const journal_error& e) {
        EXPECT_EQ(e.offset, third);
        EXPECT_EQ(e.records_lost, 2u);
        EXPECT_NE(std::string(e.what()).find("gap"), std::string::npos) << e.what();
        EXPECT_NE(std::string(e.what()).find((dir / "j").string()), std::string::npos) << e.what();
    }
}

TEST(AtomicFile, AFailedWriteLeavesTheOldFileAndNoTemp) {
    const auto dir = fresh_dir("atomic_full");
    write_file_atomically(dir / "s.json", "old");
    {
        file_size_limit limit(100);
        try {
            write_file_atomically(dir / "s.json", std::string(1000, 'x'));
            FAIL() << "the write should fail";
        } catch (const storage_error& e) {
            EXPECT_NE(std::string(e.what()).find("s.json"), std::string::npos) << e.what();
        }
    }
    EXPECT_EQ(read_all(dir / "s.json"), "old");
    EXPECT_FALSE(fs::exists(temp_path_for(dir / "s.json")));
}

TEST(AtomicFile, KeepAsideNeverOverwritesAnEarlierCopy) {
    const auto dir = fresh_dir("aside");
    std::ofstream(dir / "f") << "one";
    EXPECT_EQ(keep_aside(dir / "f", /*copy=*/true), dir / "f.damaged");
    EXPECT_EQ(keep_aside(dir / "f", /*copy=*/false), dir / "f.damaged.1");
    EXPECT_FALSE(fs::exists(dir / "f"));
    EXPECT_EQ(read_all(dir / "f.damaged"), "one");
    EXPECT_EQ(read_all(dir / "f.damaged.1"), "one");
}

TEST(Journal, DropPrefixKeepsTheRecordsAfterItAndAppendsGoOn) {
    const auto dir = fresh_dir("drop_prefix");
    journal_writer w(dir / "j", fsync_policy::always);
    std::uint64_t seam = 0;
    for (int seq = 1; seq <= 5; ++seq) {
        w.append({{"seq", seq}, {"tick", seq}});
        if (seq == 3) seam = w.bytes();  // a background snapshot taken here holds records 1..3
    }
    const auto before = w.bytes();
    w.drop_prefix(seam);
    EXPECT_EQ(w.bytes(), before - seam);
    w.append({{"seq", 6}, {"tick", 6}});  // lands in the new file, after the kept tail
    const auto j = read_journal(dir / "j");
    ASSERT_EQ(j.size(), 3u);
    EXPECT_EQ(j.record(0)["seq"], 4);
    EXPECT_EQ(j.record(2)["seq"], 6);
    EXPECT_FALSE(j.torn_tail);
    EXPECT_EQ(j.valid_bytes, w.bytes());
    EXPECT_EQ(remove_stale_temp_files(dir), 0u);  // the temp file became the journal
    w.drop_prefix(w.bytes());                     // everything included: emptied
    EXPECT_EQ(w.bytes(), 0u);
    EXPECT_TRUE(read_journal(dir / "j").empty());
    fs::remove_all(dir);
}

namespace {
/// @brief The journal line of the record `text` as written (encode_record takes a json, which
/// cannot hold a repeated key), with its checksum right.
std::string checked_line(const std::string& text) {
    char head[10];
    std::snprintf(head, sizeof head, "%08x ", crc32(text));
    return std::string(head, 9) + text + '\n';
}
/// @brief A journal of the one record `text`, with its checksum right: only the record's shape decides.
journal_contents read_one(const fs::path& dir, const std::string& text) {
    std::ofstream(dir / "j", std::ios::binary | std::ios::trunc) << checked_line(text);
    return read_journal(dir / "j");
}
}  // namespace

TEST(Journal, RecordsAreReadAsJsonParseReadsThem) {
    // simdjson reads the records; where it might read differently from nlohmann (a \u escape, a
    // "-0"), the answer must still be nlohmann's: seq and tick unsigned integers, the last of a
    // repeated key counting, "method" only at the top marking a request.
    const auto dir = fresh_dir("record_forms");
    struct row {
        std::string text;
        bool good;
        bool request;
        std::uint64_t seq;
    };
    const std::vector<row> rows = {
        {R"({"seq":1,"tick":0})", true, false, 1},
        {R"({"seq":2,"tick":0,"method":"world.spawn_entity"})", true, true, 2},
        {R"({"seq":3,"tick":0,"method":"\u0078"})", true, true, 3},  // read by the SAX check
        {R"({"seq":4,"tick":0,"params":{"method":"x"}})", true, false, 4},
        {R"({"seq":"x","seq":5,"tick":0})", true, false, 5},
        {R"({"seq":18446744073709551615,"tick":0})", true, false, 18446744073709551615ULL},
        {R"({"seq":6,"seq":"x","tick":0})", false, false, 0},
        {R"({"seq":-0,"tick":0})", false, false, 0},
        {R"({"seq":-1,"tick":0})", false, false, 0},
        {R"({"seq":1.0,"tick":0})", false, false, 0},
        {R"({"seq":1,"tick":"0"})", false, false, 0},
        {R"({"seq":1})", false, false, 0},
        {R"({"seq":1,"tick":0,"method":"\ud800"})", false, false, 0},  // a lone surrogate: not JSON
        {R"([{"seq":1,"tick":0}])", false, false, 0},
    };
    for (const auto& r : rows) {
        SCOPED_TRACE(r.text);
        if (!r.good) {
            EXPECT_THROW((void)read_one(dir, r.text), journal_error);
            continue;
        }
        const auto got = read_one(dir, r.text);
        ASSERT_EQ(got.size(), 1u);
        EXPECT_EQ(got.seqs[0], r.seq);
        EXPECT_EQ(got.ticks[0], 0u);
        EXPECT_EQ(got.requests[0], r.request);
        EXPECT_EQ(got.record(0), json::parse(r.text));
    }
}

TEST(JournalReader, ParsesARequestInThePassThatChecksItAsJsonParseWouldRead) {
    const auto dir = fresh_dir("reader_parse");
    const json spawn = {{"components", {{"Position", {{"x", 1.5}, {"y", -2}}}, {"Tag", json::object()}}}};
    {
        journal_writer w(dir / "j", fsync_policy::never);
        w.append({{"seq", 1}, {"tick", 0}, {"method", "world.spawn_entity"}, {"params", spawn}});
        w.append({{"seq", 2}, {"tick", 0}, {"method", "world.spawn_entity"}, {"params", spawn}});
        w.append({{"seq", 3}, {"tick", 1}});
        w.append({{"seq", 4}, {"tick", 1}, {"method", "world.info"}});  // no params
    }
    {  // simdjson's path, and nlohmann's for a record simdjson might read otherwise (a \u escape)
        const std::string odd =
            R"({"seq":5,"tick":1,"method":"\u0078","params":{"a":"\u00e9"},"params":[1]})";
        std::ofstream(dir / "j", std::ios::binary | std::ios::app) << checked_line(odd);
    }
    journal_reader reader(dir / "j");
    EXPECT_EQ(reader.records(), 5u);
    EXPECT_FALSE(reader.torn_tail());
    journal_record r;
    ASSERT_TRUE(reader.next(r, /*parse_after=*/1));
    EXPECT_EQ(r.seq, 1u);
    EXPECT_TRUE(r.request);
    EXPECT_TRUE(r.method.empty()) << "in the snapshot already: not parsed";
    EXPECT_TRUE(r.params.is_null());
    ASSERT_TRUE(reader.next(r, 1));
    EXPECT_EQ(r.method, "world.spawn_entity");
    EXPECT_EQ(r.params, spawn);
    EXPECT_EQ(r.params.dump(), spawn.dump()) << "types too: -2 signed, 1.5 a double";
    ASSERT_TRUE(reader.next(r, 1));
    EXPECT_FALSE(r.request);
    EXPECT_EQ(r.tick, 1u);
    EXPECT_TRUE(r.params.is_null()) << "the reused record's old params are gone";
    ASSERT_TRUE(reader.next(r, 1));
    EXPECT_EQ(r.method, "world.info");
    EXPECT_EQ(r.params, json::object()) << "no params read as {}, as the dispatcher reads them";
    ASSERT_TRUE(reader.next(r, 1));
    EXPECT_EQ(r.method, "x");
    EXPECT_EQ(r.params, json::array({1})) << "a repeated key's last value counts";
    EXPECT_FALSE(reader.next(r, 1));
    fs::remove_all(dir);
}

TEST(JournalReader, ARequestWhoseMethodIsNotTextIsDamageWhereItIsParsed) {
    const auto dir = fresh_dir("reader_method");
    {
        journal_writer w(dir / "j", fsync_policy::never);
        w.append({{"seq", 1}, {"tick", 0}});
        w.append({{"seq", 2}, {"tick", 0}, {"method", 7}, {"params", json::object()}});
    }
    const auto second = read_all(dir / "j").find('\n') + 1;
    EXPECT_EQ(read_journal(dir / "j").size(), 2u) << "checking alone reads it, as before";
    journal_reader reader(dir / "j");
    journal_record r;
    ASSERT_TRUE(reader.next(r, 0));
    try {
        (void)reader.next(r, 0);
        ADD_FAILURE() << "a method of 7 was read";
    } catch (const journal_error& e) {
        EXPECT_EQ(e.offset, second);
        EXPECT_EQ(e.records_lost, 1u);
        EXPECT_NE(std::string(e.what()).find("method is not a string"), std::string::npos) << e.what();
    }
    fs::remove_all(dir);
}

TEST(JournalReader, FindsATornTailUpFrontAndNeverReturnsIt) {
    const auto dir = fresh_dir("reader_torn");
    {
        journal_writer w(dir / "j", fsync_policy::never);
        w.append({{"seq", 1}, {"tick", 0}});
    }
    const auto whole = fs::file_size(dir / "j");
    std::ofstream(dir / "j", std::ios::binary | std::ios::app) << "0000000";  // a crash mid-write
    journal_reader reader(dir / "j");
    EXPECT_TRUE(reader.torn_tail());
    EXPECT_EQ(reader.valid_bytes(), whole);
    EXPECT_EQ(reader.records(), 1u);
    journal_record r;
    EXPECT_TRUE(reader.next(r));
    EXPECT_FALSE(reader.next(r));
    fs::remove_all(dir);
}
