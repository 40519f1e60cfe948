// The Agones SDK client's pure parts: the requests it writes, the answers it reads, the label rule
// and the stall limit. Its calls against a sidecar are in tests/integration/agones_test.cpp.
#include "hosting/agones_sdk.hpp"

#include <string>

#include <gtest/gtest.h>

using namespace ecsd::net;
using namespace std::chrono_literals;

TEST(AgonesSdk, LabelValuesFollowKubernetesRules) {
    EXPECT_TRUE(agones::is_valid_label_value(""));
    EXPECT_TRUE(agones::is_valid_label_value("0"));
    EXPECT_TRUE(agones::is_valid_label_value("1024"));
    EXPECT_TRUE(agones::is_valid_label_value("match-42.a_b"));
    EXPECT_TRUE(agones::is_valid_label_value(std::string(63, 'x')));
    EXPECT_FALSE(agones::is_valid_label_value(std::string(64, 'x')));
    EXPECT_FALSE(agones::is_valid_label_value("-3"));
    EXPECT_FALSE(agones::is_valid_label_value("3-"));
    EXPECT_FALSE(agones::is_valid_label_value("two words"));
    EXPECT_FALSE(agones::is_valid_label_value("a/b"));
    EXPECT_FALSE(agones::is_valid_label_value("caf\xc3\xa9"));
}

TEST(AgonesSdk, RequestsAreHttp11WithAJsonBodyAndCloseTheConnection) {
    const auto r = agones::make_request("PUT", "/metadata/label", R"({"key":"k","value":"1"})", 9358);
    EXPECT_TRUE(r.starts_with("PUT /metadata/label HTTP/1.1\r\n")) << r;
    EXPECT_NE(r.find("\r\nHost: localhost:9358\r\n"), std::string::npos) << r;
    EXPECT_NE(r.find("\r\nContent-Type: application/json\r\n"), std::string::npos) << r;
    EXPECT_NE(r.find("\r\nContent-Length: 23\r\n"), std::string::npos) << r;
    EXPECT_NE(r.find("\r\nConnection: close\r\n"), std::string::npos) << r;
    EXPECT_TRUE(r.ends_with("\r\n\r\n{\"key\":\"k\",\"value\":\"1\"}")) << r;
}

TEST(AgonesSdk, TheStatusComesFromTheStatusLineOnly) {
    EXPECT_EQ(agones::response_status("HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\n{}"), 200);
    EXPECT_EQ(agones::response_status("HTTP/1.0 503 Service Unavailable\r\n"), 503);
    EXPECT_EQ(agones::response_status("HTTP/1.1 404 "), 404);
    EXPECT_EQ(agones::response_status("HTTP/1.1 20"), 0) << "cut off";
    EXPECT_EQ(agones::response_status("HTTP/2 200 OK\r\n"), 0);
    EXPECT_EQ(agones::response_status("HTTP/1.1 2x0 OK\r\n"), 0);
    EXPECT_EQ(agones::response_status("HTTP/1.1 099 Low\r\n"), 0);
    EXPECT_EQ(agones::response_status(""), 0);
    EXPECT_EQ(agones::response_status("SSH-2.0-OpenSSH\r\n"), 0);
}

TEST(AgonesSdk, AWorldIsStuckAfterTwoHealthPeriodsButNeverUnderTwoSeconds) {
    EXPECT_EQ(agones::stall_limit(2s), 4s);
    EXPECT_EQ(agones::stall_limit(5s), 10s);
    EXPECT_EQ(agones::stall_limit(200ms), 2s) << "a 1 Hz world wakes once a second";
}
