// The HTTP face's request parser keeps no more than a small body's room between requests.
#include "http/request_parser.hpp"

#include <string>

#include <gtest/gtest.h>

using ecsd::net::request_parser;

namespace {

/// Parses one whole message from `in` as http_connection does (its head is a step of its own).
bool parse_message(request_parser& parser, std::string in) {
    while (!in.empty()) {
        const auto step = parser.execute(in);
        if (step.error != 0) return false;
        in.erase(0, step.consumed);
        if (step.complete) return in.empty();
    }
    return false;
}

}  // namespace

TEST(RequestParser, GivesBackTheRoomOfALargeBodyWhenTheNextRequestBegins) {
    request_parser parser(1024 * 1024);
    const std::string body(600'000, 'x');
    ASSERT_TRUE(parse_message(parser, "POST /rpc HTTP/1.1\r\nHost: a\r\nContent-Length: " +
                                          std::to_string(body.size()) + "\r\n\r\n" + body));
    EXPECT_EQ(parser.body(), body);

    ASSERT_TRUE(parse_message(parser, "GET /health HTTP/1.1\r\nHost: a\r\n\r\n"));
    EXPECT_EQ(parser.url(), "/health");
    EXPECT_TRUE(parser.body().empty());
    EXPECT_LE(parser.body().capacity(), 128U * 1024);
}
