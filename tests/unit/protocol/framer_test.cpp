#include "ecsd/protocol/framer.hpp"

#include <cstring>
#include <string>
#include <vector>

#include <gtest/gtest.h>

using ecsd::protocol::frame_status;
using ecsd::protocol::line_framer;

TEST(LineFramer, EmptyBufferNeedsMore) {
    line_framer f;
    EXPECT_EQ(f.next().status, frame_status::need_more);
}

TEST(LineFramer, SplitsOnLfAndStripsCr) {
    line_framer f;
    f.feed("one\ntwo\r\nthree");
    auto a = f.next();
    ASSERT_EQ(a.status, frame_status::line);
    EXPECT_EQ(a.line, "one");
    auto b = f.next();
    ASSERT_EQ(b.status, frame_status::line);
    EXPECT_EQ(b.line, "two");
    EXPECT_EQ(f.next().status, frame_status::need_more);
    EXPECT_EQ(f.buffered(), 5U);
    f.feed("\n");
    auto c = f.next();
    ASSERT_EQ(c.status, frame_status::line);
    EXPECT_EQ(c.line, "three");
    EXPECT_EQ(f.buffered(), 0U);
}

TEST(LineFramer, EmptyLinesAreLines) {
    line_framer f;
    f.feed("\n\r\n");
    EXPECT_EQ(f.next().line, "");
    auto second = f.next();
    EXPECT_EQ(second.status, frame_status::line);
    EXPECT_EQ(second.line, "");
}

TEST(LineFramer, ByteAtATime) {
    line_framer f;
    const std::string input = "{\"a\":1}\r\n{\"b\":2}\n";
    std::vector<std::string> lines;
    for (char c : input) {
        f.feed(std::string_view(&c, 1));
        for (auto fr = f.next(); fr.status == frame_status::line; fr = f.next()) lines.emplace_back(fr.line);
    }
    ASSERT_EQ(lines.size(), 2U);
    EXPECT_EQ(lines[0], "{\"a\":1}");
    EXPECT_EQ(lines[1], "{\"b\":2}");
}

TEST(LineFramer, PrepareCommitReadsInPlace) {
    line_framer f;
    auto space = f.prepare(16);
    ASSERT_GE(space.size(), 16U);
    std::memcpy(space.data(), "hi\nthere", 8);
    f.commit(8);
    EXPECT_EQ(f.next().line, "hi");
    EXPECT_EQ(f.next().status, frame_status::need_more);
    space = f.prepare(4);
    std::memcpy(space.data(), "\n", 1);
    f.commit(1);
    EXPECT_EQ(f.next().line, "there");
}

TEST(LineFramer, AReadInFlightLandsWhereItWasPreparedEvenIfEverythingWasConsumedMeanwhile) {
    // The connection prepares space and starts a read, then (on a write completing) processes the
    // lines it already had; the read then commits into the space it was given.
    line_framer f;
    f.feed("{\"a\":1}\n");
    auto space = f.prepare(64);
    ASSERT_EQ(f.next().line, "{\"a\":1}");
    EXPECT_EQ(f.next().status, frame_status::need_more);  // everything consumed while the read is pending
    const std::string_view late = "{\"b\":2}\n";
    std::memcpy(space.data(), late.data(), late.size());
    f.commit(late.size());
    const auto fr = f.next();
    ASSERT_EQ(fr.status, frame_status::line);
    EXPECT_EQ(fr.line, "{\"b\":2}") << "the old bytes at the front must not be read as the new ones";
}

TEST(LineFramer, LineAtLimitIsAccepted) {
    line_framer f(8);
    f.feed("12345678\r");
    EXPECT_EQ(f.next().status, frame_status::need_more);
    f.feed("\n");
    auto fr = f.next();
    ASSERT_EQ(fr.status, frame_status::line);
    EXPECT_EQ(fr.line, "12345678");
}

TEST(LineFramer, UnterminatedLineOverLimitIsTooLarge) {
    line_framer f(8);
    f.feed("123456789");
    EXPECT_EQ(f.next().status, frame_status::too_large);
}

TEST(LineFramer, TerminatedLineOverLimitIsTooLarge) {
    line_framer f(4);
    f.feed("ok\n12345\n");
    EXPECT_EQ(f.next().line, "ok");
    EXPECT_EQ(f.next().status, frame_status::too_large);
}

TEST(LineFramer, DefaultLimitIsOneMebibyte) {
    line_framer f;
    EXPECT_EQ(f.max_line_bytes(), 1024U * 1024U);
    std::string big(1024 * 1024, 'x');
    f.feed(big);
    EXPECT_EQ(f.next().status, frame_status::need_more);
    f.feed("x");
    EXPECT_EQ(f.next().status, frame_status::too_large);
}

TEST(LineFramer, LimitCanBeRaised) {
    line_framer f(4);
    f.feed("1234");
    EXPECT_EQ(f.next().status, frame_status::need_more);
    f.set_max_line_bytes(100);
    f.feed("56789\n");
    EXPECT_EQ(f.next().line, "123456789");
}

TEST(LineFramer, BufferDoesNotGrowWithStream) {
    line_framer f(64);
    for (int i = 0; i < 100000; ++i) {
        f.feed("{\"jsonrpc\":\"2.0\"}\n{\"partial\":");
        ASSERT_EQ(f.next().status, frame_status::line);
        ASSERT_EQ(f.next().status, frame_status::need_more);
        f.feed("1}\n");
        ASSERT_EQ(f.next().line, "{\"partial\":1}");
    }
    EXPECT_EQ(f.buffered(), 0U);
    EXPECT_LT(f.prepare(1).size(), 4096U);
}

TEST(LineFramer, GivesBackTheBufferOfALongLineOnceItIsRead) {
    line_framer f;
    const std::string big(600'000, 'x');
    f.feed(big + "\nsmall\n");
    EXPECT_GE(f.capacity(), big.size());
    EXPECT_EQ(f.next().line.size(), big.size());
    EXPECT_EQ(f.next().line, "small");
    // A read after it no longer needs the long line's room: the buffer is the read's size again.
    const auto space = f.prepare(64 * 1024);
    EXPECT_GE(space.size(), 64U * 1024);
    EXPECT_LE(f.capacity(), 128U * 1024);
    // A pending part of a line keeps the buffer as it is, and the line still comes out whole.
    f.feed(big.substr(0, 300'000));
    (void)f.prepare(64 * 1024);
    EXPECT_GE(f.capacity(), 300'000U);
    f.feed(big.substr(300'000) + "\n");
    auto line = f.next();
    ASSERT_EQ(line.status, frame_status::line);
    EXPECT_EQ(line.line, big);
}
