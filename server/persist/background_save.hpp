#pragma once
// A save written by a forked child, as Redis's BGSAVE does: the parent stops only for fork(), the
// child sees the memory as it was at that instant (copy-on-write) and writes the file while the
// parent goes on ticking. docs/design.md ("Saves without a hitch") says why fork and not a copy.
//
// The child runs one function and leaves with _exit: it closes every inherited descriptor first
// (sockets, the journal, epoll), dies with its parent (PR_SET_PDEATHSIG), and must not take a lock
// another thread of the parent may have held at the fork (no logging; malloc is fork-safe in glibc).

#include <sys/types.h>

#include <cstdint>
#include <functional>
#include <memory>
#include <span>
#include <string>

namespace ecsd::persist {

class background_save {
  public:
    /// @brief What the child runs: writes the file and returns how many bytes it wrote; an
    /// exception's what() comes back to the parent as error().
    using job = std::function<std::uint64_t()>;

    /// @brief Forks a child that runs `write`. Throws storage_error when the fork fails (the
    /// caller may then save in-process instead). The child first takes its own copy of every
    /// mapped block of the world, those holding an address of `hot` first (the arrays the parent
    /// is about to write: see take_private_copies in background_save.cpp).
    [[nodiscard]] static std::unique_ptr<background_save> start(const job& write,
                                                                std::span<const void* const> hot = {});

    background_save(const background_save&) = delete;
    background_save& operator=(const background_save&) = delete;
    /// @brief Kills a child still running (abandon()).
    ~background_save();

    enum class state { running, done, failed };
    /// @brief Never blocks: reaps the child once it has ended and says how it ended.
    state poll();
    /// @brief Kills the child if it still runs and reaps it (a newer save, or the world is going).
    void abandon() noexcept;

    /// @brief Bytes the child wrote (when done).
    [[nodiscard]] std::uint64_t bytes() const noexcept { return bytes_; }
    /// @brief Why it failed (when failed).
    [[nodiscard]] const std::string& error() const noexcept { return error_; }
    /// @brief How long the parent was stopped by fork().
    [[nodiscard]] double fork_ms() const noexcept { return fork_ms_; }
    /// @brief The CPU time the parent's thread spent in fork(): the rest of fork_ms() it waited, for
    /// a core or a lock.
    [[nodiscard]] double fork_cpu_ms() const noexcept { return fork_cpu_ms_; }
    /// @brief When done: the bytes of world arrays the child copied before saving, and how long
    /// after the fork it finished copying them (the parent's writes before then were copied on write).
    [[nodiscard]] std::uint64_t copied_bytes() const noexcept { return copied_bytes_; }
    [[nodiscard]] double copy_ms() const noexcept { return copy_ms_; }
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

  private:
    background_save(pid_t pid, int from_child, double fork_ms, double fork_cpu_ms) noexcept
        : pid_(pid), from_child_(from_child), fork_ms_(fork_ms), fork_cpu_ms_(fork_cpu_ms) {}
    void finish(int status);

    pid_t pid_;
    int from_child_;  ///< read end of the pipe the child reports on
    double fork_ms_;
    double fork_cpu_ms_;
    state state_ = state::running;
    std::uint64_t bytes_ = 0;
    std::uint64_t copied_bytes_ = 0;
    double copy_ms_ = 0;
    std::string error_;
};

}  // namespace ecsd::persist
