// json_text::number: the layout json::dump() gives a double, digits that read back exactly.
#include "ecs/json_text.hpp"

#include <bit>
#include <charconv>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <random>
#include <string>

#include <gtest/gtest.h>

namespace ecsd::ecs {
namespace {

std::string number(double v) {
    std::string out;
    json_text w(out);
    w.number(v);
    w.flush();
    return out;
}

TEST(JsonTextNumber, LaysOutDoublesAsJsonDumpDoes) {
    for (const double v :
         {0.0, -0.0, 1.0, -3.0, 0.5, 0.1, 123.456, 1e-5, 0.001, 1e15, 1e16, 123456789012345.0, 1.5e20,
          -2.5e-7, 1e100, 1e-300, std::numeric_limits<double>::max(),
          std::numeric_limits<double>::denorm_min(), 9.81, -9.81 / 60, 2.0, 100.0, -7.0, 999999999999999.0,
          1e15 - 1, 1e15 + 2, 4503599627370496.0, 0.99999999999999989,
          // dig.its with zeros just after the point, at every split of the digits
          1.05, 12.0001, 3.000000000000001, 1.4916666666666667, 123456789012345.6, 12345678.901234567,
          100000000.00000001, 0.0001234, 0.00010000000000000002, -0.5, 1.0000000000000002,
          9007199254740993.0})
        EXPECT_EQ(number(v), nlohmann::json(v).dump()) << v;
    EXPECT_EQ(number(std::nan("")), "null");
    EXPECT_EQ(number(std::numeric_limits<double>::infinity()), "null");
}

TEST(JsonText, WriteDecimalWritesWhatToCharsWrites) {
    const auto check = [](std::uint64_t v) {
        char ours[24];
        char want[24];
        const auto n = write_decimal(ours, v) - ours;
        const auto m = std::to_chars(want, want + sizeof want, v).ptr - want;
        ASSERT_EQ(std::string(ours, static_cast<std::size_t>(n)),
                  std::string(want, static_cast<std::size_t>(m)));
    };
    std::uint64_t power = 1;
    for (int digits = 0; digits < 20; ++digits) {  // every length, at its edges
        for (const std::uint64_t v : {power - 1, power, power + 1, 2 * power - 1, 9 * power}) check(v);
        if (digits < 19) power *= 10;
    }
    check(std::numeric_limits<std::uint64_t>::max());
    std::mt19937_64 rng(3);
    for (int i = 0; i < 100000; ++i) check(rng() >> (rng() % 64));
}

TEST(JsonText, TextReachesTheStringAtFlushAndWhenTheWriterGoes) {
    std::string out;
    {
        json_text w(out);
        w.raw("[");
        EXPECT_TRUE(out.empty()) << "buffered until flush()";
        w.flush();
        EXPECT_EQ(out, "[");
        // More than the buffer holds, in pieces and whole, and a value() between.
        for (int i = 0; i < 300; ++i) w.string("abcdef");
        w.raw(std::string(2000, ' '));
        w.value(nlohmann::json{{"k", "v"}});
        w.number(1.5);
        w.key("");
        w.raw("]");
    }
    std::string want = "[";
    for (int i = 0; i < 300; ++i) want += "\"abcdef\"";
    want += std::string(2000, ' ') + R"({"k":"v"}1.5"":])";
    EXPECT_EQ(out, want);
}

TEST(JsonText, APieceWritesWhatKeyWrites) {
    // Plain, escaped, empty, at the size limit and past it (kept whole, written as it is).
    const std::string at_limit(json_piece::max_size - 3, 'n');  // with its quotes and colon: max_size
    for (const std::string& name : {std::string("Position"), std::string("say \"hi\"\n"), std::string(),
                                    at_limit, at_limit + "m", std::string(300, 'L')}) {
        std::string by_key;
        std::string by_piece;
        {
            json_text a(by_key);
            json_text b(by_piece);
            const auto piece = json_piece::key(name);
            // From an empty buffer up to one about to fill: every offset at its end takes the
            // piece whole or by the copy of its own length.
            for (int i = 0; i < 700; ++i) {
                a.raw("x");
                a.key(name);
                b.raw("x");
                b.piece(piece);
            }
        }
        EXPECT_EQ(by_piece, by_key) << name;
    }
    EXPECT_EQ(json_piece::key("x", ",").text(), R"(,"x":)");
    EXPECT_TRUE(json_piece::key(at_limit).is_short());
    EXPECT_FALSE(json_piece::key(at_limit + "m").is_short());
}

TEST(JsonTextNumber, WholeNumbersAreLaidOutAsJsonDumpDoes) {
    std::mt19937_64 rng(11);
    for (int i = 0; i < 100000; ++i) {
        const auto digits = static_cast<int>(rng() % 17);  // up to 1e16: across the 1e15 edge
        double v = std::floor(std::ldexp(static_cast<double>(rng() >> 11U), -53) * std::pow(10.0, digits));
        if (i % 2 != 0) v = -v;
        ASSERT_EQ(number(v), nlohmann::json(v).dump()) << v;
    }
}

TEST(JsonTextNumber, EveryDoubleReadsBackBitForBitAndSeldomDiffersFromDump) {
    std::mt19937_64 rng(7);
    std::uniform_real_distribution<double> near(-1000, 1000);
    int differs = 0;
    const int n = 200000;
    for (int i = 0; i < n; ++i) {
        double v = 0;
        if (i % 2 == 0) {
            const std::uint64_t bits = rng();
            std::memcpy(&v, &bits, sizeof v);
            if (!std::isfinite(v)) continue;
        } else {
            v = near(rng);
        }
        const auto ours = number(v);
        const auto dump = nlohmann::json(v).dump();
        const double back = nlohmann::json::parse(ours).get<double>();
        ASSERT_EQ(std::bit_cast<std::uint64_t>(back), std::bit_cast<std::uint64_t>(v))
            << ours << " does not read back as " << dump;
        ASSERT_LE(ours.size(), dump.size()) << ours << " vs " << dump;
        // Where two shortest forms exist, or grisu2 wrote a digit too many, the digits differ.
        if (ours != dump) ++differs;
    }
    EXPECT_LT(differs, n / 100);
}

}  // namespace
}  // namespace ecsd::ecs
