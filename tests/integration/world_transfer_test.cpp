// world.export / world.import: a world's snapshot crosses the protocol in chunks and comes out on
// another server with the same ids, tick and state hash, and evolves identically from there.
#include <signal.h>
#include <unistd.h>

#include <filesystem>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

namespace fs = std::filesystem;

/// @brief Every chunk of an export of `world`, read `max_bytes` at a time.
std::vector<std::string> export_chunks(line_client& c, const std::string& world, int max_bytes, json* first) {
    std::vector<std::string> chunks;
    auto r = c.result("world.export", {{"world", world}, {"max_bytes", max_bytes}});
    *first = r;
    std::size_t offset = 0;
    for (int guard = 0; guard < 100000; ++guard) {
        EXPECT_EQ(r["offset"], offset);
        const auto data = r["data"].get<std::string>();
        chunks.push_back(data);
        offset += data.size();
        if (r["done"].get<bool>()) break;
        r = c.result(
            "world.export",
            {{"world", world}, {"export", r["export"]}, {"offset", offset}, {"max_bytes", max_bytes}});
    }
    return chunks;
}

/// @brief Imports `chunks` as `world`; the last answer.
json import_chunks(line_client& c, const std::string& world, const std::vector<std::string>& chunks) {
    json last;
    std::size_t offset = 0;
    for (std::size_t i = 0; i < chunks.size(); ++i) {
        last = c.call(
            "world.import",
            {{"world", world}, {"data", chunks[i]}, {"offset", offset}, {"final", i + 1 == chunks.size()}});
        if (!last.contains("result")) return last;
        offset += chunks[i].size();
    }
    return last;
}

json ids_of(line_client& c, const std::string& world) {
    return c.result("world.query", {{"world", world}, {"query", "Position"}, {"limit", 10000}})["entities"];
}

TEST(WorldTransfer, ExportedInSmallChunksAndImportedElsewhereKeepsIdsTickAndHash) {
    const auto data_dir = fs::temp_directory_path() / ("ecsd_transfer_" + std::to_string(::getpid()));
    fs::remove_all(data_dir);
    ecsd_server source;
    line_client a(source.port());
    ASSERT_TRUE(a.result("world.create", {{"world", "zone"}}).is_object());
    // Moving bodies, a despawned entity (ids then skip a slot's generation) and names with
    // multi-byte characters, which a chunk must never cut.
    for (int i = 0; i < 40; ++i) {
        ASSERT_TRUE(a.result("world.spawn_entity",
                             {{"world", "zone"},
                              {"components",
                               {{"Position", {{"x", i}, {"y", 2 * i}}},
                                {"Velocity", {{"x", 1}, {"y", 0.5}}},
                                {"Name", {{"name", "caf\xc3\xa9-\xe2\x98\x83-" + std::to_string(i)}}}}}})
                        .is_object());
    }
    const auto gone =
        a.result("world.spawn_entity", {{"world", "zone"}, {"components", {{"Position", json::object()}}}});
    ASSERT_TRUE(
        a.result("world.despawn_entity", {{"world", "zone"}, {"entity", gone["entity"]}}).is_object());
    ASSERT_TRUE(a.result("world.pause", {{"world", "zone"}}).is_object());
    const auto hash = a.result("world.hash", {{"world", "zone"}});

    json first;
    const auto chunks = export_chunks(a, "zone", 64, &first);
    ASSERT_GT(chunks.size(), 20U) << "small chunks: many of them";
    std::size_t total = 0;
    for (const auto& ch : chunks) total += ch.size();
    EXPECT_EQ(first["bytes"], total);
    EXPECT_EQ(first["tick"], hash["tick"]);

    {
        ecsd_server target({"--data-dir", data_dir.string()});
        line_client b(target.port());
        const auto done = import_chunks(b, "zone", chunks);
        ASSERT_TRUE(done.contains("result")) << done;
        EXPECT_EQ(done["result"]["entities"], 40);
        EXPECT_EQ(done["result"]["tick"], hash["tick"]);
        EXPECT_EQ(b.result("world.hash", {{"world", "zone"}}), hash);
        EXPECT_EQ(ids_of(b, "zone"), ids_of(a, "zone"));
        // From the same state the two evolve identically.
        ASSERT_TRUE(a.result("world.step", {{"world", "zone"}, {"ticks", 30}}).is_object());
        ASSERT_TRUE(b.result("world.step", {{"world", "zone"}, {"ticks", 30}}).is_object());
        EXPECT_EQ(b.result("world.hash", {{"world", "zone"}}), a.result("world.hash", {{"world", "zone"}}));
        // The imported world is persisted like any other.
        ASSERT_EQ(target.stop(SIGTERM).code, 0);
    }
    {
        ecsd_server again({"--data-dir", data_dir.string()});
        line_client c(again.port());
        EXPECT_EQ(c.result("world.hash", {{"world", "zone"}}), a.result("world.hash", {{"world", "zone"}}));
    }
    fs::remove_all(data_dir);
}

TEST(WorldTransfer, AnImportIsRefusedWhenItsNameIsTakenItsOffsetIsWrongOrItsDataDamaged) {
    ecsd_server server;
    line_client c(server.port());
    ASSERT_TRUE(c.result("world.spawn_entity", {{"components", {{"Position", {{"x", 1}}}}}}).is_object());
    ASSERT_TRUE(c.result("world.pause").is_object());
    json first;
    const auto chunks = export_chunks(c, "default", 100, &first);
    ASSERT_GE(chunks.size(), 3U);

    // The name is taken: refused before any byte is kept.
    EXPECT_EQ(reason_of(c.call("world.import", {{"world", "default"}, {"data", chunks[0]}})), "world_exists");
    // A chunk at the wrong offset: refused with the offset the import stands at.
    ASSERT_TRUE(c.result("world.import", {{"world", "copy"}, {"data", chunks[0]}}).is_object());
    const auto skipped = c.call("world.import", {{"world", "copy"}, {"data", chunks[2]}, {"offset", 999}});
    EXPECT_EQ(reason_of(skipped), "invalid_params");
    EXPECT_EQ(skipped["error"]["data"]["expected_offset"], chunks[0].size());
    // Damaged on the way (one digit changed, still JSON): the checksum refuses it, no world appears.
    std::string whole;
    for (const auto& ch : chunks) whole += ch;
    const auto digit = whole.find("\"x\":1");
    ASSERT_NE(digit, std::string::npos);
    whole[digit + 4] = '7';
    const auto damaged = c.call("world.import", {{"world", "copy"}, {"data", whole}, {"final", true}});
    EXPECT_EQ(reason_of(damaged), "invalid_params");
    EXPECT_NE(damaged["error"]["message"].get<std::string>().find("checksum"), std::string::npos) << damaged;
    EXPECT_EQ(reason_of(c.call("world.info", {{"world", "copy"}})), "no_such_world");
    // An export that was never begun, or is finished, cannot be read on.
    EXPECT_EQ(reason_of(c.call("world.export", {{"export", first["export"]}, {"offset", 0}})),
              "invalid_params");
    // Whole and intact, under a new name, it is a world.
    std::string intact;
    for (const auto& ch : chunks) intact += ch;
    const auto made = c.result("world.import", {{"world", "copy"}, {"data", intact}, {"final", true}});
    EXPECT_EQ(made["entities"], 1);
    EXPECT_EQ(c.result("world.info", {{"world", "copy"}})["world"], "copy");
    EXPECT_EQ(c.result("world.info", {{"world", "copy"}})["tick"], c.result("world.info")["tick"]);
    EXPECT_EQ(ids_of(c, "copy"), ids_of(c, "default"));
}

TEST(WorldTransfer, ASealedWorldNeitherTicksNorChangesUntilUnsealedAndStillAnswersReads) {
    const auto dir = fs::temp_directory_path() / ("ecsd-seal-" + std::to_string(::getpid()));
    fs::remove_all(dir);
    struct cleanup {
        fs::path d;
        ~cleanup() { fs::remove_all(d); }
    } after_the_server{dir};  // declared first: removed once the server has saved and exited
    ecsd_server server({"--data-dir", dir.string()});
    line_client c(server.port());
    ASSERT_TRUE(c.result("world.create", {{"world", "s"}}).is_object());
    const auto id =
        c.result("world.spawn_entity",
                 {{"world", "s"}, {"components", {{"Position", {{"x", 0}, {"y", 0}}}}}})["entity"];
    const auto reason = [](const json& r) { return r["error"]["data"]["reason"].get<std::string>(); };

    // `seal` goes with the first call only.
    const auto first = c.result("world.export", {{"world", "s"}, {"max_bytes", 64}, {"seal", true}});
    EXPECT_TRUE(first["sealed"].get<bool>());
    EXPECT_EQ(reason(c.call("world.export", {{"world", "s"}, {"export", first["export"]}, {"seal", true}})),
              "invalid_params");
    const auto tick = first["tick"].get<std::uint64_t>();
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    EXPECT_EQ(c.result("world.info", {{"world", "s"}})["tick"], tick) << "a sealed world does not tick";

    // Every kind of change is refused, and nothing changed: the hash is the export's world's.
    const auto hash = c.result("world.hash", {{"world", "s"}});
    for (const auto& [method, params] : std::vector<std::pair<std::string, json>>{
             {"world.spawn_entity", {{"world", "s"}}},
             {"world.despawn_entity", {{"world", "s"}, {"entity", id}}},
             {"world.mutate_components",
              {{"world", "s"}, {"entity", id}, {"component", "Position"}, {"path", "x"}, {"value", 5}}},
             {"world.step", {{"world", "s"}}},
             {"world.resume", {{"world", "s"}}},
             {"world.load", {{"world", "s"}}},
         }) {
        const auto r = c.call(method, params);
        EXPECT_EQ(reason(r), "world_sealed") << method << ": " << r.dump();
        EXPECT_EQ(r["error"]["data"]["world"], "s");
    }
    EXPECT_EQ(c.result("world.hash", {{"world", "s"}}), hash);
    // Reads, watches and saves still work.
    EXPECT_TRUE(c.call("world.get_components", {{"world", "s"}, {"entity", id}}).contains("result"));
    EXPECT_TRUE(c.call("world.save", {{"world", "s"}}).contains("result"));
    EXPECT_TRUE(c.call("world.watch", {{"world", "s"}, {"query", "Position"}}).contains("result"));
    // Other worlds are not sealed.
    EXPECT_TRUE(c.call("world.spawn_entity").contains("result"));

    // Unsealed: it ticks on from now, without a burst for the time it was sealed, and takes writes.
    const auto un = c.result("world.unseal", {{"world", "s"}});
    EXPECT_EQ(un["sealed"], false);
    EXPECT_EQ(un["tick"], tick);
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    const auto after = c.result("world.info", {{"world", "s"}});
    EXPECT_GT(after["tick"].get<std::uint64_t>(), tick);
    // 100 ms at 60 Hz is 6 ticks; running the 200+ ms it was sealed as well would make 18 or more.
    EXPECT_LT(after["tick"].get<std::uint64_t>() - tick, 15U * sanitizer_time_factor)
        << "the sealed time is not caught up on";
    EXPECT_TRUE(c.call("world.spawn_entity", {{"world", "s"}}).contains("result"));
    EXPECT_TRUE(c.result("world.unseal", {{"world", "s"}}).is_object()) << "unsealing twice changes nothing";
}

TEST(WorldTransfer, AReadOnlyServerCannotBeSealedOrExported) {
    ecsd_server server({"--read-only"});
    line_client c(server.port());
    const auto r = c.call("world.export", {{"seal", true}});
    EXPECT_EQ(r["error"]["data"]["reason"], "unauthorized") << r.dump();
    // world.export is admin: it hands out the whole world and costs a snapshot.
    EXPECT_EQ(c.call("world.export")["error"]["data"]["reason"], "unauthorized");
}

}  // namespace
}  // namespace ecsd::test
