#include "rpc/method_table.hpp"

#include <gtest/gtest.h>

#include "rpc/openrpc.hpp"

using namespace ecsd::net;
using nlohmann::json;

namespace {

method_info row(std::string name, method_flags flags, json params = object_schema()) {
    return {std::move(name), "test", std::move(params),
            json::object(),  flags,  [](method_context&) { return json(1); }};
}

}  // namespace

TEST(MethodTable, FindsWhatWasAdded) {
    method_table t;
    t.add(row("a.b", method_flags::read_only));
    ASSERT_NE(t.find("a.b"), nullptr);
    EXPECT_EQ(t.find("a.b")->name, "a.b");
    EXPECT_EQ(t.find("a.c"), nullptr);
    EXPECT_EQ(t.methods().size(), 1U);
}

TEST(MethodTable, RefusesBadRows) {
    method_table t;
    t.add(row("x", method_flags::none));
    EXPECT_THROW(t.add(row("x", method_flags::none)), std::invalid_argument);
    EXPECT_THROW(t.add(row("y", method_flags::read_only | method_flags::mutating)), std::invalid_argument);
    EXPECT_THROW(t.add(row("z", method_flags::none, json{{"type", "array"}})), std::invalid_argument);
    EXPECT_THROW(t.add(row("w", method_flags::none, json{{"type", "object"}, {"propertees", 1}})),
                 std::invalid_argument);
    EXPECT_THROW(t.add(method_info{"v", "", json::object(), json::object(), method_flags::none, nullptr}),
                 std::invalid_argument);
}

TEST(MethodTable, WorldBoundMethodsGetAWorldParam) {
    method_table t;
    t.add(row("world.thing", method_flags::world_bound | method_flags::read_only,
              object_schema({{"n", {{"type", "integer"}}}})));
    const auto* m = t.find("world.thing");
    ASSERT_NE(m, nullptr);
    EXPECT_EQ(m->params["properties"]["world"]["default"], "default");
    EXPECT_FALSE(m->compiled_params.validate(json{{"world", "w"}, {"n", 1}}));
    EXPECT_TRUE(m->compiled_params.validate(json{{"world", 3}}));
    EXPECT_TRUE(m->compiled_params.validate(json{{"world", ""}}));
}

TEST(MethodTable, FlagNames) {
    EXPECT_EQ(flag_names(method_flags::world_bound | method_flags::mutating),
              (std::vector<std::string>{"mutating", "world_bound"}));
}

TEST(OpenRpc, DescribesEveryMethodByName) {
    method_table t;
    t.add(row("one", method_flags::read_only,
              object_schema({{"a", {{"type", "string"}, {"description", "A"}}}, {"b", {{"type", "integer"}}}},
                            {"a"})));
    t.add(row("two", method_flags::world_bound | method_flags::mutating));
    const auto doc = make_openrpc(t);
    EXPECT_EQ(doc["openrpc"], "1.2.6");
    ASSERT_EQ(doc["methods"].size(), 2U);
    const auto& one = doc["methods"][0];
    EXPECT_EQ(one["name"], "one");
    EXPECT_EQ(one["paramStructure"], "by-name");
    ASSERT_EQ(one["params"].size(), 2U);
    EXPECT_EQ(one["params"][0]["name"], "a");
    EXPECT_EQ(one["params"][0]["required"], true);
    EXPECT_EQ(one["params"][0]["description"], "A");
    EXPECT_EQ(one["params"][1]["required"], false);
    EXPECT_EQ(doc["methods"][1]["params"][0]["name"], "world");
    EXPECT_EQ(doc["methods"][1]["x-flags"], json({"mutating", "world_bound"}));
    EXPECT_EQ(doc["components"]["errors"]["no_such_entity"]["code"], -32003);
}

// A text or error answer carries no tree: `method_answer a{json()}` once made it `[null]` (the
// initializer-list constructor), three allocations on every answer given as text.
TEST(MethodAnswer, TextAndErrorAnswersCarryANullTree) {
    auto text = method_answer::text(R"({"entity":7})");
    EXPECT_TRUE(text.value().is_null());
    EXPECT_EQ(text.text(), R"({"entity":7})");
    auto error = method_answer::error(ecsd::protocol::reason::invalid_params, "no");
    EXPECT_TRUE(error.value().is_null());
    ASSERT_TRUE(error.failed().has_value());
    EXPECT_EQ(error.failed()->message, "no");
    method_answer tree = json{{"a", 1}};
    EXPECT_TRUE(tree.value().is_object());
}
