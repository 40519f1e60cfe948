#include "persist/background_save.hpp"

#include <fcntl.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstring>

#include "persist/atomic_file.hpp"

namespace ecsd::persist {

namespace {

/// @brief In the child: closes every descriptor from 3 on but `keep`, so the child holds no socket
/// (a client the parent closes sees the close at once), no journal and no epoll of the parent.
void close_inherited(int keep) noexcept {
    if (keep > 3) ::close_range(3, static_cast<unsigned>(keep) - 1, 0);
    if (::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0) != 0) {
        const long top = ::sysconf(_SC_OPEN_MAX);  // kernels before 5.9: one by one
        for (long fd = keep + 1; fd < (top > 0 ? top : 1024); ++fd) ::close(static_cast<int>(fd));
    }
}

[[noreturn]] void run_child(const background_save::job& write, pid_t parent, int report) noexcept {
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(3);  // the parent died before PDEATHSIG was set
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) std::signal(sig, SIG_DFL);
    close_inherited(report);
    int code = 0;
    std::string said;
    try {
        said = "ok " + std::to_string(write());
    } catch (const std::exception& e) {
        said = e.what();
        code = 1;
    } catch (...) {
        said = "unknown error";
        code = 1;
    }
    (void)write_all(report, said);
    ::_exit(code);  // no atexit handlers, no flushing of the parent's buffers, no leak check
}

}  // namespace

std::unique_ptr<background_save> background_save::start(const job& write) {
    int pipe_fds[2];
    if (::pipe2(pipe_fds, O_CLOEXEC) != 0) throw storage_error(errno, "pipe for a background save");
    const pid_t parent = ::getpid();
    const auto t0 = std::chrono::steady_clock::now();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(pipe_fds[0]);
        run_child(write, parent, pipe_fds[1]);
    }
    const double fork_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const int err = errno;
    ::close(pipe_fds[1]);
    if (pid < 0) {
        ::close(pipe_fds[0]);
        throw storage_error(err, "fork for a background save");
    }
    ::fcntl(pipe_fds[0], F_SETFL, O_NONBLOCK);
    return std::unique_ptr<background_save>(new background_save(pid, pipe_fds[0], fork_ms));
}

background_save::~background_save() {
    abandon();
    if (from_child_ >= 0) ::close(from_child_);
}

void background_save::finish(int status) {
    std::string said;
    char buf[512];
    for (;;) {
        const auto n = ::read(from_child_, buf, sizeof buf);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        said.append(buf, static_cast<std::size_t>(n));
    }
    if (WIFEXITED(status) && WEXITSTATUS(status) == 0 && said.starts_with("ok ")) {
        state_ = state::done;
        bytes_ = std::stoull(said.substr(3));
        return;
    }
    state_ = state::failed;
    if (!said.empty())
        error_ = said;
    else if (WIFSIGNALED(status))
        error_ = "the saving process was killed by signal " + std::to_string(WTERMSIG(status));
    else
        error_ = "the saving process exited with status " + std::to_string(WEXITSTATUS(status));
}

background_save::state background_save::poll() {
    if (state_ != state::running) return state_;
    int status = 0;
    pid_t r = 0;
    do r = ::waitpid(pid_, &status, WNOHANG);
    while (r < 0 && errno == EINTR);
    if (r == 0) return state_;
    if (r < 0) {  // not our child any more (SIGCHLD ignored by someone): nothing to learn
        state_ = state::failed;
        error_ = std::string("waitpid: ") + std::strerror(errno);
        return state_;
    }
    finish(status);
    return state_;
}

void background_save::abandon() noexcept {
    if (state_ != state::running) return;
    ::kill(pid_, SIGKILL);
    int status = 0;
    while (::waitpid(pid_, &status, 0) < 0 && errno == EINTR) {
    }
    state_ = state::failed;
    error_ = "abandoned";
}

}  // namespace ecsd::persist
