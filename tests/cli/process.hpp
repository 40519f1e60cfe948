#pragma once

// Test helpers that run real programs: one-shot runs with captured output, and a long-running ecsd.

#include <sys/types.h>

#include <chrono>
#include <map>
#include <optional>
#include <string>
#include <thread>
#include <vector>

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

/// @brief Runs `argv` on a pseudo-terminal (so it sees a terminal on stdin and stdout), types `input`,
///        and returns everything it printed on the terminal.
[[nodiscard]] run_result run_on_terminal(const std::vector<std::string>& argv, const std::string& input,
                                         const std::map<std::string, std::string>& env = {},
                                         std::chrono::milliseconds limit = std::chrono::seconds(20));

/// @brief A real ecsd started with `--port 0` and stopped (SIGTERM) when destroyed.
class ecsd_process {
public:
    /// @brief Starts ecsd with extra arguments; `port()` is empty when it did not say it listens.
    explicit ecsd_process(const std::vector<std::string>& extra_args = {});
    ecsd_process(const ecsd_process&) = delete;
    ecsd_process& operator=(const ecsd_process&) = delete;
    ~ecsd_process();

    /// @brief The port from its `listening on 127.0.0.1:PORT` line.
    [[nodiscard]] const std::optional<int>& port() const noexcept { return port_; }
    /// @brief What it printed before listening (for failure messages).
    [[nodiscard]] const std::string& banner() const noexcept { return banner_; }

private:
    pid_t pid_ = -1;
    int out_fd_ = -1;
    std::thread drain_;  // keeps reading its stdout so its logging never blocks on a full pipe
    std::optional<int> port_;
    std::string banner_;
};

}  // namespace ecsd::test
