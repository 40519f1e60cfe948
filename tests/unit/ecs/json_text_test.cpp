// json_text::number: the layout json::dump() gives a double, digits that read back exactly.
#include "ecs/json_text.hpp"

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
    return out;
}

TEST(JsonTextNumber, LaysOutDoublesAsJsonDumpDoes) {
    for (const double v : {0.0,
                           -0.0,
                           1.0,
                           -3.0,
                           0.5,
                           0.1,
                           123.456,
                           1e-5,
                           0.001,
                           1e15,
                           1e16,
                           123456789012345.0,
                           1.5e20,
                           -2.5e-7,
                           1e100,
                           1e-300,
                           std::numeric_limits<double>::max(),
                           std::numeric_limits<double>::denorm_min(),
                           9.81,
                           -9.81 / 60})
        EXPECT_EQ(number(v), nlohmann::json(v).dump()) << v;
    EXPECT_EQ(number(std::nan("")), "null");
    EXPECT_EQ(number(std::numeric_limits<double>::infinity()), "null");
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
        ASSERT_EQ(std::memcmp(&back, &v, sizeof v), 0) << ours << " does not read back as " << dump;
        ASSERT_LE(ours.size(), dump.size()) << ours << " vs " << dump;
        // Where two shortest forms exist, or grisu2 wrote a digit too many, the digits differ.
        if (ours != dump) ++differs;
    }
    EXPECT_LT(differs, n / 100);
}

}  // namespace
}  // namespace ecsd::ecs
