#include "rpc/dispatcher.hpp"

#include <gtest/gtest.h>

#include "ecs/error.hpp"
#include "hosting/hosted_world.hpp"
#include "hosting/world_directory.hpp"
#include "hosting/world_log.hpp"
#include "rpc/core_reasons.hpp"
#include "rpc/services.hpp"
#include "rpc/session.hpp"
#include "rpc_harness.hpp"

using namespace ecsd::net;
namespace p = ecsd::protocol;
using nlohmann::json;

namespace {

// A dispatcher over a small table and a directory holding one world-less host "w", so the
// routing is tested without sockets, threads or a world::world.
class DispatcherTest : public testing::Test, protected ecsd::net::test::rpc_harness {
  protected:
    DispatcherTest() {
        const auto add = [this](std::string name, method_flags flags, method_handler h,
                                json params = object_schema()) {
            table_.add({std::move(name), "test", std::move(params), json::object(), flags, std::move(h)});
        };
        add(
            "t.echo", method_flags::read_only, [](method_context& ctx) { return ctx.params; },
            object_schema({{"n", {{"type", "integer"}, {"minimum", 0}}}}));
        add("t.open", method_flags::pre_auth, [](method_context&) { return json("open"); });
        add("t.write", method_flags::mutating, [](method_context&) { return json("wrote"); });
        add("t.rpc_error", method_flags::none, [](method_context&) -> json {
            throw p::rpc_error(p::reason::no_such_spell, "no spell 'x'", {{"spell", "x"}});
        });
        add("t.ecs_error", method_flags::none, [](method_context&) -> json {
            throw ecsd::ecs::ecs_error(ecsd::ecs::reason::no_such_entity, "entity 9 is gone");
        });
        add("t.crash", method_flags::none,
            [](method_context&) -> json { throw std::runtime_error("secret detail"); });
        add("t.where", method_flags::world_bound | method_flags::read_only,
            [](method_context& ctx) { return json(ctx.hosted->name()); });
        (void)worlds_.add("w", nullptr);
        (void)worlds_.add("default", nullptr);
    }

    json call(std::string method, json params = nullptr, bool notification = false) {
        p::request r{json(1), notification, std::move(method), std::move(params), std::nullopt};
        auto out = dispatch_.prepare(std::move(r), session_);
        if (out.job) {
            const auto result = dispatch_.run(*out.job);
            auto text = dispatcher::finish(*out.job, result);
            return text ? json::parse(*text) : json();
        }
        return out.response ? json::parse(*out.response) : json();
    }

    static std::string reason_of(const json& response) { return response["error"]["data"]["reason"]; }
};

TEST_F(DispatcherTest, RunsAndEchoesId) {
    auto r = call("t.echo", json{{"n", 2}});
    EXPECT_EQ(r["id"], 1);
    EXPECT_EQ(r["result"]["n"], 2);
    EXPECT_EQ(call("t.echo")["result"], json::object());  // absent params count as {}
}

TEST_F(DispatcherTest, UnknownMethod) {
    EXPECT_EQ(reason_of(call("t.nope")), "method_not_found");
}

TEST_F(DispatcherTest, ParamsAreValidated) {
    EXPECT_EQ(reason_of(call("t.echo", json{{"n", -1}})), "invalid_params");
    EXPECT_EQ(reason_of(call("t.echo", json{{"n", 1.5}})), "invalid_params");
    EXPECT_EQ(reason_of(call("t.echo", json{{"m", 1}})), "invalid_params");
    EXPECT_EQ(reason_of(call("t.echo", json::array({1}))), "invalid_params");
}

TEST_F(DispatcherTest, ErrorsKeepTheirReason) {
    auto r = call("t.rpc_error");
    EXPECT_EQ(reason_of(r), "no_such_spell");
    EXPECT_EQ(r["error"]["code"], -32008);
    EXPECT_EQ(r["error"]["data"]["spell"], "x");
    EXPECT_EQ(reason_of(call("t.ecs_error")), "no_such_entity");
    auto crash = call("t.crash");
    EXPECT_EQ(reason_of(crash), "internal");
    EXPECT_EQ(crash.dump().find("secret"), std::string::npos);
}

// The core's reasons are its own (it does not link the protocol); each is answered with the wire
// reason of the same name.
TEST(CoreReasons, EachIsAnsweredWithTheWireReasonOfTheSameName) {
    for (auto r = std::uint8_t{0}; r <= static_cast<std::uint8_t>(ecsd::ecs::reason::no_such_system); ++r) {
        const auto core = static_cast<ecsd::ecs::reason>(r);
        EXPECT_EQ(p::name(ecsd::net::wire_reason(core)), ecsd::ecs::name(core));
    }
}

TEST_F(DispatcherTest, NotificationsRunButAnswerNothing) {
    EXPECT_TRUE(call("t.echo", nullptr, true).is_null());
    EXPECT_TRUE(call("t.nope", nullptr, true).is_null());
    EXPECT_TRUE(call("t.where", nullptr, true).is_null());
}

TEST_F(DispatcherTest, WorldBoundMethodsResolveTheirWorld) {
    EXPECT_EQ(call("t.where")["result"], "default");
    EXPECT_EQ(call("t.where", json{{"world", "w"}})["result"], "w");
    auto missing = call("t.where", json{{"world", "zz"}});
    EXPECT_EQ(reason_of(missing), "no_such_world");
    EXPECT_EQ(missing["error"]["data"]["world"], "zz");
}

TEST_F(DispatcherTest, UnauthenticatedSessionsMayOnlyCallPreAuthMethods) {
    session_.authenticated = false;
    EXPECT_EQ(reason_of(call("t.echo")), "unauthorized");
    EXPECT_EQ(reason_of(call("t.nope")), "unauthorized");
    EXPECT_EQ(call("t.open")["result"], "open");
}

TEST_F(DispatcherTest, ReadOnlyServerRefusesMutatingMethods) {
    config_.read_only = true;
    EXPECT_EQ(reason_of(call("t.write")), "unauthorized");
    EXPECT_EQ(call("t.echo")["result"], json::object());
}

// Issue 21, low: a JSON library error in a handler used to reach the client as the library's text.
TEST_F(DispatcherTest, AJsonLibraryErrorInAHandlerIsAnsweredInPlainWords) {
    table_.add({"t.type_error", "test", object_schema(), json::object(), method_flags::none,
                [](method_context&) -> json { return json("x").get<double>(); }});
    table_.add({"t.range_error", "test", object_schema(), json::object(), method_flags::none,
                [](method_context& ctx) -> json { return ctx.params.at("missing"); }});
    for (const char* m : {"t.type_error", "t.range_error"}) {
        const auto r = call(m);
        EXPECT_EQ(reason_of(r), "invalid_params") << r.dump();
        const auto message = r["error"]["message"].get<std::string>();
        EXPECT_EQ(message.rfind("params: ", 0), 0U) << message;
        EXPECT_EQ(message.find("json"), std::string::npos) << message;
        EXPECT_EQ(message.find("type must be"), std::string::npos) << message;
        EXPECT_EQ(message.find("key 'missing' not found"), std::string::npos) << message;
    }
}

// Issue 21, defect 1: the last line of defence. Whatever reaches world_log, no file path is built
// from a name the protocol refuses; and the dispatcher refuses such names before any handler.
TEST(WorldLogPaths, AreBuiltFromApprovedNamesOnly) {
    const std::filesystem::path dir = "/data";
    EXPECT_EQ(world_log::snapshot_path(dir, "arena-1.x"), dir / "arena-1.x.snapshot");
    EXPECT_EQ(world_log::snapshot_path(dir, "arena-1.x", ecsd::persist::snapshot_format::json_text),
              dir / "arena-1.x.snapshot.json");
    EXPECT_EQ(world_log::journal_path(dir, "arena-1.x"), dir / "arena-1.x.journal");
    for (const std::string& bad : std::vector<std::string>{
             "../victim", "/tmp/abs", "a/b", std::string("a\0b", 3), ".hidden", std::string(65, 'n'), ""}) {
        EXPECT_THROW((void)world_log::snapshot_path(dir, bad), std::invalid_argument) << bad;
        EXPECT_THROW((void)world_log::journal_path(dir, bad), std::invalid_argument) << bad;
    }
}

TEST_F(DispatcherTest, AWorldNameThatIsNoFileNameIsInvalidParamsBeforeAnyHandler) {
    for (const std::string& bad : std::vector<std::string>{
             "../victim", "/tmp/abs", "a/b", std::string("a\0b", 3), ".hidden", std::string(65, 'n'), ""}) {
        for (const char* method : {"t.where", "t.echo", "t.open"}) {
            const auto r = call(method, json{{"world", bad}});
            EXPECT_EQ(reason_of(r), "invalid_params") << method << " " << json(bad).dump();
            EXPECT_EQ(r["error"]["message"].get<std::string>().rfind("params.world: ", 0), 0U) << r.dump();
        }
    }
}

}  // namespace
