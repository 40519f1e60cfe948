// Identities and roles (issue 43): a --tokens file gives each client its own token and a role, and
// the role decides which methods run. The matrix below is generated from rpc.discover, so a method
// added to the table is covered without anyone listing it, over TCP, HTTP and WebSocket alike.
#include <sys/types.h>
#include <unistd.h>

#include <chrono>
#include <csignal>
#include <filesystem>
#include <fstream>
#include <string>
#include <thread>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"
#include "http_client.hpp"
#include "ws_client.hpp"

namespace ecsd::test {
namespace {

std::string file_text() {
    return "# identities of the roles test\n" + hash_token("admin-secret") + " ops admin\n" +
           hash_token("observer-secret") + " watcher observer\n" + hash_token("player-secret") +
           " alice player\n";
}

bool allowed_by_flags(const json& flags, const std::string& role) {
    const auto has = [&](const char* f) { return std::find(flags.begin(), flags.end(), f) != flags.end(); };
    if (has("action")) return role == "player";  // world.call_action: game logic that checks its caller
    return has("pre_auth") || (has("read_only") && !has("operator_only"));
}

json authed_call(int port, const std::string& token, const std::string& method, const json& params) {
    line_client c(port);
    const auto auth = c.call("server.auth", {{"token", token}});
    if (!auth.contains("result")) return auth;
    return c.call(method, params);
}

json http_call(int http, const std::string& token, const std::string& method, const json& params) {
    // A batch of one: a watch inside a batch answers as JSON and ends, so every method answers alike.
    const std::string body = "[" + request_line(1, method, params) + "]";
    http_client c(http);
    EXPECT_TRUE(
        c.send("POST / HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Type: application/json\r\n"
               "Authorization: Bearer " +
               token + "\r\nContent-Length: " + std::to_string(body.size()) + "\r\n\r\n" + body));
    const auto r = c.read();
    if (!r || r->body.empty()) return "no answer";
    const auto answer = json::parse(r->body, nullptr, false);
    return answer.is_array() && !answer.empty() ? answer[0] : answer;
}

json ws_call(int http, const std::string& token, const std::string& method, const json& params) {
    ws_client ws(http);  // as a browser opens it: no header, server.auth first
    if (!ws.upgraded()) return "no upgrade: " + ws.head();
    const auto auth = ws.call("server.auth", {{"token", token}});
    if (!auth.contains("result")) return auth;
    return ws.call(method, params);
}

TEST(RolesEndToEnd, HashTokenPrintsTheFilesFirstColumn) {
    EXPECT_EQ(hash_token("s3cret"), "1ec1c26b50d5d3c58d9583181af8076655fe00756bf7285940ba3670f99fcba0");
    EXPECT_EQ(hash_token("admin-secret").size(), 64U);
    EXPECT_NE(hash_token("admin-secret"), hash_token("admin-secreT"));
}

TEST(RolesEndToEnd, ServerAuthAnswersTheIdentityAndItsRole) {
    const temp_file f("ecsd_tokens", file_text());
    ecsd_server server({"--tokens", f.path.string(), "--token", "root-secret"});
    line_client c(server.port());
    EXPECT_EQ(reason_of(c.call("server.ping")), "unauthorized");
    EXPECT_EQ(c.result("server.auth", {{"token", "player-secret"}}),
              json({{"authenticated", true}, {"identity", "alice"}, {"role", "player"}}));
    line_client o(server.port());
    EXPECT_EQ(o.result("server.auth", {{"token", "observer-secret"}})["role"], "observer");
    line_client root(server.port());
    EXPECT_EQ(root.result("server.auth", {{"token", "root-secret"}}),
              json({{"authenticated", true}, {"identity", "admin"}, {"role", "admin"}}));
    line_client wrong(server.port());
    EXPECT_EQ(reason_of(wrong.call("server.auth", {{"token", "player-secret "}})), "unauthorized");
}

// Every method in the table, called by a player and an observer over TCP, HTTP and WebSocket: those their
// role may not call answer unauthorized with the role and method, and run nothing.
TEST(RolesEndToEnd, EveryMethodInTheTableIsAllowedOrRefusedByRoleOnEveryFace) {
    const temp_file f("ecsd_tokens", file_text());
    int http = 0;
    server_options o;
    o.args = {"--tokens", f.path.string()};
    auto server = start_with_http(o, &http);
    ASSERT_NE(http, 0);
    line_client admin(server->port());
    ASSERT_EQ(admin.result("server.auth", {{"token", "admin-secret"}})["role"], "admin");
    (void)admin.result("world.pause");  // so that only a call that ran could change the hash
    const auto spawned = admin.result("world.spawn_entity", {{"components", {{"Position", json::object()}}}});
    const auto before = admin.result("world.hash");
    const auto methods = admin.result("rpc.discover")["methods"];
    ASSERT_GT(methods.size(), 40U);
    std::size_t refused = 0;
    std::size_t allowed = 0;
    for (const auto& m : methods) {
        const std::string name = m["name"];
        if (name == "server.auth") continue;
        // Params that would let most methods run: the one entity, and names that do not exist.
        const json params = {{"entity", spawned["entity"]}, {"world", "default"}};
        for (const auto& [role, token] :
             {std::pair{"player", "player-secret"}, {"observer", "observer-secret"}}) {
            for (const char* face : {"TCP", "HTTP", "WebSocket"}) {
                const std::string via = face;
                const auto answer = via == "HTTP"  ? http_call(http, token, name, params)
                                    : via == "TCP" ? authed_call(server->port(), token, name, params)
                                                   : ws_call(http, token, name, params);
                const bool was_refused = reason_of(answer) == "unauthorized" &&
                                         answer["error"].contains("data") &&
                                         answer["error"]["data"].value("role", "") == role;
                SCOPED_TRACE(name + " as " + role + " over " + via + ": " + answer.dump());
                if (allowed_by_flags(m["x-flags"], role)) {
                    EXPECT_FALSE(was_refused);
                    ++allowed;
                } else {
                    EXPECT_TRUE(was_refused);
                    if (was_refused) {
                        EXPECT_EQ(answer["error"]["data"]["method"], name);
                    }
                    ++refused;
                }
            }
        }
    }
    EXPECT_GT(refused, 120U);  // 2 roles x 3 faces x the mutating, admin and operator_only methods
    EXPECT_GT(allowed, 90U);
    // Nothing a refused call would have changed did change.
    EXPECT_EQ(admin.result("world.hash"), before);
    EXPECT_EQ(admin.result("world.list")["worlds"], json({"default"}));
    // Spelled out, so a wrong flag in the table cannot make the generated matrix agree with it.
    for (const char* method : {"world.destroy", "world.create", "world.define_system", "world.export",
                               "world.import", "world.mutate_components", "server.monitor", "server.slowlog",
                               "world.save", "world.cast_spell", "debug.sleep"}) {
        const auto answer = authed_call(server->port(), "player-secret", method, json::object());
        EXPECT_EQ(reason_of(answer), "unauthorized") << method;
        EXPECT_EQ(answer["error"]["data"]["role"], "player") << method;
    }
}

// No method shows a player a token or the tokens file, over any face; and no token, nor
// server.auth's params, reaches the slowlog, the monitor stream or the log (at trace).
TEST(RolesEndToEnd, NoMethodShowsATokenAndNoneReachesTheSlowlogMonitorOrLog) {
    const temp_file f("ecsd_tokens", file_text());
    const temp_file log("ecsd_roles_log", "");
    int http = 0;
    server_options o;
    o.args = {"--tokens", f.path.string(), "--slowlog-us", "0"};
    o.log_path = log.path.string();
    o.log_level = "trace";
    auto server = start_with_http(o, &http);
    ASSERT_NE(http, 0);
    line_client admin(server->port());
    ASSERT_EQ(admin.result("server.auth", {{"token", "admin-secret"}})["role"], "admin");
    ASSERT_TRUE(admin.send_line(request_line("m", "server.monitor")));
    ASSERT_TRUE(admin.read_json().contains("result"));
    // What a player sees of every method it may call, on every face.
    const auto methods = admin.result("rpc.discover")["methods"];
    std::string seen_by_player;
    for (const auto& m : methods) {
        if (!allowed_by_flags(m["x-flags"], "player") || m["name"] == "server.auth") continue;
        const std::string name = m["name"];
        for (const auto& answer : {authed_call(server->port(), "player-secret", name, json::object()),
                                   http_call(http, "player-secret", name, json::object()),
                                   ws_call(http, "player-secret", name, json::object())})
            seen_by_player += answer.dump();
    }
    EXPECT_NE(seen_by_player.find("\"tokens\""), std::string::npos) << "server.info was among them";
    for (const auto* secret : {"admin-secret", "observer-secret", "player-secret"}) {
        EXPECT_EQ(seen_by_player.find(secret), std::string::npos) << secret;
        EXPECT_EQ(seen_by_player.find(hash_token(secret)), std::string::npos) << "the hash of " << secret;
    }
    // A wrong guess, a right token and a positional one, from another client.
    line_client other(server->port());
    (void)other.call("server.auth", {{"token", "observer-secreT"}});
    (void)other.call("server.auth", json::array({"positional-secret"}));
    (void)other.call("server.auth", {{"token", "observer-secret"}});
    std::string monitored;
    for (int i = 0; i < 200; ++i) {
        const auto n = admin.read_json(std::chrono::milliseconds(200));
        if (n.is_null()) break;
        monitored += n.dump();
    }
    EXPECT_NE(monitored.find("server.auth"), std::string::npos);
    const auto slowlog = admin.result("server.slowlog", {{"count", 100000}}).dump();
    EXPECT_NE(slowlog.find("server.auth"), std::string::npos);
    (void)server->stop(SIGTERM);
    std::ifstream in(log.path);
    const std::string logged((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(logged.find("server.auth"), std::string::npos) << "trace logs every request";
    for (const auto& [what, text] :
         {std::pair{"the monitor stream", monitored}, {"the slowlog", slowlog}, {"the log", logged}})
        for (const auto* secret :
             {"admin-secret", "observer-secret", "player-secret", "observer-secreT", "positional-secret"})
            EXPECT_EQ(text.find(secret), std::string::npos) << secret << " in " << what;
}

// SIGHUP reloads the file: a token taken out stops working at its connection's next request, and a
// role changed applies from the next request; a file with a mistake is not taken.
TEST(RolesEndToEnd, SighupReloadsTheTokensFile) {
    const temp_file f("ecsd_tokens", file_text());
    ecsd_server server({"--tokens", f.path.string()});
    line_client alice(server.port());
    ASSERT_EQ(alice.result("server.auth", {{"token", "player-secret"}})["identity"], "alice");
    line_client watcher(server.port());
    ASSERT_EQ(watcher.result("server.auth", {{"token", "observer-secret"}})["role"], "observer");
    EXPECT_EQ(reason_of(watcher.call("world.create", {{"world", "w2"}})), "unauthorized");

    f.write("# alice is gone, watcher is promoted\n" + hash_token("admin-secret") + " ops admin\n" +
            hash_token("observer-secret") + " watcher admin\n");
    ASSERT_EQ(::kill(server.pid(), SIGHUP), 0);
    bool applied = false;
    for (int i = 0; i < 100 && !applied; ++i) {
        std::this_thread::sleep_for(std::chrono::milliseconds(20));
        line_client probe(server.port());
        applied = probe.call("server.auth", {{"token", "player-secret"}}).contains("error");
    }
    ASSERT_TRUE(applied) << "the reload never happened";
    const auto gone = alice.call("server.ping");
    EXPECT_EQ(reason_of(gone), "unauthorized");
    EXPECT_EQ(gone["error"]["message"], "call server.auth first");
    EXPECT_EQ(watcher.result("world.create", {{"world", "w2"}})["world"], "w2");

    f.write("not a hash at all\n");  // a mistake: the file in use stays
    ASSERT_EQ(::kill(server.pid(), SIGHUP), 0);
    std::this_thread::sleep_for(std::chrono::milliseconds(300));
    line_client again(server.port());
    EXPECT_EQ(again.result("server.auth", {{"token", "observer-secret"}})["role"], "admin");
    EXPECT_TRUE(server.running());
}

TEST(RolesEndToEnd, AFileWithAMistakeStopsTheStartNamingTheLine) {
    const temp_file f("ecsd_tokens", "# fine\n" + hash_token("a") + " alice player\n" + hash_token("b") +
                                         " bob superuser\n");
    const auto log = f.path.string() + ".log";
    server_options o;
    o.args = {"--tokens", f.path.string()};
    o.log_path = log;
    EXPECT_THROW(ecsd_server server(o), std::runtime_error);
    std::ifstream in(log);
    const std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    EXPECT_NE(text.find(f.path.string() + ":3: unknown role 'superuser'"), std::string::npos) << text;
    std::filesystem::remove(log);
}

}  // namespace
}  // namespace ecsd::test
