#pragma once
// Test support, library `ecsd_test_support`: start the real ecsd and talk to it over TCP.
//
//   #include "ecsd_server.hpp"
//   #include "line_client.hpp"
//
//   ecsd::test::ecsd_server server({"--idle-timeout", "1"});   // runs ECSD_BINARY --port 0 ...
//   ecsd::test::line_client client(server.port());              // blocking TCP, one JSON text per line
//   auto response = client.call("server.ping");                 // {"jsonrpc":"2.0","id":1,"result":"pong"}
//   auto status = server.stop(SIGTERM);                         // exit code and how long it took
//
// ecsd_server forks ECSD_BINARY (a compile definition: the ecsd built with the tests; the
// environment variable ECSD_TEST_BINARY names another) with
// `--port 0 --log-level warn` (and `--http-port 0` unless you pass one) plus your arguments, reads its stdout
// until the line `listening on HOST:PORT`, and remembers the port (and, given `--http-port N`, the
// port of its `viewer at` line: http_port()). Its stderr (the log) goes to the test's
// stderr, or to a file when log_path is given. The destructor sends SIGTERM and, if ecsd has
// not exited within 3 s, SIGKILL. Link `ecsd_test_support`; it adds the ecsd build dependency.

#include <sys/types.h>

#include <chrono>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace ecsd::test {

// Sanitizers change what memory and time a server uses (TSan's shadow memory, ASan's redzones and
// quarantine of freed blocks, both their slowdown): bounds asserted on RSS or wall time scale by
// these, so they still tell a bounded server from an unbounded one (hundreds of MB) under them.
// The ecsd under test is this build's, sanitized as this program is, unless ECSD_TEST_BINARY names
// another build's: then ECSD_TEST_SANITIZER (address or thread) says how that one was built.
enum class sanitizer { none, address, thread };
[[nodiscard]] sanitizer server_sanitizer();
[[nodiscard]] inline long memory_factor_of(sanitizer s) {
    return s == sanitizer::address ? 8 : s == sanitizer::thread ? 4 : 1;
}
[[nodiscard]] inline int time_factor_of(sanitizer s) {
    return s == sanitizer::none ? 1 : 3;
}
inline const long sanitizer_memory_factor = memory_factor_of(server_sanitizer());
inline const int sanitizer_time_factor = time_factor_of(server_sanitizer());

/// @brief How a stopped ecsd ended.
struct exit_status {
    bool exited = false;                   ///< ended by exit() rather than a signal
    int code = -1;                         ///< exit code when exited
    int signal = 0;                        ///< terminating signal otherwise
    std::chrono::milliseconds elapsed{0};  ///< from the signal to the end of the process
};

/// @brief Options beyond command-line arguments.
struct server_options {
    std::vector<std::string> args;        ///< extra ecsd arguments
    std::vector<std::string> env;         ///< extra "NAME=value" environment entries
    std::optional<std::string> log_path;  ///< write ecsd's stderr here instead of inheriting it
    std::string log_level = "warn";
    std::chrono::milliseconds start_timeout{5000 * sanitizer_time_factor};
};

/// @brief A running ecsd on a free port, stopped when destroyed.
class ecsd_server {
  public:
    /// @brief Starts ECSD_BINARY with `--port 0` and these extra arguments; throws std::runtime_error
    /// when it does not print its listening line in time.
    explicit ecsd_server(std::vector<std::string> args = {});
    /// @brief Starts it with full options.
    explicit ecsd_server(server_options options);
    ecsd_server(const ecsd_server&) = delete;
    ecsd_server& operator=(const ecsd_server&) = delete;
    ~ecsd_server();

    /// @brief The port it listens on.
    [[nodiscard]] int port() const noexcept { return port_; }
    /// @brief The HTTP port it printed in its `viewer at` line when a test passed `--http-port N`;
    /// 0 when that port could not be bound (another process had taken it) or none was asked for.
    [[nodiscard]] int http_port() const noexcept { return http_port_; }
    /// @brief Its process id.
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }
    /// @brief True while the process has not exited.
    [[nodiscard]] bool running();
    /// @brief Resident memory in KiB (VmRSS), or 0 when unknown.
    [[nodiscard]] long rss_kib() const;
    /// @brief Sends `sig` (0: none, the process is already leaving) and waits up to `limit` for the
    /// process to end (SIGKILL after that).
    exit_status stop(int sig, std::chrono::milliseconds limit = std::chrono::milliseconds(5000));

    /// @brief The ecsd binary the tests were built with.
    [[nodiscard]] static std::string binary();

  private:
    void start(const server_options& options);
    /// @brief Reads stdout into `text` until it holds a whole line starting with `prefix` and
    /// returns the port after that line's last ':'; 0 at `deadline` or when stdout ends.
    int read_port_line(std::string& text, std::string_view prefix,
                       std::chrono::steady_clock::time_point deadline);

    pid_t pid_ = -1;
    int stdout_fd_ = -1;
    int port_ = 0;
    int http_port_ = 0;
    bool reaped_ = false;
};

}  // namespace ecsd::test
