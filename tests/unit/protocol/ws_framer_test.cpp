// The server's WebSocket framing (RFC 6455) on plain bytes: masked frames in, messages out; the
// refusals that close the connection, each with its code; and the frames the server writes.
#include "ecsd/protocol/ws_framer.hpp"

#include <string>

#include <gtest/gtest.h>

namespace p = ecsd::protocol;

namespace {

/// A client's frame: masked with a fixed key.
std::string frame(const std::string& payload, int opcode = 1, bool fin = true, bool masked = true) {
    std::string f;
    f += static_cast<char>((fin ? 0x80 : 0) | opcode);
    const auto n = payload.size();
    const int bit = masked ? 0x80 : 0;
    if (n < 126) {
        f += static_cast<char>(bit | static_cast<int>(n));
    } else if (n <= 0xFFFF) {
        f += static_cast<char>(bit | 126);
        f += static_cast<char>(n >> 8);
        f += static_cast<char>(n & 0xFF);
    } else {
        f += static_cast<char>(bit | 127);
        for (int shift = 56; shift >= 0; shift -= 8) f += static_cast<char>((n >> shift) & 0xFF);
    }
    const std::string key = "\x12\x34\x56\x78";
    if (!masked) return f + payload;
    f += key;
    for (std::size_t i = 0; i < n; ++i) f += static_cast<char>(payload[i] ^ key[i % 4]);
    return f;
}

}  // namespace

TEST(WsFramer, MessagesComeOutWholeWhateverTheReadsAndFragments) {
    const std::string big(70000, 'x');
    const std::string stream = frame("{\"a\":1}") + frame("first ", 1, false) + frame("second ", 0, false) +
                               frame("ping me", 9) + frame("third", 0, true) + frame(big);
    for (const std::size_t chunk : {std::size_t{1}, std::size_t{3}, std::size_t{1000}, stream.size()}) {
        p::ws_framer f(100000);
        std::vector<std::pair<p::ws_status, std::string>> got;
        for (std::size_t pos = 0; pos < stream.size(); pos += chunk) {
            f.feed(std::string_view(stream).substr(pos, chunk));
            for (auto fr = f.next(); fr.status != p::ws_status::need_more; fr = f.next())
                got.emplace_back(fr.status, std::string(fr.payload));
        }
        ASSERT_EQ(got.size(), 4U) << "chunk " << chunk;
        EXPECT_EQ(got[0], std::pair(p::ws_status::text, std::string("{\"a\":1}")));
        EXPECT_EQ(got[1], std::pair(p::ws_status::ping, std::string("ping me")));  // between fragments
        EXPECT_EQ(got[2], std::pair(p::ws_status::text, std::string("first second third")));
        EXPECT_EQ(got[3].second, big);
        EXPECT_EQ(f.buffered(), 0U);
    }
}

TEST(WsFramer, CloseCarriesItsCode) {
    p::ws_framer f(1000);
    f.feed(frame(std::string("\x03\xe9going", 7), 8));
    const auto fr = f.next();
    EXPECT_EQ(fr.status, p::ws_status::closed);
    EXPECT_EQ(fr.code, 1001);
    EXPECT_EQ(fr.payload, "going");
    p::ws_framer bare(1000);
    bare.feed(frame("", 8));
    EXPECT_EQ(bare.next().code, 1005);  // no code given
}

TEST(WsFramer, AMessageOverTheLimitIsRefusedBeforeItsPayloadArrives) {
    p::ws_framer f(10);
    const auto header_only = frame(std::string(50, 'x')).substr(0, 6);  // header and key, no payload
    f.feed(header_only);
    EXPECT_EQ(f.next().status, p::ws_status::too_large);
    EXPECT_EQ(f.next().status, p::ws_status::need_more);  // nothing after
    // Fragments count together.
    p::ws_framer g(10);
    g.feed(frame("123456", 1, false) + frame("7890ab", 0, true));
    EXPECT_EQ(g.next().status, p::ws_status::too_large);
    // A 64-bit length with its top bit set is broken, not huge.
    p::ws_framer h(10);
    h.feed(std::string("\x81\xff\x80\x00\x00\x00\x00\x00\x00\x01", 10));
    EXPECT_EQ(h.next().status, p::ws_status::protocol_error);
}

TEST(WsFramer, FramesThatBreakTheRfcAreProtocolErrorsWithTheirCloseCode) {
    const auto verdict = [](const std::string& bytes) {
        p::ws_framer f(1000);
        f.feed(bytes);
        return f.next();
    };
    EXPECT_EQ(verdict(frame("x", 1, true, false)).code, 1002);       // unmasked
    EXPECT_EQ(verdict(frame("x", 2)).code, 1003);                    // binary
    EXPECT_EQ(verdict(frame("x", 0)).code, 1002);                    // continuation of nothing
    EXPECT_EQ(verdict(frame("x", 3)).code, 1002);                    // unknown opcode
    EXPECT_EQ(verdict(frame("x", 9, false)).code, 1002);             // fragmented ping
    EXPECT_EQ(verdict(frame(std::string(126, 'x'), 9)).code, 1002);  // control over 125
    EXPECT_EQ(verdict(frame("x", 8)).code, 1002);                    // close with one byte
    std::string rsv = frame("x");
    rsv[0] = static_cast<char>(rsv[0] | 0x40);
    EXPECT_EQ(verdict(rsv).code, 1002);  // a reserved bit
    EXPECT_EQ(verdict(frame("a", 1, false) + frame("b", 1)).status, p::ws_status::protocol_error);
}

TEST(WsFramer, TheServersFramesAreUnmaskedWithTheShortestLength) {
    EXPECT_EQ(p::ws_frame_header(p::ws_opcode::text, 5), std::string("\x81\x05", 2));
    EXPECT_EQ(p::ws_frame_header(p::ws_opcode::text, 126), std::string("\x81\x7e\x00\x7e", 4));
    EXPECT_EQ(p::ws_frame_header(p::ws_opcode::pong, 70000),
              std::string("\x8a\x7f\x00\x00\x00\x00\x00\x01\x11\x70", 10));
    const auto c = p::ws_close_frame(1009, std::string(200, 'y'));
    EXPECT_EQ(c.size(), 2U + 125U);  // a control frame's payload stays within 125 bytes
    EXPECT_EQ(c.substr(0, 4), std::string("\x88\x7d\x03\xf1", 4));
}

TEST(WsFramer, GivesBackTheBuffersOfALongMessageOnceItIsRead) {
    const std::string big(300'000, 'x');
    p::ws_framer f(1'000'000);
    f.feed(frame(big.substr(0, 150'000), 1, false) + frame(big.substr(150'000), 0, true));
    auto whole = f.next();
    ASSERT_EQ(whole.status, p::ws_status::text);
    EXPECT_EQ(whole.payload, big);
    EXPECT_GE(f.capacity(), big.size());
    EXPECT_EQ(f.next().status, p::ws_status::need_more);  // the message returned is dropped here
    (void)f.prepare(64 * 1024);
    EXPECT_LE(f.capacity(), 128U * 1024);
    f.feed(frame("after"));
    auto after = f.next();
    ASSERT_EQ(after.status, p::ws_status::text);
    EXPECT_EQ(after.payload, "after");
}
