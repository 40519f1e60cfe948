// ecsctl's help, usage errors (exit 2), output formats and shell completion: nothing here needs a real
// ecsd; where something must be sent, a fake line server gives fixed answers.

#include <unistd.h>

#include <filesystem>

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
    args.insert(args.begin(), ecsctl_path());
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

TEST(ecsctl_usage, help_lists_the_local_commands_of_scripts) {
    const auto r = ecsctl({"--help"});
    EXPECT_EQ(r.exit_code, 0);
    for (const char* part :
         {"expect A OP B", "repeat N COMMAND", "sleep SECONDS", "echo WORDS", "use WORLD", "$x = $i * 0.8"}) {
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

TEST(ecsctl_usage, a_group_help_shows_its_own_verbs_and_examples_only) {
    const auto world = ecsctl({"world", "--help"});
    EXPECT_EQ(world.exit_code, 0);
    EXPECT_TRUE(contains(world.out, "destroy")) << world.out;
    EXPECT_TRUE(contains(world.out, "ecsctl world create arena")) << world.out;
    EXPECT_FALSE(contains(world.out, "ecsctl -f setup.ecs")) << world.out;  // the top-level examples
    const auto prefab = ecsctl({"prefab", "--help"});
    EXPECT_TRUE(contains(prefab.out, "ecsctl prefab define tree")) << prefab.out;
    EXPECT_FALSE(contains(prefab.out, "ecsctl ping")) << prefab.out;
}

TEST(ecsctl_usage, unknown_verb_reads_the_same_on_the_command_line_and_in_scripts) {
    fake_server server(
        [](const std::string&) { return std::string(R"({"jsonrpc":"2.0","id":1,"result":null})") + "\n"; });
    const auto cli = ecsctl({"--port", std::to_string(server.port()), "spwan", "Position"});
    EXPECT_EQ(cli.exit_code, 2);
    EXPECT_EQ(cli.err, "ecsctl: unknown verb 'spwan'; did you mean 'spawn'? (help lists them)\n");
    const auto script = ecsctl({"--port", std::to_string(server.port())}, "spwan Position\n");
    EXPECT_EQ(script.exit_code, 2);
    EXPECT_EQ(script.err, "<stdin>:1: unknown verb 'spwan'; did you mean 'spawn'? (help lists them)\n");
    const auto group = ecsctl({"--port", std::to_string(server.port()), "world", "creat", "x"});
    EXPECT_EQ(group.exit_code, 2);
    EXPECT_TRUE(contains(group.err, "unknown verb 'world creat'; did you mean 'world create'?")) << group.err;
    EXPECT_TRUE(server.lines().empty());
}

TEST(ecsctl_usage, output_formats_and_precision) {
    // Whatever is asked, the server answers one result with long floats and a long string.
    const std::string note(50, 'n');
    const std::string result = R"({"x":1.0000000000000013,"pi":3.14159265358979,"note":")" + note + R"("})";
    fake_server server(
        [&](const std::string&) { return R"({"jsonrpc":"2.0","id":1,"result":)" + result + "}\n"; });
    const std::string port = std::to_string(server.port());
    const auto table = ecsctl({"--port", port, "-o", "table", "call", "m"});
    EXPECT_EQ(table.exit_code, 0) << table.err;
    EXPECT_EQ(table.out, "KEY   VALUE\nnote  " + note.substr(0, 39) + "…\npi    3.14159\nx     1\n");
    const auto three = ecsctl({"--port", port, "-o", "table", "--precision", "3", "call", "m"});
    EXPECT_TRUE(contains(three.out, "pi    3.14\n")) << three.out;
    const auto wide = ecsctl({"--port", port, "-o", "wide", "--precision", "0", "call", "m"});
    EXPECT_EQ(wide.out,
              "KEY   VALUE\nnote  " + note + "\npi    3.14159265358979\nx     1.0000000000000013\n");
    const auto yaml = ecsctl({"--port", port, "-o", "yaml", "call", "m"});
    EXPECT_EQ(yaml.out, "---\nx: 1.0000000000000013\npi: 3.14159265358979\nnote: " + note + "\n");
    for (const std::vector<std::string>& args :
         std::vector<std::vector<std::string>>{{"-j"}, {"--json"}, {"-o", "json"}, {}}) {  // {}: piped
        auto full = args;
        full.insert(full.begin(), {"--port", port, "--precision", "2"});
        full.insert(full.end(), {"call", "m"});
        EXPECT_EQ(ecsctl(full).out, result + "\n");  // JSON is exact, whatever --precision says
    }
    const auto bad = ecsctl({"--port", port, "-o", "xml", "call", "m"});
    EXPECT_EQ(bad.exit_code, 2);
    EXPECT_TRUE(contains(bad.err, "table, wide, json or yaml")) << bad.err;
}

TEST(ecsctl_usage, shell_completes_query_text_and_names_before_equals) {
    // A server that knows three components and answers null to anything else, echoing ids.
    fake_server server([](const std::string& line) {
        const auto request = nlohmann::json::parse(line);
        nlohmann::json result = nullptr;
        if (request["method"] == "world.list_components") {
            result = nlohmann::json::parse(
                R"({"components":[{"name":"Position"},{"name":"Velocity"},{"name":"Frozen"}]})");
        }
        return nlohmann::json{{"jsonrpc", "2.0"}, {"id", request["id"]}, {"result", result}}.dump() + "\n";
    });
    const auto history =
        std::filesystem::temp_directory_path() / ("ecsctl_usage_history_" + std::to_string(getpid()));
    const auto r = run_on_terminal({ecsctl_path(), "--port", std::to_string(server.port())},
                                   "query 'Position, Vel\t, !Fr\t' --limit 0\n"
                                   "spawn Pos\t='{\"x\":1}'\n"
                                   "exit\n",
                                   {{"ECSCTL_HISTORY", history.string()}});
    std::filesystem::remove(history);
    EXPECT_EQ(r.exit_code, 0) << r.out;
    std::string sent;
    for (const auto& line : server.lines()) {
        sent += line + "\n";
    }
    // Completed without a blank after either name: the words reached the server as typed.
    EXPECT_TRUE(contains(sent, R"("query":"Position, Velocity, !Frozen")")) << sent;
    EXPECT_TRUE(contains(sent, R"("components":{"Position":{"x":1}})")) << sent;
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
                                               {"get", "12abc"},
                                               {"get", "-1"},
                                               {"spawn", "Position={x:1}"},
                                               {"spawn", "Position="},
                                               {"remove", "1"},
                                               {"step", "many"},
                                               {"query"},
                                               {"call"},
                                               {"call", "world.info", "{"},
                                               {"world"},
                                               {"--output", "xml", "ping"},
                                               {"--precision", "18", "ping"},
                                               {"--precision", "-1", "ping"},
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
