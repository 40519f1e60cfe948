// Persistence against the real ecsd: restarts keep ids and state; kill -9 loses nothing acknowledged.
#include <algorithm>
#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <set>
#include <thread>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

namespace fs = std::filesystem;

class Persistence : public testing::Test {
  protected:
    void SetUp() override {
        dir_ = fs::temp_directory_path() / ("ecsd_persist_it_" + std::to_string(::getpid()) + "_" +
                                            testing::UnitTest::GetInstance()->current_test_info()->name());
        fs::remove_all(dir_);
    }
    void TearDown() override { fs::remove_all(dir_); }
    std::vector<std::string> args(const std::string& autosave = "10") const {
        return {"--data-dir", dir_.string(), "--appendfsync", "always", "--autosave", autosave};
    }
    static std::size_t temp_files(const fs::path& dir) {
        std::size_t n = 0;
        for (const auto& e : fs::directory_iterator(dir)) n += e.path().filename().string().ends_with(".tmp");
        return n;
    }
    fs::path dir_;
};

TEST_F(Persistence, RestartKeepsIdsHashAndStaleIds) {
    std::vector<std::uint64_t> ids;
    std::string hash;
    std::uint64_t tick = 0;
    {
        ecsd_server server(args());
        line_client c(server.port());
        ASSERT_TRUE(c.result("world.pause").is_object());
        (void)c.result("world.register_component", {{"name", "Score"}, {"fields", {{"points", 0}}}});
        for (int i = 0; i < 40; ++i)
            ids.push_back(c.result("world.spawn_entity", {{"components",
                                                           {{"Position", {{"x", i}}},
                                                            {"Velocity", {{"y", 1}}},
                                                            {"RigidBody", json::object()},
                                                            {"Score", {{"points", i}}}}}})["entity"]
                              .get<std::uint64_t>());
        for (int i = 0; i < 40; i += 4)
            (void)c.result("world.despawn_entity", {{"entity", ids[static_cast<std::size_t>(i)]}});
        (void)c.result("world.step", {{"ticks", 25}});
        const auto h = c.result("world.hash");
        hash = h["hash"];
        tick = h["tick"];
        EXPECT_EQ(server.stop(SIGTERM).code, 0);
    }
    ecsd_server server(args());
    line_client c(server.port());
    const auto h = c.result("world.hash");
    EXPECT_EQ(h["tick"], tick);
    EXPECT_EQ(h["hash"], hash);
    EXPECT_EQ(reason_of(c.call("world.get_components", {{"entity", ids[0]}})),
              "no_such_entity");  // still stale
    EXPECT_EQ(c.result("world.get_components", {{"entity", ids[1]}})["components"]["Score"]["points"], 1.0);
    const auto fresh =
        c.result("world.spawn_entity", {{"components", json::object()}})["entity"].get<std::uint64_t>();
    EXPECT_EQ(std::count(ids.begin(), ids.end(), fresh), 0);  // never an id handed out before the restart
}

TEST_F(Persistence, KillNineReplaysTheJournalToTheSameHash) {
    std::string hash;
    {
        ecsd_server server(args());
        line_client c(server.port());
        ASSERT_TRUE(c.result("world.pause").is_object());
        for (int i = 0; i < 30; ++i)
            (void)c.result("world.spawn_entity", {{"components",
                                                   {{"Position", {{"x", i * 0.7}}},
                                                    {"Velocity", {{"x", 1}}},
                                                    {"RigidBody", json::object()},
                                                    {"Collider", json::object()}}}});
        (void)c.result("world.step", {{"ticks", 40}});
        (void)c.result("world.cast_spell", {{"caster", 4294967296u}, {"spell", "freeze"}});
        (void)c.result("world.step", {{"ticks", 3}});
        hash = c.result("world.hash")["hash"];
        server.stop(SIGKILL);  // no final save: only the journal has all of this
    }
    ecsd_server server(args());
    line_client c(server.port());
    EXPECT_EQ(c.result("world.hash")["hash"], hash);
    EXPECT_EQ(c.result("world.info")["tick"], 43);
}

TEST_F(Persistence, KillNineDuringHeavyWritesAndSavesLosesNothingAcknowledged) {
    std::set<std::uint64_t> acknowledged;
    for (int round = 0; round < 6; ++round) {
        ecsd_server server(args("0.02"));  // snapshots every 20 ms: kills land during saves too
        line_client c(server.port());
        // Pipelined spawns: every response that arrives is an acknowledged write.
        const int burst = 300;
        std::string batch;
        for (int i = 0; i < burst; ++i)
            batch +=
                request_line(i, "world.spawn_entity", {{"components", {{"Health", {{"hp", round}}}}}}) + "\n";
        ASSERT_TRUE(c.send_raw(batch));
        const int read_before_kill = 120 + round * 30;
        for (int i = 0; i < read_before_kill; ++i) {
            const auto line = c.read_line();
            ASSERT_TRUE(line.has_value());
            acknowledged.insert(json::parse(*line)["result"]["entity"].get<std::uint64_t>());
        }
        server.stop(SIGKILL);
        ASSERT_LE(temp_files(dir_), 1u);  // at most the one save that was cut off
    }
    ecsd_server server(args());
    line_client c(server.port());
    EXPECT_EQ(temp_files(dir_), 0u);  // start-up cleans what the kills left
    const auto all = c.result("world.query", {{"query", "Health"}, {"limit", 10000}});
    std::set<std::uint64_t> present;
    for (const auto& row : all["entities"]) present.insert(row["entity"].get<std::uint64_t>());
    for (auto id : acknowledged)
        EXPECT_TRUE(present.count(id)) << "acknowledged entity " << id << " was lost";
}

TEST_F(Persistence, BackgroundAutosaveMeetsTheJournalAtTheSeam) {
    // Autosave forks a child every 50 ms while requests keep coming: records written while a child
    // writes its snapshot must stay in the journal, and those the snapshot holds must leave it.
    std::string hash;
    std::uint64_t tick = 0;
    std::uint64_t written = 0;
    {
        ecsd_server server(args("0.05"));
        line_client c(server.port());
        ASSERT_TRUE(c.result("world.pause").is_object());
        const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(1500);
        for (int i = 0; std::chrono::steady_clock::now() < until || i < 200; ++i) {
            const auto e = c.result(
                "world.spawn_entity",
                {{"components",
                  {{"Health", {{"hp", i}}}, {"Position", {{"x", i}}}, {"Velocity", {{"x", 1}}}}}})["entity"];
            if (i % 3 == 0)
                (void)c.result("world.mutate_components",
                               {{"entity", e}, {"component", "Health"}, {"path", "hp"}, {"value", -i}});
            if (i % 10 == 0) (void)c.result("world.step", {{"ticks", 1}});
            ++written;
        }
        const auto h = c.result("world.hash");
        hash = h["hash"];
        tick = h["tick"];
        // The journal was shortened by a background save while the writes went on: it no longer
        // starts at record 1.
        std::ifstream journal(dir_ / "default.journal");
        std::string first;
        ASSERT_TRUE(std::getline(journal, first));
        EXPECT_GT(json::parse(first.substr(9))["seq"].get<std::uint64_t>(), 1u) << first;
        server.stop(SIGKILL);
    }
    ecsd_server server(args());
    line_client c(server.port());
    const auto h = c.result("world.hash");
    EXPECT_EQ(h["tick"], tick);
    EXPECT_EQ(h["hash"], hash);
    EXPECT_EQ(c.result("world.query", {{"query", "Health"}, {"limit", 1}})["total"], written);
}

TEST_F(Persistence, SaveAndLoadOnDemand) {
    ecsd_server server(args());
    line_client c(server.port());
    ASSERT_TRUE(c.result("world.pause").is_object());
    const auto e = c.result("world.spawn_entity", {{"components", {{"Health", json::object()}}}})["entity"];
    const auto saved = c.result("world.save");
    EXPECT_TRUE(fs::exists(saved["path"].get<std::string>()));
    (void)c.result("world.mutate_components",
                   {{"entity", e}, {"component", "Health"}, {"path", "hp"}, {"value", 7}});
    const auto loaded = c.result("world.load");
    EXPECT_EQ(loaded["replayed"], 1);  // the mutate came back from the journal
    EXPECT_EQ(c.result("world.get_components", {{"entity", e}})["components"]["Health"]["hp"], 7.0);
}

TEST_F(Persistence, WithoutDataDirNothingIsWrittenAndSaveSaysWhy) {
    ecsd_server server;
    line_client c(server.port());
    EXPECT_EQ(reason_of(c.call("world.save")), "invalid_params");
}

/// @brief The first bytes of a file.
std::string head_of(const fs::path& p, std::size_t n) {
    std::string out(n, '\0');
    std::ifstream(p, std::ios::binary).read(out.data(), static_cast<std::streamsize>(n));
    return out;
}

TEST_F(Persistence, SnapshotsAreBinaryByDefaultAndJsonOrZstdOnRequest) {
    const auto binary = dir_ / "default.snapshot";
    const auto text = dir_ / "default.snapshot.json";
    ecsd_server server(args("0"));
    line_client c(server.port());
    ASSERT_TRUE(c.result("world.pause").is_object());
    for (int i = 0; i < 20; ++i)
        (void)c.result(
            "world.spawn_entity",
            {{"components", {{"Position", {{"x", i}}}, {"Name", {{"name", "n" + std::to_string(i)}}}}}});
    const auto hash = c.result("world.hash")["hash"];

    auto saved = c.result("world.save");
    EXPECT_EQ(saved["format"], "binary");
    EXPECT_EQ(saved["path"], binary.string());
    EXPECT_EQ(head_of(binary, 8), "ECSDSNAP");
    EXPECT_EQ(saved["bytes"].get<std::uintmax_t>(), fs::file_size(binary));

    saved = c.result("world.save", {{"format", "json"}});
    EXPECT_EQ(saved["path"], text.string());
    EXPECT_FALSE(fs::exists(binary)) << "one snapshot per world: the other form is removed";
    std::ifstream in(text);
    const json doc = json::parse(in);
    EXPECT_EQ(doc["format"], "ecsd-snapshot");
    EXPECT_EQ(doc["entities"].size(), 20u);
    EXPECT_EQ(c.result("world.load")["entities"], 20);
    EXPECT_EQ(c.result("world.hash")["hash"], hash);

    saved = c.result("world.save", {{"format", "zstd"}});
    EXPECT_EQ(saved["path"], binary.string());
    EXPECT_FALSE(fs::exists(text));
    EXPECT_EQ(head_of(binary, 8), "ECSDSNAP");
    EXPECT_EQ(c.result("world.load")["entities"], 20);
    EXPECT_EQ(c.result("world.hash")["hash"], hash);

    EXPECT_EQ(reason_of(c.call("world.save", {{"format", "xml"}})), "invalid_params");
}

TEST_F(Persistence, ServerFormatSettingDecidesAutosavesAndEveryFormLoadsAtStartUp) {
    std::string hash;
    for (const char* format : {"zstd", "json", "binary"}) {
        auto a = args("0.05");
        a.insert(a.end(), {"--snapshot-format", format});
        ecsd_server server(a);
        line_client c(server.port());
        if (hash.empty()) {
            ASSERT_TRUE(c.result("world.pause").is_object());
            for (int i = 0; i < 30; ++i)
                (void)c.result("world.spawn_entity",
                               {{"components", {{"Velocity", {{"x", i}}}, {"Player", true}}}});
        }
        const auto h = c.result("world.hash")["hash"].get<std::string>();
        if (!hash.empty()) {
            EXPECT_EQ(h, hash) << "after a restart that saved " << format;
        }
        hash = h;
        // An autosave in this format comes within a few periods.
        const auto file =
            dir_ / (std::string("default.snapshot") + (std::string(format) == "json" ? ".json" : ""));
        const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(5);
        while (!fs::exists(file) && std::chrono::steady_clock::now() < deadline)
            std::this_thread::sleep_for(std::chrono::milliseconds(20));
        EXPECT_TRUE(fs::exists(file)) << format;
        EXPECT_EQ(server.stop(SIGTERM).code, 0);
        const auto other =
            std::string(format) == "json" ? dir_ / "default.snapshot" : dir_ / "default.snapshot.json";
        EXPECT_FALSE(fs::exists(other)) << "a " << format << " save leaves one snapshot";
    }
}

TEST_F(Persistence, WhenACrashLeftBothFormsTheNewerLoads) {
    const auto binary = dir_ / "default.snapshot";
    const auto text = dir_ / "default.snapshot.json";
    std::string hash;
    {
        ecsd_server server(args("0"));
        line_client c(server.port());
        ASSERT_TRUE(c.result("world.pause").is_object());
        (void)c.result("world.spawn_entity", {{"components", {{"Position", {{"x", 1}}}}}});
        (void)c.result("world.save", {{"format", "json"}});
        fs::copy_file(text, dir_ / "older.json");
        for (int i = 0; i < 5; ++i)
            (void)c.result("world.spawn_entity", {{"components", {{"Position", {{"x", i}}}}}});
        (void)c.result("world.save");  // binary, newer; the journal is emptied
        hash = c.result("world.hash")["hash"];
        server.stop(SIGKILL);
    }
    fs::copy_file(dir_ / "older.json", text);  // as if the removal of the JSON form never happened
    fs::remove(dir_ / "older.json");
    ecsd_server server(args("0"));
    line_client c(server.port());
    EXPECT_EQ(c.result("world.info")["entities"], 6);
    EXPECT_EQ(c.result("world.hash")["hash"], hash);
}

TEST_F(Persistence, CorruptSnapshotStopsStartUpWithAClearError) {
    fs::create_directories(dir_);
    std::ofstream(dir_ / "default.snapshot.json") << R"({"format": "ecsd-snapshot", "version": 99})";
    EXPECT_THROW(ecsd_server server(args()), std::runtime_error);
}

}  // namespace
}  // namespace ecsd::test
