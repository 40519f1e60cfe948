// Damaged data files against the real ecsd: each kind of damage is named (file and byte offset),
// start-up refuses without --repair and says what --repair would lose; with --repair it starts and
// logs what was lost. world.load on a damaged snapshot answers storage_error.
#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <cstring>
#include <filesystem>
#include <fstream>
#include <thread>

#include <gtest/gtest.h>

#include "helpers.hpp"

extern char** environ;

namespace ecsd::test {
namespace {

namespace fs = std::filesystem;

struct run_result {
    int code = -1;       ///< exit code, -1 when it did not exit by itself within the limit
    std::string output;  ///< stdout and stderr together
};

/// @brief Runs ecsd with these arguments until it exits (or `limit`, then SIGKILL); returns its exit
/// code and everything it printed. For start-ups that must refuse.
run_result run_ecsd(const std::vector<std::string>& args,
                    std::chrono::milliseconds limit = std::chrono::seconds(10)) {
    std::vector<std::string> argv{ecsd_server::binary(), "--port", "0", "--log-level", "warn"};
    argv.insert(argv.end(), args.begin(), args.end());
    std::vector<char*> c_argv;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e)
        if (std::strncmp(*e, "ECSD_", 5) != 0) env.emplace_back(*e);
    std::vector<char*> c_env;
    for (auto& e : env) c_env.push_back(e.data());
    c_env.push_back(nullptr);
    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::dup2(out[1], STDOUT_FILENO);
        ::dup2(out[1], STDERR_FILENO);
        ::execve(c_argv[0], c_argv.data(), c_env.data());
        ::_exit(127);
    }
    ::close(out[1]);
    run_result r;
    const auto deadline = std::chrono::steady_clock::now() + limit;
    bool killed = false;
    for (;;) {
        pollfd p{out[0], POLLIN, 0};
        if (::poll(&p, 1, 50) > 0) {
            char buf[4096];
            const auto n = ::read(out[0], buf, sizeof buf);
            if (n > 0) {
                r.output.append(buf, static_cast<std::size_t>(n));
                continue;
            }
            if (n == 0) break;
        }
        if (!killed && std::chrono::steady_clock::now() > deadline) {
            ::kill(pid, SIGKILL);
            killed = true;
        }
    }
    ::close(out[0]);
    int status = 0;
    ::waitpid(pid, &status, 0);
    if (!killed && WIFEXITED(status)) r.code = WEXITSTATUS(status);
    return r;
}

std::string read_all(const fs::path& p) {
    std::ifstream in(p, std::ios::binary);
    return {std::istreambuf_iterator<char>(in), {}};
}

void write_all(const fs::path& p, const std::string& data) {
    std::ofstream(p, std::ios::binary | std::ios::trunc) << data;
}

/// @brief Byte offset of the start of line `n` (0-based) of a text.
std::size_t line_offset(const std::string& text, int n) {
    std::size_t at = 0;
    for (int i = 0; i < n; ++i) at = text.find('\n', at) + 1;
    return at;
}

class PersistenceDamage : public testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("ecsd_damage_it_" + std::to_string(::getpid()) + "_" +
                                            testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
        fs::create_directories(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::vector<std::string> args(std::vector<std::string> more = {}) const {
        std::vector<std::string> a{"--data-dir", dir_.string(), "--appendfsync",     "always",
                                   "--autosave", "0",           "--snapshot-format", format_};
        a.insert(a.end(), more.begin(), more.end());
        return a;
    }
    /// @brief A paused default world with `n` entities (Health.hp = i), journaled only (kill -9):
    /// the journal holds the pause (record 1) then one spawn per record.
    std::vector<std::uint64_t> journaled_world(int n) {
        std::vector<std::uint64_t> ids;
        ecsd_server server(args());
        line_client c(server.port());
        (void)c.result("world.pause");
        for (int i = 0; i < n; ++i)
            ids.push_back(
                c.result("world.spawn_entity", {{"components", {{"Health", {{"hp", i}}}}}})["entity"]
                    .get<std::uint64_t>());
        server.stop(SIGKILL);
        return ids;
    }
    /// @brief A default world with entities saved in its snapshot (SIGTERM saves), journal empty.
    void saved_world(int n) {
        ecsd_server server(args());
        line_client c(server.port());
        (void)c.result("world.pause");
        for (int i = 0; i < n; ++i)
            (void)c.result("world.spawn_entity",
                           {{"components", {{"Position", {{"x", 1000 + i}, {"y", 5}}}}}});
        EXPECT_EQ(server.stop(SIGTERM).code, 0);
    }
    /// @brief Start-up without --repair is refused, and the output names every one of `needles`
    /// (the file, the byte offset, what --repair would lose).
    void expect_refused(const std::vector<std::string>& needles) const {
        const auto refused = run_ecsd(args());
        EXPECT_NE(refused.code, 0) << refused.output;
        for (const auto& n : needles)
            EXPECT_NE(refused.output.find(n), std::string::npos) << "no '" << n << "' in: " << refused.output;
    }
    /// @brief Options that start ecsd with --repair, logging to `log`.
    [[nodiscard]] server_options repair_options(const fs::path& log) const {
        server_options o;
        o.args = args({"--repair"});
        o.log_path = log.string();
        return o;
    }
    /// @brief Starts with --repair (logging to `log`): saved_world(3)'s entities load as they are,
    /// with the value changed to x = 1007 kept.
    void expect_repair_keeps_the_changed_value(const fs::path& log) const {
        ecsd_server server(repair_options(log));
        line_client c(server.port());
        const auto rows = c.result("world.query", {{"query", "Position"}, {"limit", 10}})["entities"];
        ASSERT_EQ(rows.size(), 3u);
        bool changed_value_kept = false;
        for (const auto& r : rows) changed_value_kept |= r["components"]["Position"]["x"] == 1007.0;
        EXPECT_TRUE(changed_value_kept) << rows.dump();
    }
    static std::size_t entity_count(line_client& c) {
        return c.result("world.info")["entities"].get<std::size_t>();
    }

    fs::path snapshot() const {
        return dir_ / (format_ == "json" ? "default.snapshot.json" : "default.snapshot");
    }
    fs::path journal() const { return dir_ / "default.journal"; }
    fs::path dir_;
    /// @brief The form snapshots are written in: most damage here is edited into JSON text.
    std::string format_ = "json";
};

TEST_F(PersistenceDamage, SnapshotWithAChangedDigitRefusesToStartAndRepairLoadsItAsItIs) {
    saved_world(3);
    std::string text = read_all(snapshot());
    const auto at = text.find("1001");
    ASSERT_NE(at, std::string::npos) << text;
    text[at + 3] = '7';  // x 1001 -> 1007: valid JSON, a different world
    write_all(snapshot(), text);
    const auto checksum_at = text.rfind(",\"checksum\"");

    expect_refused(
        {snapshot().string(), "checksum mismatch", "byte offset " + std::to_string(checksum_at), "--repair"});

    const auto log = dir_ / "repair.log";
    expect_repair_keeps_the_changed_value(log);
    const auto said = read_all(log);
    EXPECT_NE(said.find("--repair: loaded as it is"), std::string::npos) << said;
    EXPECT_TRUE(fs::exists(snapshot().string() + ".damaged"));  // the file as found is kept
    // The save at exit wrote a good snapshot: the next start needs no --repair.
    ecsd_server again(args());
}

TEST_F(PersistenceDamage, SnapshotThatIsNotJsonRefusesAndRepairMovesItAsideAndStartsEmpty) {
    saved_world(3);
    const std::string text = read_all(snapshot());
    write_all(snapshot(), text.substr(0, text.size() / 2));  // cut in half
    expect_refused({snapshot().string(), "byte offset", "would start empty"});

    const auto log = dir_ / "repair.log";
    ecsd_server server(repair_options(log));
    line_client c(server.port());
    EXPECT_EQ(entity_count(c), 0u);
    EXPECT_TRUE(fs::exists(snapshot().string() + ".damaged"));
    EXPECT_EQ(read_all(snapshot().string() + ".damaged"),
              text.substr(0, text.size() / 2));  // moved, not deleted
    EXPECT_NE(read_all(log).find("moved it aside"), std::string::npos) << read_all(log);
}

/// @brief Where the 8 bytes of `value` (a double) first lie in `bytes`.
std::size_t find_double(const std::string& bytes, double value) {
    std::string needle(sizeof value, '\0');
    std::memcpy(needle.data(), &value, sizeof value);
    return bytes.find(needle);
}

TEST_F(PersistenceDamage, BinarySnapshotWithAChangedValueRefusesToStartAndRepairLoadsItAsItIs) {
    format_ = "binary";
    saved_world(3);
    std::string bytes = read_all(snapshot());
    ASSERT_EQ(bytes.substr(0, 8), "ECSDSNAP");
    const auto at = find_double(bytes, 1001.0);
    ASSERT_NE(at, std::string::npos);
    const double changed = 1007.0;
    std::memcpy(bytes.data() + at, &changed, sizeof changed);
    write_all(snapshot(), bytes);

    expect_refused({snapshot().string(), "checksum mismatch",
                    "byte offset " + std::to_string(bytes.size() - 4), "--repair"});
    const auto log = dir_ / "repair.log";
    expect_repair_keeps_the_changed_value(log);
    EXPECT_NE(read_all(log).find("--repair: loaded as it is"), std::string::npos) << read_all(log);
    EXPECT_TRUE(fs::exists(snapshot().string() + ".damaged"));
    ecsd_server again(args());
}

TEST_F(PersistenceDamage, BinarySnapshotCutShortRefusesAndRepairMovesItAsideAndStartsEmpty) {
    format_ = "binary";
    saved_world(3);
    const std::string bytes = read_all(snapshot());
    const auto cut = bytes.substr(0, bytes.size() / 2);
    write_all(snapshot(), cut);
    expect_refused({snapshot().string(), "cut short", "would start empty"});

    const auto log = dir_ / "repair.log";
    ecsd_server server(repair_options(log));
    line_client c(server.port());
    EXPECT_EQ(entity_count(c), 0u);
    EXPECT_EQ(read_all(snapshot().string() + ".damaged"), cut);  // moved, not deleted
    EXPECT_NE(read_all(log).find("moved it aside"), std::string::npos) << read_all(log);
}

TEST_F(PersistenceDamage, BinarySnapshotOfANewerVersionRefusesEvenWithRepair) {
    format_ = "binary";
    saved_world(1);
    std::string bytes = read_all(snapshot());
    bytes[8] = 2;  // the layout version, little-endian
    write_all(snapshot(), bytes);
    expect_refused({snapshot().string(), "version 2 is newer", "upgrade ecsd"});
    const auto repaired = run_ecsd(args({"--repair"}));
    EXPECT_NE(repaired.code, 0) << repaired.output;
    EXPECT_EQ(read_all(snapshot()), bytes);  // never moved aside: a newer ecsd reads it
}

TEST_F(PersistenceDamage, JournalWithoutItsSnapshotRefusesToStartAndRepairMovesItAside) {
    {
        ecsd_server server(args());
        line_client c(server.port());
        (void)c.result("world.create", {{"world", "arena"}, {"paused", true}});
        for (int i = 0; i < 4; ++i)
            (void)c.result("world.spawn_entity",
                           {{"world", "arena"}, {"components", {{"Health", json::object()}}}});
        server.stop(SIGKILL);
    }
    const auto arena_journal = dir_ / "arena.journal";
    ASSERT_GT(fs::file_size(arena_journal), 0u);
    fs::remove(dir_ / "arena.snapshot.json");

    expect_refused({arena_journal.string(), "no snapshot", "byte offset 0", "--repair"});
    EXPECT_TRUE(fs::exists(arena_journal));  // refusing touches nothing

    const auto log = dir_ / "repair.log";
    ecsd_server server(repair_options(log));
    line_client c(server.port());
    EXPECT_EQ(reason_of(c.call("world.info", {{"world", "arena"}})), "no_such_world");
    EXPECT_FALSE(fs::exists(arena_journal));
    EXPECT_TRUE(fs::exists(arena_journal.string() + ".damaged"));
    EXPECT_NE(read_all(log).find("4 records are lost"), std::string::npos) << read_all(log);
}

TEST_F(PersistenceDamage, GapInJournalSequenceRefusesAndRepairCutsThere) {
    (void)journaled_world(5);  // records: 1 pause, 2..6 spawns
    std::string text = read_all(journal());
    const auto third = line_offset(text, 3);   // record 4
    const auto fourth = line_offset(text, 4);  // record 5: follows record 3 once record 4 is gone
    text.erase(third, fourth - third);
    write_all(journal(), text);

    expect_refused({journal().string(), "sequence gap", "byte offset " + std::to_string(third),
                    "the 2 records"});  // what --repair loses

    const auto log = dir_ / "repair.log";
    ecsd_server server(repair_options(log));
    line_client c(server.port());
    EXPECT_EQ(entity_count(c), 2u);  // records 2 and 3
    const auto said = read_all(log);
    EXPECT_NE(said.find("journal truncated at byte offset " + std::to_string(third) + ", 2 records"),
              std::string::npos)
        << said;
    EXPECT_EQ(read_all(journal().string() + ".damaged"), text);  // the journal as found is kept
}

TEST_F(PersistenceDamage, CompleteLastRecordWithAFlippedBitRefusesAndRepairDropsIt) {
    const auto ids = journaled_world(3);  // records: 1 pause, 2..4 spawns
    std::string text = read_all(journal());
    const auto last = line_offset(text, 3);
    ASSERT_EQ(text.back(), '\n');
    text[last + 30] ^= 0x04;  // the record is complete (newline and all): this is damage, not a torn write
    write_all(journal(), text);

    expect_refused({journal().string(), "corrupt journal record", "byte offset " + std::to_string(last)});

    const auto log = dir_ / "repair.log";
    ecsd_server server(repair_options(log));
    line_client c(server.port());
    EXPECT_EQ(entity_count(c), 2u);
    EXPECT_EQ(reason_of(c.call("world.get_components", {{"entity", ids[2]}})), "no_such_entity");
    EXPECT_NE(read_all(log).find("1 record ("), std::string::npos) << read_all(log);
}

TEST_F(PersistenceDamage, TornLastRecordIsStillDroppedWithoutRepair) {
    (void)journaled_world(3);
    const std::string text = read_all(journal());
    write_all(journal(), text.substr(0, text.size() - 10));  // no final newline: a crash mid-write
    ecsd_server server(args());
    line_client c(server.port());
    EXPECT_EQ(entity_count(c), 2u);
}

namespace {
/// @brief One journal line as ecsd writes it: the record's CRC-32 in hex, a space, its text, LF.
std::string journal_line(const json& record) {
    const auto text = record.dump();
    char head[10];
    std::snprintf(head, sizeof head, "%08x ", crc32_of(text));
    return std::string(head, 9) + text + "\n";
}
}  // namespace

// Start-up reads the journal on one thread while it applies on another, a batch of records at a
// time: damage far into a long journal is still found in its place, and a start-up that refuses
// writes nothing (the torn tail it would drop on success stays).
TEST_F(PersistenceDamage, DamageDeepInALongJournalRefusesWithoutTouchingItAndRepairCutsThere) {
    (void)journaled_world(0);  // record 1: the pause
    std::string text = read_all(journal());
    const auto tick = json::parse(text.substr(9))["tick"];
    constexpr int spawns = 3000;
    constexpr int damaged = 2500;  // record 2 + 2500: several batches in
    std::size_t damaged_at = 0;
    for (int i = 0; i < spawns; ++i) {
        if (i == damaged) damaged_at = text.size();
        std::string line = journal_line({{"seq", 2 + i},
                                         {"tick", tick},
                                         {"method", "world.spawn_entity"},
                                         {"params", {{"components", {{"Health", {{"hp", i}}}}}}}});
        if (i == damaged) line[40] ^= 0x01;
        text += line;
    }
    text += "0123abcd {\"seq\"";  // and a torn tail
    write_all(journal(), text);

    expect_refused({journal().string(), "corrupt journal record", "byte offset " + std::to_string(damaged_at),
                    "the " + std::to_string(spawns - damaged + 1) + " records"});  // the torn one counts
    EXPECT_EQ(read_all(journal()), text) << "a refused start-up changed the journal";

    const auto log = dir_ / "repair.log";
    ecsd_server server(repair_options(log));
    line_client c(server.port());
    EXPECT_EQ(entity_count(c), static_cast<std::size_t>(damaged));
    EXPECT_EQ(fs::file_size(journal()), damaged_at);
    const auto q = c.result("world.query", {{"query", "Health.hp >= 2499"}});
    ASSERT_EQ(q["entities"].size(), 1u) << q.dump();
    EXPECT_EQ(q["entities"][0]["components"]["Health"]["hp"], 2499);
}

TEST_F(PersistenceDamage, WorldLoadOfADamagedSnapshotAnswersStorageError) {
    ecsd_server server(args());
    line_client c(server.port());
    (void)c.result("world.pause");
    (void)c.result("world.spawn_entity", {{"components", {{"Position", {{"x", 4321}}}}}});
    (void)c.result("world.save");
    std::string text = read_all(snapshot());
    const auto at = text.find("4321");
    ASSERT_NE(at, std::string::npos);
    text[at] = '5';
    write_all(snapshot(), text);
    const auto r = c.call("world.load");
    EXPECT_EQ(reason_of(r), "storage_error") << r.dump();
    const std::string message = r["error"]["message"];
    EXPECT_NE(message.find(snapshot().string()), std::string::npos) << message;
    EXPECT_NE(message.find("checksum mismatch"), std::string::npos) << message;
    // The world is left as it was.
    EXPECT_EQ(c.result("world.query", {{"query", "Position"}})["entities"][0]["components"]["Position"]["x"],
              4321.0);
    (void)c.result("world.save");  // a fresh snapshot, so the destructor's exit is clean
}

}  // namespace
}  // namespace ecsd::test
