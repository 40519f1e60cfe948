#include "ecsd_server.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <iterator>
#include <stdexcept>
#include <thread>

#include <gtest/gtest.h>

extern char** environ;

namespace ecsd::test {
namespace {

using clock_type = std::chrono::steady_clock;

std::chrono::milliseconds since(clock_type::time_point t) {
    return std::chrono::duration_cast<std::chrono::milliseconds>(clock_type::now() - t);
}

// A server that outlives its limit is killed; before that, gdb (when the machine has it) prints
// every thread's stack to the test's stderr, so a rare hang at shutdown says where it stood.
void print_stacks(pid_t pid) {
    if (::access("/usr/bin/gdb", X_OK) != 0) return;
    std::fprintf(stderr, "ecsd (pid %d) outlived its limit; its threads:\n", static_cast<int>(pid));
    std::fflush(stderr);
    const std::string cmd = "timeout 30 /usr/bin/gdb -p " + std::to_string(pid) +
                            " -batch -nx -ex 'thread apply all bt' 1>&2 2>/dev/null </dev/null";
    [[maybe_unused]] const int rc = std::system(cmd.c_str());
}

}  // namespace

sanitizer server_sanitizer() {
    if (const char* other = std::getenv("ECSD_TEST_BINARY"); other != nullptr && *other != '\0') {
        const char* kind = std::getenv("ECSD_TEST_SANITIZER");
        const std::string_view k = kind == nullptr ? "" : kind;
        return k == "address" ? sanitizer::address : k == "thread" ? sanitizer::thread : sanitizer::none;
    }
#if defined(__SANITIZE_ADDRESS__)
    return sanitizer::address;
#elif defined(__SANITIZE_THREAD__)
    return sanitizer::thread;
#else
    return sanitizer::none;
#endif
}

std::string ecsd_server::binary() {
    // ECSD_TEST_BINARY runs these tests against another build's ecsd (scripts/test.sh --tsan drives
    // the ThreadSanitizer build's ecsd with this build's test programs, so they are built once).
    if (const char* other = std::getenv("ECSD_TEST_BINARY"); other != nullptr && *other != '\0') return other;
    return ECSD_BINARY;
}

ecsd_server::ecsd_server(std::vector<std::string> args) {
    server_options o;
    o.args = std::move(args);
    start(o);
}

ecsd_server::ecsd_server(server_options options) {
    start(options);
}

void ecsd_server::start(const server_options& options) {
    std::vector<std::string> argv{binary(), "--port", "0", "--log-level", options.log_level};
    // Tests run side by side: the HTTP face stays off unless a test asks for a port of its own.
    if (std::find(options.args.begin(), options.args.end(), "--http-port") == options.args.end()) {
        argv.emplace_back("--http-port");
        argv.emplace_back("0");
    }
    argv.insert(argv.end(), options.args.begin(), options.args.end());
    const auto http_flag = std::find(options.args.begin(), options.args.end(), "--http-port");
    const bool wants_http = http_flag != options.args.end() && std::next(http_flag) != options.args.end() &&
                            *std::next(http_flag) != "0";
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        if (std::strncmp(*e, "ECSD_", 5) != 0) env.emplace_back(*e);  // tests decide every setting
    }
    env.insert(env.end(), options.env.begin(), options.env.end());

    int out[2];
    if (::pipe2(out, O_CLOEXEC) != 0) throw std::runtime_error("pipe failed");
    int log_fd = -1;
    if (options.log_path) {
        log_fd = ::open(options.log_path->c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
        if (log_fd < 0) throw std::runtime_error("cannot open " + *options.log_path);
    }
    std::vector<char*> c_argv, c_env;
    for (auto& a : argv) c_argv.push_back(a.data());
    c_argv.push_back(nullptr);
    for (auto& e : env) c_env.push_back(e.data());
    c_env.push_back(nullptr);

    pid_ = ::fork();
    if (pid_ < 0) throw std::runtime_error("fork failed");
    if (pid_ == 0) {
        ::dup2(out[1], STDOUT_FILENO);
        if (log_fd >= 0) ::dup2(log_fd, STDERR_FILENO);
        ::execve(c_argv[0], c_argv.data(), c_env.data());
        ::_exit(127);
    }
    ::close(out[1]);
    if (log_fd >= 0) ::close(log_fd);
    stdout_fd_ = out[0];

    // Read stdout up to the "listening on HOST:PORT" line. The `viewer at http://HOST:PORT/` line
    // comes right after it, in the same flush, or not at all when the HTTP port could not be bound
    // (the log says why): a second of waiting for it covers a slow pipe.
    std::string text;
    port_ = read_port_line(text, "listening on ", clock_type::now() + options.start_timeout);
    if (port_ == 0) {
        stop(SIGKILL);
        throw std::runtime_error("ecsd did not print its listening line; stdout was: " + text);
    }
    if (wants_http)
        http_port_ = read_port_line(text, "viewer at http://", clock_type::now() + std::chrono::seconds(1));
}

int ecsd_server::read_port_line(std::string& text, std::string_view prefix,
                                std::chrono::steady_clock::time_point deadline) {
    for (;;) {
        const auto at = text.find(prefix);
        const auto eol = at == std::string::npos ? std::string::npos : text.find('\n', at);
        if (eol != std::string::npos) {
            const auto colon = text.rfind(':', eol);
            return std::stoi(text.substr(colon + 1, eol - colon - 1));  // stops at the viewer line's '/'
        }
        const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock_type::now());
        if (left.count() <= 0) return 0;
        pollfd p{stdout_fd_, POLLIN, 0};
        if (::poll(&p, 1, static_cast<int>(left.count())) <= 0) continue;  // the deadline decides
        char buf[512];
        const auto n = ::read(stdout_fd_, buf, sizeof buf);
        if (n <= 0) return 0;
        text.append(buf, static_cast<std::size_t>(n));
    }
}

bool ecsd_server::running() {
    if (reaped_ || pid_ <= 0) return false;
    int status = 0;
    const pid_t r = ::waitpid(pid_, &status, WNOHANG);
    if (r == pid_) {
        reaped_ = true;
        return false;
    }
    return true;
}

long ecsd_server::rss_kib() const {
    std::ifstream in("/proc/" + std::to_string(pid_) + "/status");
    for (std::string line; std::getline(in, line);) {
        if (line.rfind("VmRSS:", 0) == 0) return std::stol(line.substr(6));
    }
    return 0;
}

exit_status ecsd_server::stop(int sig, std::chrono::milliseconds limit) {
    exit_status st;
    if (pid_ <= 0 || reaped_) return st;
    const auto started = clock_type::now();
    ::kill(pid_, sig);
    int status = 0;
    for (;;) {
        const pid_t r = ::waitpid(pid_, &status, WNOHANG);
        if (r == pid_) break;
        if (since(started) > limit) {
            print_stacks(pid_);
            ::kill(pid_, SIGKILL);
            ::waitpid(pid_, &status, 0);
            break;
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(2));
    }
    reaped_ = true;
    st.elapsed = since(started);
    st.exited = WIFEXITED(status);
    st.code = st.exited ? WEXITSTATUS(status) : -1;
    st.signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    if (stdout_fd_ >= 0) {
        ::close(stdout_fd_);
        stdout_fd_ = -1;
    }
    return st;
}

ecsd_server::~ecsd_server() {
    // ecsd must leave cleanly on SIGTERM: exit 0 within the limit. A sanitizer report at shutdown
    // (a leak, a data race under ThreadSanitizer) changes the exit code, so it fails the test here.
    if (!reaped_) {
        const auto st = stop(SIGTERM, std::chrono::milliseconds(3000) * sanitizer_time_factor);
        if (!st.exited || st.code != 0)
            ADD_FAILURE() << "ecsd did not exit 0 on SIGTERM (exit code " << st.code << ", signal "
                          << st.signal << "); a sanitizer report, if any, is on the test's stderr";
    }
    if (stdout_fd_ >= 0) ::close(stdout_fd_);
}

}  // namespace ecsd::test
