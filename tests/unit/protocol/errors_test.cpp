#include "ecsd/protocol/errors.hpp"

#include <set>
#include <string>

#include <gtest/gtest.h>

namespace p = ecsd::protocol;

TEST(Errors, StandardCodesFollowJsonRpc) {
    EXPECT_EQ(p::code(p::reason::parse_error), -32700);
    EXPECT_EQ(p::code(p::reason::invalid_request), -32600);
    EXPECT_EQ(p::code(p::reason::method_not_found), -32601);
    EXPECT_EQ(p::code(p::reason::invalid_params), -32602);
    EXPECT_EQ(p::code(p::reason::internal), -32603);
}

TEST(Errors, ApplicationCodesAreUniqueAndInRange) {
    std::set<int> codes;
    std::set<std::string> names;
    for (const auto& row : p::all_reasons()) {
        EXPECT_TRUE(codes.insert(row.code).second) << row.name;
        EXPECT_TRUE(names.insert(std::string(row.name)).second) << row.name;
        const bool standard = row.code <= -32600 && row.code >= -32700;
        const bool application = row.code <= -32001 && row.code >= -32099;
        EXPECT_TRUE(standard || application) << row.name << " " << row.code;
    }
}

TEST(Errors, EveryReasonMapsToOneRowAndBackByName) {
    // The enum is the one error vocabulary (the ECS core throws it too): every value has its row,
    // and every row's wire name leads back to it.
    const auto rows = p::all_reasons();
    ASSERT_EQ(rows.size(), static_cast<std::size_t>(p::reason::action_failed) + 1);
    for (std::size_t i = 0; i < rows.size(); ++i) {
        const auto r = static_cast<p::reason>(i);
        EXPECT_EQ(p::info(r).id, r) << i;
        EXPECT_FALSE(p::name(r).empty()) << i;
        EXPECT_FALSE(p::info(r).message.empty()) << p::name(r);
        EXPECT_EQ(p::reason_from_name(p::name(r)), r) << p::name(r);
    }
    EXPECT_FALSE(p::reason_from_name("nope").has_value());
}

TEST(Errors, TheIssuedReasonSetIsComplete) {
    for (const char* name :
         {"parse_error", "invalid_request", "method_not_found", "invalid_params", "no_such_world",
          "world_exists", "no_such_entity", "no_such_component", "component_exists", "invalid_value",
          "no_such_system", "no_such_spell", "no_such_prefab", "unauthorized", "too_large", "limit_reached",
          "internal", "no_such_action", "action_failed"}) {
        EXPECT_TRUE(p::reason_from_name(name).has_value()) << name;
    }
}

TEST(Errors, RpcErrorCarriesReasonAndData) {
    p::rpc_error e(p::reason::no_such_world, "no world 'x'", {{"world", "x"}});
    EXPECT_EQ(e.why(), p::reason::no_such_world);
    EXPECT_STREQ(e.what(), "no world 'x'");
    EXPECT_EQ(e.data()["world"], "x");
}
