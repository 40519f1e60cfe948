// One request pipeline, two faces: the same hostile and limit cases sent as an NDJSON line on the
// TCP port and as a POST body on the HTTP face get the same error reasons (issue 41). A face only
// frames bytes; what a request means, and how it is refused, is decided once.
#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "helpers.hpp"
#include "http_client.hpp"

namespace ecsd::test {
namespace faces {

/// The reason of an error answer, or of each element of a batch's answer ("ok" for a result).
json reasons(const json& answer) {
    const auto one = [](const json& a) -> json {
        if (!a.is_object()) return "not an answer";
        if (a.contains("result")) return "ok";
        return a["error"]["data"].value("reason", "no reason");
    };
    if (!answer.is_array()) return one(answer);
    json all = json::array();
    for (const auto& a : answer) all.push_back(one(a));
    return all;
}

/// ecsd with both faces; `line` sends a line on a fresh TCP connection, `body` a POST.
struct two_faces {
    int http = 0;
    std::unique_ptr<ecsd_server> server;
    explicit two_faces(std::vector<std::string> args) {
        server_options o;
        o.args = std::move(args);
        server = start_with_http(o, &http);
    }
    json line(const std::string& text, const std::string& token = {}) const {
        line_client c(server->port());
        if (!token.empty()) {
            EXPECT_TRUE(c.send_line(request_line(0, "server.auth", {{"token", token}})));
            const auto auth = c.read_json();
            if (!auth.contains("result")) return auth;
        }
        EXPECT_TRUE(c.send_line(text));
        return c.read_json();
    }
    json body(const std::string& text, const std::string& token = {}, int* status = nullptr) const {
        http_client c(http);
        EXPECT_TRUE(c.send(post(text, token.empty() ? "" : "Authorization: Bearer " + token + "\r\n")));
        const auto r = c.read();
        if (!r) return "no answer";
        if (status != nullptr) *status = r->status;
        return json::parse(r->body, nullptr, /*allow_exceptions=*/false);
    }
};

const std::string ping = R"({"jsonrpc":"2.0","id":1,"method":"server.ping"})";

std::string batch_of(int n, const std::string& method) {
    std::string b = "[";
    for (int i = 0; i < n; ++i) {
        if (i > 0) b += ",";
        b += R"({"jsonrpc":"2.0","id":)" + std::to_string(i) + R"(,"method":")" + method + R"("})";
    }
    return b + "]";
}

TEST(TwoFaces, LimitsAndHostileInputGetTheSameReasonsOnTcpAndHttp) {
    // server.info's answer is about 1.2 KB: a batch of three passes 3000 bytes at its third.
    two_faces f({"--max-line-bytes", "1000", "--max-batch", "3", "--max-output-bytes", "3000"});
    struct probe {
        const char* what;
        std::string text;
        json expected;
    };
    const std::vector<probe> probes = {
        {"a line or body over --max-line-bytes",
         R"({"jsonrpc":"2.0","id":1,"method":"server.ping","params":{"x":")" + std::string(2000, 'a') +
             R"("}})",
         "too_large"},
        {"a batch over --max-batch", batch_of(5, "server.ping"), "limit_reached"},
        {"a batch whose answer passes --max-output-bytes", batch_of(3, "server.info"),
         json::array({"ok", "ok", "too_large"})},
        {"a NUL byte", std::string(R"({"jsonrpc":"2.0","id":1,"method":"server.ping)") + '\0' + R"("})",
         "parse_error"},
        {"nesting past 64 levels",
         R"({"jsonrpc":"2.0","id":1,"method":"server.ping","params":{"a":)" + std::string(64, '[') +
             std::string(64, ']') + "}}",
         "invalid_request"},
        {"an unknown method", R"({"jsonrpc":"2.0","id":1,"method":"server.nope"})", "method_not_found"},
    };
    for (const auto& p : probes) {
        const auto tcp = reasons(f.line(p.text));
        const auto http = reasons(f.body(p.text));
        EXPECT_EQ(tcp, p.expected) << p.what << " on TCP";
        EXPECT_EQ(http, p.expected) << p.what << " over HTTP";
    }
    // The limit each names is the same too.
    const auto long_line = R"({"jsonrpc":"2.0","id":1,"method":"server.ping","params":{"x":")" +
                           std::string(2000, 'a') + R"("}})";
    int status = 0;
    const auto over = f.body(long_line, {}, &status);
    EXPECT_EQ(status, 413);
    EXPECT_EQ(over["error"]["data"]["limit"], f.line(long_line)["error"]["data"]["limit"]) << over;
}

TEST(TwoFaces, ABadTokenAndAReadOnlyServerRefuseAlikeOnTcpAndHttp) {
    {
        two_faces f({"--token", "s3cret"});
        EXPECT_EQ(reasons(f.line(ping, "wrong")), "unauthorized");
        EXPECT_EQ(reasons(f.body(ping, "wrong")), "unauthorized");
        EXPECT_EQ(reasons(f.line(ping, "s3cret")), "ok");
        EXPECT_EQ(reasons(f.body(ping, "s3cret")), "ok");
    }
    {
        two_faces f({"--read-only"});
        const std::string spawn =
            R"({"jsonrpc":"2.0","id":1,"method":"world.spawn_entity","params":{"components":{}}})";
        EXPECT_EQ(reasons(f.line(spawn)), "unauthorized");
        EXPECT_EQ(reasons(f.body(spawn)), "unauthorized");
        const std::string list =
            R"({"jsonrpc":"2.0","id":1,"method":"world.query","params":{"query":"Position"}})";
        EXPECT_EQ(reasons(f.line(list)), reasons(f.body(list))) << "reads are served alike";
    }
}

}  // namespace faces
}  // namespace ecsd::test
