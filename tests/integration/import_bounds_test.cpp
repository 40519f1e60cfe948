// Issue 40, items 1, 7 and 16: what a world.import text may hold. It is a client's JSON text that
// the request line's own checks never see (it travels as one string), so the import holds it to
// the limits every other door has: nesting depth, counters that cannot wrap, string lengths.
#include <string>

#include <gtest/gtest.h>

#include "helpers.hpp"

namespace ecsd::test {
namespace {

/// @brief A minimal snapshot text with `systems`, `types` and one entity's `components` as given.
std::string snapshot(const std::string& systems, const std::string& types, const std::string& components,
                     const std::string& tick = "0") {
    return R"({"format":"ecsd-snapshot","version":1,"world":{"name":"x","tick":)" + tick +
           R"(,"tick_hz":60,"gravity":{"x":0,"y":0},"paused":true},"systems":)" + systems +
           R"(,"component_types":)" + types +
           R"(,"allocator":{"slots":1},"entities":[{"id":4294967296,"components":)" + components + "}]}";
}

std::string nested(std::size_t depth) {
    return std::string(depth, '[') + std::string(depth, ']');
}

json import_final(line_client& c, const std::string& world, const std::string& text) {
    return c.call("world.import", {{"world", world}, {"data", text}, {"final", true}});
}

// It used to kill ecsd with SIGSEGV: 150,000 nested brackets in "systems" (or component_types, or
// a component's value) parsed without a depth limit, then copied recursively off the end of the stack.
TEST(ImportBounds, DeeplyNestedTextIsRefusedAndTheServerLives) {
    ecsd_server server;
    line_client c(server.port());
    const auto deep = nested(150000);
    const std::string texts[] = {
        snapshot(deep, "[]", "{}"),
        snapshot("{}", deep, "{}"),
        snapshot("{}", R"([{"name":"Bag","fields":{"items":[]}}])", R"({"Bag":{"items":)" + deep + "}}"),
    };
    for (const auto& text : texts) {
        const auto r = import_final(c, "boom", text);
        EXPECT_EQ(reason_of(r), "invalid_params") << r.dump().substr(0, 300);
        EXPECT_NE(r.dump().find("deeper"), std::string::npos) << r.dump().substr(0, 300);
        ASSERT_TRUE(server.running()) << "the import crashed the server";
        EXPECT_EQ(c.call("server.ping")["result"], "pong");
    }
    EXPECT_EQ(c.result("world.list")["worlds"], json({"default"}));
    // The same world, nested no deeper than ecsd writes, imports.
    const auto ok = import_final(c, "fine", snapshot("{}", "[]", "{}"));
    EXPECT_EQ(ok["result"]["entities"], 1) << ok.dump();
}

// An imported tick near 2^64 used to be taken, wrap a few ticks later, and make the journal's next
// start-up refuse to load the world.
TEST(ImportBounds, CountersThatCouldWrapAreRefused) {
    ecsd_server server;
    line_client c(server.port());
    for (const std::string tick : {"18446744073709551610", "9007199254740992"}) {
        const auto r = import_final(c, "wrap", snapshot("{}", "[]", "{}", tick));
        EXPECT_EQ(reason_of(r), "invalid_params") << r.dump();
        EXPECT_NE(r.dump().find("tick"), std::string::npos) << r.dump();
    }
    const auto high = import_final(c, "high", snapshot("{}", "[]", "{}", "9007199254740000"));
    EXPECT_EQ(high["result"]["tick"], 9007199254740000ULL) << high.dump();
}

// Import took a 50 MB Appearance.name; a client's world.spawn could not send one past its 1 MiB
// line. Strings now have one limit at every door (64 KiB), and a Name its 64 characters.
TEST(ImportBounds, StringsAndNamesHaveTheSameLimitsAsEverywhere) {
    ecsd_server server;
    line_client c(server.port());
    const std::string long_name(70000, 'a');
    const auto spawned =
        c.call("world.spawn_entity", {{"components", {{"Appearance", {{"name", long_name}}}}}});
    EXPECT_EQ(reason_of(spawned), "invalid_value") << spawned.dump().substr(0, 300);
    const auto imported =
        import_final(c, "long", snapshot("{}", "[]", R"({"Appearance":{"name":")" + long_name + "\"}}"));
    EXPECT_EQ(reason_of(imported), "invalid_params") << imported.dump().substr(0, 300);
    EXPECT_NE(imported.dump().find("65536"), std::string::npos) << imported.dump().substr(0, 300);
    const auto named = import_final(
        c, "named", snapshot("{}", "[]", R"({"Name":{"name":")" + std::string(100, 'n') + "\"}}"));
    EXPECT_EQ(reason_of(named), "invalid_params") << named.dump().substr(0, 300);
    EXPECT_EQ(c.result("world.list")["worlds"], json({"default"}));
    const auto fits = import_final(
        c, "fits", snapshot("{}", "[]", R"({"Appearance":{"name":")" + std::string(60000, 'a') + "\"}}"));
    EXPECT_EQ(fits["result"]["entities"], 1) << fits.dump().substr(0, 300);
}

}  // namespace
}  // namespace ecsd::test
