#include "process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <pty.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <array>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <stdexcept>
#include <thread>

extern char** environ;  // NOLINT: POSIX

namespace ecsd::test {

namespace {

using clock = std::chrono::steady_clock;

/// @brief The environment for a child: ours without ECSD_*/ECSCTL_*, then `extra`.
std::vector<std::string> child_environment(const std::map<std::string, std::string>& extra) {
    std::vector<std::string> env;
    for (char** e = environ; *e != nullptr; ++e) {
        const std::string entry(*e);
        if (entry.starts_with("ECSD_") || entry.starts_with("ECSCTL_")) {
            continue;
        }
        const auto name = entry.substr(0, entry.find('='));
        if (extra.contains(name)) {
            continue;
        }
        env.push_back(entry);
    }
    for (const auto& [name, value] : extra) {
        env.push_back(name);
        env.back() += '=';
        env.back() += value;
    }
    return env;
}

std::vector<char*> pointers(std::vector<std::string>& strings) {
    std::vector<char*> out;
    out.reserve(strings.size() + 1);
    for (auto& s : strings) {
        out.push_back(s.data());
    }
    out.push_back(nullptr);
    return out;
}

int wait_for(pid_t pid) {
    int status = 0;
    while (waitpid(pid, &status, 0) < 0 && errno == EINTR) {
    }
    return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

/// @brief run() with a hook called after each piece of standard output (with the child's pid).
run_result run_watching(const std::vector<std::string>& argv, const std::string& input,
                        const std::map<std::string, std::string>& env, std::chrono::milliseconds limit,
                        const std::function<void(pid_t, const std::string&)>& on_output) {
    std::array<int, 2> in{};
    std::array<int, 2> out{};
    std::array<int, 2> err{};
    if (pipe(in.data()) != 0 || pipe(out.data()) != 0 || pipe(err.data()) != 0) {
        throw std::runtime_error("pipe");
    }
    posix_spawn_file_actions_t actions;
    posix_spawn_file_actions_init(&actions);
    posix_spawn_file_actions_adddup2(&actions, in[0], 0);
    posix_spawn_file_actions_adddup2(&actions, out[1], 1);
    posix_spawn_file_actions_adddup2(&actions, err[1], 2);
    for (const int fd : {in[0], in[1], out[0], out[1], err[0], err[1]}) {
        posix_spawn_file_actions_addclose(&actions, fd);
    }
    auto args = argv;
    auto envs = child_environment(env);
    pid_t pid = -1;
    const int rc =
        posix_spawn(&pid, args[0].c_str(), &actions, nullptr, pointers(args).data(), pointers(envs).data());
    posix_spawn_file_actions_destroy(&actions);
    close(in[0]);
    close(out[1]);
    close(err[1]);
    if (rc != 0) {
        throw std::runtime_error("cannot run " + argv[0] + ": " + std::strerror(rc));
    }

    // Write the input from a thread so a child that does not read cannot block us.
    std::thread writer([fd = in[1], input] {
        std::size_t done = 0;
        while (done < input.size()) {
            const auto n = write(fd, input.data() + done, input.size() - done);
            if (n <= 0) {
                break;
            }
            done += static_cast<std::size_t>(n);
        }
        close(fd);
    });

    run_result result;
    const auto deadline = clock::now() + limit;
    std::array<pollfd, 2> fds{{{out[0], POLLIN, 0}, {err[0], POLLIN, 0}}};
    int open_fds = 2;
    std::array<char, 4096> buffer{};
    while (open_fds > 0) {
        const auto left =
            std::chrono::duration_cast<std::chrono::milliseconds>(deadline - clock::now()).count();
        if (left <= 0) {
            kill(pid, SIGKILL);
            result.timed_out = true;
            break;
        }
        if (poll(fds.data(), fds.size(), static_cast<int>(left)) < 0 && errno != EINTR) {
            break;
        }
        for (std::size_t i = 0; i < fds.size(); ++i) {
            if (fds[i].fd < 0 || (fds[i].revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
                continue;
            }
            const auto n = read(fds[i].fd, buffer.data(), buffer.size());
            if (n <= 0) {
                close(fds[i].fd);
                fds[i].fd = -1;
                --open_fds;
                continue;
            }
            (i == 0 ? result.out : result.err).append(buffer.data(), static_cast<std::size_t>(n));
            if (i == 0 && on_output) {
                on_output(pid, result.out);
            }
        }
    }
    for (auto& f : fds) {
        if (f.fd >= 0) {
            close(f.fd);
        }
    }
    result.exit_code = wait_for(pid);
    writer.join();
    return result;
}

}  // namespace

run_result run(const std::vector<std::string>& argv, const std::string& input,
               const std::map<std::string, std::string>& env, std::chrono::milliseconds limit) {
    return run_watching(argv, input, env, limit, {});
}

run_result run_and_signal(const std::vector<std::string>& argv, std::size_t lines, int sig,
                          const std::map<std::string, std::string>& env, std::chrono::milliseconds limit) {
    bool sent = false;
    return run_watching(argv, {}, env, limit, [&](pid_t pid, const std::string& out) {
        if (!sent && static_cast<std::size_t>(std::count(out.begin(), out.end(), '\n')) >= lines) {
            kill(pid, sig);
            sent = true;
        }
    });
}

run_result run_on_terminal(const std::vector<std::string>& argv, const std::string& input,
                           const std::map<std::string, std::string>& env, std::chrono::milliseconds limit) {
    auto args = argv;
    auto envs = child_environment(env);
    auto arg_ptrs = pointers(args);
    auto env_ptrs = pointers(envs);
    int master = -1;
    const pid_t pid = forkpty(&master, nullptr, nullptr, nullptr);
    if (pid < 0) {
        throw std::runtime_error("forkpty failed");
    }
    if (pid == 0) {
        execve(arg_ptrs[0], arg_ptrs.data(), env_ptrs.data());
        _exit(127);
    }
    run_result result;
    const auto deadline = clock::now() + limit;
    std::size_t typed = 0;
    std::array<char, 4096> buffer{};
    auto last_output = clock::now();
    for (;;) {
        const auto now = clock::now();
        if (now >= deadline) {
            kill(pid, SIGKILL);
            result.timed_out = true;
            break;
        }
        // Type one line at a time once the program has been quiet for a moment (waiting at its prompt).
        if (typed < input.size() && now - last_output > std::chrono::milliseconds(300)) {
            auto end = input.find('\n', typed);
            end = end == std::string::npos ? input.size() : end + 1;
            if (write(master, input.data() + typed, end - typed) < 0) {
                break;
            }
            typed = end;
            last_output = now;
        }
        pollfd fd{master, POLLIN, 0};
        if (poll(&fd, 1, 50) < 0 && errno != EINTR) {
            break;
        }
        if ((fd.revents & (POLLIN | POLLHUP | POLLERR)) == 0) {
            continue;
        }
        const auto n = read(master, buffer.data(), buffer.size());
        if (n <= 0) {
            break;  // EIO: the program has exited
        }
        result.out.append(buffer.data(), static_cast<std::size_t>(n));
        last_output = clock::now();
    }
    close(master);
    result.exit_code = wait_for(pid);
    return result;
}

std::string ecsctl_path() {
    const char* other = std::getenv("ECSCTL_TEST_BINARY");
    return other != nullptr && *other != '\0' ? std::string(other) : std::string(ECSCTL_BUILT_PATH);
}

}  // namespace ecsd::test
