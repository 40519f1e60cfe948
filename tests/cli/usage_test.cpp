// ecsctl's help and usage errors (exit 2): nothing here needs a server, and nothing is sent.

#include <gtest/gtest.h>

#include "fake_server.hpp"
#include "process.hpp"

namespace ecsd::test {
namespace {

bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

run_result ecsctl(std::vector<std::string> args, const std::string& input = {},
                  const std::map<std::string, std::string>& env = {}) {
    args.insert(args.begin(), ECSCTL_PATH);
    return run(args, input, env);
}

TEST(ecsctl_usage, help_lists_verbs_env_vars_and_exit_codes) {
    const auto r = ecsctl({"--help"});
    EXPECT_EQ(r.exit_code, 0);
    for (const char* part : {"spawn", "system-entities", "query", "prefab", "ECSD_HOST", "ECSD_PORT",
                             "ECSD_TOKEN", "ECSD_WORLD", "ECSCTL_TIMEOUT", "Exit codes", "Examples"}) {
        EXPECT_TRUE(contains(r.out, part)) << part << " missing from\n" << r.out;
    }
}

TEST(ecsctl_usage, verb_help_shows_method_and_examples) {
    for (const std::vector<std::string>& args : std::vector<std::vector<std::string>>{
             {"spawn", "--help"}, {"help", "spawn"}, {"query", "-h"}, {"world", "create", "--help"}}) {
        const auto r = ecsctl(args);
        EXPECT_EQ(r.exit_code, 0) << args[0];
        EXPECT_TRUE(contains(r.out, "Examples:")) << r.out;
        EXPECT_TRUE(contains(r.out, "Calls world.")) << r.out;
    }
}

TEST(ecsctl_usage, version) {
    const auto r = ecsctl({"--version"});
    EXPECT_EQ(r.exit_code, 0);
    EXPECT_TRUE(contains(r.out, "ecsctl ")) << r.out;
}

TEST(ecsctl_usage, mistakes_exit_2_and_send_nothing) {
    fake_server server(
        [](const std::string&) { return std::string(R"({"jsonrpc":"2.0","id":1,"result":null})") + "\n"; });
    const std::string port = std::to_string(server.port());
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"frobnicate"},
                                               {"get"},
                                               {"get", "not-a-number"},
                                               {"get", "-1"},
                                               {"spawn", "Position={x:1}"},
                                               {"spawn", "Position="},
                                               {"remove", "1"},
                                               {"step", "many"},
                                               {"query"},
                                               {"call"},
                                               {"call", "world.info", "{"},
                                               {"world"},
                                               {"--output", "yaml", "ping"},
                                               {"help", "no-such-verb"},
                                               {"-f", "/no/such/script.ecs"}}) {
        auto full = args;
        full.insert(full.begin(), {"--port", port});
        const auto r = ecsctl(full);
        EXPECT_EQ(r.exit_code, 2) << args[0] << " " << (args.size() > 1 ? args[1] : "") << "\n" << r.err;
        EXPECT_FALSE(r.err.empty()) << args[0];
    }
    EXPECT_TRUE(server.lines().empty());
}

}  // namespace
}  // namespace ecsd::test
