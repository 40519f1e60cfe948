#include "ecsd/protocol/json_parse.hpp"

#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../../support/same_json.hpp"

using nlohmann::json;

TEST(ParseJson, ReadsEveryTextAsNlohmannDoes) {
    const std::vector<std::string> texts = {
        R"({"jsonrpc":"2.0","id":1,"method":"world.get_components","params":{"entity":4294967296}})",
        R"({"a":1,"a":2,"b":[1,-1,1.5,-0.0,1e3,1E-3,0,true,false,null,"s"]})",  // last "a" wins
        R"(-0)",
        R"([-0, 0, -1])",
        R"(18446744073709551615)",
        R"(18446744073709551616)",  // past 64 bits: nlohmann makes it a double
        R"(-9223372036854775808)",
        R"(-9223372036854775809)",
        R"(1e400)",
        R"(0.1)",
        R"(2.2250738585072011e-308)",
        R"("caf\u00e9 \ud83d\ude00")",
        R"("\ud800")",  // a lone surrogate
        R"("\udc00")",
        "\"caf\xc3\xa9\"",
        "\"\xff\"",   // not UTF-8
        "\"a\x01\"",  // a control character in a string
        R"("\/\b\f\n\r\t\"\\")",
        " \t\r\n{ } ",
        "{}",
        "[]",
        "",
        "{",
        "[1,]",
        "{\"a\":1,}",
        "01",
        "1.",
        "nul",
        "true false",
        "{\"a\":1}x",
        R"({"deep":[[[[[[[[[[{"x":[1,2,{"y":null}]}]]]]]]]]]]})",
        std::string(3000, '['),
    };
    for (const auto& t : texts) {
        SCOPED_TRACE(t.substr(0, 80));
        const auto want = json::parse(t, nullptr, false);
        const auto got = ecsd::protocol::parse_json(t);
        EXPECT_TRUE(ecsd::test::same_json(got, want))
            << "got " << (got.is_discarded() ? "discarded" : got.dump()) << ", json::parse gives "
            << (want.is_discarded() ? "discarded" : want.dump());
    }
}

TEST(ParseJson, IntegersWithoutASignAreUnsignedAsNlohmannReadsThem) {
    const auto v = ecsd::protocol::parse_json(R"({"a":5,"b":-5,"c":5.0})");
    EXPECT_TRUE(v["a"].is_number_unsigned());
    EXPECT_TRUE(v["b"].is_number_integer() && !v["b"].is_number_unsigned());
    EXPECT_TRUE(v["c"].is_number_float());
}
