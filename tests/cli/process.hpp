#pragma once

// Test helpers that run ecsctl: with pipes for its input and output, or on a pseudo-terminal.
// (The real ecsd comes from tests/support: ecsd_server.)

#include <sys/types.h>

#include <chrono>
#include <functional>
#include <map>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

#include <nlohmann/json.hpp>

namespace ecsd::test {

/// @brief What a finished program left behind.
struct run_result {
    int exit_code = -1;  ///< -1 when it was killed by a signal (or timed out)
    std::string out;
    std::string err;
    bool timed_out = false;
};

/// @brief Runs `argv` with `input` on its standard input (a pipe, so not a terminal), the test's
///        environment minus every ECSD_* and ECSCTL_* variable, plus `env`; kills it after `limit`.
[[nodiscard]] run_result run(const std::vector<std::string>& argv, const std::string& input = {},
                             const std::map<std::string, std::string>& env = {},
                             std::chrono::milliseconds limit = std::chrono::seconds(20));

/// @brief Like run(), and sends `sig` to the program once, as soon as its standard output holds
///        `lines` lines (Ctrl-C on a pipe: SIGINT).
[[nodiscard]] run_result run_and_signal(const std::vector<std::string>& argv, std::size_t lines, int sig,
                                        const std::map<std::string, std::string>& env = {},
                                        std::chrono::milliseconds limit = std::chrono::seconds(20));

/// @brief Runs `argv` on a pseudo-terminal (so it sees a terminal on stdin and stdout), types `input`,
///        and returns everything it printed on the terminal.
[[nodiscard]] run_result run_on_terminal(const std::vector<std::string>& argv, const std::string& input,
                                         const std::map<std::string, std::string>& env = {},
                                         std::chrono::milliseconds limit = std::chrono::seconds(20));

/// @brief True when `part` occurs in `text` (output checks).
/// @brief The ecsctl under test: this build's, unless ECSCTL_TEST_BINARY names another
/// (scripts/test.sh --sanitize runs these tests against the sanitized build's ecsctl).
[[nodiscard]] std::string ecsctl_path();

inline bool contains(const std::string& text, const std::string& part) {
    return text.find(part) != std::string::npos;
}

/// @brief Every line of a program's stdout parsed as JSON.
inline std::vector<nlohmann::json> json_lines(const std::string& out) {
    std::vector<nlohmann::json> values;
    std::istringstream in(out);
    for (std::string line; std::getline(in, line);) values.push_back(nlohmann::json::parse(line));
    return values;
}

}  // namespace ecsd::test
