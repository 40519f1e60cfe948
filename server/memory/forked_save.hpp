#pragma once
// The memory module's fork (see blocks.hpp): a save written by a forked child, as Redis's BGSAVE does: the
// parent stops only for fork(), the child sees the memory as it was at that instant (copy-on-write) and
// writes the file while the parent goes on ticking. docs/design.md ("Saves without a hitch") says why fork
// and not a copy.
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
#include <utility>
#include <vector>

#include "memory/blocks.hpp"

namespace ecsd::memory {

/// @brief Memory made ready ahead of a save for the child's copies of the world's arrays: one fresh
/// block, touched, the size of each block allocate_block has mapped (see take_private_copies in
/// forked_save.cpp). background_save::start hands them to the child: the
/// parent unmaps its side right after the fork, so the child writes its copies into pages that are
/// its alone and already resident, and allocates nothing.
///
/// Why: on a VM whose balloon reports free memory back to the host (this project's CI machines do),
/// memory freed a while ago costs a host fault per page on its next first touch. A child copying
/// into such memory can be slow enough that the world's next tick writes those arrays before the
/// child has its copy, and pays the copy-on-write itself. Preparing the memory ahead moves that
/// cost to a network thread.
class spare_blocks {
  public:
    spare_blocks() noexcept = default;
    /// @brief Maps and touches a block the size of each block mapped now, all cut from one mapping in
    /// huge pages. Slow where fresh memory is (on such a VM): call it off
    /// the world's strand, ahead of the save. Empty when that mapping cannot be had (the child then
    /// copies into fresh memory, as before).
    [[nodiscard]] static spare_blocks prepare() noexcept;
    spare_blocks(spare_blocks&& other) noexcept
        : blocks_(std::move(other.blocks_)), region_(std::exchange(other.region_, block{nullptr, 0})) {
        other.blocks_.clear();
    }
    spare_blocks& operator=(spare_blocks&& other) noexcept;
    spare_blocks(const spare_blocks&) = delete;
    spare_blocks& operator=(const spare_blocks&) = delete;
    /// @brief Unmaps whatever was not handed to a save.
    ~spare_blocks() { release(); }

    [[nodiscard]] bool empty() const noexcept { return blocks_.empty(); }
    [[nodiscard]] std::size_t bytes() const noexcept;

  private:
    friend class background_save;
    void release() noexcept;
    std::vector<block> blocks_;  ///< pieces of region_
    block region_{nullptr, 0};   ///< the one mapping they are cut from
};

class background_save {
  public:
    /// @brief What the child runs: writes the file and returns how many bytes it wrote; an
    /// exception's what() comes back to the parent as error().
    using job = std::function<std::uint64_t()>;

    /// @brief Forks a child that runs `write`. Throws std::system_error when the fork fails (the
    /// caller may then save in-process instead). The child first takes its own copy of every
    /// mapped block of the world, those holding an address of `hot` first (the arrays the parent
    /// is about to write: see take_private_copies in forked_save.cpp), into `spares` where one
    /// of the same size is there (the parent unmaps them all right after the fork).
    [[nodiscard]] static std::unique_ptr<background_save> start(const job& write,
                                                                std::span<const void* const> hot = {},
                                                                spare_blocks spares = {});

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
    /// @brief When done: how many of copied_bytes() went into spare_blocks made ready ahead.
    [[nodiscard]] std::uint64_t spared_bytes() const noexcept { return spared_bytes_; }
    [[nodiscard]] pid_t pid() const noexcept { return pid_; }

  private:
    background_save(pid_t pid, int from_child, double fork_ms, double fork_cpu_ms) noexcept
        : pid_(pid), from_child_(from_child), fork_ms_(fork_ms), fork_cpu_ms_(fork_cpu_ms) {}
    void finish(int status);

    pid_t pid_;
    int from_child_;  ///< the parent's end of the socket pair the child reports on
    double fork_ms_;
    double fork_cpu_ms_;
    state state_ = state::running;
    std::uint64_t bytes_ = 0;
    std::uint64_t copied_bytes_ = 0;
    double copy_ms_ = 0;
    std::uint64_t spared_bytes_ = 0;
    std::string error_;
};

}  // namespace ecsd::memory
