#include "persist/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace ecsd::persist {

namespace {
[[noreturn]] void throw_errno(const std::string& what) {
    throw storage_error(errno, what);
}

class fd_guard {
  public:
    explicit fd_guard(int fd) : fd_(fd) {}
    ~fd_guard() {
        if (fd_ >= 0) ::close(fd_);
    }
    fd_guard(const fd_guard&) = delete;
    fd_guard& operator=(const fd_guard&) = delete;
    [[nodiscard]] int get() const noexcept { return fd_; }
    int release() noexcept { return std::exchange(fd_, -1); }

  private:
    int fd_;
};
}  // namespace

std::filesystem::path temp_path_for(const std::filesystem::path& path) {
    return path.parent_path() / ("." + path.filename().string() + ".tmp");
}

void sync_directory(const std::filesystem::path& dir) {
    fd_guard fd(::open(dir.empty() ? "." : dir.c_str(), O_RDONLY | O_DIRECTORY | O_CLOEXEC));
    if (fd.get() < 0) throw_errno("open folder " + dir.string());
    if (::fsync(fd.get()) != 0) throw_errno("fsync folder " + dir.string());
}

void write_file_atomically(const std::filesystem::path& path, std::string_view data) {
    const auto tmp = temp_path_for(path);
    // Any failure before the rename removes the temp file: a full disk leaves no half snapshot behind.
    const auto fail = [&](const std::string& what) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw storage_error(err, what);
    };
    {
        fd_guard fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644));
        if (fd.get() < 0) throw_errno("create " + tmp.string());
        std::size_t done = 0;
        while (done < data.size()) {
            const auto n = ::write(fd.get(), data.data() + done, data.size() - done);
            if (n < 0 && errno == EINTR) continue;
            if (n < 0) fail("write " + tmp.string());
            done += static_cast<std::size_t>(n);
        }
        if (::fsync(fd.get()) != 0) fail("fsync " + tmp.string());
        if (::close(fd.release()) != 0) fail("close " + tmp.string());
    }
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename " + tmp.string() + " to " + path.string());
    sync_directory(path.parent_path());
}

std::filesystem::path keep_aside(const std::filesystem::path& path, bool copy) {
    std::filesystem::path target = path.string() + ".damaged";
    for (int n = 1; std::filesystem::exists(target); ++n)
        target = path.string() + ".damaged." + std::to_string(n);
    if (copy)
        std::filesystem::copy_file(path, target);
    else
        std::filesystem::rename(path, target);
    sync_directory(path.parent_path());
    return target;
}

std::size_t remove_stale_temp_files(const std::filesystem::path& dir) {
    std::size_t removed = 0;
    for (const auto& entry : std::filesystem::directory_iterator(dir)) {
        const auto name = entry.path().filename().string();
        if (name.size() > 5 && name.front() == '.' && name.ends_with(".tmp")) {
            std::filesystem::remove(entry.path());
            ++removed;
        }
    }
    return removed;
}

}  // namespace ecsd::persist
