#include "memory/forked_save.hpp"

#include <fcntl.h>
#include <sched.h>
#include <sys/mman.h>
#include <sys/prctl.h>
#include <sys/resource.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <csignal>
#include <cstdio>
#include <cstring>
#include <sstream>
#include <system_error>
#include <utility>
#include <vector>

#include "memory/internal.hpp"

namespace ecsd::memory {

namespace {

/// @brief Writes all of `data` to the socket to or from the child; false when it cannot.
bool send_all(int fd, std::string_view data) noexcept {
    while (!data.empty()) {
        const auto n = ::send(fd, data.data(), data.size(), MSG_NOSIGNAL);
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) return false;
        data.remove_prefix(static_cast<std::size_t>(n));
    }
    return true;
}

/// @brief CPU time this thread has used, in milliseconds.
double thread_cpu_ms() noexcept {
    timespec t{};
    ::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &t);
    return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) / 1e6;
}

/// @brief In the child: closes every descriptor from 3 on but `keep`, so the child holds no socket
/// (a client the parent closes sees the close at once), no journal and no epoll of the parent.
void close_inherited(int keep) noexcept {
    if (keep > 3) ::close_range(3, static_cast<unsigned>(keep) - 1, 0);
    if (::close_range(static_cast<unsigned>(keep) + 1, ~0U, 0) != 0) {
        const long top = ::sysconf(_SC_OPEN_MAX);  // kernels before 5.9: one by one
        for (long fd = keep + 1; fd < (top > 0 ? top : 1024); ++fd) ::close(static_cast<int>(fd));
    }
}

/// @brief In the child, first thing: replaces each block of the world that allocate_block
/// mapped (the big ones in huge pages, the middle-sized ones such as write stamps in small pages)
/// with a private copy at the same address, so the parent, writing its world on, no longer shares
/// those pages. A page the parent writes while the child still maps it is copied by the kernel, in
/// the parent, on the world's tick; once the child holds its own copy the parent's pages are its own
/// again, and a write costs one fault per page (2 MiB for a big block) and no copy. The fork comes
/// right after a tick, so the copy has a whole tick period to end before the next one: the
/// largest blocks (a component's values) first. One thread: ThreadSanitizer refuses threads started in the
/// child of a threaded process, and the parent's next tick wants the other core. A block that cannot be
/// copied (no memory) stays shared, as before. A block goes into one of `spares` of its size where
/// there is one (memory the parent made ready and has let go of: see spare_blocks), else into fresh
/// memory. Returns the bytes copied and, apart, how many of them went into spares.
std::pair<std::size_t, std::size_t> take_private_copies(std::span<const void* const> hot,
                                                        std::vector<block>& spares) noexcept {
    std::vector<block> blocks;  // a world's block or a spare alike: `bytes` mapped at `at`
    try {
        blocks = mapped_blocks();
    } catch (...) {
        return {0, 0};
    }
    // The blocks the parent is about to write first (its next tick copies whatever the child has
    // not taken yet, a page fault and a 4 KiB copy each), then the largest.
    const auto is_hot = [&hot](const block& b) {
        const auto* begin = static_cast<const char*>(b.at);
        return std::any_of(hot.begin(), hot.end(), [&](const void* p) {
            const auto* at = static_cast<const char*>(p);
            return at >= begin && at < begin + b.bytes;
        });
    };
    std::sort(blocks.begin(), blocks.end(), [&is_hot](const block& a, const block& b) {
        const bool ha = is_hot(a);
        const bool hb = is_hot(b);
        return ha != hb ? ha : a.bytes > b.bytes;
    });
    std::size_t copied = 0;
    std::size_t spared = 0;
    for (const auto& [at, n] : blocks) {
        const auto spare =
            std::find_if(spares.begin(), spares.end(), [n = n](const block& b) { return b.bytes == n; });
        const bool from_spares = spare != spares.end();
        void* fresh = nullptr;
        if (from_spares) {
            fresh = spare->at;
            *spare = spares.back();
            spares.pop_back();
        } else {
            fresh = internal::map_block(n);  // in pages of the original's size
        }
        if (fresh == nullptr) continue;
        std::memcpy(fresh, at, n);
        if (::mremap(fresh, n, n, MREMAP_MAYMOVE | MREMAP_FIXED, at) == MAP_FAILED) {
            internal::unmap(fresh, n);
            continue;
        }
        copied += n;
        if (from_spares) spared += n;
    }
    return {copied, spared};
}

[[noreturn]] void run_child(const background_save::job& write, std::span<const void* const> hot,
                            std::vector<block>& spares, pid_t parent, int report,
                            std::chrono::steady_clock::time_point forked) noexcept {
    // First of all, the core back to the parent: a new child may be put on the parent's core ahead
    // of it, and the world then waits for the child's time slice to end, so the world's stop for the
    // fork would be longer in wall time than the fork's own work.
    ::sched_yield();
    ::prctl(PR_SET_PDEATHSIG, SIGKILL);
    if (::getppid() != parent) ::_exit(3);  // the parent died before PDEATHSIG was set
    // The daemon blocks these for its signal thread (main.cpp); the child takes the defaults back.
    sigset_t stops;
    sigemptyset(&stops);
    for (const int sig : {SIGINT, SIGTERM, SIGHUP}) {
        std::signal(sig, SIG_DFL);
        sigaddset(&stops, sig);
    }
    ::pthread_sigmask(SIG_UNBLOCK, &stops, nullptr);
    close_inherited(report);
    if (!spares.empty()) {
        // The parent unmaps its side of the spares and then says so. Until it has, a write here
        // would copy each page (the parent still maps it); after, the pages are this process's alone.
        char go = 0;
        while (::read(report, &go, 1) < 0 && errno == EINTR) {
        }
    }
    // First, before the parent's next tick writes them: the world's big arrays become this
    // process's own, so the parent's writes stop costing it a page copy each.
    const auto [copied, spared] = take_private_copies(hot, spares);
    const double copy_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - forked).count();
    // Then the save itself yields the cores to the world's ticks (and its disk writes to theirs).
    (void)::setpriority(PRIO_PROCESS, 0, 19);
    int code = 0;
    std::string said;
    try {
        const auto bytes = write();
        char copy[96];
        (void)std::snprintf(copy, sizeof copy, " %zu %.3f %zu", copied, copy_ms, spared);
        said = "ok " + std::to_string(bytes) + copy;
    } catch (const std::exception& e) {
        said = e.what();
        code = 1;
    } catch (...) {
        said = "unknown error";
        code = 1;
    }
    (void)send_all(report, said);
    ::_exit(code);  // no atexit handlers, no flushing of the parent's buffers, no leak check
}

}  // namespace

spare_blocks spare_blocks::prepare() noexcept {
    spare_blocks out;
    try {
        std::vector<std::size_t> sizes;
        for (const auto& b : mapped_blocks()) sizes.push_back(b.bytes);
        // One mapping for all, in huge pages: the blocks in huge pages first, each on a 2 MiB
        // boundary, then the middle-sized ones, packed. The fork then copies, and the parent's
        // munmap then drops, one page-table entry per 2 MiB of spares (a middle-sized block's copy
        // is moved out of its huge page by the child: the split is the child's).
        std::stable_partition(sizes.begin(), sizes.end(), [](std::size_t n) { return n % huge_page == 0; });
        std::size_t used = 0;
        for (const std::size_t n : sizes) used += n;
        if (used == 0) return out;
        const std::size_t bytes = (used + huge_page - 1) & ~(huge_page - 1);
        auto* at = static_cast<char*>(internal::map_aligned(bytes));
        if (at == nullptr) return out;
        out.region_ = {at, bytes};
        out.blocks_.reserve(sizes.size());
        std::size_t offset = 0;
        for (const std::size_t n : sizes) {
            out.blocks_.push_back({at + offset, n});
            offset += n;
        }
        // One write a small page makes each page resident (a huge page whole at its first).
        for (std::size_t i = 0; i < used; i += small_page) static_cast<volatile char*>(out.region_.at)[i] = 0;
    } catch (...) {  // no memory for the list: no spares (the region, if mapped, goes with `out`)
        out.blocks_.clear();
    }
    return out;
}

spare_blocks& spare_blocks::operator=(spare_blocks&& other) noexcept {
    if (this != &other) {
        release();
        blocks_ = std::move(other.blocks_);
        region_ = std::exchange(other.region_, block{nullptr, 0});
        other.blocks_.clear();
    }
    return *this;
}

std::size_t spare_blocks::bytes() const noexcept {
    std::size_t n = 0;
    for (const auto& b : blocks_) n += b.bytes;
    return n;
}

void spare_blocks::release() noexcept {
    if (region_.at != nullptr) internal::unmap(region_.at, region_.bytes);
    region_ = {nullptr, 0};
    blocks_.clear();
}

std::unique_ptr<background_save> background_save::start(const job& write, std::span<const void* const> hot,
                                                        spare_blocks spares) {
    // A socket pair, not a pipe: the parent tells the child when it has let go of the spares, and
    // the child reports back on the same descriptor.
    int fds[2];
    if (::socketpair(AF_UNIX, SOCK_STREAM | SOCK_CLOEXEC, 0, fds) != 0)
        throw std::system_error(errno, std::generic_category(), "socket pair for a background save");
    const pid_t parent = ::getpid();
    const auto t0 = std::chrono::steady_clock::now();
    const double cpu0 = thread_cpu_ms();
    const pid_t pid = ::fork();
    if (pid == 0) {
        ::close(fds[0]);
        run_child(write, hot, spares.blocks_, parent, fds[1], t0);
    }
    const int err = errno;
    ::close(fds[1]);
    if (pid < 0) {
        ::close(fds[0]);
        throw std::system_error(err, std::generic_category(), "fork for a background save");
    }
    if (!spares.empty()) {
        spares.release();  // the child's references to these pages are now the only ones
        (void)send_all(fds[0], "g");
    }
    // The world's stop: the fork, and the unmapping of the spares (one page-table entry per 2 MiB).
    const double fork_ms =
        std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
    const double fork_cpu_ms = thread_cpu_ms() - cpu0;
    ::fcntl(fds[0], F_SETFL, O_NONBLOCK);
    return std::unique_ptr<background_save>(new background_save(pid, fds[0], fork_ms, fork_cpu_ms));
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
        // "ok BYTES COPIED COPY_MS SPARED"
        std::istringstream in(said.substr(3));
        in >> bytes_ >> copied_bytes_ >> copy_ms_ >> spared_bytes_;
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

}  // namespace ecsd::memory
