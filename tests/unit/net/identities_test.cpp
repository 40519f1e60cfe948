// The --tokens file and the roles (rpc/identities.hpp), without sockets.
#include "rpc/identities.hpp"

#include <stdexcept>
#include <string>

#include <gtest/gtest.h>

using namespace ecsd::net;

namespace {

TEST(Identities, Sha256IsTheStandardDigestInLowercaseHex) {
    // FIPS 180-2's examples.
    EXPECT_EQ(sha256_hex("abc"), "ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad");
    EXPECT_EQ(sha256_hex(""), "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855");
}

TEST(Identities, AFileNamesEachTokensIdentityAndRole) {
    const auto alice = sha256_hex("alice-token");
    const auto bob = sha256_hex("bob-token");
    std::string upper = sha256_hex("ops-token");
    for (auto& c : upper) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    const auto t =
        identity_table::parse("# players of the test game\n\n" + alice + " alice player\n" + bob +
                                  "\tbob  observer   # a trailing comment\n" + upper + " ops admin\n",
                              "tokens.txt");
    EXPECT_EQ(t.size(), 3U);
    const auto a = t.find(alice);
    ASSERT_TRUE(a);
    EXPECT_EQ(a->name, "alice");
    EXPECT_EQ(a->what, role::player);
    EXPECT_EQ(t.find(bob)->what, role::observer);
    EXPECT_EQ(t.find(sha256_hex("ops-token"))->name, "ops");  // hex in either case
    EXPECT_FALSE(t.find(sha256_hex("mallory")));
    EXPECT_FALSE(t.find("alice"));
}

TEST(Identities, AMistakeIsRefusedWithItsLine) {
    const auto h = sha256_hex("x");
    const auto refused = [](const std::string& text) -> std::string {
        try {
            (void)identity_table::parse(text, "t");
        } catch (const std::runtime_error& e) {
            return e.what();
        }
        return "accepted";
    };
    EXPECT_EQ(refused(h + " alice"),
              "t:1: expected three fields, SHA256_HEX IDENTITY ROLE (ecsd --hash-token "
              "TOKEN prints the hash)");
    EXPECT_NE(refused("\n" + h + " alice player extra").find("t:2: expected three fields"),
              std::string::npos);
    EXPECT_NE(refused("secret alice player").find("t:1: the first field must be a token's SHA-256"),
              std::string::npos);  // a token written where its hash goes
    EXPECT_NE(refused(h + " alice root").find("unknown role 'root'"), std::string::npos);
    EXPECT_NE(refused(h + " al/ice player").find("an identity is"), std::string::npos);
    EXPECT_NE(
        refused(h + " alice player\n" + h + " bob observer").find("t:2: this token's hash is already given"),
        std::string::npos);
    EXPECT_EQ(refused("# nothing but comments\n\n   \n"), "accepted");
}

TEST(Identities, RolesFollowTheMethodsFlags) {
    const auto read = method_flags::read_only | method_flags::world_bound;
    const auto write = method_flags::mutating | method_flags::world_bound;
    const auto ops = method_flags::read_only | method_flags::operator_only;
    for (const auto r : {role::observer, role::player}) {
        EXPECT_TRUE(role_may_call(r, read));
        EXPECT_TRUE(role_may_call(r, method_flags::pre_auth | method_flags::secret));
        EXPECT_FALSE(role_may_call(r, write));
        EXPECT_FALSE(role_may_call(r, method_flags::admin));
        EXPECT_FALSE(role_may_call(r, ops));
        EXPECT_FALSE(role_may_call(r, method_flags::none));  // a method with no flag is the admin's
    }
    for (const auto f : {read, write, ops, method_flags::admin, method_flags::none})
        EXPECT_TRUE(role_may_call(role::admin, f));
    EXPECT_EQ(role_from("observer"), role::observer);
    EXPECT_FALSE(role_from("Admin"));
}

TEST(Identities, AStoreCountsItsReloads) {
    identity_store s;
    const auto g = s.generation();
    s.set(identity_table::parse(sha256_hex("t") + " a player", "x"));
    EXPECT_GT(s.generation(), g);
    EXPECT_EQ(s.find(sha256_hex("t"))->name, "a");
    s.set(identity_table{});
    EXPECT_FALSE(s.find(sha256_hex("t")));
}

}  // namespace
