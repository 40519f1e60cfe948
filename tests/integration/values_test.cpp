// Issue 21: what the simulation produces always saves and loads again, and values no component
// can hold are refused (changing nothing) instead of accepted.
#include <signal.h>
#include <unistd.h>

#include <cstdio>
#include <filesystem>
#include <fstream>
#include <sstream>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

TEST(Values, ABodyFlungAtTheLimitStaysInRangeAndItsWorldLoadsAgain) {
    const auto dir = std::filesystem::temp_directory_path() / ("ecsd_values_" + std::to_string(::getpid()));
    std::filesystem::remove_all(dir);
    json hash;
    {
        ecsd_server server({"--data-dir", dir.string()});
        line_client c(server.port());
        ASSERT_TRUE(c.result("world.create", {{"world", "far"}, {"paused", true}}).is_object());
        ASSERT_TRUE(c.result("world.spawn_entity", {{"world", "far"},
                                                    {"components",
                                                     {{"Position", {{"x", 9e14}, {"y", -9e14}}},
                                                      {"Velocity", {{"x", 1e15}, {"y", -1e15}}},
                                                      {"RigidBody", json::object()}}}})
                        .is_object());
        ASSERT_TRUE(c.result("world.step", {{"world", "far"}, {"ticks", 120}}).is_object());
        const auto q = c.result("world.query", {{"world", "far"}, {"query", "Position"}});
        const auto& p = q["entities"][0]["components"]["Position"];
        EXPECT_LE(p["x"].get<double>(), 1e15);
        EXPECT_GE(p["y"].get<double>(), -1e15);
        hash = c.result("world.hash", {{"world", "far"}});
        EXPECT_TRUE(c.result("world.save", {{"world", "far"}}).is_object());
        const auto loaded = c.call("world.load", {{"world", "far"}});
        EXPECT_TRUE(loaded.contains("result")) << "its own snapshot must load: " << loaded.dump();
    }  // SIGTERM: saved again
    ecsd_server again({"--data-dir", dir.string()});
    line_client c(again.port());
    EXPECT_EQ(c.result("world.hash", {{"world", "far"}}), hash)
        << "start-up must accept what the world produced";
    std::filesystem::remove_all(dir);
}

TEST(Values, ValuesNoComponentCanHoldAreRefusedAndChangeNothing) {
    ecsd_server server;
    line_client c(server.port());
    const auto e = c.result("world.spawn_entity", {{"components", {{"Position", json::object()}}}})["entity"];
    const json bad[] = {
        {{"RigidBody", {{"mass", -1}}}},
        {{"RigidBody", {{"restitution", 2}}}},
        {{"Collider", {{"radius", -1}}}},
        {{"Position", nullptr}},
        {{"Contacts", {{"entities", {123456789}}}}},
    };
    for (const auto& comps : bad) {
        EXPECT_EQ(reason_of(c.call("world.spawn_entity", {{"components", comps}})), "invalid_value")
            << comps.dump();
        EXPECT_EQ(reason_of(c.call("world.insert_components", {{"entity", e}, {"components", comps}})),
                  "invalid_value")
            << comps.dump();
    }
    EXPECT_EQ(c.result("world.info")["entities"], 1) << "no refused spawn created anything";
    ASSERT_TRUE(
        c.result("world.insert_components", {{"entity", e}, {"components", {{"RigidBody", json::object()}}}})
            .is_object());
    const auto r = c.call("world.mutate_components",
                          {{"entity", e}, {"component", "RigidBody"}, {"path", "mass"}, {"value", -5}});
    EXPECT_EQ(reason_of(r), "invalid_value");
    EXPECT_NE(r["error"]["message"].get<std::string>().find("RigidBody.mass"), std::string::npos);
    EXPECT_EQ(c.result("world.get_components",
                       {{"entity", e}, {"components", {"RigidBody"}}})["components"]["RigidBody"]["mass"],
              1.0);
    // A run-time component whose field "default" is an object is refused, not turned into a number.
    const auto reg =
        c.call("world.register_component", {{"name", "Spot"}, {"fields", {{"pos", {{"y", 1}}}}}});
    EXPECT_EQ(reason_of(reg), "invalid_value") << reg.dump();
}

// A saved world loads whatever it holds: a snapshot written by an older server (numbers past
// ±1e15, a negative mass, a prefab with Contacts, which clients may no longer write) is the
// server's own state, not a client's request, and start-up used to refuse it (exit 1).
TEST(Values, ASnapshotHoldingWhatAnOlderServerAcceptedStillLoads) {
    namespace fs = std::filesystem;
    const auto dir = fs::temp_directory_path() / ("ecsd_values_old_" + std::to_string(::getpid()));
    fs::remove_all(dir);
    {
        // An older ecsd wrote JSON snapshots; this one does when told.
        ecsd_server server({"--data-dir", dir.string(), "--snapshot-format", "json"});
        line_client c(server.port());
        ASSERT_TRUE(c.result("world.create", {{"world", "old"}, {"paused", true}}).is_object());
        ASSERT_TRUE(
            c.result("world.spawn_entity",
                     {{"world", "old"},
                      {"components", {{"Position", {{"x", 1}, {"y", 2}}}, {"RigidBody", json::object()}}}})
                .is_object());
    }  // SIGTERM saves it
    // Rewrite the snapshot as an older ecsd could have written it, sealed with a good checksum.
    const auto file = dir / "old.snapshot.json";
    std::stringstream text;
    text << std::ifstream(file).rdbuf();
    json doc = json::parse(text.str());
    doc.erase("checksum");
    auto& comps = doc["entities"][0]["components"];
    comps["Position"]["x"] = 5e15;
    comps["RigidBody"]["mass"] = -1;
    doc["prefabs"] = {
        {"old_kind", {{"Contacts", {{"entities", json::array()}}}, {"Position", {{"x", -3e15}}}}}};
    std::string out = doc.dump();
    out.pop_back();  // the closing brace: the checksum member goes before it
    char seal[48];
    std::snprintf(seal, sizeof seal, ",\"checksum\":\"crc32:%08x\"}\n", crc32_of(out));
    out += seal;
    std::ofstream(file, std::ios::trunc) << out;

    ecsd_server again({"--data-dir", dir.string()});
    ASSERT_TRUE(again.running()) << "start-up must load the world's own snapshot";
    line_client c(again.port());
    const auto e = c.result("world.query", {{"world", "old"}, {"query", "Position"}})["entities"][0];
    EXPECT_EQ(e["components"]["Position"]["x"], 5e15);
    EXPECT_EQ(e["components"]["RigidBody"]["mass"], -1.0);
    const auto hash = c.result("world.hash", {{"world", "old"}});
    ASSERT_TRUE(c.result("world.save", {{"world", "old"}}).is_object());
    // The save wrote this server's binary form and removed the older JSON one.
    EXPECT_TRUE(fs::exists(dir / "old.snapshot"));
    EXPECT_FALSE(fs::exists(file));
    const auto loaded = c.call("world.load", {{"world", "old"}});
    EXPECT_TRUE(loaded.contains("result")) << loaded.dump();
    EXPECT_EQ(c.result("world.hash", {{"world", "old"}}), hash);
    // Clients still cannot send such values.
    EXPECT_EQ(reason_of(c.call("world.spawn_entity",
                               {{"world", "old"}, {"components", {{"Position", {{"x", 5e15}}}}}})),
              "invalid_value");
    fs::remove_all(dir);
}

// Issue 21, low: an entity id past 64 bits used to come back as a float (1.8446744073709552e+19).
TEST(Values, EntityIdsPast64BitsAreRefusedWithoutAFloatEcho) {
    ecsd_server server;
    line_client c(server.port());
    const std::string big = "18446744073709551616";
    for (const std::string& params :
         {R"({"entity":)" + big + "}", R"({"entity":)" + big + R"(,"components":["Position"]})"}) {
        for (const char* method : {"world.get_components", "world.despawn_entity"}) {
            ASSERT_TRUE(c.send_line(R"({"jsonrpc":"2.0","id":7,"method":")" + std::string(method) +
                                    R"(","params":)" + params + "}"));
            const auto r = c.read_json();
            EXPECT_EQ(reason_of(r), "invalid_params") << method << " " << r.dump();
            EXPECT_EQ(r["id"], 7);
            EXPECT_EQ(r.dump().find("e+19"), std::string::npos) << r.dump();
        }
    }
    // Inside a component value it is that component's invalid_value, still without the float.
    ASSERT_TRUE(c.send_line(R"({"jsonrpc":"2.0","id":8,"method":"world.spawn_entity",)"
                            R"("params":{"components":{"MagicInput":{"spell":"heal","target":)" +
                            big + "}}}}"));
    const auto r = c.read_json();
    EXPECT_EQ(reason_of(r), "invalid_value") << r.dump();
    EXPECT_EQ(r.dump().find("e+19"), std::string::npos) << r.dump();
    EXPECT_EQ(c.result("world.info")["entities"], 0);
}

// Run-time components are held to the same rules: a default that does not fit its field's type is
// refused, and so is null for a component that has fields (only tags take null).
TEST(Values, RunTimeComponentsRefuseMismatchedDefaultsAndNullValues) {
    ecsd_server server;
    line_client c(server.port());
    for (const json& fields :
         {json{{"pos", {{"y", 1}}}}, json{{"pos", {{"type", "number"}, {"default", {{"y", 1}}}}}},
          json{{"pos", {{"type", "number"}, {"default", "1"}}}},
          json{{"pos", {{"type", "integer"}, {"default", 1.5}}}}}) {
        const auto r = c.call("world.register_component", {{"name", "Spot"}, {"fields", fields}});
        EXPECT_EQ(reason_of(r), "invalid_value") << fields.dump() << " -> " << r.dump();
    }
    EXPECT_EQ(reason_of(c.call("world.spawn_entity", {{"components", {{"Spot", json::object()}}}})),
              "no_such_component")
        << "no refused registration left a type behind";
    ASSERT_TRUE(
        c.result("world.register_component", {{"name", "Spot"}, {"fields", {{"pos", 2}}}}).is_object());
    ASSERT_TRUE(
        c.result("world.register_component", {{"name", "Marked"}, {"fields", json::object()}}).is_object());
    EXPECT_EQ(reason_of(c.call("world.spawn_entity", {{"components", {{"Spot", nullptr}}}})),
              "invalid_value");
    const auto e = c.result("world.spawn_entity",
                            {{"components", {{"Spot", json::object()}, {"Marked", nullptr}}}})["entity"];
    EXPECT_EQ(c.result("world.get_components",
                       {{"entity", e}, {"components", {"Spot"}}})["components"]["Spot"]["pos"],
              2.0);
    EXPECT_EQ(c.result("world.info")["entities"], 1);
}

// Issue 44: {"entity": "1"} was looked up as a Name (no_such_entity) while the docs said
// invalid_params, and 2^63 said "must be >= 0". An id sent as a string and an id out of range each
// say what they are.
TEST(Values, AnIdSentAsAStringOrOutOfRangeSaysSo) {
    ecsd_server server;
    line_client c(server.port());
    const auto as_string = c.call("world.get_components", {{"entity", "1"}});
    EXPECT_EQ(reason_of(as_string), "invalid_params") << as_string;
    EXPECT_NE(as_string["error"]["message"].get<std::string>().find("JSON number"), std::string::npos)
        << as_string;
    for (const std::string big : {"9223372036854775808", "18446744073709551615", "9007199254740992"}) {
        ASSERT_TRUE(c.send_line(
            R"({"jsonrpc":"2.0","id":3,"method":"world.get_components","params":{"entity":)" + big + "}}"));
        const auto r = c.read_json();
        EXPECT_EQ(reason_of(r), "invalid_params") << r;
        const auto message = r["error"]["message"].get<std::string>();
        EXPECT_NE(message.find("out of range"), std::string::npos) << message;
        EXPECT_EQ(message.find(">= 0"), std::string::npos) << message;
    }
    // A name is still a name.
    EXPECT_EQ(reason_of(c.call("world.get_components", {{"entity", "hero"}})), "no_such_entity");
}

}  // namespace
}  // namespace ecsd::test
