// `ecsctl world move` between two real ecsd processes: a ticking world with watchers and a client
// writing to it all along moves with its ids, tick and hash; no acknowledged write is lost and every
// later one is refused; a move that fails halfway leaves the source as it was. And `ecsctl export` /
// `ecsctl import`: a world to a file (or a pipe) and back, in several chunks each way.

#include <arpa/inet.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <atomic>
#include <filesystem>
#include <fstream>
#include <map>
#include <memory>
#include <set>
#include <thread>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "ecsd_server.hpp"
#include "line_client.hpp"
#include "process.hpp"

namespace ecsd::test {
namespace {

using json = nlohmann::json;
using namespace std::chrono_literals;

std::unique_ptr<ecsd_server> start_ecsd(std::vector<std::string> args = {}) {
    server_options options;
    options.args = std::move(args);
    options.log_path = "/dev/null";
    return std::make_unique<ecsd_server>(options);
}

run_result move(const ecsd_server& from, const ecsd_server& to, const std::string& world,
                std::vector<std::string> extra = {}) {
    std::vector<std::string> argv = {ecsctl_path(),
                                     "--port",
                                     std::to_string(from.port()),
                                     "world",
                                     "move",
                                     world,
                                     "--to",
                                     "127.0.0.1:" + std::to_string(to.port())};
    argv.insert(argv.end(), extra.begin(), extra.end());
    return run(argv);
}

/// A ticking world of 300 moving entities on `server`.
void populate(line_client& c, const std::string& world) {
    ASSERT_TRUE(c.result("world.create", {{"world", world}, {"gravity", 0}}).is_object());
    json batch = json::array();
    for (int i = 0; i < 300; ++i)
        batch.push_back({{"Position", {{"x", i}, {"y", 0}}}, {"Velocity", {{"x", 1 + i % 3}, {"y", 0.5}}}});
    ASSERT_TRUE(c.call("world.spawn_entities", {{"world", world}, {"entities", batch}}).contains("result"));
}

std::set<std::uint64_t> ids_of(line_client& c, const std::string& world) {
    std::set<std::uint64_t> ids;
    const auto r = c.result("world.query", {{"world", world}, {"query", "*"}, {"limit", 10000}});
    for (const auto& e : r["entities"]) ids.insert(e["entity"].get<std::uint64_t>());
    return ids;
}

/// Spawns entities into `world` as fast as answers come, until told to stop: what was acknowledged
/// and why the rest was refused.
struct writer {
    std::vector<std::uint64_t> acknowledged;
    std::map<std::string, int> refused;
    std::atomic<bool> stop{false};
    std::thread thread;

    writer(int port, const std::string& world) {
        thread = std::thread([this, port, world] {
            line_client c(port);
            while (!stop) {
                const auto r =
                    c.call("world.spawn_entity",
                           {{"world", world}, {"components", {{"Position", {{"x", 0}, {"y", 0}}}}}});
                if (!r.is_object()) break;
                if (r.contains("result"))
                    acknowledged.push_back(r["result"]["entity"].get<std::uint64_t>());
                else
                    ++refused[r["error"]["data"]["reason"].get<std::string>()];
            }
        });
    }
    void finish() {
        stop = true;
        thread.join();
    }
};

TEST(WorldMove, ATickingWorldMovesWithItsIdsTickAndHashAndNoAcknowledgedWriteIsLost) {
    const auto src = start_ecsd();
    const auto dst = start_ecsd();
    line_client a(src->port());
    line_client b(dst->port());
    populate(a, "zone");
    std::this_thread::sleep_for(100ms);  // it ticks: the copy is of a world in motion

    writer w(src->port(), "zone");
    std::this_thread::sleep_for(100ms);
    const auto r = move(*src, *dst, "zone", {"--keep-source"});
    std::this_thread::sleep_for(100ms);
    w.finish();
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto moved = json::parse(r.out);
    EXPECT_EQ(moved["world"], "zone");
    EXPECT_EQ(moved["source"], "sealed");
    EXPECT_GT(moved["tick"].get<std::uint64_t>(), 0U);

    // The sealed source stays at the export's tick: its hash is the one the copy had there.
    const auto src_hash = a.result("world.hash", {{"world", "zone"}});
    EXPECT_EQ(src_hash["tick"], moved["tick"]);
    EXPECT_EQ(src_hash["hash"], moved["hash"]);
    std::this_thread::sleep_for(200ms);
    EXPECT_EQ(a.result("world.info", {{"world", "zone"}})["tick"], moved["tick"])
        << "a sealed world does not tick";
    // The copy ticks on from there, unpaused like its source.
    const auto info = b.result("world.info", {{"world", "zone"}});
    EXPECT_FALSE(info["paused"].get<bool>());
    EXPECT_GT(info["tick"].get<std::uint64_t>(), moved["tick"].get<std::uint64_t>());

    // Every acknowledged write is on the target with the same id; every later one was refused.
    const auto there = ids_of(b, "zone");
    EXPECT_EQ(there, ids_of(a, "zone"));
    EXPECT_EQ(there.size(), 300 + w.acknowledged.size());
    for (const auto id : w.acknowledged)
        EXPECT_EQ(there.count(id), 1U) << "acknowledged " << id << " was lost";
    EXPECT_GT(w.acknowledged.size(), 0U);
    EXPECT_GT(w.refused["world_sealed"], 0) << "writes after the copy are refused";
    EXPECT_EQ(w.refused.size(), 1U) << "no other refusal: " << json(w.refused).dump();
    // Reads still work on the sealed source; writes say why they fail.
    const auto write = a.call("world.step", {{"world", "zone"}});
    EXPECT_EQ(write["error"]["data"]["reason"], "world_sealed") << write.dump();
}

TEST(WorldMove, WatchersOfTheSourceAreToldWhereTheWorldWent) {
    const auto src = start_ecsd();
    const auto dst = start_ecsd();
    line_client a(src->port());
    populate(a, "zone");
    line_client watcher(src->port());
    const auto answer = watcher.call("world.watch", {{"world", "zone"}, {"query", "Position"}});
    ASSERT_TRUE(answer.contains("result")) << answer.dump();
    EXPECT_EQ(answer["result"]["entities"].size(), 300U);

    const auto r = move(*src, *dst, "zone");
    ASSERT_EQ(r.exit_code, 0) << r.err;
    const auto moved = json::parse(r.out);
    EXPECT_EQ(moved["source"], "destroyed");
    EXPECT_EQ(moved["entities"], 300);

    json last;
    for (int i = 0; i < 1000 && !last.is_object(); ++i) {
        const auto line = watcher.read_json(5s);
        ASSERT_TRUE(line.is_object()) << "no ended notification";
        if (line["params"].value("ended", false)) last = line["params"];
    }
    EXPECT_EQ(last["reason"], "world_moved");
    EXPECT_EQ(last["moved_to"], "127.0.0.1:" + std::to_string(dst->port()));
    EXPECT_EQ(a.call("world.info", {{"world", "zone"}})["error"]["data"]["reason"], "no_such_world");
    // The watcher follows it there.
    line_client there(dst->port());
    const auto again = there.call("world.watch", {{"world", "zone"}, {"query", "Position"}});
    ASSERT_TRUE(again.contains("result")) << again.dump();
    EXPECT_EQ(again["result"]["entities"].size(), 300U);
    EXPECT_GE(again["result"]["tick"].get<std::uint64_t>(), moved["tick"].get<std::uint64_t>());
}

TEST(WorldMove, AMoveThatFailsLeavesTheSourceTickingAndTakingWrites) {
    const auto src = start_ecsd();
    const auto dst = start_ecsd({"--max-worlds", "1"});  // its default world fills it: the import fails
    line_client a(src->port());
    populate(a, "zone");
    const auto before = a.result("world.info", {{"world", "zone"}})["tick"].get<std::uint64_t>();
    const auto r = move(*src, *dst, "zone");
    EXPECT_EQ(r.exit_code, 1) << r.out;
    EXPECT_TRUE(contains(r.err, "limit_reached")) << r.err;
    line_client b(dst->port());
    EXPECT_EQ(b.call("world.info", {{"world", "zone"}})["error"]["data"]["reason"], "no_such_world");
    // Unsealed: it ticks and takes writes again.
    EXPECT_TRUE(a.call("world.spawn_entity", {{"world", "zone"}}).contains("result"));
    std::this_thread::sleep_for(200ms);
    EXPECT_GT(a.result("world.info", {{"world", "zone"}})["tick"].get<std::uint64_t>(), before);

    // A target that already has the name is found before anything changes.
    const auto taken = move(*src, *dst, "default");
    EXPECT_EQ(taken.exit_code, 1) << taken.out;
    EXPECT_TRUE(contains(taken.err, "world_exists")) << taken.err;
    EXPECT_TRUE(a.call("world.spawn_entity", {}).contains("result"))
        << "the source default world was never sealed";
}

TEST(WorldMove, TheTargetMustBeAnotherServerGivenAsHostAndPort) {
    const auto src = start_ecsd();
    for (const char* bad : {"nowhere", "host:", ":7777", "host:0", "host:70000", "host:77x"}) {
        const auto r = run(
            {ecsctl_path(), "--port", std::to_string(src->port()), "world", "move", "default", "--to", bad});
        EXPECT_EQ(r.exit_code, 2) << bad;
        EXPECT_TRUE(contains(r.err, "HOST:PORT")) << r.err;
    }
    const auto self = move(*src, *src, "default");
    EXPECT_EQ(self.exit_code, 2);
    EXPECT_TRUE(contains(self.err, "names the server the world is on")) << self.err;
}

TEST(WorldMove, ATargetThatAnswersHttpIsAskedAboutAsTheHttpPort) {
    // A free port for the HTTP listener: bound, read and released (the server binds it next).
    int http = 0;
    for (int attempt = 0; attempt < 5 && http == 0; ++attempt) {
        const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
        sockaddr_in addr{};
        addr.sin_family = AF_INET;
        addr.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
        socklen_t len = sizeof addr;
        if (::bind(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) == 0 &&
            ::getsockname(fd, reinterpret_cast<sockaddr*>(&addr), &len) == 0) {
            http = ntohs(addr.sin_port);
        }
        ::close(fd);
    }
    const auto src = start_ecsd();
    const auto dst = start_ecsd({"--http-port", std::to_string(http)});
    ASSERT_NE(dst->http_port(), 0) << "the target's HTTP port could not be bound";
    line_client a(src->port());
    ASSERT_TRUE(a.call("world.create", {{"world", "arena"}, {"paused", true}}).contains("result"));
    const auto r = run({ecsctl_path(), "--port", std::to_string(src->port()), "world", "move", "arena",
                        "--to", "127.0.0.1:" + std::to_string(dst->http_port())});
    EXPECT_EQ(r.exit_code, 3) << r.out << r.err;
    EXPECT_TRUE(contains(r.err, "is this the HTTP port?")) << r.err;
    // Nothing moved: the source still has it and takes writes.
    EXPECT_TRUE(a.call("world.spawn_entity", {{"world", "arena"}}).contains("result"));
}

TEST(WorldFiles, ExportToAFileAndImportItElsewhereKeepsIdsTickAndHash) {
    const auto src = start_ecsd();
    const auto dst = start_ecsd();
    line_client a(src->port());
    ASSERT_TRUE(a.result("world.create", {{"world", "big"}, {"paused", true}}).is_object());
    for (int part = 0; part < 2; ++part) {  // about 2.4 MB of snapshot: several chunks each way
        json batch = json::array();
        for (int i = 0; i < 10000; ++i)
            batch.push_back(
                {{"Position", {{"x", i}, {"y", -part}}}, {"Velocity", {{"x", 0.5}, {"y", 1.25}}}});
        const auto r = a.call("world.spawn_entities", {{"world", "big"}, {"entities", batch}});
        ASSERT_TRUE(r.contains("result")) << r.dump().substr(0, 300);
    }
    ASSERT_TRUE(
        a.call("world.despawn_entity", {{"world", "big"}, {"entity", 4294967296 + 7}}).contains("result"));
    ASSERT_TRUE(a.result("world.step", {{"world", "big"}, {"ticks", 5}}).is_object());
    const auto file =
        (std::filesystem::temp_directory_path() / ("ecsd-export-" + std::to_string(::getpid()) + ".json"))
            .string();
    const auto port = [](const ecsd_server& s) { return std::to_string(s.port()); };
    const auto out = run({ecsctl_path(), "--port", port(*src), "export", "big", file});
    ASSERT_EQ(out.exit_code, 0) << out.err;
    const auto summary = json::parse(out.out);
    EXPECT_EQ(summary["tick"], 5);
    EXPECT_GT(summary["bytes"].get<std::size_t>(), 1024U * 1024U);
    EXPECT_EQ(std::filesystem::file_size(file), summary["bytes"].get<std::size_t>());
    EXPECT_FALSE(std::filesystem::exists(file + ".part"));

    const auto in = run({ecsctl_path(), "--port", port(*dst), "import", "moved", file});
    ASSERT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(json::parse(in.out)["entities"], 19999);
    line_client b(dst->port());
    EXPECT_EQ(b.result("world.hash", {{"world", "moved"}}), a.result("world.hash", {{"world", "big"}}));
    EXPECT_EQ(b.call("world.get_components",
                     {{"world", "moved"}, {"entity", 4294967296 + 7}})["error"]["data"]["reason"],
              "no_such_entity")
        << "a despawned id stays retired in the copy";
    std::filesystem::remove(file);
}

TEST(WorldFiles, ExportToStandardOutputPipesIntoImportAndADamagedTextCreatesNothing) {
    const auto src = start_ecsd();
    line_client a(src->port());
    ASSERT_TRUE(a.call("world.pause").contains("result"));
    ASSERT_TRUE(a.call("world.spawn_entity", {{"components", {{"Position", {{"x", 1}, {"y", 2}}}}}})
                    .contains("result"));
    const auto p = std::to_string(src->port());
    const auto text = run({ecsctl_path(), "--port", p, "export"});
    ASSERT_EQ(text.exit_code, 0) << text.err;
    EXPECT_EQ(json::parse(text.out)["format"], "ecsd-snapshot") << "standard output holds the snapshot alone";
    const auto in = run({ecsctl_path(), "--port", p, "import", "copy", "--paused"}, text.out);
    ASSERT_EQ(in.exit_code, 0) << in.err;
    EXPECT_EQ(a.result("world.hash", {{"world", "copy"}}), a.result("world.hash"));
    EXPECT_TRUE(a.result("world.info", {{"world", "copy"}})["paused"].get<bool>());

    auto damaged = text.out;
    damaged[damaged.find("\"x\":1") + 4] = '7';
    const auto bad = run({ecsctl_path(), "--port", p, "import", "bad"}, damaged);
    EXPECT_EQ(bad.exit_code, 1);
    EXPECT_TRUE(contains(bad.err, "checksum")) << bad.err;
    EXPECT_EQ(a.call("world.info", {{"world", "bad"}})["error"]["data"]["reason"], "no_such_world");
    const auto empty = run({ecsctl_path(), "--port", p, "import", "none"}, "");
    EXPECT_EQ(empty.exit_code, 2);
    EXPECT_TRUE(contains(empty.err, "empty")) << empty.err;
    // A data folder's binary snapshot is not what import reads: it says so and sends nothing.
    const auto binary =
        run({ecsctl_path(), "--port", p, "import", "bin"}, std::string("ECSDSNAP\x01\0\0\0", 12));
    EXPECT_EQ(binary.exit_code, 2);
    EXPECT_TRUE(contains(binary.err, "binary snapshot")) << binary.err;
    EXPECT_TRUE(contains(binary.err, "ecsctl export")) << binary.err;
    EXPECT_EQ(a.call("world.info", {{"world", "bin"}})["error"]["data"]["reason"], "no_such_world");
}

}  // namespace
}  // namespace ecsd::test
