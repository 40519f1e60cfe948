#include "persist/atomic_file.hpp"

#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <system_error>
#include <utility>

namespace ecsd::persist {

namespace {
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

bool write_all(int fd, std::string_view data) noexcept {
    std::size_t done = 0;
    while (done < data.size()) {
        const auto n = ::write(fd, data.data() + done, data.size() - done);
        if (n < 0 && errno == EINTR) continue;
        if (n < 0) return false;
        done += static_cast<std::size_t>(n);
    }
    return true;
}

bool read_file_from(const std::filesystem::path& path, std::uint64_t offset, std::string& out) {
    out.clear();
    fd_guard fd(::open(path.c_str(), O_RDONLY | O_CLOEXEC));
    if (fd.get() < 0) return false;
    const auto size = ::lseek(fd.get(), 0, SEEK_END);
    if (size <= 0 || static_cast<std::uint64_t>(size) <= offset) return true;
    out.resize(static_cast<std::size_t>(static_cast<std::uint64_t>(size) - offset));
    std::size_t done = 0;
    while (done < out.size()) {
        const auto n =
            ::pread(fd.get(), out.data() + done, out.size() - done, static_cast<off_t>(offset + done));
        if (n < 0 && errno == EINTR) continue;
        if (n <= 0) break;
        done += static_cast<std::size_t>(n);
    }
    out.resize(done);
    return true;
}

int replace_file_open(const std::filesystem::path& path, std::string_view data) {
    const auto tmp = temp_path_for(path);
    fd_guard fd(::open(tmp.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_APPEND | O_CLOEXEC, 0644));
    if (fd.get() < 0) throw_errno("create " + tmp.string());
    // Any failure before the rename removes the temp file: a full disk leaves no half file behind.
    const auto fail = [&](const std::string& what) {
        const int err = errno;
        ::unlink(tmp.c_str());
        throw storage_error(err, what);
    };
    if (!write_all(fd.get(), data)) fail("write " + tmp.string());
    if (::fsync(fd.get()) != 0) fail("fsync " + tmp.string());
    if (::rename(tmp.c_str(), path.c_str()) != 0) fail("rename " + tmp.string() + " to " + path.string());
    return fd.release();
}

void write_file_atomically(const std::filesystem::path& path, std::string_view data) {
    ::close(replace_file_open(path, data));
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
