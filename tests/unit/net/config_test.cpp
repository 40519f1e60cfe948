#include "config.hpp"

#include <cstdlib>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "rpc/constant_time.hpp"

using namespace ecsd::net;

namespace {

std::variant<server_config, int> parse(std::vector<const char*> args) {
    args.insert(args.begin(), "ecsd");
    return parse_command_line(static_cast<int>(args.size()), args.data());
}

}  // namespace

TEST(Config, Defaults) {
    auto r = parse({});
    ASSERT_TRUE(std::holds_alternative<server_config>(r));
    const auto& c = std::get<server_config>(r);
    EXPECT_EQ(c.host, "127.0.0.1");
    EXPECT_EQ(c.port, 7777);
    EXPECT_EQ(c.max_line_bytes, 1024U * 1024U);
    EXPECT_EQ(c.max_connections, 1024U);
    EXPECT_DOUBLE_EQ(c.idle_timeout, 300.0);
    EXPECT_TRUE(c.token.empty());
    EXPECT_GE(c.threads, 1U);
}

TEST(Config, FlagsOverride) {
    auto r = parse({"--port", "0", "--host", "0.0.0.0", "--idle-timeout", "0.5", "--max-connections", "3",
                    "--log-level", "debug", "--data-dir", "/tmp/x", "--threads", "1"});
    ASSERT_TRUE(std::holds_alternative<server_config>(r));
    const auto& c = std::get<server_config>(r);
    EXPECT_EQ(c.port, 0);
    EXPECT_EQ(c.host, "0.0.0.0");
    EXPECT_DOUBLE_EQ(c.idle_timeout, 0.5);
    EXPECT_EQ(c.max_connections, 3U);
    EXPECT_EQ(c.log_level, "debug");
    EXPECT_EQ(c.data_dir, "/tmp/x");
    EXPECT_EQ(c.threads, 1U);
}

TEST(Config, EnvironmentIsTheFallback) {
    ::setenv("ECSD_PORT", "9001", 1);
    ::setenv("ECSD_TOKEN", "s3cret", 1);
    auto from_env = parse({});
    auto from_flag = parse({"--port", "9002"});
    ::unsetenv("ECSD_PORT");
    ::unsetenv("ECSD_TOKEN");
    ASSERT_TRUE(std::holds_alternative<server_config>(from_env));
    EXPECT_EQ(std::get<server_config>(from_env).port, 9001);
    EXPECT_EQ(std::get<server_config>(from_env).token, "s3cret");
    EXPECT_EQ(std::get<server_config>(from_flag).port, 9002);
}

TEST(Config, AgonesIsOnWithTheFlagOrWhenAgonesSetsItsPort) {
    const auto cfg = [](std::vector<const char*> args) {
        auto r = parse(std::move(args));
        EXPECT_TRUE(std::holds_alternative<server_config>(r));
        return std::get<server_config>(r);
    };
    EXPECT_FALSE(cfg({}).agones);
    EXPECT_TRUE(cfg({"--agones"}).agones);
    EXPECT_EQ(cfg({"--agones"}).agones_port, 9358);
    EXPECT_TRUE(cfg({"--agones-port", "9400"}).agones) << "a port given turns it on";
    ::setenv("AGONES_SDK_HTTP_PORT", "9401", 1);
    const auto from_env = cfg({});
    const auto refused = cfg({"--agones", "false"});
    ::unsetenv("AGONES_SDK_HTTP_PORT");
    EXPECT_TRUE(from_env.agones);
    EXPECT_EQ(from_env.agones_port, 9401);
    EXPECT_FALSE(refused.agones) << "--agones false wins over the environment";
    EXPECT_DOUBLE_EQ(cfg({}).agones_health, 2.0);
    testing::internal::CaptureStderr();
    EXPECT_TRUE(std::holds_alternative<int>(parse({"--agones-port", "0"})));
    EXPECT_TRUE(std::holds_alternative<int>(parse({"--agones-health", "0"})));
    (void)testing::internal::GetCapturedStderr();
}

TEST(Config, BadValuesStopTheProgram) {
    testing::internal::CaptureStderr();
    testing::internal::CaptureStdout();
    EXPECT_TRUE(std::holds_alternative<int>(parse({"--port", "70000"})));
    EXPECT_TRUE(std::holds_alternative<int>(parse({"--log-level", "loud"})));
    EXPECT_TRUE(std::holds_alternative<int>(parse({"--max-connections", "0"})));
    EXPECT_TRUE(std::holds_alternative<int>(parse({"--nope"})));
    EXPECT_EQ(std::get<int>(parse({"--help"})), 0);
    (void)testing::internal::GetCapturedStdout();
    (void)testing::internal::GetCapturedStderr();
}

TEST(Config, EchoHidesTheToken) {
    server_config c;
    c.token = "s3cret";
    const auto j = config_to_json(c);
    EXPECT_EQ(j["token"], "set");
    EXPECT_EQ(j["port"], 7777);
    EXPECT_EQ(j.dump().find("s3cret"), std::string::npos);
    EXPECT_EQ(j.size(), settings().size());
}

TEST(ConstantTime, Compares) {
    EXPECT_TRUE(constant_time_equal("abc", "abc"));
    EXPECT_TRUE(constant_time_equal("", ""));
    EXPECT_FALSE(constant_time_equal("abc", "abd"));
    EXPECT_FALSE(constant_time_equal("abc", "ab"));
    EXPECT_FALSE(constant_time_equal("ab", "abc"));
    EXPECT_FALSE(constant_time_equal("", "a"));
}

TEST(Config, ReadOnlyIsABareFlagLikeEveryBooleanSetting) {
    auto bare = parse({"--read-only", "--port", "0"});
    ASSERT_TRUE(std::holds_alternative<server_config>(bare));
    EXPECT_TRUE(std::get<server_config>(bare).read_only);
    EXPECT_EQ(std::get<server_config>(bare).port, 0);
    EXPECT_FALSE(std::get<server_config>(parse({"--read-only=false"})).read_only);
    EXPECT_TRUE(std::get<server_config>(parse({"--read-only=true"})).read_only);
}

TEST(Config, ReadOnlyTakesASeparateTrueOrFalseAsOlderReleasesDid) {
    auto given = parse({"--read-only", "true", "--port", "0"});
    ASSERT_TRUE(std::holds_alternative<server_config>(given));
    EXPECT_TRUE(std::get<server_config>(given).read_only);
    EXPECT_EQ(std::get<server_config>(given).port, 0);
    auto off = parse({"--read-only", "false"});
    ASSERT_TRUE(std::holds_alternative<server_config>(off));
    EXPECT_FALSE(std::get<server_config>(off).read_only);
    auto last = parse({"--port", "0", "--read-only"});
    ASSERT_TRUE(std::holds_alternative<server_config>(last));
    EXPECT_TRUE(std::get<server_config>(last).read_only);
    EXPECT_FALSE(std::holds_alternative<server_config>(parse({"--read-only", "maybe"})));
    EXPECT_FALSE(std::get<server_config>(parse({})).read_only);
}

TEST(Config, RepairIsABareFlagAndAnEnvironmentVariable) {
    EXPECT_FALSE(std::get<server_config>(parse({})).repair);
    auto bare = parse({"--repair", "--port", "0"});
    ASSERT_TRUE(std::holds_alternative<server_config>(bare));
    EXPECT_TRUE(std::get<server_config>(bare).repair);
    EXPECT_EQ(std::get<server_config>(bare).port, 0);
    EXPECT_FALSE(std::get<server_config>(parse({"--repair=false"})).repair);
    ::setenv("ECSD_REPAIR", "1", 1);
    auto from_env = parse({});
    ::unsetenv("ECSD_REPAIR");
    EXPECT_TRUE(std::get<server_config>(from_env).repair);
    EXPECT_EQ(config_to_json(std::get<server_config>(bare))["repair"], true);
}

// Issue 44: --help showed the variable of every flag but the bare ones (--read-only): CLI11's
// option_text, which bare flags set, replaces its whole annotation.
TEST(Config, HelpShowsTheVariableOfEveryFlagTheBareOnesToo) {
    testing::internal::CaptureStdout();
    testing::internal::CaptureStderr();
    EXPECT_EQ(std::get<int>(parse({"--help"})), 0);
    const std::string help = testing::internal::GetCapturedStdout() + testing::internal::GetCapturedStderr();
    std::size_t flags = 0;
    for (std::size_t at = help.find("\n  --"); at != std::string::npos; at = help.find("\n  --", at + 1)) {
        const auto end = help.find('\n', at + 1);
        const std::string line = help.substr(at + 1, end - at - 1);
        // Actions, not settings: they print and exit.
        if (line.rfind("  --help", 0) == 0 || line.rfind("  --version", 0) == 0 ||
            line.rfind("  --hash-token", 0) == 0)
            continue;
        ++flags;
        EXPECT_NE(line.find("(Env:"), std::string::npos) << line;
    }
    EXPECT_GT(flags, 20U) << help;
    EXPECT_NE(help.find("--read-only [true|false] (Env:ECSD_READ_ONLY)"), std::string::npos) << help;
}
