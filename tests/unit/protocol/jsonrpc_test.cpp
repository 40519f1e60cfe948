#include "ecsd/protocol/jsonrpc.hpp"

#include <functional>
#include <limits>
#include <random>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "../../support/same_json.hpp"

namespace p = ecsd::protocol;
using nlohmann::json;

namespace {

const p::request& as_request(const p::message& m) {
    EXPECT_TRUE(std::holds_alternative<p::request>(m));
    return std::get<p::request>(m);
}

const p::bad_message& as_bad(const p::message& m) {
    EXPECT_TRUE(std::holds_alternative<p::bad_message>(m));
    return std::get<p::bad_message>(m);
}

}  // namespace

TEST(ParseLine, SingleRequest) {
    auto out = p::parse_line(R"({"jsonrpc":"2.0","id":7,"method":"server.ping","params":{"a":1}})");
    EXPECT_FALSE(out.batch);
    ASSERT_EQ(out.messages.size(), 1U);
    const auto& r = as_request(out.messages[0]);
    EXPECT_EQ(r.id, 7);
    EXPECT_FALSE(r.notification);
    EXPECT_EQ(r.method, "server.ping");
    EXPECT_EQ(r.params["a"], 1);
}

TEST(ParseLine, NotificationHasNoId) {
    auto out = p::parse_line(R"({"jsonrpc":"2.0","method":"server.ping"})");
    const auto& r = as_request(out.messages.at(0));
    EXPECT_TRUE(r.notification);
    EXPECT_TRUE(r.params.is_null());
}

TEST(ParseLine, NullIdIsARequestNotANotification) {
    auto out = p::parse_line(R"({"jsonrpc":"2.0","id":null,"method":"m"})");
    EXPECT_FALSE(as_request(out.messages.at(0)).notification);
}

TEST(ParseLine, MalformedJsonIsParseErrorWithNullId) {
    for (const char* line : {"{", "nope", R"({"jsonrpc":"2.0","id":1,)", "1e400", "\xff\xfe", ""}) {
        auto out = p::parse_line(line);
        ASSERT_EQ(out.messages.size(), 1U) << line;
        const auto& b = as_bad(out.messages[0]);
        EXPECT_EQ(b.why, p::reason::parse_error) << line;
        EXPECT_TRUE(b.id.is_null());
    }
}

TEST(ParseLine, InvalidRequestsKeepTheirIdWhenReadable) {
    auto out = p::parse_line(R"({"jsonrpc":"1.0","id":"abc","method":"m"})");
    const auto& b = as_bad(out.messages.at(0));
    EXPECT_EQ(b.why, p::reason::invalid_request);
    EXPECT_EQ(b.id, "abc");
    EXPECT_EQ(as_bad(p::parse_line(R"({"jsonrpc":"2.0","id":1,"method":5})").messages.at(0)).why,
              p::reason::invalid_request);
    EXPECT_EQ(as_bad(p::parse_line(R"({"jsonrpc":"2.0","id":1,"method":"m","params":3})").messages.at(0)).why,
              p::reason::invalid_request);
    const auto obj_line = p::parse_line(R"({"jsonrpc":"2.0","id":{},"method":"m"})");
    const auto& obj_id = as_bad(obj_line.messages.at(0));
    EXPECT_EQ(obj_id.why, p::reason::invalid_request);
    EXPECT_TRUE(obj_id.id.is_null());
    EXPECT_EQ(as_bad(p::parse_line("42").messages.at(0)).why, p::reason::invalid_request);
}

TEST(ParseLine, EmptyBatchIsOneInvalidRequest) {
    auto out = p::parse_line("[]");
    EXPECT_FALSE(out.batch);
    EXPECT_EQ(as_bad(out.messages.at(0)).why, p::reason::invalid_request);
}

TEST(ParseLine, BatchMixesValidAndInvalid) {
    auto out = p::parse_line(R"([{"jsonrpc":"2.0","id":1,"method":"a"},1,{"jsonrpc":"2.0","method":"n"}])");
    EXPECT_TRUE(out.batch);
    ASSERT_EQ(out.messages.size(), 3U);
    EXPECT_EQ(as_request(out.messages[0]).method, "a");
    EXPECT_EQ(as_bad(out.messages[1]).why, p::reason::invalid_request);
    EXPECT_TRUE(as_request(out.messages[2]).notification);
}

TEST(ParseLine, BatchSizeIsLimited) {
    std::string line = "[";
    for (int i = 0; i < 5; ++i) line += R"({"jsonrpc":"2.0","id":1,"method":"a"},)";
    line.back() = ']';
    p::parse_limits limits;
    limits.max_batch = 4;
    EXPECT_EQ(as_bad(p::parse_line(line, limits).messages.at(0)).why, p::reason::limit_reached);
}

TEST(ParseLine, DeepNestingIsRefusedBeforeParsing) {
    std::string deep = R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"x":)" + std::string(70, '[') +
                       std::string(70, ']') + "}}";
    const auto deep_line = p::parse_line(deep);
    const auto& b = as_bad(deep_line.messages.at(0));
    EXPECT_EQ(b.why, p::reason::invalid_request);
    EXPECT_EQ(b.data["limit"], 64);
    std::string ok = R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"x":)" + std::string(60, '[') +
                     std::string(60, ']') + "}}";
    EXPECT_EQ(as_request(p::parse_line(ok).messages.at(0)).method, "m");
}

TEST(Responses, ResultLine) {
    auto line = p::make_result(3, "pong");
    EXPECT_EQ(line, R"({"jsonrpc":"2.0","id":3,"result":"pong"})");
    EXPECT_EQ(json::parse(line)["result"], "pong");
}

TEST(Responses, ResultTextIsTheSameLineAsAResultTree) {
    const json result{{"entity", 7}, {"components", {{"Position", {{"x", 0.5}}}}}};
    EXPECT_EQ(p::make_result_text("a", result.dump()), p::make_result("a", result));
}

TEST(Responses, EveryKindOfIdIsEchoedAsTheSerializerWritesIt) {
    // Integers and plain strings are written without the serializer; the text must not differ.
    const std::vector<json> ids{json(0U),
                                json(42U),
                                json(std::numeric_limits<std::uint64_t>::max()),
                                json(-5),
                                json(std::numeric_limits<std::int64_t>::min()),
                                json("abc"),
                                json(""),
                                json("a\"b"),
                                json("back\\slash"),
                                json("tab\there"),
                                json("\u00e9t\u00e9"),
                                json("\x7f"),
                                json(nullptr)};
    for (const auto& id : ids) {
        const std::string envelope = R"({"jsonrpc":"2.0","id":)" + id.dump();
        EXPECT_EQ(p::make_result_text(id, "1"), envelope + R"(,"result":1})") << id;
        EXPECT_EQ(p::make_error_text(id, "2"), envelope + R"(,"error":2})") << id;
        EXPECT_EQ(p::make_response(id, json(3), false), envelope + R"(,"result":3})") << id;
    }
}

TEST(Responses, AppendJsonWritesWhatDumpWrites) {
    // Small trees of integers, plain strings, booleans and null are written without the
    // serializer; anything else (doubles, strings to escape, deep trees) goes through it. Random
    // trees of every kind of value, at every depth around the edge: the text must not differ.
    std::mt19937_64 rng(5);
    const std::vector<json> leaves{json(nullptr),
                                   json(true),
                                   json(false),
                                   json(0U),
                                   json(std::numeric_limits<std::uint64_t>::max()),
                                   json(-7),
                                   json(std::numeric_limits<std::int64_t>::min()),
                                   json(""),
                                   json("plain ~ text"),
                                   json("a\"quote"),
                                   json("back\\slash"),
                                   json("\x01"),
                                   json("\x7f"),
                                   json("\u00e9"),
                                   json(0.5),
                                   json(-1e300),
                                   json::object(),
                                   json::array()};
    const std::vector<std::string> keys{"a", "b c", "", "q\"", "\u00e9", "zz"};
    std::function<json(int)> tree = [&](int depth) -> json {
        if (depth == 0 || rng() % 3 == 0) return leaves[rng() % leaves.size()];
        json out = rng() % 2 == 0 ? json::object() : json::array();
        const auto n = rng() % 4;
        for (std::uint64_t i = 0; i < n; ++i) {
            if (out.is_object()) {
                out[keys[rng() % keys.size()]] = tree(depth - 1);
            } else {
                out.push_back(tree(depth - 1));
            }
        }
        return out;
    };
    for (int i = 0; i < 20000; ++i) {
        const json v = tree(static_cast<int>(rng() % 12));
        std::string ours;
        p::append_json(ours, v);
        ASSERT_EQ(ours, v.dump(-1, ' ', false, json::error_handler_t::replace));
    }
    for (const auto& leaf : leaves) {
        std::string ours = "x";  // appended, not replaced
        p::append_json(ours, leaf);
        EXPECT_EQ(ours, "x" + leaf.dump());
    }
}

TEST(Responses, ErrorLineCarriesReasonAndData) {
    auto parsed = json::parse(p::make_error("x", p::reason::no_such_world, "no world 'w'", {{"world", "w"}}));
    EXPECT_EQ(parsed["jsonrpc"], "2.0");
    EXPECT_EQ(parsed["id"], "x");
    EXPECT_EQ(parsed["error"]["code"], -32001);
    EXPECT_EQ(parsed["error"]["message"], "no world 'w'");
    EXPECT_EQ(parsed["error"]["data"]["reason"], "no_such_world");
    EXPECT_EQ(parsed["error"]["data"]["world"], "w");
}

TEST(Responses, DefaultMessageWhenNoDetailIsGiven) {
    EXPECT_EQ(p::error_object(p::reason::internal)["message"], "Internal error");
    EXPECT_EQ(p::error_object(p::reason::no_such_entity, "gone")["code"], -32003);
    EXPECT_EQ(p::error_object(p::reason::no_such_entity, "gone")["message"], "gone");
}

TEST(Responses, InvalidUtf8IsReplacedNotThrown) {
    EXPECT_NO_THROW((void)p::make_result(1, std::string("\xff")));
}

TEST(Requests, RoundTrip) {
    auto line = p::make_request(1, "world.step", {{"ticks", 2}});
    const auto parsed = p::parse_line(line);
    const auto& r = as_request(parsed.messages.at(0));
    EXPECT_EQ(r.params["ticks"], 2);
    EXPECT_TRUE(as_request(p::parse_line(p::make_notification("server.ping")).messages.at(0)).notification);
}

// Issue 21, low: a valid request followed by a NUL and garbage used to run.
TEST(ParseLine, ALineWithANulByteIsAParseErrorAndRunsNothing) {
    const std::string line =
        std::string(R"({"jsonrpc":"2.0","id":1,"method":"world.despawn_entity"})") + '\0' + "garbage";
    const auto out = p::parse_line(line);
    ASSERT_EQ(out.messages.size(), 1U);
    EXPECT_EQ(as_bad(out.messages[0]).why, p::reason::parse_error);
    EXPECT_NE(as_bad(out.messages[0]).detail.find("at byte 57: a NUL byte"), std::string::npos)
        << as_bad(out.messages[0]).detail;
}

TEST(ParseLine, ParseErrorsSpeakPlainlyWithoutTheLibrarysTags) {
    const auto detail_of = [](const char* line) { return as_bad(p::parse_line(line).messages.at(0)).detail; };
    EXPECT_EQ(detail_of(R"({"jsonrpc":"2.0"}})"), "invalid JSON at byte 18: unexpected '}'");
    EXPECT_EQ(detail_of("garbage"), "invalid JSON at byte 1: unexpected 'g'");
    EXPECT_EQ(detail_of(R"({"a":)"), "invalid JSON at byte 6: unexpected end of input");
    EXPECT_EQ(detail_of("{\"a\":\"\x01\"}"), "invalid JSON at byte 7: unexpected byte 0x01");
    EXPECT_EQ(detail_of(R"({"x":1e400})"), "invalid JSON: a number too large to represent (beyond 1.8e308)");
    for (const char* line :
         {"garbage", R"({"x":1e400})", R"({"a":)", "[1,]", "{\"a\":\"\xff\"}", "tru", "\"\\q\""}) {
        const auto detail = detail_of(line);
        EXPECT_EQ(detail.rfind("invalid JSON", 0), 0U) << detail;
        for (const char* leak :
             {"json.exception", "parse error", "syntax error", "last read", "while parsing"})
            EXPECT_EQ(detail.find(leak), std::string::npos) << detail;
    }
}

TEST(ParseLine, AnIdThatIsNotAnIntegerOrTooLargeIsRefusedNotEchoedAsAFloat) {
    for (const char* line : {R"({"jsonrpc":"2.0","id":18446744073709551616,"method":"server.ping"})",
                             R"({"jsonrpc":"2.0","id":1.5,"method":"server.ping"})"}) {
        const auto out = p::parse_line(line);
        const auto& bad = as_bad(out.messages[0]);
        EXPECT_EQ(bad.why, p::reason::invalid_request) << line;
        EXPECT_TRUE(bad.id.is_null());
    }
    EXPECT_EQ(
        as_request(p::parse_line(R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"m"})").messages[0])
            .id,
        18446744073709551615ULL);
    EXPECT_EQ(as_request(p::parse_line(R"({"jsonrpc":"2.0","id":-3,"method":"m"})").messages[0]).id, -3);
}

// The cheap error path writes the same text as the error object it stands for.
TEST(ErrorText, IsTheTextOfTheErrorObject) {
    using ecsd::protocol::reason;
    for (const auto why :
         {reason::no_such_entity, reason::invalid_params, reason::internal, reason::too_large}) {
        // Plain text is written directly; anything the serializer escapes or replaces goes through it.
        for (const std::string detail :
             {"", "entity 4294967297 does not exist", "a \"quoted\" name\n\x01", "back\\slash", "tab\there",
              "del\x7f", "caf\xc3\xa9", "bad \xff byte", "~ !#$%&'()*+,-./:;<=>?@[]^_`{|}"}) {
            // As every answer is written: invalid UTF-8 replaced, not thrown.
            const auto dump = [](const nlohmann::json& j) {
                return j.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace);
            };
            EXPECT_EQ(ecsd::protocol::error_text(why, detail),
                      dump(ecsd::protocol::error_object(why, detail)));
            EXPECT_EQ(ecsd::protocol::error_text(why, detail, {{"limit", 3}}),
                      dump(ecsd::protocol::error_object(why, detail, {{"limit", 3}})));
        }
    }
    const auto line = ecsd::protocol::make_error(7, reason::no_such_entity, "gone");
    const auto parsed = nlohmann::json::parse(line);
    EXPECT_EQ(parsed["id"], 7);
    EXPECT_EQ(parsed["error"]["data"]["reason"], "no_such_entity");
    EXPECT_EQ(parsed["error"]["message"], "gone");
}

// parse_line reads a request from simdjson's DOM without building its envelope; parse_line_tree
// reads the whole line into one nlohmann tree. Every line answers the same either way.
TEST(ParseLine, TheDomReadingAnswersWhatTheTreeReadingAnswers) {
    const std::vector<std::string> lines = {
        R"({"jsonrpc":"2.0","id":1,"method":"world.get_components","params":{"world":"default","entity":4294967296}})",
        R"({"jsonrpc":"2.0","method":"server.ping"})",
        R"({"jsonrpc":"2.0","id":"abc","method":"m","params":[1,-2,3.5,"x",null,true,{"a":[]}]})",
        R"({"jsonrpc":"2.0","id":null,"method":"m","params":{}})",
        R"({"jsonrpc":"2.0","id":-7,"method":"m"})",
        R"({"jsonrpc":"2.0","id":18446744073709551615,"method":"m"})",
        R"({"jsonrpc":"2.0","id":18446744073709551616,"method":"m"})",
        R"({"jsonrpc":"2.0","id":1.5,"method":"m"})",
        R"({"jsonrpc":"2.0","id":true,"method":"m"})",
        R"({"jsonrpc":"2.0","id":[1],"method":"m"})",
        R"({"jsonrpc":"1.0","id":1,"method":"m"})",
        R"({"jsonrpc":2.0,"id":1,"method":"m"})",
        R"({"id":1,"method":"m"})",
        R"({"jsonrpc":"2.0","id":1})",
        R"({"jsonrpc":"2.0","id":1,"method":7})",
        R"({"jsonrpc":"2.0","id":1,"method":"m","params":5})",
        R"({"jsonrpc":"2.0","id":1,"method":"m","params":"x"})",
        R"({"jsonrpc":"2.0","id":1,"id":2,"method":"a","method":"b","params":{"k":1},"params":{"k":2}})",
        R"({"jsonrpc":"2.0","id":"x","id":1.5,"method":"m"})",
        R"({"jsonrpc":"2.0","id":1,"method":"m","extra":{"deep":[[[]]]}})",
        R"({"jsonrpc":"2.0","id":""q"	","method":"m\n","params":{"a\"b":"\/"}})",
        R"({"jsonrpc":"2.0","id":1,"method":"world"})",
        R"({"jsonrpc":"2.0","id":-0,"method":"m"})",
        R"([{"jsonrpc":"2.0","id":1,"method":"a"},{"jsonrpc":"2.0","method":"b"},5,"x",[],{"id":3}])",
        R"([])",
        R"([1])",
        R"(5)",
        R"("text")",
        R"(null)",
        R"({"jsonrpc":"2.0","id":1,"method":"m",})",
        R"({"jsonrpc":"2.0","id":1,"method":"m"} trailing)",
        R"({"jsonrpc":"2.0","id":1e400,"method":"m"})",
        "{\"jsonrpc\":\"2.0\",\"id\":1,\"method\":\"m\xff\"}",
        R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":{"b":{"c":{"d":{"e":1}}}}}})",
    };
    for (const auto& line : lines) {
        EXPECT_TRUE(ecsd::test::same_parsed_line(p::parse_line(line), p::parse_line_tree(line))) << line;
    }
    // And a batch past the limit, and nesting past it, both ways.
    std::string batch = "[";
    for (int i = 0; i < 5; ++i) batch += std::string(i ? "," : "") + R"({"jsonrpc":"2.0","method":"m"})";
    batch += "]";
    const p::parse_limits small{.max_depth = 3, .max_batch = 4, .entity_read_method = {}};
    EXPECT_TRUE(ecsd::test::same_parsed_line(p::parse_line(batch, small), p::parse_line_tree(batch, small)));
    const auto nested = std::string(R"({"jsonrpc":"2.0","id":1,"method":"m","params":{"a":[[1]]}})");
    EXPECT_TRUE(
        ecsd::test::same_parsed_line(p::parse_line(nested, small), p::parse_line_tree(nested, small)));
    const auto too_many = p::parse_line(batch, small);
    ASSERT_EQ(too_many.messages.size(), 1u);
    EXPECT_EQ(std::get<p::bad_message>(too_many.messages[0]).why, p::reason::limit_reached);
    // The comparison can fail: two different requests are told apart.
    EXPECT_FALSE(ecsd::test::same_parsed_line(p::parse_line(lines[3]), p::parse_line_tree(lines[4])));
}

// world.get_components' params read typed (parse_limits::entity_read_method): exactly the shape
// {entity: id, world?: name, components?: [names]} within the schema's bounds; anything else, valid
// or not, is read as a tree, and either way the request stands for the tree the other reading builds.
TEST(ParseLine, AnEntityReadsParamsAreReadTypedOnlyInTheirExactShape) {
    p::parse_limits typed;
    typed.entity_read_method = "world.get_components";
    const auto line = [](const std::string& params, const std::string& method = "world.get_components") {
        return R"({"jsonrpc":"2.0","id":1,"method":")" + method + R"(","params":)" + params + "}";
    };
    const auto request_of = [&](const std::string& text) {
        auto parsed = p::parse_line(text, typed);
        EXPECT_EQ(parsed.messages.size(), 1U);
        EXPECT_TRUE(ecsd::test::same_parsed_line(parsed, p::parse_line_tree(text))) << text;
        return std::get<p::request>(parsed.messages.front());
    };

    const auto all =
        request_of(line(R"({"world":"w","entity":4294967296,"components":["Position","Health"]})"));
    ASSERT_TRUE(all.read.has_value());
    EXPECT_TRUE(all.params.is_null());
    EXPECT_EQ(all.read->entity, 4294967296U);
    EXPECT_EQ(all.read->world, "w");
    EXPECT_EQ(all.read->components, (std::vector<std::string>{"Position", "Health"}));
    const auto bare = request_of(line(R"({"entity":0})"));
    ASSERT_TRUE(bare.read.has_value());
    EXPECT_FALSE(bare.read->world.has_value());
    EXPECT_FALSE(bare.read->components.has_value());
    const auto none = request_of(line(R"({"entity":7,"components":[]})"));
    ASSERT_TRUE(none.read && none.read->components);
    EXPECT_TRUE(none.read->components->empty());
    EXPECT_TRUE(request_of(line(R"({"entity":9007199254740991})")).read.has_value());  // 2^53 - 1
    EXPECT_TRUE(request_of(line(R"({"entity":1,"world":")" + std::string(64, 'a') + R"("})")).read);

    std::string many = R"({"entity":1,"components":[)";
    for (int i = 0; i < 1025; ++i) many += std::string(i ? "," : "") + R"("C")";
    many += "]}";
    const std::string not_typed[] = {
        R"({"entity":"Hero"})",            // a Name: looked up in the world
        R"({"entity":1.0})",               // a double
        R"({"entity":-1})",                // below the schema's minimum
        R"({"entity":9007199254740992})",  // 2^53: past the schema's maximum
        R"({"entity":18446744073709551615})",
        R"({"world":"w"})",              // no entity
        R"({"entity":1,"entity":2})",    // a repeated key
        R"({"entity":1,"extra":true})",  // a member the schema refuses
        R"({"entity":1,"world":""})",
        R"({"entity":1,"world":5})",
        R"({"entity":1,"world":")" + std::string(65, 'a') + R"("})",
        R"({"entity":1,"components":"Position"})",
        R"({"entity":1,"components":[1]})",
        R"({"entity":1,"components":[")" + std::string(65, 'c') + R"("]})",
        many,
        R"([1])",
        R"({})",
    };
    for (const auto& params : not_typed) {
        const auto r = request_of(line(params));
        EXPECT_FALSE(r.read.has_value()) << params;
        EXPECT_FALSE(r.params.is_null()) << params;
    }
    // Only the named method's params, and only when a method is named.
    EXPECT_FALSE(request_of(line(R"({"entity":1})", "world.list_components")).read);
    EXPECT_FALSE(std::get<p::request>(p::parse_line(line(R"({"entity":1})")).messages.front()).read);
    // Each element of a batch on its own.
    const std::string batch = "[" + line(R"({"entity":1})") + "," + line(R"({"entity":"Hero"})") + "]";
    const auto parsed = p::parse_line(batch, typed);
    EXPECT_TRUE(ecsd::test::same_parsed_line(parsed, p::parse_line_tree(batch)));
    ASSERT_EQ(parsed.messages.size(), 2U);
    EXPECT_TRUE(std::get<p::request>(parsed.messages[0]).read);
    EXPECT_FALSE(std::get<p::request>(parsed.messages[1]).read);
}
